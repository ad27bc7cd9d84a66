"""Retrieval: no kind of test is recognisable from its call (issue 30, item 2).

The related-query, paraphrase and unrelated-query tests once called the agent's search with
different ``k`` and thresholds, so a search that ignored its query and answered from those
arguments (:class:`~evalcore.agent_eval._gaming.ArgsSearch`: its one tool, which does compute every
kind, for threshold 0 or k = 1, nothing otherwise) scored 1.0. Now every query is searched once
with the same ``k`` and threshold, in an order drawn per run that interleaves the kinds, and the
credit of related queries is scaled by the share of unrelated queries left without a match, so
the score depends on what the search returns for the query.
"""

from __future__ import annotations

from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, OracleAgent
from evalcore.agent_eval._categories import evaluate_retrieval
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._gaming import ArgsSearch, _LookupRegistry
from evalcore.agents import ToolMatch

COUNTS = {"simple": 8, "medium": 6, "complex": 0, "edge": 0}
CFG = AgentEvalConfig(seed=0, counts=COUNTS, retrieval_threshold=0.5)
DATA = AgentEvalData.build(CFG)


class _Recording(_LookupRegistry):
    """The oracle's search, recording every call's (query, k, threshold)."""

    calls: list[tuple[str, int, float]]

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        self.calls.append((query, k, threshold))
        return super().search(query, k, threshold)


def _recording_oracle() -> tuple[OracleAgent, _Recording]:
    agent = OracleAgent(DATA.cases, DATA.paraphrase_groups)
    reg = _Recording(agent)
    reg.calls = []
    agent._registry = reg
    return agent, reg


def test_every_search_call_shares_k_and_threshold_once_per_query_interleaved() -> None:
    agent, reg = _recording_oracle()
    res = evaluate_retrieval(agent, DATA, CFG)
    assert res.score == 1.0
    assert {(k, t) for _q, k, t in reg.calls} == {(CFG.k, 0.0)}  # one shape of call for every test
    queries = [q for q, _k, _t in reg.calls]
    assert len(queries) == len(set(queries))  # each query searched once
    related = {c.query for c in DATA.cases if "retrieval" in c.categories} | {
        c.query for g in DATA.paraphrase_groups for c in g
    }
    assert set(queries) == related | set(DATA.unrelated)
    # interleaved: unrelated queries are not one block at either end
    kinds = ["u" if q in DATA.unrelated else "r" for q in queries]
    half = len(kinds) // 2
    assert "u" in kinds[:half] and "u" in kinds[half:] and "r" in kinds[:half] and "r" in kinds[half:]
    # and the order is drawn per run
    agent2, reg2 = _recording_oracle()
    evaluate_retrieval(agent2, DATA, CFG)
    assert [q for q, _k, _t in reg2.calls] != queries


def test_a_search_that_answers_from_its_arguments_scores_nothing() -> None:
    agent = ArgsSearch(DATA.cases, DATA.paraphrase_groups)
    agent.process_request(DATA.cases[0].query)  # registers its one tool
    reg = agent.registry
    # the attack is real: from the old call shapes alone it answered every test rightly
    assert [m.name for m in reg.search("any text", CFG.k, 0.0)] == ["compute_any"]  # related queries
    assert [m.name for m in reg.search("any text", 1, 0.5)] == ["compute_any"]  # paraphrases
    assert reg.search("any text", CFG.k, 0.5) == []  # unrelated queries
    res = evaluate_retrieval(ArgsSearch(DATA.cases, DATA.paraphrase_groups), DATA, CFG)
    assert res.metrics["discrimination"] == 0.0 and res.metrics["fpr"] == 1.0
    assert res.score == 0.0


def test_a_query_blind_constant_answer_earns_nothing_either_way() -> None:
    """Whatever constant a search answers (its tools, or nothing), it scores 0."""
    for constant in ([ToolMatch("percentage", 0.9)], []):
        agent = OracleAgent(DATA.cases, DATA.paraphrase_groups)

        class Constant(_LookupRegistry):
            answer = constant  # bound now: each pass of the loop builds its own class

            def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
                return list(self.answer)

        agent._registry = Constant(agent)
        res = evaluate_retrieval(agent, DATA, CFG)
        assert res.score == 0.0
        # an unrelated query's 0 says why, silence included
        silent = [t.name for t in res.tests if t.name.startswith("unrelated:") and t.score == 0 and not t.error]
        assert not silent, (constant, silent)
        if not constant:
            unrelated = [t for t in res.tests if t.name.startswith("unrelated:")]
            assert unrelated and all("silence earns nothing" in (t.error or "") for t in unrelated)


def test_unrelated_queries_are_drawn_per_seed() -> None:
    a = AgentCaseGenerator(1).unrelated_queries(8)
    b = AgentCaseGenerator(2).unrelated_queries(8)
    assert a != b
