"""Export executed notebooks: HTML with inputs hidden (nbconvert), PDF by headless Chromium.

nbconvert's ``webpdf`` exporter cannot use a system Chromium and LaTeX is very large, so the
PDF is made by printing the HTML export with the Debian ``chromium`` package.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._html import content_security_policy as content_security_policy  # re-exported: one CSP
from evalcore._io import atomic_path, write_bytes_atomic
from evalcore.errors import EvalcoreError
from evalcore.reporting._pdf_layout import pdf_layout_problems as pdf_layout_problems
from evalcore.reporting._record import RECORD_MIMETYPE, _read_notebook

__all__ = [
    "CHROMIUM_HINT",
    "ExportResult",
    "export_notebook",
    "extract_figures",
    "find_chromium",
    "html_to_pdf",
    "notebook_to_html",
    "pdf_layout_problems",
]

CHROMIUM_HINT = (
    "Chromium not found: HTML only. For PDFs install it (Debian/Ubuntu: "
    "`apt-get install chromium`) or set EVALCORE_CHROMIUM to a Chromium/Chrome binary."
)
# Printing: landscape A4 like a document. Headings stay with what follows them (a heading is
# never the last line of a page), figures and table rows are not split, long tables repeat
# their header, cells wrap between words only (never "differen/ce"), and a table wider than the
# page gets smaller type (a script measures it when the page is opened for printing); code keeps
# its lines on screen (scrolls) and wraps between words, never inside one, on paper.
_PAGE_WIDTH_PX = 1032  # A4 landscape (297 mm) less 2 × 12 mm margins, at 96 px per inch
_PAGE_HEIGHT_PX = 703  # 210 mm less 2 × 12 mm
_WINDOW_HEIGHT_PX = 1400  # the window the page is laid out in before printing
_PRINT_RULES = """
{p}body {{ margin: 0 !important; padding: 0 !important; background: white; }}
{p}.jp-Notebook {{ padding: 0 !important; }}
{p}.jp-OutputArea-output, {p}.jp-RenderedHTMLCommon, {p}.jp-RenderedHTML {{ overflow: visible !important; }}
{p}.jp-mod-noOutputs.jp-mod-noInput {{ display: none; }}
{p}h1, {p}h2, {p}h3, {p}h4, {p}h5, {p}h6 {{ break-after: avoid-page; page-break-after: avoid; break-inside: avoid; }}
{p}.jp-MarkdownCell {{ break-after: avoid-page; page-break-after: avoid; }}
{p}.jp-OutputArea-child:has(.jp-RenderedMarkdown > :is(h1, h2, h3, h4, h5, h6):last-child) {{
  break-after: avoid-page; }}
{p}img, {p}svg, {p}.jp-RenderedImage, {p}tr, {p}pre, {p}p {{ break-inside: avoid; page-break-inside: avoid; }}
{p}thead {{ display: table-header-group; }}
{p}.jp-RenderedHTMLCommon table {{ font-size: 8pt; table-layout: auto; max-width: 100%; margin-left: 0; }}
{p}.jp-RenderedHTMLCommon th, {p}.jp-RenderedHTMLCommon td {{
  word-break: normal !important; overflow-wrap: normal !important; hyphens: manual; max-width: 32em; }}
{p}.jp-RenderedHTMLCommon th {{ white-space: normal !important; vertical-align: bottom; }}
{p}.jp-RenderedHTMLCommon td pre {{ white-space: pre-wrap !important; overflow-wrap: normal !important;
  word-break: normal !important; overflow-x: visible !important; max-width: 100% !important; font-size: 0.95em; }}
{p}img {{ max-width: 100% !important; max-height: 150mm; width: auto; height: auto; object-fit: contain; }}
"""
_PRINT_CSS = (
    "<style>\n@page { size: A4 landscape; margin: 12mm; }\n@media print {"
    + _PRINT_RULES.format(p="")
    + "}\n"
    + _PRINT_RULES.format(p="html.evalcore-print ")
    + "</style>\n"
    + """<script>
