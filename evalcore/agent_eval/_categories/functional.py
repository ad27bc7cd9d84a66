"""Functional correctness: each case's structured result against its expected answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.agent_eval._calling import answer_test, call_agent, reset_agent
from evalcore.agent_eval._case_results import CategoryResult
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData

if TYPE_CHECKING:
    from evalcore.agents import Agent


def evaluate_functional(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Functional correctness: each case's structured result against its expected answer.

    Test score: 1 when ``success`` is True and ``values_match(result, expected)``, else 0.

    Args:
        agent: The agent.
        data: Cases (those hinted ``functional``).
        config: Evaluation settings.

    Returns:
        The category result; metrics ``accuracy`` and ``by_kind`` accuracy.
    """
    res = CategoryResult("functional", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    by_kind: dict[str, list[float]] = {}
    for case in data.for_category("functional", config.limit):
        t = answer_test(case.id, call_agent(agent, case.query, config.request_timeout_s), case, config.pass_threshold)
        res.tests.append(t)
        by_kind.setdefault(case.kind, []).append(t.score)
    res.metrics = {
        "accuracy": res.score,
        "n_cases": len(res.tests),
        "by_kind": {k: sum(v) / len(v) for k, v in by_kind.items()},
    }
    return res
