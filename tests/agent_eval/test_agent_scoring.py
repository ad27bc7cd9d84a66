"""Agent-evaluation categories on hand-built agents with known answers."""

from __future__ import annotations

import json
import math
import threading
import time

import numpy as np
import pytest

from evalcore._io import to_json_native
from evalcore.agent_eval import (
    CATEGORY_WEIGHTS,
    AgentCase,
    AgentCaseGenerator,
    AgentEvalConfig,
    AgentEvalData,
    AgentEvaluator,
    CategoryResult,
    EvaluationResult,
    ExpectedStep,
    FailingAgent,
    OracleAgent,
    WrongAgent,
    code_quality,
    evaluate_functional,
    evaluate_learning,
    evaluate_performance,
    evaluate_retrieval,
    evaluate_robustness,
    evaluate_synthesis,
    evaluate_workflow,
    make_test,
    overall_score,
    run_self_test,
    score_workflow,
    test_quality,
    values_match,
)
from evalcore.agents import AgentResponse, StepRecord, ToolMatch


def case(cid, query, expected, kind="percentage", cats=("functional",), behavior="answer", **kw):
    return AgentCase(
        id=cid,
        query=query,
        complexity=kw.pop("complexity", "simple"),
        kind=kind,
        categories=list(cats),
        tags=[kind],
        expected=expected,
        expected_behavior=behavior,
        expected_tools=kw.pop("tools", [kind]),
        **kw,
    )


class TableRegistry:
    """Registry whose search answers from a fixed table query -> [(name, score)]."""

    def __init__(self, table, tools, described=None):
        self.table, self.tools, self.described = table, list(tools), described or {}
        self.threshold = 0.5

    def search(self, query, k=5, threshold=0.0):
        hits = sorted(self.table.get(query, []), key=lambda t: -t[1])
        return [ToolMatch(n, s) for n, s in hits if s >= threshold][:k]

    def list_tools(self):
        return list(self.tools)

    def describe(self, name):
        if name not in self.described:
            raise KeyError(name)
        return self.described[name]


class ScriptedAgent:
    """Answers from a dict query -> AgentResponse (or an exception to raise)."""

    def __init__(self, answers, registry=None):
        self.answers, self._registry, self.resets, self.calls = answers, registry, 0, []

    @property
    def registry(self):
        return self._registry

    def reset(self):
        self.resets += 1

    def process_request(self, query):
        self.calls.append(query)
        a = self.answers.get(query)
        if isinstance(a, Exception):
            raise a
        if callable(a):
            return a()
        return a if a is not None else AgentResponse(success=False, error="unknown request here")


# ------------------------------------------------------------------------------ matching
def test_values_match_is_not_a_substring_check():
    assert not values_match("25", 250)
    assert not values_match(25, 250)
    assert values_match("250", 250) and values_match(250.0, 250) and values_match("3,628,800", 3628800)
    assert not values_match("about 250 apples", 250)
    assert not values_match(3628801, 3628800, 1e-9, 1e-6)
    assert not values_match(True, 1) and not values_match(1, True)
    assert values_match(False, False) and values_match("false", False)
    assert values_match(" olleh ", "olleh") and not values_match("Olleh", "olleh")
    assert values_match([24, "eltsac"], [24, "eltsac"]) and not values_match([24], [24, "x"])
    assert not values_match(None, 0) and not values_match(float("nan"), 1.0)


def test_values_match_and_json_handle_integers_beyond_the_float_range():
    big = math.factorial(1000)  # 2568 digits: float(big) overflows
    assert values_match(big, big) and values_match(str(big), big)
    assert not values_match(big * 10, big) and not values_match(big + 10**2560, big, 1e-9, 0)
    assert values_match(big + 1, big, 1e-9, 0)  # relative tolerance, as for floats
    assert not values_match(10**400, 5) and not values_match(5, 10**400) and not values_match(-(10**400), 5.0)
    assert not values_match("9" * 5000, 5)
    huge = {"result": 10**5000, "ok": big}
    text = json.dumps(to_json_native(huge), allow_nan=False)
    assert json.loads(text) == {"result": "<int of 16610 bits>", "ok": big}
    res = evaluate_functional(
        ScriptedAgent({"q": AgentResponse(success=True, result=10**5000)}),
        AgentEvalData([case("c", "q", 24)]),
        AgentEvalConfig(seed=0),
    )
    assert res.score == 0.0 and not res.tests[0].critical
    json.dumps(res.to_dict(), allow_nan=False)


# ------------------------------------------------------------------------------ functional
def test_functional_scores_structured_result_only():
    cases = [
        case("c1", "What is 10% of 2500?", 250),
        case("c2", "Reverse the string 'ab'", "ba", kind="reverse_string"),
        case("c3", "What is 1% of 100?", 1),
        case("c4", "Calculate the factorial of 3", 6, kind="factorial"),
    ]
    answers = {
        # '25' vs 250 must score 0 even though the text contains "250"
        "What is 10% of 2500?": AgentResponse(success=True, response="250 is the answer; result 25", result="25"),
        "Reverse the string 'ab'": AgentResponse(success=True, response="ba", result="ba"),
        # correct number but success=False scores 0
        "What is 1% of 100?": AgentResponse(success=False, result=1, error="declined to answer"),
        "Calculate the factorial of 3": RuntimeError("boom"),
    }
    agent = ScriptedAgent(answers)
    res = evaluate_functional(agent, AgentEvalData(cases), AgentEvalConfig(seed=0))
    scores = {t.name: t.score for t in res.tests}
    assert scores == {"c1": 0.0, "c2": 1.0, "c3": 0.0, "c4": 0.0}
    assert res.score == 0.25 and agent.resets == 1
    crit = res.critical_failures
    assert [c["test"] for c in crit] == ["c4"] and "RuntimeError: boom" in crit[0]["error"]


