"""The requests the categories draw while they run (learning rows, robustness controls,
performance load) are made by one factory, ``_categories._common.drawn_case``."""

from __future__ import annotations

import random
from unittest import mock

from evalcore.agent_eval._cases.kinds import solve_kind
from evalcore.agent_eval._categories import _common, learning, performance, robustness
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData


def test_a_drawn_case_carries_the_evaluators_answer_and_its_tolerance() -> None:
    whole = _common.drawn_case("c-1", "gcd", {"a": 12, "b": 18}, "q", 6, complexity="simple", category="x", tag="t")
    assert whole.to_dict() == {
        "id": "c-1",
        "query": "q",
        "complexity": "simple",
        "kind": "gcd",
        "categories": ["x"],
        "tags": ["t", "gcd"],
        "expected": 6,
        "expected_behavior": "answer",
        "rel_tol": 0.0,
        "abs_tol": 1e-6,
        "expected_tools": ["gcd"],
        "steps": [],
        "paraphrase_group": None,
        "inputs": {"a": 12, "b": 18},
        "error_terms": [],
    }
    tools = ("percentage", "other")
    real = _common.drawn_case(
        "c", "percentage", {}, "q", 2.5, complexity="m", category="y", tag="u", expected_tools=tools
    )
    assert (real.rel_tol, real.abs_tol, real.expected_tools) == (1e-9, 1e-6, ["percentage", "other"])
    text = _common.drawn_case("c", "reverse_string", {}, "q", "olleh", complexity="m", category="y", tag="u")
    assert (text.rel_tol, text.abs_tol) == (0.0, 0.0)


def _seen(calls: list[dict]) -> list[tuple[str, str, str]]:
    return [(c["category"], c["tag"], c["complexity"]) for c in calls]


def test_learning_robustness_and_performance_make_their_cases_with_it() -> None:
    made: list[dict] = []
    real = _common.drawn_case

    def spy(*args: object, **kwargs: object):  # noqa: ANN202 - returns what the factory returns
        made.append(dict(kwargs))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    cfg = AgentEvalConfig(seed=3, learning_kinds=2, learning_repeats=1)
    data = AgentEvalData.build(cfg)
    with (
        mock.patch.object(learning, "drawn_case", spy),
        mock.patch.object(robustness, "drawn_case", spy),
        mock.patch.object(performance, "drawn_case", spy),
    ):
        rows = learning._learning_instances(data, cfg)
        controls = robustness._fresh_controls(2)
        load = performance.fresh_requests([c for c in data.cases if c.complexity == "simple"][:1], 1, random.Random(0))
    seen = _seen(made)
    assert seen[:4] == [("learning", "learning", "medium")] * 4  # 2 kinds, 2 requests each
    assert len(seen[4:-1]) >= 2 and set(seen[4:-1]) == {("robustness", "control", "simple")}
    assert seen[-1] == ("performance", "load", "simple")
    assert [c.id for c in rows[0]] == [f"learn-{rows[0][0].kind}-0", f"learn-{rows[0][0].kind}-1"]
    assert [c.id for c in controls] == ["control-0", "control-1"]
    assert load[0].expected == solve_kind(load[0].kind, load[0].inputs) and load[0].tags == ["load", load[0].kind]
