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
    assert "log scale" in figure_caption("performance", d)


def test_report_figcaptions_are_sentences_not_file_names() -> None:
    d = _result()
    page = render_html(d, {name: b"\x89PNG" for name in FIGURES})
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    assert len(captions) == len(FIGURES)
    assert all(c not in FIGURES and len(c.split()) > 10 for c in captions)
    alts = re.findall(r'<img alt="([^"]*)"', page)
    assert alts == captions