def test_protocol_violation_is_critical():
    agent = ScriptedAgent({"q": lambda: {"success": True, "result": 1}})
    res = evaluate_functional(agent, AgentEvalData([case("c", "q", 1)]), AgentEvalConfig(seed=0))
    assert res.score == 0.0 and res.tests[0].critical and "ProtocolError" in res.tests[0].error
    # steps that are not StepRecords are a protocol break too (and must not crash the learning category)
    wf_synth = AgentCase(
        id="ws",
        query="Find the greatest common divisor of 8 and 12, then calculate the factorial of the result",
        complexity="complex",
        kind="multi_step",
        categories=["workflow"],
        tags=["dependent"],
        expected=24,
        expected_tools=["gcd", "factorial"],
        steps=[ExpectedStep("gcd", 4), ExpectedStep("factorial", 24, [0])],
    )
    bad_steps = AgentResponse(success=True, result=24, steps=[{"tool": "gcd", "result": 4}])
    agent2 = ScriptedAgent({wf_synth.query: bad_steps, "q": AgentResponse(success=True, result=1, steps=None)})
    agent2.workflow_patterns = lambda: {}
    res2 = evaluate_learning(
        agent2, AgentEvalData([wf_synth]), AgentEvalConfig(seed=0, learning_repeats=0, pattern_repeats=1)
    )
    assert res2.score == 0.0 and "not a list of StepRecord" in res2.tests[0].error and res2.tests[0].critical
    res3 = evaluate_functional(agent2, AgentEvalData([case("c", "q", 1)]), AgentEvalConfig(seed=0))
    assert res3.score == 1.0  # steps=None is read as no steps


@pytest.mark.parametrize(
    "resp, problem",
    [
        (AgentResponse(success="no", result=1), "AgentResponse.success is str, not bool"),
        (AgentResponse(success=True, result=1, error=404), "AgentResponse.error is int, not str or None"),
        (AgentResponse(success=True, result=1, tool_used=["t"]), "AgentResponse.tool_used is list"),
        (AgentResponse(success=True, result=1, response=b"x"), "AgentResponse.response is bytes"),
        (AgentResponse(success=True, result=1, steps=[StepRecord("t", {}, 1, depends_on=["0"])]), "steps[0] needs"),
    ],
)
def test_response_field_types_are_checked(resp, problem):
    res = evaluate_functional(ScriptedAgent({"q": resp}), AgentEvalData([case("c", "q", 1)]), AgentEvalConfig(seed=0))
    t = res.tests[0]
    assert t.score == 0.0 and t.critical and t.error.startswith("exception escaped the agent: ProtocolError: ")
    assert problem in t.error


def test_numpy_bool_flags_are_accepted():
    resp = AgentResponse(success=np.bool_(True), result=np.int64(1), reused=np.bool_(False))
    res = evaluate_functional(ScriptedAgent({"q": resp}), AgentEvalData([case("c", "q", 1)]), AgentEvalConfig(seed=0))
    assert res.score == 1.0 and res.tests[0].details["success"] is True


# ------------------------------------------------------------------------------ synthesis
GOOD_CODE = '''
def gcd(a: int, b: int) -> int:
    """Greatest common divisor."""
    while b:
        a, b = b, a % b
    return a
'''
GOOD_TESTS = """
def test_gcd():
    assert gcd(12, 18) == 6
    assert gcd(7, 5) == 1
    assert gcd(0, 9) == 9
"""
POOR_CODE = "def gcd(a, b):\n    import math\n    return math.gcd(a, b)\n"
POOR_TESTS = "assert gcd(4, 6) == 2\n"


def test_code_and_test_quality_hand_values():
    assert code_quality(GOOD_CODE)["score"] == 1.0
    poor = code_quality(POOR_CODE)
    assert (poor["has_function"], poor["docstring"], poor["type_hints"], poor["structure"]) == (1.0, 0.0, 0.0, 1.0)
    assert poor["score"] == 0.5
    assert code_quality("def f(:\n")["score"] == 0.0
    assert code_quality("x = input()\ndef f(a: int) -> int:\n    '''d'''\n    return a")["structure"] == 0.0
    half = code_quality("def f(a: int, b) -> int:\n    return a")
    assert half["type_hints"] == pytest.approx(2 / 3)
    # test quality is measured by running the tests against the code and its mutants
    tq = test_quality(GOOD_TESTS, "gcd", GOOD_CODE)
    assert tq["passes"] and tq["tool_calls"] == 3 and tq["n_mutants"] >= 2
    assert tq["n_killed"] == tq["n_mutants"] and tq["score"] == 1.0
    assert test_quality(POOR_TESTS, "gcd", POOR_CODE)["score"] == 0.0  # no test function: nothing runs
    assert test_quality("assert (", "gcd", GOOD_CODE)["score"] == 0.0
    assert test_quality(GOOD_TESTS, "gcd")["error"] == "no tool code to run the tests against"


class GrowingRegistry(TableRegistry):
    """A TableRegistry whose tools appear when ``add`` is called (by a scripted answer)."""

    def add(self, name, code, tests):
        self.described[name] = {"code": code, "tests": tests}
        if name not in self.tools:
            self.tools.append(name)


def _gcd_case(cid, a, b, kind="gcd"):
    import math as _m

    return case(
        cid,
        f"What is the greatest common divisor of {a} and {b}?",
        _m.gcd(a, b),
        kind=kind,
        cats=("synthesis",),
        complexity="medium",
        inputs={"a": a, "b": b},
    )


def _registering(reg, name, code, tests, value, args, **flags):
    def answer():
        reg.add(name, code, tests)
        return AgentResponse(
            success=True, result=value, tool_used=name, steps=[StepRecord(tool=name, args=args, result=value)], **flags
        )

    return answer


