"""Test quality is measured by running the tests (issue 30, item 2): against the tool (they must
pass) and against mutants of it (they must fail), in the sandbox; a test that never calls the
tool scores 0 (read, such tests once scored 1.0)."""

from __future__ import annotations

import ast

import pytest

from evalcore.agent_eval import AgentEvalConfig, OracleAgent
from evalcore.agent_eval._categories import evaluate_synthesis
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._gaming import HollowTests
from evalcore.agent_eval._quality import mutants, screen_tests, test_quality

CODE = '''
def count_up(n: int) -> int:
    """Count from 0 to n in steps of 1."""
    i = 0
    while i < n:
        i = i + 1
    return i
'''
STRONG = (
    "def test_count_up():\n    assert count_up(3) == 3\n    assert count_up(0) == 0\n    assert count_up(-2) == 0\n"
)


def test_tests_that_never_call_the_tool_score_zero() -> None:
    hollow = "def test_a():\n    assert 1 + 1 == 2\n    assert 0 == 0\n    assert [] == []\n"
    out = test_quality(hollow, "count_up", CODE)
    assert out["passes"] and out["tool_calls"] == 0 and out["score"] == 0.0
    assert "never call count_up" in out["error"]


def test_strong_tests_kill_every_mutant_weak_ones_fewer() -> None:
    strong = test_quality(STRONG, "count_up", CODE)
    assert strong["passes"] and strong["tool_calls"] == 3
    assert strong["n_mutants"] >= 5 and strong["n_killed"] == strong["n_mutants"] and strong["score"] == 1.0
    # one input only: some mutants survive (n <= i, a start of 1 ...)
    weak = test_quality("def test_count_up():\n    assert count_up(3) == 3\n", "count_up", CODE)
    assert weak["passes"] and 0.0 < weak["score"] < 1.0 and weak["survivors"]
    # asserting nothing about the output: only mutants that raise or hang are killed
    blind = test_quality("def test_count_up():\n    count_up(3)\n", "count_up", CODE)
    assert blind["score"] < weak["score"]


def test_a_mutant_that_loops_for_ever_is_cut_at_its_time_limit_and_left_out() -> None:
    """A code mutant that hangs where the tool returned fails loudly: it is cut at its limit and
    left out of the score (issue 37: a self-checking tool turns every mutant into one)."""
    out = test_quality(STRONG, "count_up", CODE, timeout_s=10.0)
    looping = [m for m in mutants(CODE) if "Add→Sub" in m["what"]]
    assert [m["what"] for m in looping] == ["Add→Sub at line 6"]  # i = i - 1: never reaches n
    assert "Add→Sub at line 6" in out["left_out"] and "Add→Sub at line 6" not in out["survivors"]
    assert out["score"] == 1.0


def test_tests_that_fail_on_the_tool_or_reach_past_it_score_zero() -> None:
    wrong = test_quality("def test_count_up():\n    assert count_up(3) == 4\n", "count_up", CODE)
    assert wrong["score"] == 0.0 and "fail against the tool" in wrong["error"]
    for src, word in [
        ("def test_c():\n    assert count_up.__code__.co_consts\n", "__code__"),
        ("import inspect\ndef test_c():\n    assert 'i + 1' in inspect.getsource(count_up)\n", "inspect"),
        ("def test_c():\n    assert count_up(1) == 1 and 'i' in globals()\n", "globals"),
    ]:
        out = test_quality(src, "count_up", CODE)
        assert out["score"] == 0.0 and word in out["error"], out
        assert screen_tests(src) is not None


def test_a_tool_that_checks_its_own_code_earns_no_test_quality() -> None:
    """Code that raises when changed fails on every mutant by itself: tests calling it once
    would kill them all."""
    selfcheck = CODE + ("\nimport hashlib\n_SEAL = hashlib.sha256(count_up.__code__.co_code).hexdigest()\n")
    out = test_quality("def test_count_up():\n    count_up(3)\n", "count_up", selfcheck)
    assert out["score"] == 0.0 and "can read the code itself" in out["error"]


def test_state_kept_between_runs_cannot_tell_the_original_from_a_mutant() -> None:
    """Tests that pass on the first version run and fail on every later one (a decimal context
    set on the first run) once killed every mutant while testing nothing: each version now runs
    in a sandboxed process of its own."""
    tests = (
        "import decimal\ndef test_count_up():\n    count_up(1)\n    assert decimal.getcontext().prec == 28\n"
        "    decimal.setcontext(decimal.Context(prec=29))\n"
    )
    out = test_quality(tests, "count_up", CODE)
    assert out["passes"] and out["n_mutants"] >= 5
    assert out["n_killed"] < out["n_mutants"]  # only mutants that raise or hang on count_up(1) die


def test_test_runs_are_charged_to_the_category_tool_budget() -> None:
    """Running a tool's tests against its mutants is running the agent's code: it spends the
    category's tool time budget like any other run, and a spent budget runs nothing more."""
    from evalcore.agent_eval._calling import tool_budget

    with tool_budget(AgentEvalConfig(seed=0, tool_budget_s=60.0)) as budget:
        out = test_quality(STRONG, "count_up", CODE)
    assert out["score"] == 1.0 and budget.spent_s > 0
    with tool_budget(AgentEvalConfig(seed=0, tool_budget_s=0.01)) as spent:
        spent.charge(1.0)
        out = test_quality(STRONG, "count_up", CODE)
    assert out["score"] == 0.0 and "could not be run" in out["error"] and "budget" in out["error"]


def test_mutants_differ_from_the_code_and_compile() -> None:
    ms = mutants(CODE)
    original = ast.unparse(ast.parse(CODE))
    assert len({m["code"] for m in ms}) == len(ms) >= 5
    for m in ms:
        assert m["code"] != original
        compile(m["code"], "<m>", "exec")
    assert mutants("def f(:") == []


@pytest.mark.parametrize("cls, low", [(HollowTests, True), (OracleAgent, False)])
def test_synthesis_scores_the_measured_test_quality(cls: type, low: bool) -> None:
    cfg = AgentEvalConfig(seed=0, counts={"simple": 2, "medium": 0, "complex": 0, "edge": 0}, n_synthesis_specs=3)
    data = AgentEvalData.build(cfg)
    res = evaluate_synthesis(cls(data.cases), data, cfg)
    assert res.metrics["n_synthesized"] == 3  # the tools are right either way
    tq = res.metrics["mean_test_quality"]
    if low:
        # 0.3 + 0.2 x code quality (1.0) + 0.5 x test quality (0): under the pass threshold
        assert tq == 0.0 and res.score == pytest.approx(0.5) and not res.passed
        assert all("never call" in t.details["test_quality"]["error"] for t in res.tests)
    else:
        assert tq == 1.0 and res.score == 1.0
