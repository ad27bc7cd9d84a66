"""Self-test agents that game the agent evaluation through their answers, timing and traces
(reading frames, patching the evaluator, agreeable values, built-in or pass-through tools,
sleeping on first sight, ...). :mod:`evalcore.agent_eval._gaming` lists them in
:data:`~evalcore.agent_eval._gaming.GAMING_AGENTS` and re-exports every name."""

from __future__ import annotations

import sys
import time
from types import FrameType
from typing import Any

from evalcore.agent_eval._cases.kinds import (
    STARTER_KINDS,
    SYNTHESIZED_KINDS,
    recognize,
    request_values,
    solve_kind,
)
from evalcore.agent_eval._cases.specs import parse_spec
from evalcore.agent_eval._oracle import OracleAgent, _LookupRegistry, tool_source
from evalcore.agents import AgentResponse, StepRecord, ToolMatch


class FrameReader(OracleAgent):
    """Reads the expected answer from its caller's frames (refusing when it finds none).

    In the evaluator's process this scores like the oracle (such results say ``trusted:
    false``); hosted in a process of its own there is no frame to read.
    """

    def process_request(self, query: str) -> AgentResponse:
        # its caller's frames, then every other thread's (an evaluator that calls it from a
        # worker thread, for a time limit, still has the case on its main thread's stack)
        starts: list[FrameType | None] = [sys._getframe(1), *sys._current_frames().values()]
        for f in starts:
            while f is not None:
                case: Any = f.f_locals.get("case")
                if getattr(case, "query", None) == query and getattr(case, "expected_behavior", "") == "answer":
                    return self._answer(case, case.expected, [s.expected for s in case.steps])
                f = f.f_back
        return AgentResponse(success=False, error="found no answer to read")


class Monkeypatcher(OracleAgent):
    """Patches the evaluator's test constructor so every test scores 1, then refuses everything.

    Only ever built hosted (its factory patches the interpreter it runs in, which is not the
    evaluator's); building it in process would corrupt the evaluator for the rest of the run.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import evalcore.agent_eval._case_results as results
        import evalcore.agent_eval._categories  # noqa: F401 (the modules that build tests)

        original = results.make_test

        def always_pass(name: str, score: float, **kw: Any) -> Any:
            return original(name, 1.0, **kw)

        for name, module in list(sys.modules.items()):
            if name.startswith("evalcore.agent_eval") and getattr(module, "make_test", None) is original:
                module.make_test = always_pass  # type: ignore[attr-defined]

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, error="refused")


class _Agreeable(int):
    """An int that equals anything."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__

    def __sub__(self, other: object) -> int:
        return 0

    __rsub__ = __sub__

    def __abs__(self) -> int:
        return 0


class _AgreeableStr(str):
    """A str that equals anything, whatever it is stripped or lowered to."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__

    def strip(self, *a: Any) -> _AgreeableStr:
        return self

    def lower(self) -> _AgreeableStr:
        return self


class AgreeableValues(OracleAgent):
    """Computes nothing: returns int/str subclasses whose comparisons agree with anything."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is None:
            return AgentResponse(success=False, error="unknown")
        if case.expected_behavior != "answer":
            return self._answer(case, None, [])
        fake = _AgreeableStr("x") if isinstance(case.expected, str) else _Agreeable(0)
        return AgentResponse(
            success=True,
            result=fake,
            tool_used=case.expected_tools[-1],
            steps=[
                StepRecord(tool=s.tool, args={"query": query}, result=_Agreeable(0), depends_on=list(s.depends_on))
                for s in case.steps
            ],
        )


RUN_STEPS: tuple[str, str] = (
    "def run_steps(x: int, steps: str) -> int:\n"
    '    """Apply the steps of any spec, given as text, to x.\n\n    Args:\n        x: The input.\n'
    '        steps: The steps, separated by "; then ".\n\n    Returns:\n        The result.\n    """\n'
    "    import re\n"
    "    for part in steps.split('; then '):\n"
    "        m = re.search(r'(\\d+)', part)\n"
    "        c = int(m.group(1)) if m else 0\n"
    "        if part.startswith('multiply'):\n            x = x * c\n"
    "        elif part.startswith('add'):\n            x = x + c\n"
    "        elif part.startswith('subtract'):\n            x = x - c\n"
    "        elif part.startswith('take the remainder'):\n            x = x % c\n"
    "        elif part.startswith('divide'):\n            x = x // c\n"
    "        elif part.startswith('square'):\n            x = x * x\n"
    "        elif part.startswith('replace'):\n            x = sum(int(d) for d in str(abs(x)))\n"
    "        elif part.startswith('negate'):\n            x = -x\n"
    "    return x\n",
    "def test_run_steps() -> None:\n    assert run_steps(3, 'multiply it by 2; then add 1') == 7\n"
    "    assert run_steps(0, 'add 5') == 5\n    assert run_steps(-4, 'negate it; then square it') == 16\n",
)
"""A generic tool, written in advance, that computes every synthesis spec told its steps."""