def test_synthesis_is_measured_by_running_the_registered_code():
    c1, c2, c3 = _gcd_case("m1", 12, 18), _gcd_case("m2", 4, 6), _gcd_case("m3", 9, 15)
    c4 = case(
        "m4", "Is 7 a prime number?", True, kind="is_prime", cats=("synthesis",), complexity="medium", inputs={"n": 7}
    )
    c5 = case(
        "m5",
        "Count the words in 'a b'",
        2,
        kind="word_count",
        cats=("synthesis",),
        complexity="medium",
        inputs={"text": "a b"},
    )
    c6 = case(
        "m6",
        "What is the least common multiple of 4 and 6?",
        12,
        kind="lcm",
        cats=("synthesis",),
        complexity="medium",
        inputs={"a": 4, "b": 6},
    )
    reg = GrowingRegistry(
        {},
        ["lcm"],
        {
            "lcm": {
                "code": "def lcm(a: int, b: int) -> int:\n    '''l'''\n"
                "    import math\n    return a * b // math.gcd(a, b)\n",
                "tests": "",
            }
        },
    )
    passthrough = "def word_count(value: object) -> object:\n    '''Count.'''\n    return value\n"
    agent = ScriptedAgent(
        {
            c1.query: _registering(reg, "gcd", GOOD_CODE, GOOD_TESTS, 6, {"a": 12, "b": 18}),
            c2.query: _registering(reg, "gcd", GOOD_CODE, GOOD_TESTS, 2, {"a": 4, "b": 6}),  # reused, same hash
            c3.query: _registering(
                reg,
                "gcd_poor",
                POOR_CODE.replace("def gcd", "def gcd_poor"),
                POOR_TESTS.replace("gcd(", "gcd_poor("),
                3,
                {"a": 9, "b": 15},
            ),
            c4.query: AgentResponse(success=True, result=True, tool_used=None, synthesized=True),  # no tool
            c5.query: _registering(
                reg,
                "word_count",
                passthrough,
                "def test_w():\n    assert word_count(2) == 2\n",
                2,
                {"value": 2},
                synthesized=True,
            ),  # fabricated pass-through code
            c6.query: AgentResponse(
                success=True,
                result=12,
                tool_used="lcm",
                synthesized=True,
                steps=[StepRecord(tool="lcm", args={"a": 4, "b": 6}, result=12)],
            ),  # had it before
        },
        reg,
    )
    res = evaluate_synthesis(agent, AgentEvalData([c1, c2, c3, c4, c5, c6]), AgentEvalConfig(seed=0))
    s = {t.name: t for t in res.tests}
    assert s["m1"].score == 1.0 and s["m1"].details["measured"] == "synthesized"
    assert s["m1"].details["test_quality"]["n_killed"] == s["m1"].details["test_quality"]["n_mutants"] > 0
    # the same tool answering a second request was not built for it: no credit (it was "reused")
    assert s["m2"].score == 0.0 and "already answered another request" in s["m2"].error
    # a second, poorly written tool of the same kind: it computes the kind, so it counts; its
    # tests are no test_* function, so they never ran and earn nothing
    assert s["m3"].details["measured"] == "synthesized"
    assert s["m3"].score == pytest.approx(0.3 + 0.2 * 0.5 + 0.5 * 0.0)
    assert s["m4"].score == 0.0 and "no tool" in s["m4"].error
    assert s["m5"].score == 0.0 and "held-out" in s["m5"].error
    assert s["m6"].score == 0.0 and "before this request" in s["m6"].error
    assert res.metrics["synthesis_rate"] == pytest.approx(2 / 6)
    assert res.metrics["n_synthesized"] == 2
    # the held-out inputs the evaluator ran differ from the request's own
    calls = s["m1"].details["check"]["calls"]
    assert len(calls) == 4 and all(c["ok"] for c in calls)
    assert {json.dumps(c["inputs"]) for c in calls[1:]}.isdisjoint({json.dumps(c1.inputs)})


def test_synthesis_without_readable_code_gets_no_credit():
    c1 = _gcd_case("m1", 12, 18)
    answers = {
        c1.query: AgentResponse(
            success=True,
            result=6,
            tool_used="gcd",
            synthesized=True,
            steps=[StepRecord(tool="gcd", args={"a": 12, "b": 18}, result=6)],
        )
    }

    class NoDescribe:
        def search(self, query, k=5, threshold=0.0):
            return []

        def list_tools(self):
            return ["gcd"]

    hidden = evaluate_synthesis(ScriptedAgent(answers, NoDescribe()), AgentEvalData([c1]), AgentEvalConfig(seed=0))
    assert hidden.tests[0].score == 0.0 and "no code" in hidden.tests[0].error
    assert hidden.metrics["synthesis_rate"] == 0.0


# ------------------------------------------------------------------------------ retrieval
PCT_CODE = "def percentage(percent: float, value: float) -> float:\n    return percent * value / 100\n"
FACT_CODE = "def factorial(n: int) -> int:\n    import math\n    return math.factorial(n)\n"
CODE = {"percentage": {"code": PCT_CODE, "tests": ""}, "factorial": {"code": FACT_CODE, "tests": ""}}


def test_retrieval_metrics_hand_computed():
    q1 = case("r1", "What is 5% of 80?", 4, cats=("retrieval",), inputs={"percent": 5, "value": 80})
    q2 = case("r2", "Calculate the factorial of 4", 24, kind="factorial", cats=("retrieval",), inputs={"n": 4})
    table = {
        q1.query: [("percentage", 0.9), ("factorial", 0.7)],  # thresholded {pct, fact}: P=.5 R=1 F1=2/3
        q2.query: [("percentage", 0.8), ("factorial", 0.3)],  # thresholded {pct}: F1 0; RR=1/2
        "unrelated one": [("percentage", 0.55)],  # false positive
        "unrelated two": [("percentage", 0.2)],  # true negative
    }
    reg = TableRegistry(table, ["percentage", "factorial"], CODE)
    agent = ScriptedAgent({}, reg)
    data = AgentEvalData([q1, q2], unrelated=["unrelated one", "unrelated two"])
    res = evaluate_retrieval(agent, data, AgentEvalConfig(seed=0, retrieval_threshold=0.5, k=5))
    s = {t.name: t.score for t in res.tests}
    # related credit × the discrimination: one unrelated query of two left without a match (0.5)
    assert res.metrics["discrimination"] == 0.5
    assert s["query:r1"] == pytest.approx(0.5 * 2 / 3) and s["query:r2"] == 0.0
    # one test per unrelated query: 0 for the false positive, the mean recall at the threshold
    # ((0.5 + 0) / 2) for the true negative
    assert s["unrelated:0"] == 0.0 and s["unrelated:1"] == 0.25
    m = res.metrics
    assert m["precision"] == pytest.approx(0.125) and m["recall"] == pytest.approx(0.25)
    assert m["mrr"] == pytest.approx(0.5 * (1 + 0.5) / 2)
    assert m["ndcg_at_k"] == pytest.approx(0.5 * (1 + 1 / math.log2(3)) / 2)
    assert m["fpr"] == 0.5 and m["threshold"] == 0.5
    assert res.score == pytest.approx((1 / 3 + 0 + 0 + 0.25) / 4)


