"""Checking an exported PDF's layout against its HTML (:func:`pdf_layout_problems`, with
poppler's ``pdfinfo``/``pdftotext``/``pdftoppm``); re-exported by :mod:`evalcore.reporting._export`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from evalcore.errors import EvalcoreError

_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.S | re.I)
_TH = re.compile(r"<th[^>]*>(.*?)</th>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>')


def _plain(fragment: str) -> str:
    import html as _html

    return " ".join(_html.unescape(_TAG.sub(" ", fragment)).replace("¶", " ").split())


def _poppler(*args: str) -> str:
    binary = shutil.which(args[0])
    if binary is None:
        raise EvalcoreError(f"{args[0]} not found: install poppler-utils (apt-get install poppler-utils)")
    proc = subprocess.run([binary, *args[1:]], capture_output=True, check=False)
    if proc.returncode != 0:
        raise EvalcoreError(f"{args[0]} failed: {proc.stderr.decode(errors='replace').strip()[:200]}")
    return proc.stdout.decode("utf-8", errors="replace")


def _ink_bottom(pdf: Path, page: int, dpi: int = 36) -> float:
    """The lowest point (in PDF points from the top) where page ``page`` has ink."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="evalcore-pdf-") as tmp:
        prefix = Path(tmp) / "page"
        _poppler(
            "pdftoppm", "-r", str(dpi), "-gray", "-singlefile", "-f", str(page), "-l", str(page), str(pdf), str(prefix)
        )
        data = (prefix.with_suffix(".pgm")).read_bytes()
    # binary PGM: "P5", width, height, maxval, then one byte per pixel
    fields: list[int] = []
    pos = 2
    while len(fields) < 3:
        while data[pos : pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(int(data[pos:end]))
        pos = end
    width, height, _ = fields
    pixels = np.frombuffer(data[pos + 1 : pos + 1 + width * height], dtype=np.uint8).reshape(height, width)
    rows = np.flatnonzero((pixels < 200).any(axis=1))
    return float(rows.max() + 1) * 72.0 / dpi if rows.size else 0.0


def pdf_layout_problems(pdf: str | os.PathLike[str], html: str | os.PathLike[str]) -> list[str]:
    """What makes a printed report read badly, found on the PDF's pages (poppler-utils).

    Checks that no heading of ``html`` (``h1``–``h6``) is the last thing on a page (below the
    heading's last line the rendered page, ``pdftoppm``, has ink: text, a table or a figure),
    and that every word of every table header is printed whole (a token of ``pdftotext``; the
    parts of a snake_case name count as words), so none is broken across lines
    (``differen/ce``, ``HumanEv/al/27``) or cut off at the page edge.

    Args:
        pdf: The printed PDF.
        html: The HTML it was printed from.

    Returns:
        One sentence per problem (empty when the layout is fine).

    Raises:
        EvalcoreError: poppler-utils (``pdftotext``, ``pdftoppm``) is not installed.
    """
    pdf, page_html = Path(pdf), Path(html).read_text("utf-8", errors="replace")
    headings = [h for h in (_plain(m.group(2)) for m in _HEADING.finditer(page_html)) if h]
    info = re.search(r"Pages:\s+(\d+)", _poppler("pdfinfo", str(pdf)))
    if info is None:
        raise EvalcoreError("pdfinfo reports no page count", path=pdf)
    pages = int(info.group(1))
    problems: list[str] = []
    for page in range(1, pages + 1):
        words = [
            (float(m.group(2)), float(m.group(4)), _plain(m.group(5)))
            for m in _WORD.finditer(
                _poppler("pdftotext", "-bbox-layout", "-f", str(page), "-l", str(page), str(pdf), "-")
            )
        ]
        lines: dict[float, list[str]] = {}
        bottoms: dict[float, float] = {}
        for y_min, y_max, text in words:
            key = round(y_min, 0)
            lines.setdefault(key, []).append(text)
            bottoms[key] = max(bottoms.get(key, 0.0), y_max)
        found = []
        for key, texts in lines.items():
            text = " ".join(texts)
            for heading in headings:
                if text == heading or (len(text) >= 8 and heading.endswith(text)):
                    found.append((bottoms[key], heading))
        if not found:
            continue
        ink = _ink_bottom(pdf, page)
        for bottom, heading in found:
            if ink <= bottom + 3.0:
                problems.append(f"page {page} ends with the heading {heading!r}")
    # snake_case names may wrap after an underscore: their parts are the words
    tokens: set[str] = set()
    for token in _poppler("pdftotext", "-raw", str(pdf), "-").split():
        tokens.update(part.strip(".,;:()[]{}\"'") for part in token.split("_"))
    header_words = {
        part.strip(".,;:()[]{}\"'")
        for th in _TH.findall(page_html)
        for w in _plain(th).split()
        for part in w.split("_")
    }
    for word in sorted(w for w in header_words if len(w) >= 4 and re.fullmatch(r"[\w/.\-@]+", w)):
        if word not in tokens:
            problems.append(f"table header word {word!r} is not printed whole (broken across lines or cut off)")
    return problems