def _generic_spec_answer(agent: OracleAgent, query: str) -> AgentResponse | None:
    """Answer a spec request with the generic ``run_steps`` tool (registered if missing)."""
    parsed = parse_spec(query)
    if parsed is None:
        return None
    spec, x = parsed
    with agent._lock:
        new = "run_steps" not in agent._tools
        agent._tools.setdefault("run_steps", RUN_STEPS)
    args = {"x": x, "steps": spec.steps_text()}
    value = agent._run_tool("run_steps", args)
    return AgentResponse(
        success=True,
        result=value,
        tool_used="run_steps",
        synthesized=True,
        reused=not new,
        steps=[StepRecord(tool="run_steps", args=args, result=value)],
    )


class BuiltinTools(OracleAgent):
    """Has a correct tool for every kind from the start and claims it synthesized each one."""

    def reset(self) -> None:
        with self._lock:
            self._tools = {k: tool_source(k) for k in (*STARTER_KINDS, *SYNTHESIZED_KINDS)}
            self._tools["run_steps"] = RUN_STEPS

    def _spec_answer(self, query: str) -> AgentResponse | None:
        return _generic_spec_answer(self, query)

    def process_request(self, query: str) -> AgentResponse:
        resp = super().process_request(query)
        if resp.success:
            resp.synthesized, resp.reused = True, False
        return resp


class PassThroughCode(OracleAgent):
    """Answers from the answer key and registers fabricated pass-through code with good tests."""

    def _ensure_tools(self, kinds: Any) -> list[str]:
        with self._lock:
            new = [k for k in dict.fromkeys(kinds) if k not in self._tools]
            for k in new:
                code = (
                    f'def {k}(value: object) -> object:\n    """Compute {k}.\n\n    Args:\n'
                    '        value: The input.\n\n    Returns:\n        The answer.\n    """\n'
                    "    if value is None:\n        raise ValueError('value is required')\n    return value\n"
                )
                tests = (
                    f"def test_{k}() -> None:\n    assert {k}(1) == 1\n    assert {k}('a') == 'a'\n"
                    f"    assert {k}(0) == 0\n    try:\n        {k}(None)\n    except ValueError:\n        pass\n"
                )
                self._tools[k] = (code, tests)
        return new

    def _answer(self, case: Any, value: Any, step_values: list[Any]) -> AgentResponse:
        resp = super()._answer(case, value, step_values)
        for st in resp.steps:
            st.args = {"value": value}
        return resp

    def _spec_answer(self, query: str) -> AgentResponse | None:
        parsed = parse_spec(query)
        if parsed is None:
            return None
        spec, x = parsed
        self._ensure_tools([spec.name])
        value = spec.apply(x)  # from the key, not from the tool
        return AgentResponse(
            success=True,
            result=value,
            tool_used=spec.name,
            synthesized=True,
            steps=[StepRecord(tool=spec.name, args={"value": value}, result=value)],
        )


class AnswersNothing(OracleAgent):
    """Refuses every request but keeps a registry whose search finds the starter tools."""

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, error="I do not answer requests")


class _SolveRegistry(_LookupRegistry):
    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        return [ToolMatch("solve", 1.0)][:k] if k > 0 and threshold <= 1.0 else []

    def list_tools(self) -> list[str]:
        return ["solve"]

    def describe(self, name: str) -> dict[str, Any]:
        if name != "solve":
            raise KeyError(name)
        return {
            "name": "solve",
            "code": 'def solve(query: str) -> object:\n    """Solve anything."""\n    return query\n',
            "tests": "def test_solve() -> None:\n    assert solve('a') == 'a'\n",
        }