def test_retrieval_runs_a_tool_that_ran_out_of_time_on_a_kind_only_once(monkeypatch):
    """Every tool is run on every kind's queries: a factorial tool that loops on is_prime's large
    n would cost the whole sandbox timeout in each phase; after the first it is not run again."""
    from evalcore.agent_eval import _measure

    loops = "def factorial(n: int) -> int:\n    import math\n    while n > 100:\n        pass\n    return math.factorial(n)\n"
    code = {"factorial": {"code": loops, "tests": ""}}
    q1 = case("r1", "Calculate the factorial of 4", 24, kind="factorial", cats=("retrieval",), inputs={"n": 4})
    q2 = case("r2", "Is 7919 a prime number?", True, kind="is_prime", cats=("retrieval",), inputs={"n": 7919})
    table = {q1.query: [("factorial", 0.9)], q2.query: [("factorial", 0.6)]}
    runs = []
    real = _measure.run_tool_calls

    def counting(code_, name, calls, *, timeout_s=20.0):
        out = real(code_, name, calls, timeout_s=timeout_s)
        runs.append((name, calls[0].get("n"), out if isinstance(out, str) else "ran"))
        return out

    monkeypatch.setattr(_measure, "run_tool_calls", counting)
    res = evaluate_retrieval(
        ScriptedAgent({}, TableRegistry(table, ["factorial"], code)),
        AgentEvalData([q1, q2]),
        AgentEvalConfig(seed=0, sandbox_timeout_s=1.0),
    )
    on_prime = [r for r in runs if r[1] == 7919]
    assert len(on_prime) == 1 and on_prime[0][2] == "timed out after 1 s"  # the teaching phase's probe only
    assert len([r for r in runs if r[1] == 4]) == 2 and all(r[2] == "ran" for r in runs if r[1] == 4)
    s = {t.name: t for t in res.tests}
    assert s["query:r1"].details["relevant"] == ["factorial"]  # still labelled on its own kind
    assert s["query:r2"].score == 0.0 and "miss" in s["query:r2"].error
    assert any("factorial on is_prime" in n and "not run on that kind again" in n for n in res.notes)


def test_retrieval_empty_search_earns_no_false_positive_credit():
    q1 = case("r1", "What is 5% of 80?", 4, cats=("retrieval",))
    reg = TableRegistry({}, ["percentage"])  # every search returns nothing: FPR 0, recall 0
    data = AgentEvalData([q1], unrelated=["u1", "u2"])
    res = evaluate_retrieval(ScriptedAgent({}, reg), data, AgentEvalConfig(seed=0, retrieval_threshold=0.5))
    s = {t.name: t for t in res.tests}
    assert res.metrics["fpr"] == 0.0 and s["unrelated:0"].score == s["unrelated:1"].score == 0.0
    assert res.score == 0.0
    # nothing labelled at all: the unrelated queries' tests cannot pass either
    none = evaluate_retrieval(
        ScriptedAgent({}, TableRegistry({}, [])),
        AgentEvalData([], unrelated=["u1"]),
        AgentEvalConfig(seed=0, retrieval_threshold=0.5),
    )
    assert [(t.name, t.score) for t in none.tests] == [("unrelated:0", 0.0)]


def test_retrieval_one_tool_for_every_query_fails_each_unrelated_query():
    """A search that ignores its query and answers the agent's one tool (which computes every
    kind) finds the relevant tool for every related query, and matches every unrelated one: each
    of those fails, worth as much as a related query (an audit's agent scored 1.0 with one
    aggregate false-positive test and a fixed list of negatives it could learn). Its answer does
    not depend on the query, so the related query earns nothing either (× the discrimination,
    the share of unrelated queries left without a match: 0)."""
    q1 = case("r1", "What is 5% of 80?", 4, cats=("retrieval",), inputs={"percent": 5, "value": 80})
    unrelated = AgentCaseGenerator(123).unrelated_queries(4)

    class Everything(TableRegistry):
        def search(self, query, k=5, threshold=0.0):
            return [ToolMatch("percentage", 1.0)]

    res = evaluate_retrieval(
        ScriptedAgent({}, Everything({}, ["percentage"], CODE)),
        AgentEvalData([q1], unrelated=unrelated),
        AgentEvalConfig(seed=0, retrieval_threshold=0.5),
    )
    s = {t.name: t.score for t in res.tests}
    assert s["query:r1"] == 0.0 and res.metrics["fpr"] == 1.0 and res.metrics["discrimination"] == 0.0
    assert [s[f"unrelated:{i}"] for i in range(4)] == [0.0] * 4
    assert res.score == 0.0


def test_retrieval_paraphrase_robustness_needs_the_relevant_tool():
    grp = [
        case(f"p{i}", q, 4, cats=("retrieval",), paraphrase_group="g", inputs={"percent": 5, "value": 80})
        for i, q in enumerate(["What is 5% of 80?", "Find 5 percent of 80", "5% of 80"])
    ]
    table = {
        grp[0].query: [("percentage", 0.9)],
        grp[1].query: [("percentage", 0.8)],
        grp[2].query: [("factorial", 0.8)],
    }
    agent = ScriptedAgent({}, TableRegistry(table, ["percentage", "factorial"], CODE))
    res = evaluate_retrieval(
        agent, AgentEvalData([], paraphrase_groups=[grp]), AgentEvalConfig(seed=0, retrieval_threshold=0.5)
    )
    assert {t.name: t.score for t in res.tests}["paraphrase:g"] == pytest.approx(2 / 3)
    table2 = {g.query: [("factorial", 0.9)] for g in grp}  # consistent but wrong -> 0
    agent2 = ScriptedAgent({}, TableRegistry(table2, ["percentage", "factorial"], CODE))
    res2 = evaluate_retrieval(
        agent2, AgentEvalData([], paraphrase_groups=[grp]), AgentEvalConfig(seed=0, retrieval_threshold=0.5)
    )
    assert {t.name: t.score for t in res2.tests}["paraphrase:g"] == 0.0


def test_retrieval_without_registry_scores_zero():
    res = evaluate_retrieval(
        ScriptedAgent({}, None), AgentEvalData([case("r", "q", 1, cats=("retrieval",))]), AgentEvalConfig(seed=0)
    )
    assert res.score == 0.0


# ------------------------------------------------------------------------------ workflow
WF = AgentCase(
    id="w",
    query="Calculate the factorial of 4, then find 50% of the result",
    complexity="complex",
    kind="multi_step",
    categories=["workflow"],
    tags=["dependent"],
    expected=12,
    expected_tools=["factorial", "percentage"],
    steps=[ExpectedStep("factorial", 24), ExpectedStep("percentage", 12, [0])],
)


