"""The agent evaluation against faked work: a trace no tool ran, tools that are tables of the
held-out pools, a load test answered from a cache, and edited results files."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from evalcore.agent_eval import (
    AgentCaseGenerator,
    AgentEvalConfig,
    AgentEvaluator,
    HonestAgent,
    OracleAgent,
)
from evalcore.agent_eval._gaming import FakeTrace, TableTools
from evalcore.errors import EvalcoreError

COUNTS = {"simple": 8, "medium": 6, "complex": 4, "edge": 11}
GEN = AgentCaseGenerator(seed=0, counts=COUNTS)
CASES = GEN.generate()
GROUPS = GEN.paraphrase_groups()
CFG = AgentEvalConfig(seed=0, counts=COUNTS, load_requests=8, timing_repetitions=2, memory_requests=4)


def test_a_trace_no_tool_ran_earns_only_the_final_answer() -> None:
    """FakeTrace has an empty registry and reports well-formed steps: it scored workflow 1.0."""
    res = AgentEvaluator(FakeTrace(CASES, GROUPS), CASES, config=CFG).run(["workflow"], progress=False)
    wf = res.categories["workflow"]
    assert wf.score < CFG.category_floor
    for t in wf.tests:
        assert t.details["final"] == 1.0  # its answers are right ...
        assert t.details["steps"] == 0.0 and t.details["planning"] == 0.0  # ... its trace is not believed
        assert not any(t.details["steps_executed"])
    # the honest agent's trace is re-run and holds
    res = AgentEvaluator(HonestAgent(CASES, GROUPS), CASES, config=CFG).run(["workflow"], progress=False)
    assert res.categories["workflow"].score == 1.0
    assert all(all(t.details["steps_executed"]) for t in res.categories["workflow"].tests)


class _RewritesFactorial(HonestAgent):
    """Rewrites its factorial tool, for each request, into a table of that request's value."""

    def process_request(self, query: str) -> Any:
        from evalcore.agent_eval._oracle import tool_source

        with self._lock:
            self._tools["factorial"] = tool_source("factorial")  # runs with the real one ...
        resp = super().process_request(query)
        for st in resp.steps:  # ... and registers a table of this request's value
            if st.tool == "factorial" and st.error is None:
                code = (
                    f'def factorial(n: int) -> int:\n    """Table."""\n'
                    f"    return {{{st.args['n']!r}: {st.result!r}}}[n]\n"
                )
                with self._lock:
                    self._tools["factorial"] = (code, "")
        return resp


def test_a_tool_rewritten_during_the_request_does_not_count() -> None:
    res = AgentEvaluator(_RewritesFactorial(CASES, GROUPS), CASES, config=CFG).run(["workflow"], progress=False)
    seen = 0
    for t in res.categories["workflow"].tests:
        tools = t.details["step_tools"]
        seen += "factorial" in tools
        for tool, ran, chk in zip(tools, t.details["steps_executed"], t.details["trace_check"], strict=True):
            if tool == "factorial":
                assert not ran and "rewritten" in chk["why"]
    assert seen >= 2


def test_a_table_of_the_public_held_out_pools_is_no_tool() -> None:
    """The held-out inputs came from small pools in evalcore's source: a table of them plus the
    request's inputs scored synthesis 1.0 on the kinds they covered."""
    counts = {"simple": 0, "medium": 40, "complex": 0, "edge": 0}
    cases = [
        c
        for c in AgentCaseGenerator(11, counts).generate()
        if c.kind in ("celsius_to_kelvin", "vowel_count", "is_palindrome")
    ]
    assert len(cases) >= 6
    cfg = AgentEvalConfig(seed=11, counts=counts)
    res = AgentEvaluator(TableTools(cases, []), cases, config=cfg).run(["synthesis"], progress=False)
    assert res.categories["synthesis"].score == 0.0
    assert all("held-out" in (t.error or "") for t in res.categories["synthesis"].tests)
    # a tool that computes still passes
    res = AgentEvaluator(OracleAgent(cases, []), cases, config=cfg).run(["synthesis"], progress=False)
    assert res.categories["synthesis"].metrics["synthesis_rate"] == 1.0


def test_held_out_inputs_are_not_a_small_pool() -> None:
    import random

    from evalcore.agent_eval._cases.kinds import sample_inputs, solve_kind

    rng = random.Random(1)
    for kind in (
        "celsius_to_kelvin",
        "vowel_count",
        "is_palindrome",
        "reverse_string",
        "percentage",
        "temperature_conversion",
        "is_prime",
    ):
        drawn = {
            json.dumps(sample_inputs(kind, rng, {"from_unit": "C", "to_unit": "F"}), sort_keys=True) for _ in range(200)
        }
        assert len(drawn) > 150, (kind, len(drawn))
    primes = [solve_kind("is_prime", sample_inputs("is_prime", rng)) for _ in range(400)]
    assert 0.35 < sum(primes) / len(primes) < 0.65  # "never prime" is no tool


class _CachingSlow(HonestAgent):
    """One request at a time, ``work_s`` each, every response cached by its text."""

    work_s = 0.25

    def reset(self) -> None:
        super().reset()
        self._cache: dict[str, Any] = {}
        self._busy = threading.Lock()

    def process_request(self, query: str) -> Any:
        hit = self._cache.get(query)
        if hit is not None:
            return hit
        with self._busy:
            time.sleep(self.work_s)
            resp = super().process_request(query)
        self._cache[query] = resp
        return resp


def test_the_load_test_sends_requests_the_agent_has_not_answered() -> None:
    """The load test repeated the timed requests: a cache made a 0.25 s-a-request agent look
    like hundreds of answers per second (throughput 1.0)."""
    cfg = AgentEvalConfig(seed=0, counts=COUNTS, limit=2, load_requests=8, timing_repetitions=1, memory_requests=2)
    res = AgentEvaluator(_CachingSlow(CASES, GROUPS), CASES, config=cfg).run(["performance"], progress=False)
    perf = res.categories["performance"]
    thr = next(t for t in perf.tests if t.name == "throughput")
    assert thr.details["correct_fraction"] == 1.0
    assert perf.metrics["qps"] < 1.2 / _CachingSlow.work_s
    assert thr.score < 0.5


def test_compare_refuses_a_results_file_edited_by_hand(tmp_path: Any) -> None:
    from evalcore.agent_eval import compare_results, write_outputs

    res = AgentEvaluator(FakeTrace(CASES, GROUPS), CASES, config=CFG).run(["workflow"], progress=False)
    d = res.to_dict()
    a = tmp_path / "a.json"
    a.write_text(json.dumps(d))
    assert compare_results(a, a)["overall"]["delta"] == 0.0
    edited = json.loads(json.dumps(d))
    edited["detailed_results"]["workflow"]["score"] = 1.0
    edited["summary"]["overall_score"] = 1.0
    b = tmp_path / "b.json"
    b.write_text(json.dumps(edited))
    with pytest.raises(EvalcoreError, match="not the mean of its tests"):
        compare_results(a, b)
    edited = json.loads(json.dumps(d))
    edited["summary"]["overall_score"] = 0.99
    b.write_text(json.dumps(edited))
    with pytest.raises(EvalcoreError, match="weighted mean"):
        compare_results(a, b)
    # the files evalcore itself writes pass the check
    written = [p for p in write_outputs(res, tmp_path / "out").values() if str(p).endswith(".json")]
    assert written and compare_results(written[0], a)["overall"]["delta"] == 0.0
