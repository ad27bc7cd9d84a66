"""``evalcore report``: export executed notebooks (or a whole suite run) on their own."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from evalcore.errors import EvalcoreError
from evalcore.reporting._export import ExportResult, export_notebook, pdf_session
from evalcore.reporting._notebooks import EntryResult, has_figures, write_index

__all__ = ["report"]


def _reexport_suite(suite_dir: Path, pdf: bool, say: Callable[[str], None]) -> list[ExportResult]:
    manifest_path = suite_dir / "suite.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        runs = [EntryResult(**run) for run in manifest["runs"]]
        meta = dict(manifest.get("meta", {}))
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EvalcoreError(f"not a suite manifest: {exc}", path=manifest_path) from exc
    with pdf_session(pdf):
        exported = _reexport_entries(suite_dir, runs, pdf, say)
    index = write_index(suite_dir, runs, meta)
    say(f"index: {index}")
    return exported


def _reexport_entries(
    suite_dir: Path, runs: list[EntryResult], pdf: bool, say: Callable[[str], None]
) -> list[ExportResult]:
    exported: list[ExportResult] = []
    for run in runs:
        if not run.executed or not (suite_dir / run.executed).exists():
            continue
        notebook = suite_dir / run.executed
        result = export_notebook(notebook, notebook.parent, pdf=pdf, figures=not has_figures(notebook.parent))
        run.html = str(result.html.relative_to(suite_dir))
        run.pdf = str(result.pdf.relative_to(suite_dir)) if result.pdf else None
        run.figures = sorted(str(p.relative_to(suite_dir)) for p in (notebook.parent / "figures").glob("*.png"))
        exported.append(result)
        say(f"{run.name}: {result.html}" + (f", {result.pdf}" if result.pdf else ""))
        for message in result.messages:
            say(f"  {message}")
    return exported


def report(
    path: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    pdf: bool = True,
    echo: Callable[[str], None] | None = print,
) -> list[ExportResult]:
    """Export executed notebooks to HTML (inputs hidden), PDF and PNG figures.

    Args:
        path: An executed ``.ipynb``; a suite run folder (``reports/<id>`` or
            ``reports/latest``: every notebook is re-exported and ``index.html`` rebuilt);
            or any folder (every ``*.ipynb`` inside it, recursively).
        output: Folder for the exports of a single notebook; next to it when ``None``.
        pdf: Also print to PDF with headless Chromium.
        echo: Receives progress lines; ``None`` is silent.

    Returns:
        One :class:`ExportResult` per exported notebook.

    Raises:
        EvalcoreError: The path does not exist or holds no notebook.
    """
    say = echo or (lambda _msg: None)
    target = Path(path)
    if not target.exists():
        raise EvalcoreError("no such notebook or folder", path=target)
    if target.is_file():
        if target.suffix != ".ipynb":
            raise EvalcoreError("expected an .ipynb notebook or a folder", path=target)
        result = export_notebook(target, output, pdf=pdf)
        say(f"html: {result.html}")
        if result.pdf:
            say(f"pdf: {result.pdf}")
        for message in result.messages:
            say(message)
        return [result]
    if (target / "suite.json").exists():
        return _reexport_suite(target.resolve(), pdf, say)
    notebooks = [p for p in sorted(target.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]
    if not notebooks:
        raise EvalcoreError("no .ipynb notebooks in this folder", path=target)
    results = []
    with pdf_session(pdf):
        for notebook in notebooks:
            result = export_notebook(notebook, None, pdf=pdf)
            say(f"{notebook}: {result.html}" + (f", {result.pdf}" if result.pdf else ""))
            for message in result.messages:
                say(f"  {message}")
            results.append(result)
    return results
