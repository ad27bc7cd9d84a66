"""Issue 37 (round three): test quality measured from outside the tool, workflow and learning
credit only for tools the evaluator verified.

Each hostile agent below is a test fixture, like the gaming agents of ``_gaming``: its tools are
right (the evaluator verifies them on held-out inputs), and what it games is one measure. Run
against the evaluator before this round (seed 3, three specs), they scored: test quality 1.0
(code compared through defaults, through a traceback's frames), 0.857 (a tool that checks
itself, tests of the type only), 1.0 (a tool whose one mutation site is its ``return``); relays
present at the reset: workflow 1.0, learning patterns 1.0; a tool returning a sentinel when it
sees itself changed, tests checking for the sentinel: 0.73. Now: 0, 0, 0.22, 0.33; workflow 0.44,
patterns 0; sentinel 0.17. The honest self-test agents' scores stay within 0.02 of what they were.
"""

from __future__ import annotations

import operator
from typing import Any

import pytest

from evalcore.agent_eval import AgentEvalConfig, OracleAgent
from evalcore.agent_eval._cases.specs import Spec, spec_source
from evalcore.agent_eval._categories import evaluate_learning, evaluate_synthesis, evaluate_workflow
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._oracle import HonestAgent, tool_source
from evalcore.agent_eval._quality import test_quality
from evalcore.agents import AgentResponse, StepRecord

PASS = AgentEvalConfig().pass_threshold
_OP_CALLS = {
    "mul": 'x = operator.mul(x, int("{c}"))',
    "add": 'x = operator.add(x, int("{c}"))',
    "sub": 'x = operator.sub(x, int("{c}"))',
    "mod": 'x = operator.mod(x, int("{c}"))',
    "div": 'x = operator.floordiv(x, int("{c}"))',
    "square": "x = operator.mul(x, x)",
    "digits": "x = sum(map(int, str(abs(x))))",
    "negate": "x = operator.neg(x)",
}


def _code_seal(code: str, name: str) -> str:
    """What the introspecting tests compare: the function's bytecode and constants."""
    ns: dict[str, Any] = {}
    exec(compile(code, "<tool>", "exec"), ns)  # noqa: S102 - the fixture's own code
    c = operator.attrgetter("__code__")(ns[name])
    return repr((c.co_code.hex(), [k for k in c.co_consts if isinstance(k, (int, str))]))


def introspecting_source(spec: Spec, how: str) -> tuple[str, str]:
    """The honest tool, with tests that call it once and then compare its code: reached through
    the call counter's defaults (``operator.attrgetter`` with the name in a string) or through the
    frames of a traceback the tool raised."""
    code, _ = spec_source(spec)
    seal = _code_seal(code, spec.name)
    if how == "defaults":
        body = (
            f"    assert {spec.name}(3) is not None\n"
            f'    real = operator.attrgetter("__kwdefaults__")({spec.name})["_real"]\n'
            '    c = operator.attrgetter("__code__")(real)\n'
            f"    assert repr((c.co_code.hex(), [k for k in c.co_consts if isinstance(k, (int, str))])) == {seal!r}\n"
        )
    else:
        body = (
            "    try:\n"
            f"        {spec.name}(None)\n"
            "    except TypeError as exc:\n"
            '        tb = operator.attrgetter("__traceback__")(exc)\n'
            "    while tb.tb_next is not None:\n"
            "        tb = tb.tb_next\n"
            "    c = tb.tb_frame.f_code\n"
            f"    assert repr((c.co_code.hex(), [k for k in c.co_consts if isinstance(k, (int, str))])) == {seal!r}\n"
        )
    return code, f"import operator\n\n\ndef test_{spec.name}() -> None:\n{body}"


def self_checking_source(spec: Spec) -> tuple[str, str]:
    """A right tool that computes its answer twice and raises when the two disagree, with a test
    that checks only the type of one answer."""
    steps = "".join(f"    {spec_line(op, c, 'a')}\n" for op, c in spec.ops)
    again = "".join(f"    {spec_line(op, c, 'b')}\n" for op, c in spec.ops)
    code = (
        f"def {spec.name}(x: int) -> int:\n"
        f'    """Apply, in order: {spec.steps_text()}; computed twice, checked."""\n'
        f"    a = x\n{steps}    b = x\n{again}"
        "    if a != b:\n        raise ArithmeticError('self-check failed')\n    return a\n"
    )
    return code, f"def test_{spec.name}() -> None:\n    assert isinstance({spec.name}(3), int)\n"


