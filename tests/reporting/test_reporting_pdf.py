"""PDFs that read like documents: every page rendered (pdftoppm) and read (pdftotext) to check
that no heading is the last thing on a page and that table headers print whole words."""

from __future__ import annotations

import base64
import io
import shutil

import nbformat
import numpy as np
import pandas as pd
import pytest

from evalcore.reporting import export_notebook, format_table, html_to_pdf
from evalcore.reporting._export import find_chromium, pdf_layout_problems

pytestmark = pytest.mark.skipif(
    find_chromium() is None or shutil.which("pdftoppm") is None or shutil.which("pdftotext") is None,
    reason="needs chromium and poppler-utils (make system-deps)",
)


def _figure(height_in: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, height_in), dpi=100)
    ax.plot(np.arange(20), np.arange(20) ** 1.5, color="tab:blue")
    ax.set_title("a figure")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _html_output(html: str):
    return nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": "table"})


def _markdown_output(text: str):
    return nbformat.v4.new_output("display_data", data={"text/markdown": text, "text/plain": text})


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report shaped like the suite's: headings in markdown cells and in outputs, tall figures,
    long and wide tables, item ids and long words in headers."""
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.random((6, 22)), columns=[f"mean_quality_ci_low_{i}" for i in range(22)])
    pivot = pd.DataFrame(
        rng.integers(0, 2, (4, 9)), columns=[f"HumanEval/{i}" for i in (27, 103, 118, 129, 142, 151, 160, 161, 163)]
    )
    pivot.insert(0, "difference", rng.random(4))
    long = pd.DataFrame(
        {
            "item_id": [f"gsm8k-{i}" for i in range(60)],
            "difference": rng.random(60),
            "explanation": ["a long sentence of plain words that wraps inside its cell " * 2] * 60,
        }
    )
    cells = [nbformat.v4.new_markdown_cell("# Layout report\n\nAn introduction paragraph.")]
    for k in range(5):
        cells.append(nbformat.v4.new_markdown_cell(f"## Section {k} with a figure\n\nOne sentence about it."))
        code = nbformat.v4.new_code_cell("pass")
        code.outputs = [
            nbformat.v4.new_output("display_data", data={"image/png": _figure(4.0 + k % 3), "text/plain": "fig"})
        ]
        cells.append(code)
    code = nbformat.v4.new_code_cell("pass")
    code.outputs = [
        _markdown_output("## Wide table\n\nTwenty-two columns."),
        _html_output(format_table(wide, headers=False).to_html()),
        _markdown_output("### Items as columns"),
        _html_output(pivot.to_html()),
        _markdown_output("## A long table"),
        _html_output(format_table(long).to_html()),
    ]
    cells.append(code)
    cells.append(nbformat.v4.new_markdown_cell("## Closing section\n\nThe end."))
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path_factory.mktemp("pdf") / "layout.ipynb"
    nbformat.write(nb, path)
    result = export_notebook(path, figures=False)
    assert result.pdf is not None, result.messages
    return result


def test_no_heading_ends_a_page_and_headers_print_whole_words(report):
    assert pdf_layout_problems(report.pdf, report.html) == []


def test_wide_table_fits_the_page_with_smaller_type(report):
    import subprocess

    text = subprocess.run(
        ["pdftotext", "-layout", str(report.pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    # the last column of the 22-column table is on the page, not cut off at its edge: its
    # values are printed, and its name wraps after an underscore (between words)
    wide = np.random.default_rng(0).random((6, 22))
    for row in wide:
        assert f"{row[-1]:.3f}" in text
    assert "ci_low_" in text and "\n" not in "ci_low_"
    for item in ("HumanEval/27", "HumanEval/163", "difference"):
        assert item in text


def test_layout_check_finds_a_stranded_heading_and_a_broken_header(tmp_path):
    html = tmp_path / "bad.html"
    html.write_text(
        "<html><head><style>@page { size: A4 landscape; margin: 12mm; }</style></head><body>"
        "<h2>A stranded heading</h2><div style='break-before: page'><p>Its content, on the next page.</p></div>"
        "<table style='width: 40px'><tr><th style='word-break: break-all'>difference</th>"
        "<th style='word-break: break-all'>HumanEval/27</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "</body></html>"
    )
    pdf = html_to_pdf(html)
    problems = pdf_layout_problems(pdf, html)
    assert "page 1 ends with the heading 'A stranded heading'" in problems
    assert any("'difference'" in p for p in problems)
    assert any("'HumanEval/27'" in p for p in problems)