def test_score_workflow_components():
    perfect = AgentResponse(
        success=True,
        result=12,
        steps=[
            StepRecord("factorial", {"n": 4}, 24),
            StepRecord("percentage", {"percent": 50, "value": 24}, 12.0, depends_on=[0]),
        ],
    )
    assert score_workflow(WF, perfect)["score"] == 1.0
    no_steps = AgentResponse(success=True, result=12)
    assert score_workflow(WF, no_steps)["score"] == pytest.approx(0.4)
    no_link = AgentResponse(
        success=True,
        result=12,
        steps=[StepRecord("factorial", {"n": 4}, 24), StepRecord("percentage", {"percent": 50, "value": 24}, 12.0)],
    )
    assert score_workflow(WF, no_link)["score"] == pytest.approx(0.85)
    wrong_data = AgentResponse(
        success=True,
        result=12,
        steps=[
            StepRecord("factorial", {"n": 4}, 24),
            StepRecord("percentage", {"percent": 50, "value": 25}, 12.0, depends_on=[0]),
        ],
    )
    assert score_workflow(WF, wrong_data)["dataflow"] == 0.0
    reordered = AgentResponse(
        success=True,
        result=12,
        steps=[StepRecord("percentage", {}, 24), StepRecord("factorial", {"x": 24}, 12, depends_on=[0])],
    )
    assert score_workflow(WF, reordered)["planning"] == 0.0
    alias = AgentResponse(
        success=True,
        result=12,
        steps=[StepRecord("compute_factorial", {"n": 4}, 24), StepRecord("percentage", {"v": 24}, 12, depends_on=[0])],
    )
    assert score_workflow(WF, alias)["planning"] == 1.0
    assert score_workflow(WF, AgentResponse(success=False, result=12))["score"] == 0.0


def test_workflow_category_on_oracle_and_wrong_agent():
    cases = AgentCaseGenerator(seed=0).generate()
    wf = evaluate_workflow(OracleAgent(cases), AgentEvalData(cases), AgentEvalConfig(seed=0))
    assert wf.score == 1.0 and len(wf.tests) == 10 and wf.metrics["planning_accuracy"] == 1.0
    wrong = evaluate_workflow(WrongAgent(cases), AgentEvalData(cases), AgentEvalConfig(seed=0))
    assert wrong.metrics["final_accuracy"] == 0.0 and wrong.score < 0.2


# ------------------------------------------------------------------------------ learning
def test_learning_reuse_is_read_from_the_registry_not_the_flag():
    grp = [_gcd_case(f"g{i}", 12, 18) for i in range(3)]
    grp = [AgentCase(**{**g.__dict__, "query": q, "paraphrase_group": "g"}) for g, q in zip(grp, ["a?", "b?", "c?"])]
    reg = GrowingRegistry({}, [])
    other = GOOD_CODE.replace("def gcd", "def other")
    resp = {
        "a?": _registering(reg, "gcd", GOOD_CODE, GOOD_TESTS, 6, {"a": 12, "b": 18}, synthesized=True),
        "b?": _registering(reg, "gcd", GOOD_CODE, GOOD_TESTS, 6, {"a": 12, "b": 18}, reused=True),
        "c?": _registering(reg, "other", other, "", 6, {"a": 12, "b": 18}, reused=True),
    }  # another tool
    res = evaluate_learning(
        ScriptedAgent(resp, reg), AgentEvalData([], paraphrase_groups=[grp]), AgentEvalConfig(seed=0, learning_kinds=0)
    )
    assert {t.name: t.score for t in res.tests} == {"reuse:g": 0.5}
    assert res.metrics["reuse_rate"] == 0.5
    # claiming reuse with a tool that is not registered earns nothing
    liar = {q: AgentResponse(success=True, result=6, tool_used="lookup", reused=True) for q in ("a?", "b?", "c?")}
    res2 = evaluate_learning(
        ScriptedAgent(liar, GrowingRegistry({}, [])),
        AgentEvalData([], paraphrase_groups=[grp]),
        AgentEvalConfig(seed=0, learning_kinds=0),
    )
    assert {t.name: t.score for t in res2.tests} == {"reuse:g": 0.0}


def test_learning_curve_needs_an_interval_above_zero_and_a_learned_tool():
    from evalcore.agent_eval._gaming import FirstSightSleeper

    gen = AgentCaseGenerator(seed=0)
    data = AgentEvalData([], gen.paraphrase_groups())
    cfg = AgentEvalConfig(seed=0, learning_kinds=5, learning_repeats=4)
    res = evaluate_learning(OracleAgent([], synthesis_s=0.05), data, cfg)
    t = {t.name: t for t in res.tests}["learning_curve"]
    curve = t.details["curve"]
    assert len(curve) == 5 and all(p["n"] == 5 for p in curve)
    assert all(p["ci_low"] <= p["mean_s"] <= p["ci_high"] for p in curve)
    assert t.details["improvement_ci"][0] > 0 and t.score == 1.0
    # slow on first sight with built-in tools: faster later, but nothing was learned
    sleeper = FirstSightSleeper([])
    res2 = evaluate_learning(sleeper, data, cfg)
    t2 = {t.name: t for t in res2.tests}["learning_curve"]
    assert t2.score == 0.0 and all(k["new_tool"] is None and k["reused"] == [] for k in t2.details["kinds"])
    # a stateless agent: no improvement beyond noise, or nothing learned
    from evalcore.agent_eval._gaming import ClaimsReuse

    res3 = evaluate_learning(ClaimsReuse([]), data, cfg)
    assert {t.name: t for t in res3.tests}["learning_curve"].score == 0.0


# ------------------------------------------------------------------------------ robustness
class SolvingAgent(ScriptedAgent):
    """A ScriptedAgent that computes any request in canonical phrasing it has no answer for (the
    fresh control requests the robustness category draws per run)."""

    def process_request(self, query):
        if query not in self.answers:
            from evalcore.agent_eval._cases.kinds import recognize, solve_kind

            seen = recognize(query)
            if seen is not None:
                self.calls.append(query)
                return AgentResponse(success=True, result=solve_kind(*seen))
        return super().process_request(query)


