"""No test of the seven categories passes by construction: degenerate agents score 0."""

from __future__ import annotations

import pytest

from evalcore.agent_eval import CATEGORIES, AgentCaseGenerator, AgentEvalConfig, AgentEvaluator
from evalcore.agents import AgentResponse


class EmptyRegistry:
    """A registry that finds nothing: no false positives, and no relevant tool either."""

    threshold = 0.5

    def search(self, query, k=5, threshold=0.0):
        return []

    def list_tools(self):
        return ["percentage", "reverse_string", "factorial", "temperature_conversion"]


class _Degenerate:
    def __init__(self, registry):
        self._registry = registry

    @property
    def registry(self):
        return self._registry

    def reset(self):
        pass

    def workflow_patterns(self):
        return {}


class SuccessNone(_Degenerate):
    def process_request(self, query):
        return AgentResponse(success=True, response="done", result=None)


class Echo(_Degenerate):
    def process_request(self, query):
        return AgentResponse(
            success=True, response=query, result=query, tool_used="echo", synthesized=True, reused=True
        )


class Raises(_Degenerate):
    def process_request(self, query):
        raise RuntimeError("agent crashed")


class RefusesEverything(_Degenerate):
    def process_request(self, query):
        return AgentResponse(success=False, error="I cannot serve this request.", needs_clarification=True)


@pytest.fixture(scope="module")
def cases():
    return AgentCaseGenerator(seed=0).generate()


@pytest.mark.parametrize("registry", [None, "empty"])
@pytest.mark.parametrize("agent_cls", [SuccessNone, Echo, Raises, RefusesEverything])
def test_degenerate_agents_score_zero_everywhere(agent_cls, registry, cases):
    agent = agent_cls(EmptyRegistry() if registry else None)
    cfg = AgentEvalConfig(
        seed=0, timing_repetitions=1, memory_requests=2, load_requests=4, workers=2, learning_repeats=2
    )
    res = AgentEvaluator(agent, cases, config=cfg).run(progress=False)
    assert set(res.categories) == set(CATEGORIES)
    for name, cat in res.categories.items():
        assert cat.tests, name
        passed = [t.name for t in cat.tests if t.passed]
        assert passed == [], (name, passed)
        assert cat.score == 0.0, (name, cat.score)
    assert res.overall == 0.0 and not res.passed
    crit = res.critical_failures
    if agent_cls is Raises:
        # every category records the escaped exception as a critical failure
        assert {c["category"] for c in crit} == set(CATEGORIES) - ({"retrieval"} if registry is None else set())
        assert all("RuntimeError: agent crashed" in (c["error"] or "") for c in crit if c["category"] != "retrieval")
    else:
        assert crit == []


class Exits(_Degenerate):
    def process_request(self, query):
        raise SystemExit(3)


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_system_exit_from_the_agent_is_a_critical_failure_not_the_end_of_the_run(timeout, cases):
    cfg = AgentEvalConfig(seed=0, limit=2, request_timeout_s=timeout)
    res = AgentEvaluator(Exits(None), cases, config=cfg).run(["functional"], progress=False)
    tests = res.categories["functional"].tests
    assert len(tests) == 2 and all(t.critical and t.score == 0.0 for t in tests)
    assert all(t.error == "exception escaped the agent: SystemExit: 3" for t in tests)


class BrokenReset(SuccessNone):
    def reset(self):
        raise OSError("cannot create a temporary registry")


def test_a_reset_that_raises_is_a_critical_failure_in_every_category(cases):
    res = AgentEvaluator(BrokenReset(None), cases, config=AgentEvalConfig(seed=0, limit=1)).run(progress=False)
    for cat in res.categories.values():
        assert [(t.name, t.score, t.critical) for t in cat.tests] == [("reset", 0.0, True)]
        assert "OSError: cannot create a temporary registry" in cat.tests[0].error
    assert not res.passed and len(res.critical_failures) == len(CATEGORIES)
