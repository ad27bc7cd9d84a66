"""No test of the seven categories passes by construction: degenerate agents score 0."""

from __future__ import annotations

import pytest

from evalcore.agents import AgentResponse
from evalcore.datasets import AgentCaseGenerator
from evalcore.suites import CATEGORIES, AgentEvaluator, SuiteConfig


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
        return AgentResponse(success=True, response=query, result=query, tool_used="echo",
                             synthesized=True, reused=True)


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
    cfg = SuiteConfig(timing_repetitions=1, memory_requests=2, load_requests=4, workers=2, learning_repeats=2)
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
        assert all("RuntimeError: agent crashed" in (c["error"] or "") for c in crit
                   if c["category"] != "retrieval")
    else:
        assert crit == []