def test_robustness_rules():
    cases = [
        case("e1", "factorial of -5", None, behavior="error", cats=("robustness",)),
        case("e2", "factorial of -6", None, behavior="error", cats=("robustness",)),
        case("e3", "factorial of -7", None, behavior="error", cats=("robustness",)),
        case("a1", "Convert it", None, behavior="clarification", cats=("robustness",)),
        case("a2", "Reverse it", None, behavior="clarification", cats=("robustness",)),
        case("x", "factorial of -8", None, behavior="error", cats=("robustness",)),
        case("b1", "factorial of 0", 1, kind="factorial", cats=("robustness",)),
        case("b2", "100% of 7", 7, cats=("robustness",)),
    ]
    answers = {
        "factorial of -5": AgentResponse(success=False, error="factorial is not defined for negative numbers"),
        "factorial of -6": AgentResponse(success=True, result=720),  # success on invalid input
        "factorial of -7": AgentResponse(success=False, error=""),  # no clear message: nothing
        "Convert it": AgentResponse(success=False, needs_clarification=True, error="Convert what?"),
        "Reverse it": AgentResponse(success=True, result="ti"),
        "factorial of -8": ValueError("negative"),  # escaped exception
        "factorial of 0": AgentResponse(success=True, result=1),
        "100% of 7": AgentResponse(success=True, result=7),
    }
    res = evaluate_robustness(SolvingAgent(answers), AgentEvalData(cases), AgentEvalConfig(seed=0))
    raw = {t.name: t.details.get("score_before_floor", t.score) for t in res.tests}
    assert raw == {
        "e1": 1.0,
        "e2": 0.0,
        "e3": 0.0,
        "a1": 1.0,
        "a2": 0.0,
        "x": 0.0,
        "b1": 1.0,
        "b2": 1.0,
        "control:0": 1.0,
        "control:1": 1.0,
        "control:2": 1.0,
    }
    assert [c["test"] for c in res.critical_failures] == ["x"]
    assert res.metrics["control_accuracy"] == 1.0 and res.metrics["error_handling"] == pytest.approx(1 / 4)
    # malformed input scores 1/4, below its floor (0.5): the category scores as that kind
    kinds = res.metrics["kinds"]
    assert kinds["malformed_input"] == {"score": 0.25, "floor": 0.5, "passed": False, "n": 4}
    assert kinds["ambiguity"]["score"] == 0.5 and kinds["boundary_values"]["score"] == 1.0
    assert kinds["valid_requests"]["score"] == 1.0
    assert res.score == pytest.approx(0.25)
    # one boundary case wrong: refusal credit × 4/5, the share of valid requests (boundary and
    # controls) answered correctly
    half = dict(answers, **{"100% of 7": AgentResponse(success=True, result=70)})
    res2 = evaluate_robustness(SolvingAgent(half), AgentEvalData(cases), AgentEvalConfig(seed=0))
    s2 = {t.name: t.details.get("score_before_floor", t.score) for t in res2.tests}
    assert (s2["e1"], s2["e3"], s2["a1"], s2["b2"]) == (pytest.approx(0.8), 0.0, pytest.approx(0.8), 0.0)


def test_robustness_refusing_everything_scores_zero_and_controls_are_sent():
    edge = [
        case("e1", "factorial of -5", None, behavior="error", cats=("robustness",)),
        case("a1", "Convert it", None, behavior="clarification", cats=("robustness",)),
    ]
    simple = [case("s1", "What is 10% of 50?", 5), case("s2", "What is 20% of 50?", 10)]
    refuse = ScriptedAgent({})  # every request: success=False with a clear error
    res = evaluate_robustness(refuse, AgentEvalData(edge + simple), AgentEvalConfig(seed=0))
    assert {t.name: t.score for t in res.tests} == {
        "e1": 0.0,
        "a1": 0.0,
        "control:0": 0.0,
        "control:1": 0.0,
        "control:2": 0.0,
    }
    assert res.tests[0].details["raw_score"] == 1.0 and res.score == 0.0
    # (an ambiguous request needs a message that says what is missing: issue 37)
    good = SolvingAgent({"Convert it": AgentResponse(success=False, needs_clarification=True, error="Which value?")})
    res2 = evaluate_robustness(good, AgentEvalData(edge + simple), AgentEvalConfig(seed=0))
    assert {t.name: t.score for t in res2.tests} == {
        "e1": 1.0,
        "a1": 1.0,
        "control:0": 1.0,
        "control:1": 1.0,
        "control:2": 1.0,
    }
    # the controls are fresh requests drawn per run, not the cases (which a table could hold)
    assert good.calls[:2] == ["factorial of -5", "Convert it"] and len(good.calls) == 5
    assert not set(good.calls[2:]) & {"What is 10% of 50?", "What is 20% of 50?"}


# ------------------------------------------------------------------------------ performance
def test_performance_measures_real_concurrency():
    cases = [case("p1", "What is 10% of 50?", 5, cats=("performance",))]
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def answer():
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return AgentResponse(success=True, result=5)

    agent = ScriptedAgent({"What is 10% of 50?": answer})
    cfg = AgentEvalConfig(seed=0, timing_repetitions=2, memory_requests=2, load_requests=16, workers=4)
    res = evaluate_performance(agent, AgentEvalData(cases), cfg)
    s = {t.name: t.score for t in res.tests}
    assert s["latency:p1"] == 1.0
    assert state["max"] >= 2
    assert res.metrics["qps"] > 1.5 / 0.05  # sequential would give ~20 QPS
    assert s["throughput"] == 1.0  # ≥ 10 QPS target
    assert res.metrics["success_rate_under_load"] == 1.0


def test_throughput_target_is_a_parameter():
    cases = [case("p1", "What is 10% of 50?", 5.0, cats=("performance",))]

    def answer():
        time.sleep(0.02)
        return AgentResponse(success=True, result=5)

    base = dict(timing_repetitions=1, memory_requests=1, load_requests=8, workers=2)
    scores = {}
    for target in (10.0, 10_000.0):
        res = evaluate_performance(
            ScriptedAgent({"What is 10% of 50?": answer}),
            AgentEvalData(cases),
            AgentEvalConfig(seed=0, throughput_target=target, **base),
        )
        t = next(t for t in res.tests if t.name == "throughput")
        assert t.details["target_qps"] == target
        scores[target] = (t.score, res.score)
    # ~100 QPS: full credit against 10 QPS, a fraction of it against 10 000 QPS
    assert scores[10.0][0] == 1.0 and scores[10_000.0][0] < 0.5
    assert scores[10_000.0][1] < scores[10.0][1]


def test_failing_agent_scores_zero_on_performance_and_functional():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 4, "medium": 0, "complex": 0, "edge": 0}).generate()
    data = AgentEvalData(cases)
    cfg = AgentEvalConfig(seed=0, load_requests=8)
    assert evaluate_performance(FailingAgent(), data, cfg).score == 0.0
    assert evaluate_functional(FailingAgent(), data, cfg).score == 0.0


