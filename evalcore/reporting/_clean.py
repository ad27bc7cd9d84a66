"""Keep log noise out of reports: progress bars and warnings that cells wrote to stderr.

A notebook's stderr collects what libraries print while they work: tqdm bars (``Loading
weights: 0%| | 0/103``), ``TqdmWarning: IProgress not found``, other warnings and INFO/WARNING
log lines. They are not results, and in an exported report they become red boxes. Before a
suite exports a notebook, :func:`clean_notebook_file` moves those lines out of the executed
notebook into a log file beside it. What remains on stderr (anything else, e.g. a library's
error message) stays in the report, and so do error outputs (exceptions).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["clean_notebook_file", "clean_stderr", "is_noise"]

# A tqdm-style bar: "12%|███▏ | 3/25 [00:01<00:09, 2.3it/s]", "Loading weights: 0%| | 0/103".
_BAR = re.compile(r"\d+%\|.*\|")
_BAR_COUNTS = re.compile(r"\|\s*\d+/\d+\s*\[")
# "path/file.py:12: SomeWarning: message" (the line warnings.showwarning prints).
_WARNING = re.compile(r"^\s*(?:\S+:\d+:\s*)?[A-Za-z_.]*Warning:\s")
# Log lines of levels below ERROR: "WARNING:name:msg", "[W 12:00:00 ...]", "2026-.. - INFO - ...".
_LOG = re.compile(
    r"^\s*(?:(?:DEBUG|INFO|WARNING|WARN)\s*[:|\]-]|\[(?:[DIW]|DEBUG|INFO|WARNING)[ \]]|"
    r"\S.*\s-\s(?:DEBUG|INFO|WARNING)\s-\s|\d{4}-\d\d-\d\d[ T][\d:,.]+\s+(?:DEBUG|INFO|WARNING)\b)"
)
# evalcore's own progress lines (routing, long loops): "<what>: 3/12 generations, 16 s elapsed,
# about 48 s left (...)" / "..., 1 min 34 s elapsed, done" / "..., time left unknown".
_PROGRESS = re.compile(
    r"\b\d+/\d+ [^,]+, \d[\dhmins ]* elapsed, "
    r"(?:about .+ left|done|finishing|time left unknown)"
)
_NOISE_TEXT = ("IProgress not found", "ipywidgets", "huggingface/tokenizers: The current process just got forked")


def is_noise(line: str) -> bool:
    """True for a progress bar or line, a warning or an INFO/WARNING log line."""
    text = line.strip()
    if not text:
        return True
    if _BAR.search(text) or _BAR_COUNTS.search(text) or _PROGRESS.search(text):
        return True
    if _WARNING.search(text) or _LOG.search(text):
        return True
    return any(marker in text for marker in _NOISE_TEXT)


def _lines(text: str) -> list[str]:
    """Split stream text into lines as a terminal shows them: a carriage return starts the
    line over (progress bars redraw themselves this way)."""
    out = []
    for raw in text.split("\n"):
        out.append(raw.split("\r")[-1] if "\r" in raw.rstrip("\r") else raw.rstrip("\r"))
    return out


def clean_stderr(text: str) -> tuple[str, str]:
    """Split stderr text into what stays in the report and what is noise.

    A warning line takes the indented source line printed after it with it
    (``  warnings.warn(...)``).

    Args:
        text: The text of one stderr stream output.

    Returns:
        ``(kept, removed)``; ``kept`` is empty when everything was noise.
    """
    kept: list[str] = []
    removed: list[str] = []
    after_warning = False
    for line in _lines(text):
        if after_warning and line.startswith((" ", "\t")) and line.strip():
            removed.append(line)
            continue
        after_warning = bool(_WARNING.search(line))
        (removed if is_noise(line) else kept).append(line)
    kept_text = "\n".join(kept).strip("\n")
    return (kept_text + "\n" if kept_text else ""), "\n".join(x for x in removed if x.strip())


def clean_notebook(nb: Any) -> list[str]:
    """Remove noise from the stderr stream outputs of a notebook (in place).

    Args:
        nb: An ``nbformat`` notebook node.

    Returns:
        The removed text, one entry per cleaned output (with its cell number).
    """
    removed_all: list[str] = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code" or not cell.get("outputs"):
            continue
        outputs = []
        for output in cell["outputs"]:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = output.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                kept, removed = clean_stderr(text)
                if removed:
                    removed_all.append(f"--- cell {number}\n{removed}")
                if not kept:
                    continue
                output["text"] = kept
            outputs.append(output)
        cell["outputs"] = outputs
    return removed_all


def clean_notebook_file(path: str | os.PathLike[str], log: str | os.PathLike[str] | None = None) -> int:
    """Clean an executed notebook file in place; append what was removed to ``log``.

    Args:
        path: The executed ``.ipynb``.
        log: File that receives the removed lines (appended); ``None`` drops them.

    Returns:
        The number of lines removed (0: the file was not rewritten).
    """
    import nbformat

    from evalcore._io import write_text_atomic

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    removed = clean_notebook(nb)
    if not removed:
        return 0
    write_text_atomic(path, nbformat.writes(nb))
    text = "\n".join(removed) + "\n"
    if log is not None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(text)
    return sum(1 for chunk in removed for line in chunk.splitlines()[1:] if line.strip())
