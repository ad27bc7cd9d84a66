"""One real synthesis attempt: the embedded model writes a tool, the real sandbox verifies it."""

from __future__ import annotations

import importlib.util

import pytest

from evalcore.agents.reference import STARTER_TOOLS, make_agent
from evalcore.agents.reference._execution import run_tool_sandboxed, verify_tool


@pytest.mark.integration
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_real_model_synthesis_attempt_is_recorded_honestly() -> None:
    # threshold 0.95: no starter tool qualifies, so the request must go through synthesis.
    agent = make_agent("local:smollm2", embedder="tfidf", threshold=0.95, synthesis_max_tokens=96, arg_max_tokens=32)
    r = agent.process_request("Is 13 a prime number?")
    attempts = agent.synthesis_attempts()
    assert len(attempts) == 1
    att = attempts[0]
    assert att["model_calls"] >= 1 and att["duration_s"] > 0
    assert set(att["raw"]) <= {"spec", "tests", "implementation"} and att["raw"]
    if att["success"]:
        name = att["name"]
        assert r.synthesized and name in agent.registry.list_tools()
        info = agent.registry.describe(name)
        assert info["origin"] == "synthesized"
        assert verify_tool(info["code"], info["tests"]).passed  # re-verified independently
        if r.success:
            again = run_tool_sandboxed(info["code"], name, r.steps[0].args)
            assert again.ok and again.result == r.result
    else:
        assert not r.success and not r.synthesized and r.result is None
        assert r.error.startswith("could not synthesize a verified tool:")
        assert att["error"] and att["stage"] in {"spec", "tests", "implementation", "verify"}
        assert agent.registry.list_tools() == sorted(STARTER_TOOLS)
    agent.close()
