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
    nb.cells[1].outputs.append(
        nbformat.v4.new_output(
            "display_data",
            data={
                RECORD_MIMETYPE: {"name": "accuracy", "value": {"mean": 0.625}},
                "text/plain": 'accuracy = {"mean": 0.625}',
            },
        )
    )
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
    record_cell.outputs = [
        nbformat.v4.new_output("display_data", data={RECORD_MIMETYPE: {"name": "x", "value": 1}, "text/plain": "x = 1"})
    ]
    silent = nbformat.v4.new_code_cell("y = 2")
    nested = nbformat.v4.new_code_cell("print('nested')")
    nested.outputs = [nbformat.v4.new_output("stream", name="stdout", text="NESTED OUTPUT\n")]
    nb.cells += [
        nbformat.v4.new_markdown_cell("## Recorded numbers"),
        record_cell,
        silent,
        nbformat.v4.new_markdown_cell("## Parent section"),
        nbformat.v4.new_markdown_cell("### Child section"),
        nested,
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


@pytest.mark.skipif(
    shutil.which("chromium") is None or shutil.which("pdftoppm") is None,
    reason="needs chromium and poppler-utils (apt-get install chromium poppler-utils)",
)
def test_pdf_page_one_is_not_blank(executed, tmp_path):
    from PIL import Image

    result = export_notebook(executed)
    assert result.pdf is not None and result.pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run(
        ["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(result.pdf), str(tmp_path / "page")], check=True
    )
    (page,) = tmp_path.glob("page*.png")
    pixels = np.asarray(Image.open(page).convert("L"), dtype=float)
    assert pixels.std() > 5.0, "page 1 of the PDF is blank"
    assert (pixels < 128).mean() > 0.001  # some dark ink (text, bars)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_report_files_get_the_mode_the_umask_gives(executed, tmp_path, monkeypatch, umask, mode):
    """Every report file is written as a plain ``open()`` would (``0o666`` less the umask): with
    umask 077 nothing is readable by group or others. Chromium's PDF too, when it is installed."""
    import os
    import stat

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from evalcore.reporting import record, save_figure
    from evalcore.reporting._clean import clean_notebook_file
    from evalcore.reporting._notebooks import EntryResult, write_index
    from evalcore.routing._default import DEFAULT_STRATEGIES, strategy_template

    with_pdf = umask == 0o077 and shutil.which("chromium") is not None
    if not with_pdf:
        monkeypatch.setenv("EVALCORE_CHROMIUM", "/nonexistent/chromium")
    suite = tmp_path / "suite"
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(suite / "run"))
    nb = nbformat.read(executed, as_version=4)  # a progress bar on stderr: the cleaner rewrites the file
    nb.cells[1].outputs.append(nbformat.v4.new_output("stream", name="stderr", text="  0%|          | 0/3\n"))
    nbformat.write(nb, executed)
    old = os.umask(umask)
    try:
        assert clean_notebook_file(executed) == 1
        result = export_notebook(executed, tmp_path / "out")
        written = [executed, result.html, *result.figures]
        if with_pdf:
            assert result.pdf is not None
            written.append(result.pdf)
        record("accuracy", 0.5)
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, 1], [0, 1])
        written.append(save_figure(fig, "line"))
        plt.close(fig)
        written.append(suite / "run" / "records.json")
        index = write_index(
            suite, [EntryResult(name="run", notebook="nb.ipynb", status="ok", records={"accuracy": 0.5})], {"id": "s"}
        )
        written += [index, suite / "suite.json", suite / "summary.csv"]
        written.append(strategy_template("gsm8k", DEFAULT_STRATEGIES[0], tmp_path / "templates"))
    finally:
        os.umask(old)
    assert result.figures  # the PNG extraction ran
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name
