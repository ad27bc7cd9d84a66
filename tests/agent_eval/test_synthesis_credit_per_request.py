"""Synthesis is credited per request (issue 30, item 2).

A tool counts for a request only when it appeared after that request (the registry snapshot is
taken just before each request, not at the reset), was built for it (run on held-out inputs of
that request's spec, called with the request's input alone) and is not a tool that already
answered another request. The specs are drawn per run (name, composition, constants), so no
library written in advance answers them.
"""

from __future__ import annotations

from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, HonestAgent, OracleAgent
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._cases.specs import SPEC_KIND, parse_spec, spec_source
from evalcore.agent_eval._categories import evaluate_synthesis
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._gaming import AllAtFirstSight, BuiltinTools, DispatcherFirstSight
from evalcore.agents import AgentResponse, StepRecord

COUNTS = {"simple": 4, "medium": 0, "complex": 0, "edge": 0}
CFG = AgentEvalConfig(seed=0, counts=COUNTS, n_synthesis_specs=6)
DATA = AgentEvalData.build(CFG)
KEY = DATA.cases + DATA.specs


def test_honest_synthesis_from_the_spec_is_credited_for_every_request() -> None:
    for cls in (OracleAgent, HonestAgent):
        res = evaluate_synthesis(cls(DATA.cases), DATA, CFG)  # given no spec: it reads each from its request
        assert res.metrics["n_synthesized"] == 6 and res.metrics["synthesis_rate"] == 1.0
        assert res.score >= 0.9
        for t in res.tests:
            calls = t.details["check"]["calls"]
            assert len(calls) == 1 + CFG.n_held_out and all(c["ok"] for c in calls)


def test_tools_registered_at_the_first_request_count_only_for_it() -> None:
    """Registering every tool of the key at the first request once counted them all as
    synthesized at their requests (judged against the registry at the reset)."""
    res = evaluate_synthesis(AllAtFirstSight(KEY), DATA, CFG)
    scores = [t.score for t in res.tests]
    assert scores[0] > 0.9 and scores[1:] == [0.0] * 5
    assert all("in the registry before this request" in t.error for t in res.tests[1:])
    assert res.metrics["n_synthesized"] == 1 and res.score < CFG.category_floor


def test_one_generic_tool_is_not_built_for_any_spec() -> None:
    """A dispatcher registered at the first request, told the spec's steps as an argument."""
    res = evaluate_synthesis(DispatcherFirstSight(KEY), DATA, CFG)
    assert res.score == 0.0
    assert "a tool told what to compute" in res.tests[0].error
    assert all("already answered another request" in t.error for t in res.tests[1:])
    # a library of generic tools written in advance (present at the reset) fares no better
    assert evaluate_synthesis(BuiltinTools(KEY), DATA, CFG).score == 0.0


def _kind_case(cid: str, kind: str, query: str, expected, inputs) -> AgentCase:
    return AgentCase(
        id=cid,
        query=query,
        complexity="medium",
        kind=kind,
        categories=["synthesis"],
        expected=expected,
        expected_tools=[kind],
        inputs=inputs,
    )


def test_a_dispatcher_over_kinds_earns_one_credit_not_one_per_request() -> None:
    """On cases of the fixed kinds, one tool computing every kind (told which by an argument),
    registered at the first request, once earned a credit for every request of another kind."""
    cases = [
        _kind_case("g", "gcd", "What is the greatest common divisor of 12 and 18?", 6, {"a": 12, "b": 18}),
        _kind_case("l", "lcm", "What is the least common multiple of 4 and 6?", 12, {"a": 4, "b": 6}),
        _kind_case("p", "is_prime", "Is 97 a prime number?", True, {"n": 97}),
    ]
    data = AgentEvalData(cases)
    res = evaluate_synthesis(DispatcherFirstSight(cases), data, AgentEvalConfig(seed=0))
    assert [t.details["measured"] for t in res.tests] == ["synthesized", None, None]
    assert all("already answered another request" in t.error for t in res.tests[1:])
    assert res.metrics["n_synthesized"] == 1


def test_a_tool_name_that_answered_one_request_is_not_credited_for_another() -> None:
    """One tool name rewritten for every request (``solver``): each version computes its spec, but
    the name already answered another request, so only the first counts (judged against the
    registry at the reset, each rewrite counted as a new tool)."""

    class Rewriter(OracleAgent):
        def _spec_answer(self, query: str):  # noqa: ANN202
            spec, x = parse_spec(query)
            code, tests = spec_source(spec)
            with self._lock:
                self._tools["solver"] = (
                    code.replace(f"def {spec.name}(", "def solver("),
                    tests.replace(f"{spec.name}(", "solver("),
                )
            value = self._run_tool("solver", {"x": x})
            return AgentResponse(
                success=True,
                result=value,
                tool_used="solver",
                steps=[StepRecord(tool="solver", args={"x": x}, result=value)],
            )

    res = evaluate_synthesis(Rewriter([]), DATA, CFG)
    assert [t.details["measured"] for t in res.tests] == ["synthesized"] + [None] * 5
    assert all("already answered another request" in t.error for t in res.tests[1:])


def test_specs_are_drawn_per_run_so_a_library_written_in_advance_answers_none() -> None:
    a = AgentCaseGenerator(0).synthesis_specs(6)
    b = AgentCaseGenerator(1).synthesis_specs(6)
    assert {c.query for c in a}.isdisjoint({c.query for c in b})
    pa = [parse_spec(c.query)[0] for c in a]
    pb = [parse_spec(c.query)[0] for c in b]
    assert {s.name for s in pa}.isdisjoint({s.name for s in pb})
    assert all(c.kind == SPEC_KIND and c.expected == parse_spec(c.query)[0].apply(c.inputs["x"]) for c in a)

    class Library(OracleAgent):
        """Every tool of seed 0's specs, written in advance and registered at the reset."""

        def reset(self) -> None:
            super().reset()
            with self._lock:
                for s in pa:
                    self._tools[s.name] = spec_source(s)

        def _spec_answer(self, query: str):  # noqa: ANN202
            spec, x = parse_spec(query)
            if spec.name not in self._tools:
                return AgentResponse(success=False, error="not in my library")
            return super()._spec_answer(query)

    other = AgentEvalData.build(AgentEvalConfig(seed=1, counts=COUNTS, n_synthesis_specs=6))
    assert evaluate_synthesis(Library([]), other, CFG).score == 0.0
    same = AgentEvalData.build(AgentEvalConfig(seed=0, counts=COUNTS, n_synthesis_specs=6))
    assert evaluate_synthesis(Library([]), same, CFG).score == 0.0  # present before each request


def test_the_fixed_kinds_are_no_longer_synthesis_cases() -> None:
    """Tools for the ten fixed kinds can be written in advance: the generator no longer hints
    its medium cases for synthesis, and a library of them earns nothing."""
    cases = AgentCaseGenerator(0).generate()
    assert not [c for c in cases if "synthesis" in c.categories]
    full = AgentEvalData.build(AgentEvalConfig(seed=0))
    assert len(full.specs) == 8 and all(c.kind == SPEC_KIND for c in full.specs)