def spec_line(op: str, c: int | None, var: str) -> str:
    from evalcore.agent_eval._cases.specs import _OPS

    return _OPS[op][3].format(c=c).replace("x", var)


def siteless_source(spec: Spec) -> tuple[str, str]:
    """A right tool written with no operator, comparison or number in it (``operator.mul(x,
    int("7"))``): its one mutation site is the ``return``, whose mutant ``is not None`` kills."""
    body = "".join(f"    {_OP_CALLS[op].format(c=c)}\n" for op, c in spec.ops)
    code = (
        f"import operator\n\n\ndef {spec.name}(x: int) -> int:\n"
        f'    """Apply, in order: {spec.steps_text()}."""\n{body}    return x\n'
    )
    return code, f"def test_{spec.name}() -> None:\n    assert {spec.name}(3) is not None\n"


SENTINEL = -987654321


def sentinel_source(spec: Spec) -> tuple[str, str]:
    """The self-checking tool returning a sentinel, not raising, when its two answers disagree,
    with a test that checks only for the sentinel: every code mutant it sees is told apart."""
    code, _ = self_checking_source(spec)
    code = code.replace("raise ArithmeticError('self-check failed')", f"return {SENTINEL}")
    test = (
        f"def test_{spec.name}() -> None:\n"
        f"    for x in (3, -7, 12, 250, 0, 99):\n        assert {spec.name}(x) != {SENTINEL}\n"
    )
    return code, test


class _SpecTools(OracleAgent):
    """Builds right spec tools with the fixture's code and tests."""

    how = "defaults"

    def source(self, spec: Spec) -> tuple[str, str]:
        raise NotImplementedError

    def _build_spec_tool(self, spec: Spec) -> bool:
        with self._lock:
            if spec.name in self._tools:
                return False
            self._tools[spec.name] = self.source(spec)
        return True


class DefaultsIntrospector(_SpecTools):
    def source(self, spec: Spec) -> tuple[str, str]:
        return introspecting_source(spec, "defaults")


class TracebackIntrospector(_SpecTools):
    def source(self, spec: Spec) -> tuple[str, str]:
        return introspecting_source(spec, "traceback")


class SelfChecking(_SpecTools):
    def source(self, spec: Spec) -> tuple[str, str]:
        return self_checking_source(spec)


class SentinelChecking(_SpecTools):
    def source(self, spec: Spec) -> tuple[str, str]:
        return sentinel_source(spec)


class Siteless(_SpecTools):
    def source(self, spec: Spec) -> tuple[str, str]:
        return siteless_source(spec)


RELAY = (
    "def {name}(answer: object, **inputs: object) -> object:\n"
    '    """Relay an answer computed elsewhere."""\n'
    "    return answer\n"
)


class Relays(OracleAgent):
    """Holds identity "relays" under the starter tools' names from the reset on, computes every
    answer outside its tools (from the key) and passes it through them; tools of other kinds
    are the honest ones, added in the session (so that a learned pattern holds a new tool)."""

    def reset(self) -> None:
        super().reset()
        with self._lock:
            for k in list(self._tools):
                self._tools[k] = (RELAY.format(name=k), f"def test_{k}() -> None:\n    assert {k}(1) == 1\n")

    def _answer(self, case: Any, value: Any, step_values: list[Any]) -> AgentResponse:
        resp = super()._answer(case, value, step_values)
        if not resp.success or not resp.steps:
            return resp
        with self._lock:
            relays = {k for k, (code, _t) in self._tools.items() if code == RELAY.format(name=k)}
        steps = [
            StepRecord(
                tool=s.tool,
                args={**s.args, "answer": s.result} if s.tool in relays else dict(s.args),
                result=s.result,
                depends_on=list(s.depends_on),
            )
            for s in resp.steps
        ]
        return AgentResponse(
            success=True,
            response=resp.response,
            result=resp.result,
            tool_used=resp.tool_used,
            synthesized=resp.synthesized,
            reused=resp.reused,
            steps=steps,
        )


def _config(**kw: Any) -> AgentEvalConfig:
    return AgentEvalConfig(seed=3, n_synthesis_specs=3, **kw)


@pytest.fixture(scope="module")
def data() -> AgentEvalData:
    return AgentEvalData.build(_config())