class SingleSolve(OracleAgent):
    """One tool named ``solve`` used for everything, found by every search."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._registry = _SolveRegistry(self)

    def process_request(self, query: str) -> AgentResponse:
        resp = super().process_request(query)
        if resp.success:
            resp.tool_used = "solve"
            resp.steps = [StepRecord(tool="solve", args={"query": query}, result=resp.result)]
        return resp


class ClaimsReuse(OracleAgent):
    """Stateless: answers from the answer key with an unregistered tool and says it reused it."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        seen = recognize(query)
        if case is not None and case.expected_behavior == "answer":
            value = case.expected
        elif seen is not None:
            value = solve_kind(*seen)
        else:
            return AgentResponse(success=False, error="unknown request")
        return AgentResponse(
            success=True,
            result=value,
            tool_used="lookup",
            reused=True,
            steps=[StepRecord(tool="lookup", args={"query": query}, result=value)],
        )


class FirstSightSleeper(BuiltinTools):
    """Stateless, with built-in tools; sleeps ``delay_s`` the first time it sees a kind of request
    so that later requests look faster, and claims it learned."""

    delay_s = 0.05

    def reset(self) -> None:
        super().reset()
        self._seen: set[tuple[str, ...]] = set()

    def process_request(self, query: str) -> AgentResponse:
        kinds = tuple(self._kinds(query))
        if kinds and kinds not in self._seen:
            self._seen.add(kinds)
            time.sleep(self.delay_s)
        resp = OracleAgent.process_request(self, query)
        resp.reused = True
        return resp

    def workflow_patterns(self) -> dict[str, int]:
        return {"factorial -> percentage": 99, "temperature_conversion -> percentage": 99}


class ConstantPatterns(BuiltinTools):
    """Stateless, with built-in tools: reports a constant table of workflow patterns and answers
    multi-step requests without steps."""

    def process_request(self, query: str) -> AgentResponse:
        resp = OracleAgent.process_request(self, query)
        case = self._lookup(query)
        if case is not None and case.is_multi_step:
            resp.steps = []
        return resp

    def workflow_patterns(self) -> dict[str, int]:
        return {
            "factorial -> percentage": 99,
            "temperature_conversion -> percentage": 99,
            "factorial -> percentage -> temperature_conversion": 99,
            "sum_list -> percentage": 99,
        }


class SlowFirstSight(OracleAgent):
    """Takes ``delay_s`` (5.5 s) on the first sight of every request; repeats are instant."""

    delay_s = 5.5

    def reset(self) -> None:
        super().reset()
        self._seen: set[str] = set()

    def process_request(self, query: str) -> AgentResponse:
        if query not in self._seen:
            self._seen.add(query)
            time.sleep(self.delay_s)
        return super().process_request(query)


class MostlyWrongUnderLoad(OracleAgent):
    """Fast, but right on only one request in four."""

    def reset(self) -> None:
        super().reset()
        self._n = 0

    def process_request(self, query: str) -> AgentResponse:
        resp = super().process_request(query)
        with self._lock:
            self._n += 1
            n = self._n
        if resp.success and n % 4:
            resp.result = "wrong"
        return resp


class GuessWhileAsking(OracleAgent):
    """Answers every request, also flagging that it needs clarification."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is None:
            return AgentResponse(success=True, result=0, needs_clarification=True)
        value = case.expected if case.expected_behavior == "answer" else 0
        return AgentResponse(
            success=True,
            result=value,
            needs_clarification=True,
            tool_used=case.expected_tools[-1] if case.expected_tools else None,
        )


class VagueErrors(OracleAgent):
    """Refuses invalid and ambiguous requests with an error that names nothing."""

    def _refuse(self, case: Any) -> AgentResponse | None:
        if case.expected_behavior != "answer":
            return AgentResponse(success=False, error="Error!!!")
        return None


class Echo(OracleAgent):
    """Answers every request with a value taken from it (the first number or quoted string)."""

    def process_request(self, query: str) -> AgentResponse:
        values = request_values(query)
        return AgentResponse(success=True, result=values[0] if values else query)


class DuplicateSearch(OracleAgent):
    """A correct agent whose search names a tool twice."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inner = self._registry
        outer = self

        class Dup(_LookupRegistry):
            def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
                hits = inner.search(query, k, threshold)
                return (hits + hits)[: max(k, 2)] if hits else [ToolMatch("factorial", 0.9)] * 2

        self._registry = Dup(outer)
