"""The agent overview combines the category notebooks' results instead of running the categories
again (issue 31 items 4 and 10: the demo's time, and counts that agree with the category pages)."""

from __future__ import annotations

import json

import pytest

from evalcore.agent_eval import AgentEvalConfig, evaluate, save_results
from evalcore.reporting import combine_agent_results

CATS = ["functional", "robustness"]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    for cat, model in zip(CATS, ["local:smollm2", "none"]):
        res = evaluate(
            "oracle",
            AgentEvalConfig(seed=123, limit=2),
            categories=[cat],
            model="none",
            threshold=0.6,
            extra_config={"model": model, "threshold": 0.6},
        )
        save_results(res, folder / f"agent_{cat}")
    return folder


def test_the_overview_shows_the_category_pages_tests(suite_dir):
    result, how = combine_agent_results(
        suite_dir, agent="oracle", model="local:smollm2", threshold=0.6, seed=123, categories=CATS
    )
    assert result is not None, how
    pages = {cat: json.loads(next((suite_dir / f"agent_{cat}").glob("evaluation_*.json")).read_text()) for cat in CATS}
    for cat in CATS:
        page = pages[cat]["detailed_results"][cat]
        mine = result.categories[cat]
        assert [t.name for t in mine.tests] == [t["name"] for t in page["tests"]]
        assert mine.score == pytest.approx(page["score"])
    summary = result.summary()
    assert summary["n_tests"] == sum(pages[c]["summary"]["n_tests"] for c in CATS)
    assert summary["status"] == "partial"  # two of seven categories: never a system pass
    assert "not run again" in how and "robustness ran in the reference agent's no-LLM mode" in how
    assert result.config["combined_from"].keys() == set(CATS)


@pytest.mark.parametrize(
    "change, word",
    [
        ({"seed": 124}, "seed"),
        ({"threshold": 0.5}, "threshold"),
        ({"agent": "honest"}, "agent"),
        ({"model": "openai:x"}, "model"),
    ],
)
def test_other_settings_are_not_combined(suite_dir, change, word):
    args = {"agent": "oracle", "model": "local:smollm2", "threshold": 0.6, "seed": 123, **change}
    result, why = combine_agent_results(suite_dir, categories=CATS, **args)
    assert result is None and f"ran with {word}" in why and "every category runs here" in why


def test_a_missing_category_runs_everything_here(suite_dir):
    result, why = combine_agent_results(suite_dir, agent="oracle", model="local:smollm2", threshold=0.6, seed=123)
    assert result is None and why.startswith("no results of the agent_synthesis notebook")
