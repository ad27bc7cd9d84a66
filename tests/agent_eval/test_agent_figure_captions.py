"""The agent report's figures are captioned in words, not with their file names (issue 39)."""

from __future__ import annotations

import re

from evalcore.agent_eval._output import FIGURES, figure_caption, render_html


def _result() -> dict:
    tests = [
        {"name": "add", "score": 1.0, "passed": True, "critical": False, "details": {"elapsed_s": 0.01}},
        {"name": "sub", "score": 0.2, "passed": False, "critical": True, "details": {"elapsed_s": 0.02}},
    ]
    cat = {"score": 0.6, "passed": False, "n_passed": 1, "n_tests": 2, "tests": tests, "metrics": {}, "notes": []}
    summary = {"overall_score": 0.6, "pass_threshold": 0.7, "passed": False, "weights_used": {"functional": 1.0}}
    summary |= {"n_tests": 2, "n_tests_passed": 1}
    return {"summary": summary, "detailed_results": {"functional": cat}, "config": {}}


def test_captions_say_what_each_figure_shows() -> None:
    d = _result()
    scores = figure_caption("category_scores", d)
    assert "pass threshold 0.7" in scores and "overall score, 0.60" in scores
    assert "(2 tests)" in figure_caption("test_distribution", d) and "red a critical failure" in figure_caption(
        "test_distribution", d
    )
    assert "log scale" in figure_caption("performance", d) and "load test" not in figure_caption("performance", d)
    d["detailed_results"]["performance"] = dict(d["detailed_results"]["functional"], metrics={"qps": 3.0})
    assert "load test's throughput" in figure_caption("performance", d)


def test_report_figcaptions_are_sentences_not_file_names() -> None:
    d = _result()
    page = render_html(d, {name: b"\x89PNG" for name in FIGURES})
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    assert len(captions) == len(FIGURES)
    assert all(c not in FIGURES and len(c.split()) > 10 for c in captions)
    alts = re.findall(r'<img alt="([^"]*)"', page)
    assert alts == captions


def test_category_tests_caption_and_the_notebooks_show_captions() -> None:
    from pathlib import Path

    import nbformat

    caption = figure_caption("category_tests", _result(), "functional")
    assert "(2 tests)" in caption and "category score, 0.60" in caption
    assert figure_caption("category_tests", _result(), "synthesis") == "category_tests"  # not run: no claim
    root = Path(__file__).resolve().parents[2] / "notebooks"
    for stem, names in {
        "agent_overview": ("category_scores", "test_distribution", "performance"),
        "agent_category": ("category_tests",),
    }.items():
        source = "\n".join(c.source for c in nbformat.read(root / f"{stem}.ipynb", 4).cells)
        for name in names:
            assert f"figure_caption('{name}', result" in source, (stem, name)
