"""The benchmark registry: the built-ins as modules, and a fourth benchmark added by one class
plus ``register`` that runs, rescores and routes like a built-in (issue 32)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from evalcore.benchmarks import (
    Benchmark,
    BenchmarkBase,
    ExactMatchScoring,
    benchmark_names,
    benchmark_of_run,
    find_benchmark,
    get_benchmark,
    register,
    unregister,
)
from evalcore.datasets import Item
from evalcore.errors import EvalcoreError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from conftest import CountingModel  # noqa: E402


def test_the_builtins_are_benchmarks_with_their_own_rules():
    gsm8k, mmlu, humaneval = (get_benchmark(n) for n in ("gsm8k", "mmlu", "humaneval"))
    assert benchmark_names()[:3] == ("gsm8k", "mmlu", "humaneval")
    for b in (gsm8k, mmlu, humaneval):
        assert isinstance(b, Benchmark)
    assert [b.scorer for b in (gsm8k, mmlu, humaneval)] == ["exact_match", "exact_match", "code_execution"]
    assert [b.default_params()["max_tokens"] for b in (gsm8k, mmlu, humaneval)] == [512, 64, 512]
    assert [b.supports_likelihood for b in (gsm8k, mmlu, humaneval)] == [False, True, False]
    assert gsm8k.answers_equal("$1,248", "1248") and not gsm8k.answers_equal("71", "72")
    assert mmlu.answers_equal("c", "C") and not mmlu.answers_equal("B", "C")
    s = gsm8k.score("So the total is 72.\n#### 72", "72", {})
    assert (s["score"], s["extracted_strict"], s["method_strict"]) == (1.0, "72", "hash")
    s = mmlu.score("The answer is (B)", "C", {"choices": ["a", "b", "c", "d"]})
    assert (s["score"], s["extracted_flexible"]) == (0.0, "B")
    item = get_benchmark("mmlu").load(limit=1, source="sample")[0]
    assert get_benchmark("mmlu").prompt_fields(item)["choices_text"].startswith("(A) ")


def test_summary_extras_come_from_the_benchmark():
    ok = [
        {"item_id": "a", "scores": {"passed": True, "flexible": 1.0}, "metadata": {"subject": "x"}},
        {
            "item_id": "a",
            "scores": {"passed": False, "flexible": 0.0, "parse_failure_flexible": True},
            "metadata": {"subject": "y"},
        },
    ]
    assert get_benchmark("humaneval").summary_extras(ok) == {"pass_at_k": {"pass@1": 0.5, "pass@2": 1.0}}
    assert get_benchmark("gsm8k").summary_extras(ok) == {"parse_failure_rate": 0.5, "parse_failure_rate_strict": 0.0}
    assert get_benchmark("mmlu").summary_extras(ok)["by_subject"] == {
        "x": {"mean": 1.0, "n": 1},
        "y": {"mean": 0.0, "n": 1},
    }


def test_an_unknown_name_or_a_taken_one_is_refused():
    with pytest.raises(EvalcoreError, match="unknown dataset 'squad'"):
        get_benchmark("squad")
    assert find_benchmark("squad") is None
    with pytest.raises(EvalcoreError, match="built-in"):
        register(_Arith("gsm8k"))
    with pytest.raises(EvalcoreError, match="not a Benchmark"):
        register(object())  # type: ignore[arg-type]


class _Arith(ExactMatchScoring, BenchmarkBase):
    """A fourth benchmark written as docs/benchmarks.md shows: one class, one ``register``."""

    answer_kind = "number"
    default_max_tokens = 16

    def __init__(self, name: str = "arith") -> None:
        self.name = name

    def load(self, split="test", limit=None, seed=0, source="auto", path=None) -> list[Item]:
        items = [
            Item(
                id=f"arith/{a}+{b}",
                dataset=self.name,
                fields={"question": f"{a} + {b}"},
                reference=str(a + b),
                metadata={"source": "generated"},
            )
            for a, b in [(2, 3), (10, 32), (7, 7), (100, 1)]
        ]
        return items[:limit] if limit else items

    def few_shot_pool(self) -> list[Item]:
        return []

    def template_doc(self) -> Any:
        from evalcore._yaml import parse_yaml

        return parse_yaml("user: 'What is {question}? End with #### N.'\n", "arith-template")


@pytest.fixture
def arith():
    bench = register(_Arith())
    yield bench
    unregister(bench.name)


def test_a_fourth_benchmark_runs_rescores_and_routes_like_a_builtin(tmp_path, arith):
    from evalcore.routing import outcomes_from_runs
    from evalcore.runs import load_run, rescore, run_benchmark

    def answer(q: str) -> str:  # right on all but "7 + 7"
        a, b = q.split("What is ")[1].split("?")[0].split(" + ")
        return f"#### {int(a) + int(b) + (1 if a == '7' else 0)}"

    path = run_benchmark(
        "arith", CountingModel(answer), run_dir=tmp_path, run_id="arith-1", cache=False, progress=False
    )
    run = load_run(path)
    assert run.config["dataset"] == "arith" and run.config["scorer"] == "exact_match"
    assert run.config["params"]["max_tokens"] == 16  # the benchmark's default
    assert "benchmark" not in run.config  # found again by its name
    assert run.results["accuracy_flexible"]["mean"] == pytest.approx(0.75)
    assert run.results["parse_failure_rate"] == 0.0
    assert benchmark_of_run(run.config) is arith
    again = rescore(path)
    assert again["accuracy_flexible"]["mean"] == pytest.approx(0.75)
    # routing's majority vote asks the benchmark whether two answers are equal
    m = outcomes_from_runs([path])
    assert sorted(m.quality[:, 0].tolist()) == [0.0, 1.0, 1.0, 1.0]


def test_config_json_of_a_builtin_run_keeps_its_keys(tmp_path):
    from evalcore.runs import run_benchmark

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
    from conftest import gsm8k_answerer

    answer, _ = gsm8k_answerer(lambda i: True)
    path = run_benchmark("gsm8k", CountingModel(answer), limit=2, run_dir=tmp_path, cache=False, progress=False)
    config = json.loads((path / "config.json").read_text())
    legacy = json.loads(
        (Path(__file__).parents[1] / "runs" / "fixtures" / "legacy" / "gsm8k-legacy" / "config.json").read_text()
    )
    # a legacy run recorded `mmlu_mode`, read as `choice_mode` (issue 40); every other key the same
    from evalcore._runstore import upgrade_config

    assert "mmlu_mode" in legacy and "mmlu_mode" not in config
    assert set(config) == set(upgrade_config(legacy))
    assert config["scorer"] == "exact_match" and config["choice_mode"] is None
    # the template moved into the benchmark's folder (issue 40); a run recorded before resumes
    assert config["prompt"]["source"] == "evalcore/benchmarks/gsm8k/template.yaml"
    assert legacy["prompt"]["source"] == "evalcore/runs/templates/gsm8k.yaml"
    from evalcore.runs._config import moved_template

    assert moved_template(legacy["prompt"], config["prompt"])
    assert not moved_template(legacy["prompt"], {**config["prompt"], "user": "Another prompt: {question}"})


def test_the_fourth_benchmark_of_the_docs_runs_as_written(tmp_path):
    """docs/benchmarks.md's worked example, executed as it is printed there."""
    import re

    from evalcore.runs import load_run, run_benchmark

    doc = (Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text()
    code = re.search(r"```python\n(# mypackage/arith\.py\n.*?)```", doc, re.S).group(1)
    try:
        exec(compile(code, "docs/benchmarks.md", "exec"), {})
        path = run_benchmark("arith", CountingModel(lambda q: "#### 5"), run_dir=tmp_path, cache=False, progress=False)
        run = load_run(path)
        assert run.results["n_items"] == 4
        assert run.results["accuracy_flexible"]["mean"] == pytest.approx(0.25)  # 2 + 3 only
        assert run.samples[0]["request"]["messages"][-1]["content"] == "What is 2 + 3? End with #### N."
    finally:
        unregister("arith")