(function () {
  // Opened for printing (URL ending in #print, as html_to_pdf does): lay out as on paper, keep
  // every heading with what follows it (a markdown cell, or a markdown output holding a
  // heading, is wrapped with the next block in a box that is not split across pages when the
  // two fit on one page), and shrink the type of any table wider than the page, to 5.5pt.
  if (location.hash !== "#print") return;
  var PAGE_HEIGHT = %(page_height)d;
  document.documentElement.classList.add("evalcore-print");
  function visible(el) { return el.getBoundingClientRect().height > 0; }
  function blocks() {
    var out = [];
    document.querySelectorAll(".jp-Cell").forEach(function (cell) {
      if (!visible(cell)) return;
      if (cell.classList.contains("jp-MarkdownCell")) { out.push(cell); return; }
      cell.querySelectorAll(".jp-OutputArea-child").forEach(function (child) {
        if (visible(child)) out.push(child);
      });
    });
    return out;
  }
  function leads(el) {
    // a markdown cell, a markdown output holding a heading, or a short markdown output (a
    // sentence introducing the table or figure below it)
    if (el.classList.contains("jp-MarkdownCell")) return true;
    var md = el.querySelector(".jp-RenderedMarkdown");
    if (md === null) return false;
    return md.querySelector("h1, h2, h3, h4, h5, h6") !== null || el.getBoundingClientRect().height < 90;
  }
  function keep() {
    var list = blocks(), i = 0;
    while (i < list.length) {
      if (!leads(list[i])) { i++; continue; }
      var j = i;
      while (j < list.length - 1 && leads(list[j])) j++;
      var group = list.slice(i, j + 1);
      var height = group.reduce(function (h, el) { return h + el.getBoundingClientRect().height; }, 0);
      var last = group[group.length - 1], img = last.querySelector("img");
      if (group.length > 1 && height >= 0.95 * PAGE_HEIGHT && img !== null) {
        // a figure too tall to share its page with its heading is drawn smaller
        var room = img.getBoundingClientRect().height - (height - 0.95 * PAGE_HEIGHT);
        if (room >= 0.45 * PAGE_HEIGHT) {
          img.style.maxHeight = room + "px";
          height = group.reduce(function (h, el) { return h + el.getBoundingClientRect().height; }, 0);
        }
      }
      if (group.length > 1 && height < 0.95 * PAGE_HEIGHT) {
        var wrap = document.createElement("div");
        wrap.className = "evalcore-keep";
        wrap.style.breakInside = "avoid";
        group[0].parentNode.insertBefore(wrap, group[0]);
        group.forEach(function (el) { wrap.appendChild(el); });
      }
      i = j + 1;
    }
  }
  function fit() {
    var width = document.documentElement.clientWidth;
    document.querySelectorAll("table").forEach(function (t) {
      var size = 8;
      function wide() { return t.getBoundingClientRect().right > width + 1; }
      while (wide() && size > 5.5) {
        size -= 0.5;
        t.style.fontSize = size + "pt";
      }
      if (wide()) {
        // snake_case column names may wrap after an underscore (between their words)
        t.querySelectorAll("th").forEach(function (th) {
          if (th.children.length === 0) th.innerHTML = th.innerHTML.replace(/_/g, "_<wbr>");
        });
      }
      if (wide()) {
        // still wider than the page: scale the whole table down rather than cut it off
        var left = t.getBoundingClientRect().left;
        t.style.zoom = Math.max(0.4, (width - left) / (t.getBoundingClientRect().right - left));
      }
    });
    keep();
  }
  // on "load": the embedded images are decoded and have their size (printing waits for it)
  if (document.readyState === "complete") fit();
  else window.addEventListener("load", fit);
})();
</script>
""".replace("%(page_height)d", str(_PAGE_HEIGHT_PX))  # JavaScript: str.format would need every brace doubled
)
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


_PRINT_SCRIPT = _PRINT_CSS.split("<script>", 1)[1].split("</script>", 1)[0]
_EXPORT_CSP = content_security_policy(_PRINT_SCRIPT)
# nbconvert's loader of mermaid.js (fetched from a CDN when a page holds a mermaid diagram): a
# report loads nothing from the network, and a diagram stays readable as its source text
_MERMAID_LOADER = re.compile(
    r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.DOTALL
)


def _exporter_class() -> Any:
    """nbconvert's ``HTMLExporter``, rendering Markdown *outputs* as text-safe Markdown.

    A Markdown output (``display(Markdown(f"... {note}"))``) may carry what a model or an agent
    wrote (a tool name, a reply); nbconvert renders its raw HTML as markup. Here such
    outputs are rendered with nbconvert's own renderer with HTML escaped (mistune's
    ``escape=True``), ``javascript:`` and other harmful links disabled, a mermaid block shown as
    code and an ``attachment:`` image left as a link (it would otherwise stop the export).
    Markdown cells, written by the notebook's author, render as before.
    """
    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class _OutputRenderer(IPythonRenderer):
        def block_mermaidjs(self, code: str) -> str:
            return super(IPythonRenderer, self).block_code(code, info=None)

        def _embed_image_or_attachment(self, src: str) -> str:
            return src

    class _ReportExporter(HTMLExporter):
        @pass_context
        def markdown2html(self, context: Any, source: str) -> str:
            cell = context.get("cell", {}) or {}
            if cell.get("cell_type") != "code":
                return super().markdown2html(context, source)
            renderer = _OutputRenderer(
                escape=True,
                allow_harmful_protocols=False,
                embed_images=False,
                anchor_link_text=self.anchor_link_text,
                exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options,
            )
            return MarkdownWithMath(renderer=renderer).render(source)

    return _ReportExporter


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


def _without_records(nb: Any) -> Any:
    """The notebook without the outputs of :func:`evalcore.reporting.record`.

    Records are machine-readable (``collect`` reads them from the ``.ipynb``; the sidecar
    ``records.json`` holds them too); in a report their JSON fallback text is noise beside the
    tables and figures that show the same numbers to a reader.
    """
    from evalcore.reporting._clean import clean_stderr

    for cell in nb.cells:
        if cell.get("cell_type") == "code" and cell.get("outputs"):
            cell["outputs"] = [o for o in cell["outputs"] if RECORD_MIMETYPE not in (o.get("data") or {})]
            # a notebook exported by hand (not cleaned by the suite): its progress bars and lines,
            # warnings and log lines on stderr stay out of the report too (issue 39)
            for o in cell["outputs"]:
                if o.get("output_type") == "stream" and o.get("name") == "stderr":
                    text = o.get("text", "")
                    o["text"] = clean_stderr(text if isinstance(text, str) else "".join(text))[0]
            cell["outputs"] = [o for o in cell["outputs"] if o.get("name") != "stderr" or o.get("text", "").strip()]
    nb.cells = _without_empty_sections(nb.cells)
    return nb


_HEADING_LINE = re.compile(r"^\s{0,3}(#{1,6})\s")


def _heading_level(cell: Any) -> int | None:
    """The level of a markdown cell made only of one heading line (else ``None``)."""
    if cell.get("cell_type") != "markdown":
        return None
    lines = [ln for ln in "".join(cell.get("source") or "").splitlines() if ln.strip()]
    if len(lines) != 1:
        return None
    m = _HEADING_LINE.match(lines[0])
    return len(m.group(1)) if m else None


def _shows_something(cell: Any) -> bool:
    """Whether a cell is visible in an export that hides code inputs."""
    if cell.get("cell_type") == "markdown":
        return bool("".join(cell.get("source") or "").strip())
    if cell.get("cell_type") == "code":
        return bool(cell.get("outputs"))
    return False


def _without_empty_sections(cells: list[Any]) -> list[Any]:
    """Leave out heading-only cells whose section shows nothing in the export.

    With inputs hidden, a section whose code cells have no outputs left (e.g. one that only
    calls ``record``) would print as a lone heading at the end of a page.
    """
    keep = []
    for i, cell in enumerate(cells):
        level = _heading_level(cell)
        if level is not None:
            visible = False
            for later in cells[i + 1 :]:
                later_level = _heading_level(later)
                if later_level is not None and later_level <= level:
                    break
                if later_level is None and _shows_something(later):
                    visible = True
                    break
            if not visible:
                continue
        keep.append(cell)
    return keep


def notebook_to_html(notebook: str | os.PathLike[str], html: str | os.PathLike[str] | None = None) -> Path:
    """Export a notebook to standalone HTML with code inputs and prompts hidden.

    Uses ``nbconvert.HTMLExporter(exclude_input=True)``; outputs of ``record`` are left out
    (they stay in the ``.ipynb`` for ``collect``); images are embedded, and no
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
    src = Path(notebook)
    out = Path(html) if html is not None else src.with_suffix(".html")
    nb = _without_records(_read_notebook(src))
    exporter = _exporter_class()(
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
    body = _MERMAID_LOADER.sub("", body)
    body = body.replace("</head>", _PRINT_CSS + "</head>", 1)
    body = _rebase_links(body, src.parent, out.parent)
    # the policy comes first in <head>, before any script or markup of the notebook
    body = re.sub(r"<head>", lambda m: m.group(0) + _EXPORT_CSP, body, count=1)
    # a lone surrogate (a JSON "\\ud800" in an output) is written as its escape, not refused
    write_bytes_atomic(out, body.encode("utf-8", "backslashreplace"))
    return out


_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)(")')


def _rebase_links(body: str, src_dir: Path, out_dir: Path) -> str:
    """Relative links of a notebook (its sample browser, written beside the executed notebook)
    made relative to the folder the HTML is written to, so ``evalcore report X.ipynb --output
    elsewhere/`` keeps them working; a link to nothing that exists, an absolute one (a scheme,
    ``/``) or a fragment is left as it is.
    """
    import html as html_lib
    from urllib.parse import quote, unquote, urlsplit

    if src_dir.resolve() == out_dir.resolve():
        return body

    def fix(match: re.Match[str]) -> str:
        href = html_lib.unescape(match.group(2))
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
            return match.group(0)
        target = (src_dir / unquote(parts.path)).resolve()
        if not target.exists():
            return match.group(0)
        new = quote(Path(os.path.relpath(target, out_dir.resolve())).as_posix())
        new += f"?{parts.query}" if parts.query else ""
        new += f"#{parts.fragment}" if parts.fragment else ""
        return match.group(1) + html_lib.escape(new, quote=True) + match.group(3)

    return _HREF.sub(fix, body)


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
    from evalcore.reporting._chromium import BROWSER_SWITCHES, PrinterBroken, PrintFailed, PrintTimedOut, active_printer

    printer = active_printer(binary)  # inside a notebook-suite run: one browser for every page
    if printer is not None:
        try:
            data = printer.print_pdf(src.as_uri() + "#print", timeout_s)
        except PrintTimedOut as exc:
            raise EvalcoreError(f"Chromium did not finish printing within {timeout_s:.0f} s", path=src) from exc
        except PrintFailed as exc:
            raise EvalcoreError(f"Chromium could not print the page: {exc}", path=src) from exc
        except PrinterBroken:
            pass  # printed below with a browser of its own (and so are the next pages)
        else:
            if not data:
                raise EvalcoreError("Chromium could not print the page: an empty PDF", path=src)
            write_bytes_atomic(out, data)
            return out
    profile = tempfile.mkdtemp(prefix="evalcore-chromium-")
    try:
        with atomic_path(out, suffix=".pdf") as tmp:
            cmd = [
                binary,
                *BROWSER_SWITCHES,
                f"--user-data-dir={profile}",
                f"--print-to-pdf={tmp}",
                "--no-pdf-header-footer",
                f"--window-size={_PAGE_WIDTH_PX},{_WINDOW_HEIGHT_PX}",
                src.as_uri() + "#print",
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


def pdf_session(pdf: bool = True) -> contextlib.AbstractContextManager[None]:
    """A block in which every :func:`html_to_pdf` prints with one Chromium, started at the first
    page and ended with the block (a suite's or a folder's exports; see ``_chromium.py``)."""
    from evalcore.reporting._chromium import shared_printer

    return shared_printer(find_chromium() if pdf else None, (_PAGE_WIDTH_PX, _WINDOW_HEIGHT_PX))


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
            write_bytes_atomic(target, raw)
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
