"""Export executed notebooks: HTML with inputs hidden (nbconvert), PDF by headless Chromium.

nbconvert's ``webpdf`` exporter cannot use a system Chromium and LaTeX is very large, so the
PDF is made by printing the HTML export with the Debian ``chromium`` package.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evalcore._io import atomic_path, write_bytes_atomic
from evalcore.errors import EvalcoreError
from evalcore.reporting._record import _read_notebook

__all__ = [
    "CHROMIUM_HINT",
    "ExportResult",
    "export_notebook",
    "extract_figures",
    "find_chromium",
    "html_to_pdf",
    "notebook_to_html",
]

CHROMIUM_HINT = (
    "Chromium not found: HTML only. For PDFs install it (Debian/Ubuntu: "
    "`apt-get install chromium`) or set EVALCORE_CHROMIUM to a Chromium/Chrome binary."
)
# Printing: landscape A4, and wide tables wrap and shrink instead of scrolling off the page.
_PRINT_CSS = """<style>
@page { size: A4 landscape; margin: 12mm; }
@media print {
  .jp-OutputArea-output, .jp-RenderedHTMLCommon, .jp-RenderedHTML { overflow: visible !important; }
  .jp-RenderedHTMLCommon table { font-size: 8pt; table-layout: auto; }
  .jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { word-break: break-word; max-width: 28em; }
  .jp-Cell { break-inside: avoid-page; }
  img { max-width: 100% !important; }
}
</style>
"""
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@dataclass
class ExportResult:
    """What exporting one notebook produced.

    Attributes:
        html: The HTML export.
        pdf: The PDF, or ``None`` when it could not be made.
        figures: PNG files extracted from the notebook's outputs.
        messages: Why something was not made (missing Chromium, a failed print).
    """

    html: Path
    pdf: Path | None = None
    figures: list[Path] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def find_chromium() -> str | None:
    """Locate a Chromium binary: ``$EVALCORE_CHROMIUM``, then the usual names on ``PATH``.

    Returns:
        The executable's path, or ``None`` when none is installed.
    """
    env = os.environ.get("EVALCORE_CHROMIUM")
    if env:
        return env if Path(env).exists() or shutil.which(env) else None
    for name in _CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def notebook_to_html(notebook: str | os.PathLike[str], html: str | os.PathLike[str] | None = None) -> Path:
    """Export a notebook to standalone HTML with code inputs and prompts hidden.

    Uses ``nbconvert.HTMLExporter(exclude_input=True)``; images are embedded, and no
    JavaScript is loaded from the network (MathJax and require.js are left out) so the page
    renders offline and prints quickly.

    Args:
        notebook: The (executed) ``.ipynb``.
        html: Output path; defaults to the notebook's path with ``.html``.

    Returns:
        The HTML file's path.

    Raises:
        EvalcoreError: The notebook is missing or unreadable.
    """
    from nbconvert import HTMLExporter

    src = Path(notebook)
    out = Path(html) if html is not None else src.with_suffix(".html")
    nb = _read_notebook(src)
    exporter = HTMLExporter(
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    for trait, value in (("mathjax_url", ""), ("require_js_url", ""), ("enable_mathjax", False)):
        if exporter.has_trait(trait):
            setattr(exporter, trait, value)
    title = nb.metadata.get("title") or src.stem
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = re.sub(r'<script src="">\s*</script>', "", body)
    body = body.replace("</head>", _PRINT_CSS + "</head>", 1)
    write_bytes_atomic(out, body.encode("utf-8"), chmod=0o644)
    return out


def html_to_pdf(
    html: str | os.PathLike[str],
    pdf: str | os.PathLike[str] | None = None,
    *,
    chromium: str | None = None,
    timeout_s: float = 120.0,
) -> Path:
    """Print an HTML file to PDF with headless Chromium.

    Args:
        html: The HTML file.
        pdf: Output path; defaults to the HTML path with ``.pdf``.
        chromium: The Chromium binary; found with :func:`find_chromium` when ``None``.
        timeout_s: Seconds before the print is abandoned.

    Returns:
        The PDF's path.

    Raises:
        EvalcoreError: The HTML is missing, Chromium is not installed, or printing failed.
    """
    src = Path(html).resolve()
    if not src.exists():
        raise EvalcoreError("HTML file not found", path=src)
    out = Path(pdf) if pdf is not None else src.with_suffix(".pdf")
    binary = chromium or find_chromium()
    if binary is None:
        raise EvalcoreError(CHROMIUM_HINT)
    profile = tempfile.mkdtemp(prefix="evalcore-chromium-")
    try:
        with atomic_path(out, suffix=".pdf", chmod=0o644) as tmp:
            cmd = [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                f"--user-data-dir={profile}",
                f"--print-to-pdf={tmp}",
                "--no-pdf-header-footer",
                src.as_uri(),
            ]
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL, check=False
            )
            if proc.returncode != 0 or tmp.stat().st_size == 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                raise EvalcoreError(
                    f"Chromium could not print the page (exit {proc.returncode}): " + " | ".join(tail),
                    path=src,
                )
    except subprocess.TimeoutExpired as exc:
        raise EvalcoreError(f"Chromium did not finish printing within {timeout_s:.0f} s", path=src) from exc
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return out


def extract_figures(notebook: str | os.PathLike[str], folder: str | os.PathLike[str]) -> list[Path]:
    """Write every ``image/png`` output of a notebook as a PNG file.

    Files are named ``cell<NN>_<k>.png`` after the code cell's position (1-based) and the
    output's index within that cell.

    Args:
        notebook: The executed ``.ipynb``.
        folder: Where to write the PNGs (created if needed).

    Returns:
        The written paths, in notebook order.
    """
    nb = _read_notebook(Path(notebook))
    folder = Path(folder)
    written: list[Path] = []
    for index, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        k = 0
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if not data:
                continue
            k += 1
            raw = base64.b64decode("".join(data) if isinstance(data, list) else data)
            target = folder / f"cell{index:02d}_{k}.png"
            write_bytes_atomic(target, raw, chmod=0o644)
            written.append(target)
    return written


def export_notebook(
    notebook: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    pdf: bool = True,
    figures: bool = True,
) -> ExportResult:
    """Export one executed notebook to HTML (inputs hidden), PDF and PNG figures.

    A missing Chromium or a failed print does not raise: the HTML is still made and the
    reason is in :attr:`ExportResult.messages`.

    Args:
        notebook: The executed ``.ipynb``.
        out_dir: Output folder; defaults to the notebook's folder.
        pdf: Also print the HTML to PDF.
        figures: Also extract the PNG outputs into ``<out_dir>/figures/``.

    Returns:
        What was written.

    Raises:
        EvalcoreError: The notebook is missing or unreadable.
    """
    src = Path(notebook)
    folder = Path(out_dir) if out_dir is not None else src.parent
    html = notebook_to_html(src, folder / f"{src.stem}.html")
    result = ExportResult(html=html)
    if figures:
        result.figures = extract_figures(src, folder / "figures")
    if pdf:
        binary = find_chromium()
        if binary is None:
            result.messages.append(CHROMIUM_HINT)
        else:
            try:
                result.pdf = html_to_pdf(html, folder / f"{src.stem}.pdf", chromium=binary)
            except EvalcoreError as exc:
                result.messages.append(f"PDF not made: {exc}")
    return result
