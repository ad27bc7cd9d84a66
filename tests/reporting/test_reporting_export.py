"""HTML export with inputs hidden, PNG extraction, PDF printing with headless Chromium."""

from __future__ import annotations

import base64
import io
import shutil
import subprocess

import nbformat
import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.reporting import (
    export_notebook,
    extract_figures,
    html_to_pdf,
    notebook_to_html,
)


def _png(width: int = 60, height: int = 40) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width / 20, height / 20), dpi=20)
    ax.bar([0, 1, 2], [3, 1, 2], color="tab:red")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


@pytest.fixture
def executed(tmp_path):
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("SECRET_SOURCE_LINE = 41 + 1\nprint(SECRET_SOURCE_LINE)")
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="The answer is 42\n"),
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(_png()).decode()}),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# Accuracy report\n\nSome **bold** words."), code]
    path = tmp_path / "nb" / "executed.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def test_html_hides_inputs_and_keeps_outputs(executed):
    html = notebook_to_html(executed).read_text()
    assert "The answer is 42" in html
    assert "Accuracy report" in html
    assert "SECRET_SOURCE_LINE = 41" not in html
    assert "data:image/png;base64," in html
    assert '<script src="">' not in html


def test_html_leaves_out_record_outputs_and_the_notebook_keeps_them(executed):
    from evalcore.reporting import collect
    from evalcore.reporting._record import RECORD_MIMETYPE

    nb = nbformat.read(executed, as_version=4)
    nb.cells[1].outputs.append(nbformat.v4.new_output("display_data", data={
        RECORD_MIMETYPE: {"name": "accuracy", "value": {"mean": 0.625}},
        "text/plain": 'accuracy = {"mean": 0.625}'}))
    nbformat.write(nb, executed)
    html = notebook_to_html(executed).read_text()
    assert "The answer is 42" in html and "data:image/png;base64," in html
    assert "0.625" not in html and "accuracy =" not in html
    assert collect([executed]).loc[:, "accuracy.mean"].tolist() == [0.625]


def test_html_leaves_out_a_heading_whose_section_shows_nothing(executed):
    """A section that only records numbers would print as a lone heading (seen at a page's end)."""
    from evalcore.reporting._record import RECORD_MIMETYPE

    nb = nbformat.read(executed, as_version=4)
    record_cell = nbformat.v4.new_code_cell("evalcore.record('x', 1)")
    record_cell.outputs = [nbformat.v4.new_output("display_data", data={
        RECORD_MIMETYPE: {"name": "x", "value": 1}, "text/plain": "x = 1"})]
    silent = nbformat.v4.new_code_cell("y = 2")
    nested = nbformat.v4.new_code_cell("print('nested')")
    nested.outputs = [nbformat.v4.new_output("stream", name="stdout", text="NESTED OUTPUT\n")]
    nb.cells += [
        nbformat.v4.new_markdown_cell("## Recorded numbers"), record_cell, silent,
        nbformat.v4.new_markdown_cell("## Parent section"),
        nbformat.v4.new_markdown_cell("### Child section"), nested,
        nbformat.v4.new_markdown_cell("## Trailing heading"),
    ]
    nbformat.write(nb, executed)
    html = notebook_to_html(executed).read_text()
    assert "Recorded numbers" not in html and "Trailing heading" not in html
    assert "Parent section" in html and "Child section" in html and "NESTED OUTPUT" in html
    assert "Accuracy report" in html


def test_extract_figures_writes_pngs(executed, tmp_path):
    (png,) = extract_figures(executed, tmp_path / "figs")
    assert png.name == "cell02_1.png"
    assert png.read_bytes() == _png()


def test_missing_chromium_still_makes_html_and_says_how(executed, monkeypatch):
    monkeypatch.setenv("EVALCORE_CHROMIUM", "/nonexistent/chromium")
    result = export_notebook(executed)
    assert result.html.exists() and result.pdf is None
    assert any("apt-get install chromium" in m for m in result.messages)
    with pytest.raises(EvalcoreError, match="apt-get install chromium"):
        html_to_pdf(result.html)


def test_missing_notebook_is_an_evalcore_error(tmp_path):
    with pytest.raises(EvalcoreError, match="not found"):
        notebook_to_html(tmp_path / "none.ipynb")


@pytest.mark.skipif(shutil.which("chromium") is None or shutil.which("pdftoppm") is None,
                    reason="needs chromium and poppler-utils (apt-get install chromium poppler-utils)")
def test_pdf_page_one_is_not_blank(executed, tmp_path):
    from PIL import Image

    result = export_notebook(executed)
    assert result.pdf is not None and result.pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(result.pdf), str(tmp_path / "page")],
                   check=True)
    (page,) = tmp_path.glob("page*.png")
    pixels = np.asarray(Image.open(page).convert("L"), dtype=float)
    assert pixels.std() > 5.0, "page 1 of the PDF is blank"
    assert (pixels < 128).mean() > 0.001  # some dark ink (text, bars)
