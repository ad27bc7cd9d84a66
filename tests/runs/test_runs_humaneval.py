"""HumanEval runs: code execution scores and pass@k from several epochs."""

from __future__ import annotations

from math import comb

import pytest

from evalcore.benchmarks import load
from evalcore.runs import load_run, rescore, run_benchmark


def test_humaneval_run_scores_by_execution_and_pass_at_k(tmp_path, counting_model) -> None:
    items = load("humaneval", source="sample", limit=4, seed=0)
    by_prompt = {it.fields["prompt"]: it for it in items}
    calls: dict[str, int] = {}

    def answer(user_text: str) -> str:
        it = next(v for k, v in by_prompt.items() if k in user_text)
        n = calls[it.id] = calls.get(it.id, 0) + 1
        # item k is answered right on its first k calls (epochs run in order per item)
        k = items.index(it)
        body = it.reference if n <= k else "    return None\n"
        return f"Here you go:\n```python\n{it.fields['prompt']}{body}```"

    model = counting_model(answer)
    path = run_benchmark(
        "humaneval",
        model,
        limit=4,
        epochs=3,
        concurrency=1,
        source="sample",
        progress=False,
        run_dir=tmp_path,
        run_id="he",
        cache=False,
    )
    run = load_run(path)
    assert run.config["scorer"] == "code_execution"
    passed = {}
    for s in run.samples:
        assert s["scores"]["score"] == (1.0 if s["scores"]["passed"] else 0.0)
        assert s["scores"]["result"] == "passed" or s["scores"]["result"].startswith("failed")
        passed.setdefault(s["item_id"], []).append(s["scores"]["passed"])
    c = {i: sum(v) for i, v in passed.items()}
    assert sorted(c.values()) == [0, 1, 2, 3]

    def unbiased(n: int, cc: int, k: int) -> float:  # Chen et al. (2021), by hand
        return 1.0 - comb(n - cc, k) / comb(n, k) if n - cc >= k else 1.0

    res = run.results
    for k in (1, 2):
        expected = sum(unbiased(3, cc, k) for cc in c.values()) / 4
        assert res["pass_at_k"][f"pass@{k}"] == pytest.approx(expected)
    assert "pass@5" not in res["pass_at_k"]
    assert res["accuracy_flexible"]["mean"] == pytest.approx(6 / 12)
    again = rescore(path)
    assert again["pass_at_k"] == res["pass_at_k"]
