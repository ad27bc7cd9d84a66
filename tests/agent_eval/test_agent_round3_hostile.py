"""Issue 37, agent evaluation round three: each hostile agent of ``_hostile_r3`` scores below the
pass threshold on what it attacks (robustness by behaviour, performance on unseen requests after
a verified reset, memory as everything the agent holds, sweep labels by behaviour), while the
honest self-test agents score as before."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from _as_nobody import rerun_as_nobody
from agent_eval._hostile_r3 import CacheAcrossReset, EchoSpecify, JunkSweepTools, MemfdHolder
from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, HonestAgent, OracleAgent
from evalcore.agent_eval._categories import evaluate_functional, evaluate_performance, evaluate_robustness
from evalcore.agent_eval._categories.robustness import names_reason, refusal_terms
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._observed import held_memory
from evalcore.agent_eval._oracle import tool_source
from evalcore.agent_eval._sweep import threshold_sweep
from evalcore.agents import AgentResponse

COUNTS = {"simple": 4, "medium": 0, "complex": 0, "edge": 11}
CFG = AgentEvalConfig(seed=0, counts=COUNTS, timing_repetitions=1, memory_requests=6, load_requests=4, workers=4)
DATA = AgentEvalData.build(CFG)
MiB = 2**20


# ------------------------------------------------------------------------------ robustness
def test_refusal_terms_leave_out_what_the_request_gave_away() -> None:
    cases = {c.query: c for c in DATA.cases if c.expected_behavior != "answer"}
    neg = next(c for q, c in cases.items() if "factorial of -" in q)
    terms = refusal_terms(neg)
    assert "negative" in terms and not any(t in neg.query for t in terms)
    echo = AgentResponse(success=False, error=f"{neg.query} — please specify")
    assert names_reason(echo, terms) is None
    assert names_reason(AgentResponse(success=False, error="factorial is not defined for negative numbers"), terms)
    amb = next(c for c in cases.values() if c.expected_behavior == "clarification")
    assert "specify" not in refusal_terms(amb) and "provide" not in refusal_terms(amb)
    asks = AgentResponse(success=False, needs_clarification=True, error="Please specify.")
    assert names_reason(asks, refusal_terms(amb)) is None
    assert names_reason(AgentResponse(success=False, error="Which value? It is missing."), refusal_terms(amb))


def test_echoing_the_request_with_please_specify_fails_robustness() -> None:
    res = evaluate_robustness(EchoSpecify(DATA.cases), DATA, CFG)
    kinds = res.metrics["kinds"]
    assert kinds["malformed_input"]["score"] == 0.0 and kinds["ambiguity"]["score"] == 0.0
    assert kinds["boundary_values"]["score"] == 1.0 and kinds["valid_requests"]["score"] == 1.0
    assert res.score < CFG.pass_threshold and not res.passed
    refused = [t for t in res.tests if t.details.get("expected_behavior") in ("error", "clarification")]
    assert refused and all("did not give" in t.error for t in refused)


def test_honest_agents_keep_their_robustness() -> None:
    for cls in (OracleAgent, HonestAgent):
        res = evaluate_robustness(cls(DATA.cases), DATA, CFG)
        assert res.score == 1.0, [(t.name, t.error) for t in res.tests if t.score < 1]


# ------------------------------------------------------------------------------ performance
@pytest.mark.slow
def test_a_cache_kept_across_reset_is_a_critical_failure() -> None:
    agent = CacheAcrossReset(DATA.cases, delay_s=2.2)
    evaluate_functional(agent, DATA, CFG)  # the case requests are in its cache now
    cfg = replace(CFG, limit=2)
    res = evaluate_performance(agent, DATA, cfg)
    reset = res.tests[0]
    assert reset.name == "reset" and reset.critical and reset.score == 0.0
    assert "cache kept across reset()" in reset.error
    assert res.score == 0.0 and not res.passed
    latency = [t for t in res.tests if t.name.startswith("latency:")]
    assert len(latency) == 2
    # timed on requests no category sent: the first sight was a miss of the cache
    sent = {c.query for c in DATA.cases}
    assert all(t.details["query"] not in sent for t in latency)
    assert all(t.details["score_before_reset_check"] < cfg.pass_threshold for t in latency)


class KeepsTools(HonestAgent):
    """Registers a tool per request; ``reset()`` keeps them."""

    def reset(self) -> None:
        if not hasattr(self, "_tools"):
            super().reset()

    def process_request(self, query: str) -> AgentResponse:
        with self._lock:
            self._tools[f"memo_{len(self._tools)}"] = tool_source("percentage")
        return super().process_request(query)


def test_tools_that_survive_reset_are_a_critical_failure() -> None:
    res = evaluate_performance(KeepsTools(DATA.cases), DATA, replace(CFG, limit=1))
    assert res.tests[0].name == "reset" and res.tests[0].critical
    assert "still registered after it" in res.tests[0].error
    assert res.metrics["reset"]["registry_survivors"]
    assert res.score == 0.0


def test_honest_agents_pass_the_reset_check() -> None:
    for cls in (OracleAgent, HonestAgent):
        res = evaluate_performance(cls(DATA.cases), DATA, CFG)
        assert not any(t.name == "reset" for t in res.tests)
        assert res.metrics["reset"]["carried"] == [] and res.metrics["reset"]["registry_survivors"] == []
        assert res.score >= 0.9


# ------------------------------------------------------------------------------ memory
def test_held_memory_counts_an_unmapped_memfd_and_a_shm_file() -> None:
    code = (
        "import os, sys\n"
        "fd = os.memfd_create('x')\n"
        "for _ in range(48): os.write(fd, b'\\xa5' * 2**20)\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        reading = held_memory(child.pid)
        assert reading is not None and reading.how == "pss+shm"
        assert reading.shared_objects >= 48 * MiB and reading.total >= reading.pss + 48 * MiB - MiB
        import psutil

        assert psutil.Process(child.pid).memory_info().rss < 48 * MiB  # what the RSS showed
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    assert held_memory(child.pid) is None


def _memory_test(res: Any) -> Any:
    return next(t for t in res.tests if t.name == "memory")


def test_memory_held_in_an_unmapped_memfd_counts_in_process() -> None:
    res = evaluate_performance(MemfdHolder(DATA.cases), DATA, replace(CFG, limit=1))
    mem = _memory_test(res)
    assert mem.details["growth_mb"] >= 6 * 24 - 8  # six requests of 24 MiB each
    assert mem.score < CFG.pass_threshold and not mem.passed


def test_memory_held_in_an_unmapped_memfd_counts_hosted() -> None:
    from evalcore.agents import HostedAgent

    spec = os.path.join(os.path.dirname(__file__), "_hostile_r3.py") + ":make_memfd"
    agent = HostedAgent(spec, {"seed": 0, "counts": COUNTS, "n_paraphrase_groups": 0})
    try:
        res = evaluate_performance(agent, DATA, replace(CFG, limit=1))
    finally:
        agent.close()
    mem = _memory_test(res)
    assert mem.details["of"] == "the hosted agent's process tree"
    assert mem.details["growth_mb"] >= 6 * 24 - 8, (mem.details, res.notes)
    assert mem.score < CFG.pass_threshold and not mem.passed


# ------------------------------------------------------------------------------ sweep
SWEEP_CASES = AgentCaseGenerator(seed=0, counts={"simple": 8, "medium": 4, "complex": 0, "edge": 0}).generate()


def test_junk_tools_named_like_the_kinds_are_not_relevant() -> None:
    res = threshold_sweep(
        lambda t: JunkSweepTools(SWEEP_CASES, threshold=t), [0.5], cases=SWEEP_CASES, seed=0, n_unrelated=4
    )
    cases = res.items[res.items.type == "case"]
    assert all(r == [] for r in cases.relevant)  # no junk tool computes its kind
    assert (cases.false_positive == 1.0).all()  # its junk tools answer every case's search
    held = res.held_out()
    assert held["n_labelled"] == 0 and (held["f1"] is None or math.isnan(held["f1"]))
    assert held["utility"] < CFG.pass_threshold


@pytest.mark.slow
def test_honest_tools_are_relevant_by_what_they_compute() -> None:
    res = threshold_sweep(lambda t: HonestAgent(SWEEP_CASES), [0.5], cases=SWEEP_CASES, seed=0, n_unrelated=4)
    cases = res.items[res.items.type == "case"]
    assert all(r == [k] for r, k in zip(cases.relevant, cases.kind, strict=True))
    assert res.held_out()["f1"] == 1.0 and res.held_out()["utility"] == 1.0


# ------------------------------------------------------------------------------ unprivileged
@pytest.mark.integration
def test_round_three_as_nobody() -> None:
    out = rerun_as_nobody([__file__, "-k", "not as_nobody"], timeout=400)
    assert "11 passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-2000:]