# ------------------------------------------------------------------------------ test quality
@pytest.mark.parametrize("cls", [DefaultsIntrospector, TracebackIntrospector, SelfChecking, Siteless])
def test_test_quality_attacks_score_below_the_pass_threshold(cls: type, data: AgentEvalData) -> None:
    cfg = _config()
    res = evaluate_synthesis(cls(data.cases + data.specs), data, cfg)
    assert res.metrics["n_synthesized"] == 3, [t.error for t in res.tests]  # the tools are right
    tq = res.metrics["mean_test_quality"]
    assert tq < PASS, [t.details["test_quality"] for t in res.tests]
    assert res.score < PASS and not res.passed, res.score  # the category it attacks, not only the measure
    for t in res.tests:
        q = t.details["test_quality"]
        if cls in (DefaultsIntrospector, TracebackIntrospector):
            # the tests hold a proxy, not the tool: its code is not the tool's, they fail on it
            assert q["score"] == 0.0 and "fail against the tool" in q["error"], q
        else:
            # only the None and exception mutants are told apart: the code mutants that fail
            # loudly (every one that changes the output, for the self-checking tool) are left
            # out, those kept give the tests' one call the tool's output
            assert q["n_killed"] == 2 and q["n_behaviour"] == 6 and q["behaviour_score"] == pytest.approx(2 / 6), q
            assert q["score"] == min(q["behaviour_score"], 1.0 if q["code_score"] is None else q["code_score"])
            assert "behaviour: result + 1" in q["survivors"] and "behaviour: None" not in q["survivors"]
            assert q["left_out"] and all(w in q["survivors"] for w in q["survivors"] if not w.startswith("behav")), q


def test_a_tool_that_makes_its_code_mutants_easy_to_kill_scores_its_behaviour_share(data: AgentEvalData) -> None:
    """Code mutants depend on the tool's code, behaviour mutants do not: the score is the lower
    of the two shares, so a tool cannot buy test quality by making its own mutants loud."""
    res = evaluate_synthesis(SentinelChecking(data.cases + data.specs), data, _config())
    assert res.metrics["n_synthesized"] == 3
    assert res.metrics["mean_test_quality"] < PASS
    for t in res.tests:
        q = t.details["test_quality"]
        assert q["code_score"] is not None and q["code_score"] > q["behaviour_score"], q  # the sentinel kills them
        assert q["behaviour_score"] == pytest.approx(1 / 6) and q["score"] == q["behaviour_score"], q


def test_the_honest_agents_test_quality_is_unchanged(data: AgentEvalData) -> None:
    """Measured before this round on these cases (seed 3): test quality 0.952 (one equivalent
    mutant, ``% 17`` → ``% 18`` after a digit sum, survives), synthesis 0.988; now 0.944 and
    0.986 (six behaviour mutants, all killed; that tool's code share, 5/6, is its score)."""
    cfg = _config()
    for cls in (OracleAgent, HonestAgent):
        res = evaluate_synthesis(cls(data.cases + data.specs), data, cfg)
        assert res.metrics["n_synthesized"] == 3
        assert abs(res.metrics["mean_test_quality"] - 0.952) <= 0.03, res.metrics
        assert abs(res.score - 0.988) <= 0.02, (res.score, res.metrics)


SQUARE = '''
def square(x: int) -> int:
    """Square x."""
    return x * x
'''


def test_a_test_earns_only_by_distinguishing_outputs() -> None:
    """The tests see only outputs: a type check kills None and the exception, value checks at two
    inputs kill every behaviour mutant, and tests whose calls change from run to run earn 0."""
    typed = test_quality("def test_s():\n    assert isinstance(square(3), int)\n", "square", SQUARE)
    assert typed["passes"] and typed["n_behaviour"] == 6 and typed["n_killed"] >= 2
    assert {"behaviour: None", "behaviour: an exception"}.isdisjoint(typed["survivors"])
    assert "behaviour: result + 1" in typed["survivors"] and typed["score"] < PASS
    strong = test_quality("def test_s():\n    assert square(3) == 9\n    assert square(-2) == 4\n", "square", SQUARE)
    assert strong["score"] == 1.0 and not strong["survivors"], strong