# ------------------------------------------------------------------------------ scoring rules
def test_weights_and_pass_rules():
    assert sum(CATEGORY_WEIGHTS.values()) == pytest.approx(1.0)
    overall, used = overall_score({"functional": 1.0, "performance": 0.0})
    assert used == pytest.approx({"functional": 0.25 / 0.30, "performance": 0.05 / 0.30})
    assert overall == pytest.approx(0.25 / 0.30)
    all7 = {c: 0.5 for c in CATEGORY_WEIGHTS}
    all7["functional"] = 1.0
    assert overall_score(all7)[0] == pytest.approx(0.5 + 0.25 * 0.5)
    assert make_test("t", 0.7).passed and not make_test("t", 0.6999).passed
    assert make_test("t", 1.5).score == 1.0 and make_test("t", float("nan")).score == 0.0
    good = CategoryResult("functional", tests=[make_test("a", 1.0), make_test("b", 0.8)])
    assert good.score == pytest.approx(0.9) and good.passed
    crit = CategoryResult(
        "robustness", tests=[make_test("a", 1.0), make_test("b", 1.0), make_test("c", 0.9, critical=True)]
    )
    res = EvaluationResult(categories={"functional": good, "robustness": crit})
    assert res.overall >= 0.7 and not res.passed and len(res.critical_failures) == 1
    res_part = EvaluationResult(categories={"functional": good})
    assert res_part.status == "partial" and not res_part.passed and res_part.overall == pytest.approx(0.9)
    full = {c: CategoryResult(c, tests=[make_test("a", 0.95)]) for c in CATEGORY_WEIGHTS}
    assert EvaluationResult(categories=full).status == "PASSED"
    floor = dict(full, retrieval=CategoryResult("retrieval", tests=[make_test("a", 0.06)]))
    below = EvaluationResult(categories=floor)
    assert below.overall >= 0.7 and below.status == "FAILED" and below.below_floor == ["retrieval"]
    assert EvaluationResult(categories=floor, category_floor=0.05).passed
    low = EvaluationResult(categories={"functional": CategoryResult("functional", tests=[make_test("a", 0.69)])})
    assert not low.passed


def test_each_category_resets_the_agent_and_json_is_native():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 4, "medium": 2, "complex": 2, "edge": 3}).generate()
    gen = AgentCaseGenerator(seed=0)
    agent = OracleAgent(cases, gen.paraphrase_groups())
    resets = {"n": 0}
    orig = agent.reset

    def counting_reset():
        resets["n"] += 1
        orig()

    agent.reset = counting_reset
    res = AgentEvaluator(agent, cases, config=AgentEvalConfig(seed=0, load_requests=8)).run(progress=False)
    assert resets["n"] == 8  # performance resets twice: the second one verified (issue 37)
    d = res.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert set(d) == {"summary", "detailed_results", "config"}
    assert json.loads(text) == d
    assert d["summary"]["category_scores"]["functional"] == 1.0


def test_self_test():
    cfg = AgentEvalConfig(counts={"simple": 8, "medium": 6, "complex": 4, "edge": 11}, load_requests=8)
    out = run_self_test(config=cfg)
    assert out["passed"], {k: v for k, v in out["checks"].items() if not v}
    # A drawn seed: it rebuilds nothing; only factorial requests (19 possible inputs) may be in its table.
    assert out["scores"]["seed_guesser"]["functional"] <= 0.25
    assert out["scores"]["oracle"]["functional"] == 1.0 and out["scores"]["oracle"]["workflow"] == 1.0
    assert min(out["scores"]["honest"].values()) >= 0.7
    assert out["scores"]["wrong"]["functional"] <= 0.1
    assert out["scores"]["failing"] == {"functional": 0.0, "performance": 0.0}
    assert {"builtin_tools", "single_solve", "claims_reuse", "echo"} <= set(out["scores"])
    # issue 30's gaming agents: each fails what it games
    assert {
        "args_search",
        "dispatcher_first_sight",
        "all_at_first_sight",
        "boundary_only",
        "none_tools",
        "hollow_tests",
    } <= set(out["scores"])
    assert out["checks"]["hollow_tests synthesis mean_test_quality <= 0"]
    assert out["checks"]["all_at_first_sight synthesis < 0.5"] and out["checks"]["boundary_only robustness < 0.5"]


@pytest.mark.slow
def test_self_test_hosted():
    """Every self-test agent hosted in an interpreter of its own (the frame reader and the
    monkeypatcher included: they attack the evaluator's process, and hosted find nothing)."""
    cfg = AgentEvalConfig(counts={"simple": 8, "medium": 6, "complex": 4, "edge": 11}, load_requests=8)
    out = run_self_test(config=cfg, hosted=True)
    assert out["passed"], {k: v for k, v in out["checks"].items() if not v}
    assert {"frame_reader", "monkeypatcher"} <= set(out["scores"])
    assert out["scores"]["frame_reader"]["functional"] == 0.0
    assert out["scores"]["monkeypatcher"]["functional"] == 0.0
    assert out["scores"]["oracle"]["functional"] == 1.0
    from evalcore.agent_eval._gaming import GAMING_AGENTS

    for name, (_, cat) in GAMING_AGENTS.items():
        if name in out["scores"]:
            assert out["scores"][name][cat] < cfg.category_floor - 0.1, (name, cat)


def test_self_test_flags_a_guessable_seed():
    """On seed 3 the seed guesser answers from the rebuilt key: the self-test says the answer key
    is within reach, and nothing else fails."""
    cfg = AgentEvalConfig(
        seed=3,
        counts={"simple": 4, "medium": 2, "complex": 1, "edge": 4},
        load_requests=4,
        timing_repetitions=1,
        memory_requests=2,
    )
    out = run_self_test(config=cfg)
    failed = [k for k, v in out["checks"].items() if not v]
    assert failed == ["seed_guesser functional < 0.5 (the answer key out of reach)"] and not out["passed"]
    assert out["scores"]["seed_guesser"]["functional"] == 1.0


def test_wrong_agent_text_contains_correct_answers_but_scores_zero():
    cases = AgentCaseGenerator(seed=0).generate()
    agent = WrongAgent(cases)
    c = cases[0]
    r = agent.process_request(c.query)
    assert str(c.expected) in r.response and r.success and not values_match(r.result, c.expected)
    assert evaluate_functional(agent, AgentEvalData(cases), AgentEvalConfig(seed=0)).score == 0.0


