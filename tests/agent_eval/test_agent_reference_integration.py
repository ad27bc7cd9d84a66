"""The evaluator on the real reference agent (integration: embeddings and the embedded model)."""

from __future__ import annotations

import pytest

from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, AgentEvaluator, resolve_agent

pytestmark = pytest.mark.integration


def test_reference_agent_no_llm_mode():
    gen = AgentCaseGenerator(seed=0)
    cases = gen.generate()
    agent = resolve_agent("reference", model="none")
    cfg = AgentEvalConfig(
        seed=0,
        limit=4,
        n_paraphrase_groups=1,
        n_unrelated=4,
        timing_repetitions=1,
        memory_requests=2,
        load_requests=4,
        workers=2,
        learning_repeats=2,
    )
    res = AgentEvaluator(agent, cases, config=cfg).run(
        ["functional", "robustness", "retrieval", "performance"], progress=False
    )
    # the starter tools answer these exactly; nothing escapes the agent
    assert res.categories["functional"].score == 1.0
    assert not res.critical_failures
    assert res.categories["retrieval"].metrics["n_queries"] >= 3
    assert res.categories["performance"].metrics["success_rate_under_load"] == 1.0


def test_reference_agent_embedded_model_functional():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 2, "medium": 0, "complex": 0, "edge": 0}).generate()
    agent = resolve_agent("reference", model="local:smollm2", options={"arg_max_tokens": 48})
    res = AgentEvaluator(agent, cases, config=AgentEvalConfig(seed=0)).run(["functional"], progress=False)
    assert len(res.categories["functional"].tests) == 2
    assert not res.critical_failures


def test_reference_agent_without_synthesis_scores_low_and_says_so():
    gen = AgentCaseGenerator(seed=0, counts={"simple": 4, "medium": 3, "complex": 2, "edge": 4})
    cases = gen.generate()
    agent = resolve_agent("reference", model="none")
    try:
        assert agent.pid  # hosted in an interpreter of its own
        res = AgentEvaluator(
            agent,
            cases,
            config=AgentEvalConfig(
                seed=0, counts={"simple": 4, "medium": 3, "complex": 2, "edge": 4}, learning_kinds=2
            ),
        ).run(["synthesis", "functional"], progress=False)
    finally:
        agent.close()
    syn = res.categories["synthesis"]
    assert syn.score == 0.0 and syn.metrics["synthesis_rate"] == 0.0
    assert any("no tool was credited" in n for n in syn.notes)
    assert res.status == "partial" and res.trusted