def test_a_replay_answers_only_the_recorded_calls() -> None:
    """Replays answer the i-th call with the i-th recorded outcome when its arguments are the
    recorded ones; a call that differs is answered with an exception no test can take for the
    tool's (tests whose calls change from run to run cannot pass a replay)."""
    from evalcore.agent_eval._quality_run import run_session

    tests = "def test_s():\n    assert square(3) == 9\n    assert square(4) == 16\n"
    calls = [{"args": [3], "kwargs": {}}, {"args": [4], "kwargs": {}}]
    good = [{"ok": True, "result": 9}, {"ok": True, "result": 16}]
    same = run_session("square", tests, ["test_s"], calls=calls, outcomes=good, limit_s=5.0)
    assert same["passed"] and same["served"] == 2 and not same["diverged"], same
    other = run_session("square", tests, ["test_s"], calls=calls[::-1], outcomes=good, limit_s=5.0)
    assert not other["passed"] and other["diverged"] and other["served"] == 1, other
    wrong = run_session(
        "square", tests, ["test_s"], calls=calls, outcomes=[good[0], {"ok": True, "result": 17}], limit_s=5.0
    )
    assert not wrong["passed"] and wrong["served"] == 2 and "AssertionError" in (wrong["error"] or ""), wrong
    live = run_session("square", tests, ["test_s"], code=SQUARE, limit_s=5.0)
    assert live["passed"] and [e["call"] for e in live["log"]] == calls and [e["out"] for e in live["log"]] == good


def test_tests_that_call_the_tool_thousands_of_times_are_measured() -> None:
    """The live run's log is one line of the run's output: kept whole (16 MiB), not cut at the
    sandbox's default 64 KiB, which would fail a test that loops over many inputs."""
    out = test_quality(
        "def test_s():\n    for x in range(3000):\n        assert square(x) == x * x\n", "square", SQUARE
    )
    assert out["tool_calls"] == 3000 and out["score"] == 1.0, out


def test_the_tests_process_holds_no_object_of_the_tool() -> None:
    """The name the tests call is a proxy: its code, defaults and globals are the harness's."""
    probe = (
        "import operator\n"
        "def test_s():\n"
        "    assert square(3) == 9\n"
        '    g = operator.attrgetter("__globals__")(square)\n'
        '    assert "x * x" not in repr(g) and operator.attrgetter("__kwdefaults__")(square) is None\n'
        '    assert operator.attrgetter("__code__.co_name")(square) == "tool"\n'
    )
    out = test_quality(probe, "square", SQUARE)
    assert out["passes"], out


# ------------------------------------------------------------------------------ workflow, learning
def test_relays_present_at_reset_earn_no_workflow_credit(data: AgentEvalData) -> None:
    cfg = _config()
    res = evaluate_workflow(Relays(data.cases), data, cfg)
    assert res.tests and res.score < PASS, [t.score for t in res.tests]
    assert res.metrics["final_accuracy"] == 1.0  # the answers are right: they came from the key
    whys = [c["why"] for t in res.tests for c in t.details["trace_check"] if not c["executed"]]
    assert whys and any("present at the reset" in w and "held-out" in w for w in whys), whys
    honest = evaluate_workflow(HonestAgent(data.cases), data, cfg)
    oracle = evaluate_workflow(OracleAgent(data.cases), data, cfg)
    assert honest.score == 1.0 and oracle.score == 1.0


def test_relays_in_a_learned_pattern_earn_no_learning_credit(data: AgentEvalData) -> None:
    cfg = _config()
    res = evaluate_learning(Relays(data.cases, data.paraphrase_groups), data, cfg)
    patterns = next(t for t in res.tests if t.name == "patterns")
    assert patterns.score < PASS, patterns.details
    honest = evaluate_learning(HonestAgent(data.cases, data.paraphrase_groups), data, cfg)
    assert next(t for t in honest.tests if t.name == "patterns").score == 1.0
    assert honest.score >= 0.98


def test_the_relay_fixture_is_a_real_attack() -> None:
    """The relays reproduce every step they report (the trace re-run alone passes them)."""
    from evalcore.agent_eval._measure import run_tool_steps

    code = RELAY.format(name="factorial")
    ran = run_tool_steps([(code, "factorial", {"n": 5, "answer": 120})])
    assert ran == [{"ok": True, "result": 120, "error": None}]
    real, _ = tool_source("factorial")
    assert run_tool_steps([(real, "factorial", {"n": 5})])[0]["result"] == 120
