"""One Chromium prints every PDF of a suite run (evalcore/reporting/_chromium.py): the same pages
as a browser per page, rendered and compared; a page that does not load in time fails alone; a
browser that dies or cannot serve the DevTools pipe costs nothing but the time it saved."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from evalcore.errors import EvalcoreError
from evalcore.reporting import _chromium, export_notebook, format_table, html_to_pdf
from evalcore.reporting._export import find_chromium, pdf_session

pytestmark = pytest.mark.skipif(
    find_chromium() is None or shutil.which("pdftoppm") is None,
    reason="needs chromium and poppler-utils (make system-deps)",
)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """An exported report with a figure, a heading kept with it and a table wider than the page
    (the print script lays it out at the window's width), printed by a browser of its own."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5), dpi=100)
    ax.plot(np.arange(20), np.arange(20) ** 1.5)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    wide = pd.DataFrame(np.random.default_rng(1).random((5, 20)), columns=[f"mean_quality_{i}" for i in range(20)])
    code = nbformat.v4.new_code_cell("pass")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"text/markdown": "## A figure", "text/plain": "a"}),
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(buf.getvalue()).decode()}),
        nbformat.v4.new_output("display_data", data={"text/html": format_table(wide).to_html(), "text/plain": "t"}),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Shared printer\n\nA paragraph."), code]
    path = tmp_path_factory.mktemp("shared") / "report.ipynb"
    nbformat.write(nb, path)
    result = export_notebook(path, figures=False)  # outside a session: a browser for this page
    assert result.pdf is not None, result.messages
    return result.html


def _pages(pdf: Path, folder: Path) -> list[bytes]:
    folder.mkdir()
    subprocess.run(["pdftoppm", "-r", "60", "-png", str(pdf), str(folder / "p")], check=True, timeout=60)
    return [p.read_bytes() for p in sorted(folder.glob("p-*.png"))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_one_browser_prints_the_pages_a_browser_per_page_prints(page, tmp_path):
    alone = _pages(page.with_suffix(".pdf"), tmp_path / "alone")
    assert len(alone) >= 2
    with pdf_session():
        printer = _chromium._active
        assert printer is not None
        for k in range(3):
            html_to_pdf(page, tmp_path / f"shared{k}.pdf")
        assert printer.started == 1 and not printer.broken
        pid = printer._proc.pid
    assert _chromium._active is None and not _alive(pid)  # ended with the block
    for k in range(3):
        assert _pages(tmp_path / f"shared{k}.pdf", tmp_path / f"shared{k}") == alone


def test_a_page_that_does_not_load_in_time_fails_alone(page, tmp_path):
    silent = socket.socket()  # accepts the connection, never answers: the image never loads
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    hanging = tmp_path / "hanging.html"
    hanging.write_text(f'<html><body><p>waiting</p><img src="http://127.0.0.1:{silent.getsockname()[1]}/x.png">')
    try:
        with pdf_session():
            printer = _chromium._active
            with pytest.raises(EvalcoreError, match="did not finish printing within 3 s") as err:
                html_to_pdf(hanging, tmp_path / "hanging.pdf", timeout_s=3)
            assert str(hanging) in str(err.value)
            assert not (tmp_path / "hanging.pdf").exists() and printer._proc is None  # that browser ended
            html_to_pdf(page, tmp_path / "next.pdf")  # a fresh browser prints the next page
            assert printer.started == 2 and not printer.broken
    finally:
        silent.close()
    assert _pages(tmp_path / "next.pdf", tmp_path / "next") == _pages(page.with_suffix(".pdf"), tmp_path / "alone")


def test_a_browser_killed_between_pages_is_started_again(page, tmp_path):
    with pdf_session():
        printer = _chromium._active
        html_to_pdf(page, tmp_path / "a.pdf")
        os.killpg(printer._proc.pid, signal.SIGKILL)
        printer._proc.wait()
        html_to_pdf(page, tmp_path / "b.pdf")
        assert printer.started == 2 and not printer.broken
    assert _pages(tmp_path / "a.pdf", tmp_path / "a") == _pages(tmp_path / "b.pdf", tmp_path / "b")


def test_a_browser_without_the_devtools_pipe_prints_a_page_at_a_time(page, tmp_path, monkeypatch):
    fake = tmp_path / "chromium"
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = --remote-debugging-pipe ] && { echo "no pipe here" >&2; exit 3; }; done\n'
        f'exec {find_chromium()} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("EVALCORE_CHROMIUM", str(fake))
    assert find_chromium() == str(fake)
    with pdf_session():
        printer = _chromium._active
        html_to_pdf(page, tmp_path / "a.pdf")  # the shared browser fails: this page prints alone
        assert printer.broken and printer.started == 1
        html_to_pdf(page, tmp_path / "b.pdf")  # and the next, without trying the pipe again
        assert printer.started == 1
    alone = _pages(page.with_suffix(".pdf"), tmp_path / "alone")
    assert _pages(tmp_path / "a.pdf", tmp_path / "a") == alone == _pages(tmp_path / "b.pdf", tmp_path / "b")


def test_a_page_sees_nothing_an_earlier_page_stored(tmp_path):
    writer, reader = tmp_path / "writer.html", tmp_path / "reader.html"
    writer.write_text("<html><body><p>writer</p><script>localStorage.setItem('mark', 'seen before')</script>")
    reader.write_text(
        "<html><body><p id='p'>reader</p><script>"
        "document.getElementById('p').textContent = 'reader: ' + (localStorage.getItem('mark') || 'fresh')"
        "</script>"
    )
    with pdf_session():
        html_to_pdf(writer, tmp_path / "writer.pdf")
        html_to_pdf(reader, tmp_path / "reader.pdf")
        assert _chromium._active.started == 1
    text = subprocess.run(["pdftotext", str(tmp_path / "reader.pdf"), "-"], capture_output=True, text=True, check=True)
    assert "reader: fresh" in text.stdout, text.stdout
