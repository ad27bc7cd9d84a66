"""Robustness: each kind (malformed input, ambiguity, boundary values, valid requests) has its
own floor and the category passes only when every kind does (issue 30, item 2). Averaged, an
agent that guessed on every ambiguous request passed on its boundary answers, and one that
answered only the fixed boundary texts (refusing everything else with an error quoting it)
scored 1.0 while failing every functional case."""

from __future__ import annotations

from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, HonestAgent, OracleAgent
from evalcore.agent_eval._categories import evaluate_functional, evaluate_robustness
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._gaming import BoundaryOnly
from evalcore.agents import AgentResponse

COUNTS = {"simple": 4, "medium": 0, "complex": 0, "edge": 11}
CFG = AgentEvalConfig(seed=0, counts=COUNTS)
DATA = AgentEvalData.build(CFG)


class GuessesWhenAmbiguous(OracleAgent):
    """Right on everything but ambiguous requests, where it guesses an answer."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is not None and case.expected_behavior == "clarification":
            return AgentResponse(success=True, result=0)
        return super().process_request(query)


def test_an_agent_that_answers_only_the_boundary_texts_fails() -> None:
    agent = BoundaryOnly(DATA.cases)
    res = evaluate_robustness(agent, DATA, CFG)
    kinds = res.metrics["kinds"]
    assert kinds["boundary_values"]["score"] == 1.0  # it does know the fixed texts
    assert kinds["valid_requests"] == {"score": 0.0, "floor": 0.5, "passed": False, "n": 3}
    assert res.score == 0.0 and not res.passed
    assert evaluate_functional(BoundaryOnly(DATA.cases), DATA, CFG).score == 0.0


def test_guessing_on_ambiguous_requests_fails_the_category_whatever_the_rest() -> None:
    res = evaluate_robustness(GuessesWhenAmbiguous(DATA.cases), DATA, CFG)
    kinds = res.metrics["kinds"]
    assert kinds["ambiguity"]["score"] == 0.0 and not kinds["ambiguity"]["passed"]
    assert all(kinds[k]["score"] == 1.0 for k in ("malformed_input", "boundary_values", "valid_requests"))
    raw_mean = sum(t.details["score_before_floor"] for t in res.tests) / len(res.tests)
    assert raw_mean >= 0.7  # averaged, it passed
    assert res.score == 0.0  # each kind has its floor: the category scores as its weakest kind
    assert "ambiguity" in res.notes[-1]
    assert all("below its floor" in t.error for t in res.tests if t.details["score_before_floor"] > 0)


def test_every_kind_above_its_floor_keeps_the_mean() -> None:
    for cls in (OracleAgent, HonestAgent):
        res = evaluate_robustness(cls(DATA.cases), DATA, CFG)
        assert res.score == 1.0 and all(k["passed"] for k in res.metrics["kinds"].values())
        assert set(res.metrics["kinds"]) == {"malformed_input", "ambiguity", "boundary_values", "valid_requests"}


def test_controls_are_fresh_per_run() -> None:
    a = [
        t.details["query"]
        for t in evaluate_robustness(HonestAgent(DATA.cases), DATA, CFG).tests
        if t.name.startswith("control:")
    ]
    b = [
        t.details["query"]
        for t in evaluate_robustness(HonestAgent(DATA.cases), DATA, CFG).tests
        if t.name.startswith("control:")
    ]
    assert len(a) == 3 and a != b
    gen_queries = {c.query for c in AgentCaseGenerator(0, COUNTS).generate()}
    assert not set(a) & gen_queries