def test_learning_patterns_are_observed_not_reported():
    gen = AgentCaseGenerator(seed=0)
    cases, groups = gen.generate(), gen.paraphrase_groups()
    data = AgentEvalData(cases, groups)
    res = evaluate_learning(OracleAgent(cases, groups), data, AgentEvalConfig(seed=0, learning_kinds=0))
    s = {t.name: t.score for t in res.tests}
    assert s["patterns"] == 1.0 and res.metrics["pattern_consistency"] == 1.0
    # the groups of starter kinds were answered with tools the agent had: noted, not scored
    assert [k for k in s if k.startswith("reuse:")] == ["reuse:para-01-word_count"] and s[
        "reuse:para-01-word_count"
    ] == 1.0
    wrong = evaluate_learning(WrongAgent(cases, groups), data, AgentEvalConfig(seed=0, learning_kinds=0))
    assert {t.name: t.score for t in wrong.tests}["patterns"] == 0.0
    from evalcore.agent_eval._gaming import ConstantPatterns

    const = evaluate_learning(ConstantPatterns(cases, groups), data, AgentEvalConfig(seed=0, learning_kinds=0))
    assert {t.name: t.score for t in const.tests}["patterns"] == 0.0


def test_learning_patterns_credit_only_tools_added_in_the_session():
    from evalcore.agent_eval import SYNTHESIZED_KINDS
    from evalcore.agent_eval._gaming import BuiltinTools, FirstSightSleeper

    gen = AgentCaseGenerator(seed=0)
    cases, groups = gen.generate(), gen.paraphrase_groups()
    data = AgentEvalData(cases, groups)
    oracle = evaluate_learning(OracleAgent(cases, groups), data, AgentEvalConfig(seed=0, learning_kinds=0))
    pat = next(t for t in oracle.tests if t.name == "patterns")
    # the request needs a tool the agent builds, and the oracle built it in this session
    assert pat.score == 1.0 and set(pat.details["added_in_session"]) & set(SYNTHESIZED_KINDS)
    for cls in (BuiltinTools, FirstSightSleeper):  # right, stable sequences of tools they started with
        res = evaluate_learning(cls(cases, groups), data, AgentEvalConfig(seed=0))
        pat = next(t for t in res.tests if t.name == "patterns")
        assert pat.score == 0.0 and pat.details["added_in_session"] == [] and all(pat.details["right"])
        assert res.score < 0.25, (cls.__name__, {t.name: t.score for t in res.tests})
    # cases with no dependent request that needs a built tool: not scored, and a note says why
    small = AgentCaseGenerator(seed=0, counts={"simple": 8, "medium": 6, "complex": 4, "edge": 11})
    scases = small.generate()
    res = evaluate_learning(
        OracleAgent(scases, groups), AgentEvalData(scases, groups), AgentEvalConfig(seed=0, learning_kinds=0)
    )
    assert "patterns" not in {t.name for t in res.tests} and any("patterns not scored" in n for n in res.notes)


def test_retrieval_of_starter_tools_alone_is_not_credited():
    from evalcore.agent_eval._gaming import AnswersNothing

    gen = AgentCaseGenerator(seed=0)
    cases, groups = gen.generate(), gen.paraphrase_groups()
    data = AgentEvalData(cases, groups, unrelated=gen.unrelated_queries(4))
    res = evaluate_retrieval(AnswersNothing(cases, groups), data, AgentEvalConfig(seed=0))
    # its search finds the four starter tools rightly, but it built no tool: nothing shown
    assert res.score < 0.1 and any("credited × 0.00" in n for n in res.notes)
    assert evaluate_retrieval(OracleAgent(cases, groups), data, AgentEvalConfig(seed=0)).score >= 0.9


def test_each_test_records_its_wall_time():
    cases = [case("t1", "slow", 1), case("t2", "fast", 2)]

    def slow():
        time.sleep(0.3)
        return AgentResponse(success=True, result=1)

    agent = ScriptedAgent({"slow": slow, "fast": AgentResponse(success=True, result=2)})
    res = evaluate_functional(agent, AgentEvalData(cases), AgentEvalConfig(seed=0, request_timeout_s=30))
    took = {t.name: t.duration_s for t in res.tests}
    assert took["t1"] >= 0.3 and took["t2"] > 0  # the agent's own sleep is in its test's time
    assert [t["duration_s"] for t in res.to_dict()["tests"]] == [took["t1"], took["t2"]]


def test_request_timeout_is_a_critical_failure():
    cases = [case("t1", "slow", 1), case("t2", "fast", 2)]

    release, answered = threading.Event(), threading.Event()

    def slow():
        release.wait(60)  # answers only once the evaluation has given up on it
        answered.set()
        return AgentResponse(success=True, result=1)

    agent = ScriptedAgent({"slow": slow, "fast": AgentResponse(success=True, result=2)})
    try:
        res = evaluate_functional(agent, AgentEvalData(cases), AgentEvalConfig(seed=0, request_timeout_s=0.2))
        assert not answered.is_set()  # the evaluation did not wait for the slow answer
    finally:
        release.set()
    s = {t.name: t for t in res.tests}
    assert s["t1"].score == 0.0 and s["t1"].critical and "TimeoutError" in s["t1"].error
    assert s["t2"].score == 1.0 and not s["t2"].critical
    boom = ScriptedAgent({"slow": ValueError("x"), "fast": AgentResponse(success=True, result=2)})
    res2 = evaluate_functional(boom, AgentEvalData(cases), AgentEvalConfig(seed=0, request_timeout_s=5))
    assert "ValueError: x" in {t.name: t for t in res2.tests}["t1"].error


def test_learning_curve_within_noise_is_no_improvement():
    """Tools are learned, but first sight is faster for some kinds and slower for others: the
    interval of the mean log ratio reaches 0, so there is no improvement to credit."""

    class Mixed(OracleAgent):
        def reset(self):
            super().reset()
            self._first: dict[str, int] = {}

        def process_request(self, query):
            from evalcore.agent_eval._cases.kinds import recognize

            seen = recognize(query)
            if seen is not None:
                kind = seen[0]
                order = self._first.setdefault(kind, len(self._first))
                is_first = not hasattr(self, "_met") or kind not in self._met
                self._met = getattr(self, "_met", set()) | {kind}
                slow_first = order % 2 == 0
                time.sleep(0.04 if is_first == slow_first else 0.01)
            return super().process_request(query)

    gen = AgentCaseGenerator(seed=0)
    res = evaluate_learning(
        Mixed([], synthesis_s=0.0),
        AgentEvalData([], gen.paraphrase_groups()),
        AgentEvalConfig(seed=0, learning_kinds=5, learning_repeats=4),
    )
    t = {t.name: t for t in res.tests}["learning_curve"]
    assert all(k["verified"] for k in t.details["kinds"])
    assert t.details["improvement_ci"][0] <= 0 <= t.details["improvement_ci"][1]
    assert t.score == 0.0 and "within noise" in t.error
