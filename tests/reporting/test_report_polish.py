"""Report polish (issue 39): code unwrapped, text tables left-aligned in JupyterLab too."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pandas as pd

from evalcore.reporting import CODE_COLUMNS, format_table, run_overview, sample_table
from evalcore.reporting._export import _PRINT_CSS
from evalcore.reporting._tables import inline_styles

CODE = (
    "def has_close_elements(numbers: list[float], threshold: float) -> bool:\n"
    "    return any(abs(a - b) < threshold for a in numbers for b in numbers if a is not b)"
)


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "item_id": "HumanEval/0",
                "epoch": 1,
                "dataset": "humaneval",
                "question": CODE,
                "response": CODE,
                "reference": CODE,
                "result": "passed",
                "passed": True,
                "error": False,
                "error_message": None,
                "extracted_flexible": None,
                "parse_failure_flexible": False,
                "flexible": 1.0,
                "score": 1.0,
            }
        ]
    )


def _cells(markup: str, tag: str = "td") -> list[tuple[str, str]]:
    """(style attribute, content) of every cell, the <style> block dropped first (what
    JupyterLab's sanitizer does to an untrusted notebook's HTML)."""
    markup = re.sub(r"<style[^>]*>.*?</style>", "", markup, flags=re.S)
    return [
        (m.group(1), m.group(2))
        for m in re.finditer(rf'<{tag}\b[^>]*?style="([^"]*)"[^>]*>(.*?)</{tag}>', markup, re.S)
    ]


def test_sample_table_keeps_code_unwrapped() -> None:
    markup = format_table(sample_table(_frame()), code=CODE_COLUMNS)._repr_html_()
    pres = re.findall(r'<pre style="([^"]*)">', markup)
    assert len(pres) == len(CODE_COLUMNS)
    for style in pres:
        assert "white-space:pre;" in style and "overflow-x:auto" in style
        assert "pre-wrap" not in style and "anywhere" not in style and "break-word" not in style
    code_cells = [style for style, content in _cells(markup) if content.startswith("<pre")]
    assert code_cells and all("overflow-wrap" not in style for style in code_cells)
    # on paper it wraps between words (a PDF cannot scroll), never inside one
    rule = re.search(r"td pre \{([^}]*)\}", _PRINT_CSS)
    assert rule is not None and "overflow-wrap: normal" in rule.group(1) and "anywhere" not in _PRINT_CSS


def test_run_overview_is_left_aligned_without_its_style_block() -> None:
    run = SimpleNamespace(
        config={"run_id": "r1", "dataset": "mmlu", "split": "test", "model": "local:x", "n_items": 8, "epochs": 1},
        results={"n_scored": 8, "errors": 0, "wall_s": 12.5},
        path="runs/r1",
    )
    markup = format_table(run_overview(run))._repr_html_()
    cells = _cells(markup)
    assert len(cells) == 2 * len(run_overview(run))
    assert all("text-align: left" in style and "text-align: right" not in style for style, _ in cells)
    heads = _cells(markup, "th")
    assert [c for _, c in heads] == ["field", "value"] and all("text-align: left" in s for s, _ in heads)
    assert "<style" in markup  # kept for every other reader


def test_numbers_stay_right_aligned_and_inline_styles_is_idempotent() -> None:
    markup = format_table(pd.DataFrame({"name": ["a"], "n": [3]}))._repr_html_()
    (name, n) = _cells(markup)
    assert "text-align: left" in name[0] and "text-align: right" in n[0] and n[1] == "3"
    assert inline_styles(markup) == markup  # a cell that has its style is left alone
    assert format_table(pd.DataFrame({"n": [1]})).to_html().count('style="') >= 2


def _notebook_with_link(folder: Path, href: str) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("display(sample_browser_link(run))")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/markdown": f"Every sample: [sample browser]({href}) (run r1).", "text/plain": "<Markdown>"},
        )
    ]
    nb.cells = [cell]
    path = folder / "benchmark_x.ipynb"
    nbformat.write(nb, path)
    return path


def test_exported_report_link_to_the_sample_browser_resolves(tmp_path: Path) -> None:
    """`evalcore report X.ipynb --output elsewhere/`: the link still reaches the browser page."""
    from evalcore import cli

    here = tmp_path / "suite" / "benchmark_x"
    (here / "runs" / "r 1").mkdir(parents=True)
    page = here / "runs" / "r 1" / "samples.html"
    page.write_text("<html></html>")
    nb = _notebook_with_link(here, "runs/r%201/samples.html#verdict=wrong")
    out = tmp_path / "elsewhere" / "deeper"
    assert cli.main(["report", str(nb), "--output", str(out), "--no-pdf"]) == 0
    body = (out / "benchmark_x.html").read_text()
    (href,) = re.findall(r'<a href="([^"]*samples\.html[^"]*)"', body)
    path, _, fragment = href.partition("#")
    assert fragment == "verdict=wrong"
    assert (out / unquote(path)).resolve() == page.resolve()
    # beside the notebook (the suite's own export) the link is left as the notebook wrote it
    assert cli.main(["report", str(nb), "--no-pdf"]) == 0
    assert 'href="runs/r%201/samples.html#verdict=wrong"' in (here / "benchmark_x.html").read_text()


def test_a_link_to_nothing_or_elsewhere_is_left_alone(tmp_path: Path) -> None:
    from evalcore.reporting._export import _rebase_links

    body = '<a href="missing.html">a</a> <a href="https://example.org/x">b</a> <a href="#top">c</a>'
    assert _rebase_links(body, tmp_path, tmp_path / "out") == body


def test_report_exported_by_hand_has_no_stderr_noise(tmp_path: Path) -> None:
    """A notebook run by hand (not cleaned by the suite): its bars and progress lines on stderr
    stay out of `evalcore report`'s HTML; the notebook file itself is not changed."""
    import nbformat

    from evalcore import cli

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("route()")
    noise = (
        "Loading weights:   0%|          | 0/103 [00:00<?, ?it/s]\rLoading weights: 100%|██| 103/103 [00:00<00:00]\n"
        "routing replay (5 orderings): 11/11 router blocks, 0 s elapsed, done\n"
    )
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=noise),
        nbformat.v4.new_output("stream", name="stdout", text="10 items x 4 arms\n"),
    ]
    nb.cells = [cell]
    path = tmp_path / "routing.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    assert cli.main(["report", str(path), "--output", str(tmp_path / "out"), "--no-pdf"]) == 0
    body = (tmp_path / "out" / "routing.html").read_text()
    assert "10 items x 4 arms" in body
    assert "Loading weights" not in body and "elapsed" not in body
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in body
    assert path.read_bytes() == before
