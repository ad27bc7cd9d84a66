"""Every gaming strategy of issue 13 as an agent: each scores low in the category it games, in
process and over HTTP (and, for those that attack the evaluator's process, hosted in an
interpreter of their own), while the oracle and an honest agent still score high."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from evalcore.agent_eval import (
    CATEGORIES,
    AgentCaseGenerator,
    AgentEvalConfig,
    AgentEvaluator,
    HonestAgent,
    OracleAgent,
    write_outputs,
)
from evalcore.agent_eval._gaming import GAMING_AGENTS, DuplicateSearch, FrameReader, SlowFirstSight
from evalcore.agents import AgentResponse, HostedAgent, HttpAgent, serve_agent

COUNTS = {"simple": 8, "medium": 6, "complex": 4, "edge": 11}
GEN = AgentCaseGenerator(seed=0, counts=COUNTS)
CASES = GEN.generate()
GROUPS = GEN.paraphrase_groups()
CFG = AgentEvalConfig(seed=0, counts=COUNTS, load_requests=8, timing_repetitions=2, memory_requests=4)
KEY = CASES + GEN.synthesis_specs(CFG.n_synthesis_specs)  # the answer key the agents are given: the drawn specs too


@contextmanager
def over(mode: str, agent: Any) -> Iterator[Any]:
    """The agent itself (in process) or an HTTP client of it served on a local port."""
    if mode == "in_process":
        yield agent
        return
    server = serve_agent(agent)
    client = HttpAgent(server.url, threshold=getattr(agent, "threshold", None))
    try:
        yield client
    finally:
        client.close()
        server.close()


GAMED = [name for name in GAMING_AGENTS if name not in ("monkeypatcher", "frame_reader", "slow_first_sight")]


@pytest.mark.parametrize("mode", ["in_process", "http"])
@pytest.mark.parametrize("name", GAMED)
def test_gaming_agent_scores_low_in_the_category_it_games(name: str, mode: str) -> None:
    cls, category = GAMING_AGENTS[name]
    with over(mode, cls(KEY, GROUPS)) as agent:
        res = AgentEvaluator(agent, CASES, config=CFG).run([category], progress=False)
    score = res.categories[category].score
    assert score < CFG.category_floor - 0.1, (name, category, score)  # clearly below the floor
    assert res.status == "partial" and not res.passed
    assert res.trusted is (mode == "http")


@pytest.mark.parametrize("mode", ["in_process", "http"])
@pytest.mark.parametrize("cls", [OracleAgent, HonestAgent])
def test_oracle_and_honest_agent_still_score_high(cls: type, mode: str) -> None:
    with over(mode, cls(CASES, GROUPS)) as agent:
        res = AgentEvaluator(agent, CASES, config=CFG).run(progress=False)
    assert res.status == "PASSED", res.category_scores
    for category, score in res.category_scores.items():
        assert score >= (0.7 if category == "performance" else 0.9), (category, score)
    assert res.categories["synthesis"].metrics["n_synthesized"] >= 1
    assert res.to_dict()["summary"]["trusted"] is (mode == "http")


@pytest.mark.slow  # a tool slow on its first call, measured over repeats
def test_slow_first_sight_is_measured_apart_from_repeats() -> None:
    for mode in ("in_process", "http"):
        with over(mode, SlowFirstSight(CASES, GROUPS)) as agent:
            res = AgentEvaluator(
                agent,
                CASES,
                config=AgentEvalConfig(seed=0, limit=2, load_requests=4, timing_repetitions=2, memory_requests=2),
            ).run(["performance"], progress=False)
        perf = res.categories["performance"]
        lat = [t for t in perf.tests if t.name.startswith("latency:")]
        assert len(lat) == 2 and all(t.score == pytest.approx(0.2) for t in lat)
        assert all(t.details["first_sight_s"] > 5.0 and t.details["time_score"] == 1.0 for t in lat)
        assert perf.score < 0.7


def test_frame_reader_reaches_the_evaluator_only_in_process() -> None:
    # in process (no timeout thread between them) it reads the answers off the evaluator's
    # frames; the result says it cannot be trusted
    inproc = AgentEvaluator(
        FrameReader(), CASES, config=AgentEvalConfig(seed=0, counts=COUNTS, request_timeout_s=None)
    ).run(["functional"], progress=False)
    assert inproc.categories["functional"].score == 1.0 and inproc.trusted is False
    assert inproc.to_dict()["config"]["agent_process"] == "in-process"
    # hosted in an interpreter of its own there is nothing to read
    agent = HostedAgent("evalcore.agent_eval._gaming:make_gaming", {"name": "frame_reader", "counts": COUNTS})
    try:
        assert agent.pid != os.getpid()
        res = AgentEvaluator(agent, CASES, config=CFG).run(["functional", "workflow"], progress=False)
    finally:
        agent.close()
    assert res.category_scores == {"functional": 0.0, "workflow": 0.0}
    assert res.trusted is True and res.to_dict()["config"]["agent_process"] == "hosted"


def test_monkeypatcher_hosted_patches_only_its_own_interpreter() -> None:
    agent = HostedAgent("evalcore.agent_eval._gaming:make_gaming", {"name": "monkeypatcher", "counts": COUNTS})
    try:
        res = AgentEvaluator(agent, CASES, config=CFG).run(progress=False)
    finally:
        agent.close()
    # it refuses every request: only its registry's search of the starter tools earns anything
    assert res.status == "FAILED" and res.overall < 0.2
    assert all(score == 0.0 for name, score in res.category_scores.items() if name != "retrieval")


def test_agreeable_values_hosted_compare_as_plain_json() -> None:
    agent = HostedAgent("evalcore.agent_eval._gaming:make_gaming", {"name": "agreeable_values", "counts": COUNTS})
    try:
        res = AgentEvaluator(agent, CASES, config=CFG).run(["functional", "workflow"], progress=False)
    finally:
        agent.close()
    assert res.category_scores["functional"] == 0.0 and res.category_scores["workflow"] < 0.3


def test_hosted_oracle_passes_and_its_memory_is_read_from_its_own_process() -> None:
    agent = HostedAgent("evalcore.agent_eval._oracle:make_oracle", {"counts": COUNTS})
    try:
        res = AgentEvaluator(agent, CASES, config=CFG).run(progress=False)
        assert agent.rss_mb() is not None and agent.rss_mb() > 1
    finally:
        agent.close()
    assert res.status == "PASSED" and res.trusted, res.category_scores
    assert res.categories["performance"].metrics["memory_growth_mb"] is not None


def test_malformed_search_is_a_failed_test_never_an_aborted_run(tmp_path) -> None:
    for mode in ("in_process", "http"):
        with over(mode, DuplicateSearch(CASES, GROUPS)) as agent:
            res = AgentEvaluator(agent, CASES, config=CFG).run(progress=False)
        assert set(res.categories) == set(CATEGORIES)
        retr = res.categories["retrieval"]
        assert retr.score == 0.0 and not any(t.critical for t in retr.tests)
        assert any("twice" in (t.error or "") for t in retr.tests)
        paths = write_outputs(res, tmp_path / mode, visualize=False)
        data = json.loads(paths["json"].read_text())
        assert data["summary"]["status"] == "FAILED" and data["detailed_results"]["retrieval"]["score"] == 0.0


def test_a_hanging_agent_times_out_and_the_run_goes_on() -> None:
    class Hangs(OracleAgent):
        def process_request(self, query: str) -> AgentResponse:
            if query == CASES[0].query:
                time.sleep(3)
            return super().process_request(query)

    assert AgentEvalConfig(seed=0).request_timeout_s == 30.0 and HttpAgent("http://127.0.0.1:1/").timeout_s == 30.0
    cfg = AgentEvalConfig(seed=0, counts=COUNTS, limit=2, request_timeout_s=0.5)
    for mode in ("in_process", "http"):
        agent = Hangs(CASES, GROUPS)
        server = serve_agent(agent) if mode == "http" else None
        client = HttpAgent(server.url, timeout_s=0.5) if server else agent
        try:
            res = AgentEvaluator(client, CASES, config=cfg).run(["functional"], progress=False)
        finally:
            if server:
                client.close()
                server.close()
        tests = res.categories["functional"].tests
        assert tests[0].critical and tests[0].score == 0.0
        assert "TimeoutError" in tests[0].error or "timed out" in tests[0].error
        assert tests[1].score == 1.0
