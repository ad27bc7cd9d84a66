"""Adversarial self-test agents: each games one category of the agent evaluation.

Every agent here was once able to score high on what it games (issue 13); the evaluator's
self-test (:func:`evalcore.agent_eval.run_self_test`) and the test suite check that each now scores
low in that category, in process, over HTTP and hosted in a process of its own. They answer
from the answer key (the cases rebuilt from the seed) unless their strategy says otherwise.

:data:`GAMING_AGENTS` maps each name to ``(class, category it games)``; :func:`make_gaming`
builds one by name (``--agent evalcore.agent_eval._gaming:make_gaming`` with ``name=...``).
"""

from __future__ import annotations

import sys
import time
from types import FrameType
from typing import Any

from evalcore.agent_eval._cases.kinds import (
    STARTER_KINDS,
    SYNTHESIZED_KINDS,
    VARIABLE_SLOTS,
    recognize,
    request_values,
    solve_kind,
)
from evalcore.agent_eval._cases.specs import parse_spec, spec_source
from evalcore.agent_eval._oracle import OracleAgent, _LookupRegistry, agent_eval_cases, tool_source
from evalcore.agents import AgentResponse, StepRecord, ToolMatch

# --- agents that game through their answers, timing and traces (reading frames, patching the
# evaluator, agreeable values, built-in or pass-through tools, sleeping on first sight, ...) ----


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


# --- agents that game through their tools and the tool table ---------------------------------


class FakeTrace(OracleAgent):
    """Keeps no tool at all: answers from the answer key and reports a trace of well-formed
    steps (tool names, arguments, results, dependencies) that no tool ever ran. Scored on its
    final answers alone it earns what an agent reporting no steps earns (0.4 a dependent case,
    0.47 an independent one): below the category floor, but not the margin the self-test asks
    of :data:`GAMING_AGENTS`, so it is not listed there
    (``tests/agent_eval/test_agent_faked_work_and_edited_results.py`` checks that its trace earns
    nothing)."""

    def reset(self) -> None:
        with self._lock:
            self._tools = {}

    def _ensure_tools(self, kinds: Any) -> list[str]:
        return []


_OLD_POOLS: dict[str, tuple[str, list[Any]]] = {
    # the held-out pools evalcore's source once drew from (every value public)
    "celsius_to_kelvin": ("celsius", [-60.5, -25.5, 7.5, 42.5, 63.5, 180.5, 300.5]),
    "vowel_count": (
        "text",
        [
            "lantern",
            "harbor",
            "meadow",
            "copper",
            "thunder",
            "saddle",
            "pepper",
            "canyon",
            "glacier",
            "mosaic",
            "tunnel",
            "velvet",
            "anchor",
            "blossom",
            "falcon",
            "quartz",
        ],
    ),
    "is_palindrome": (
        "text",
        [
            "stats",
            "radar",
            "solos",
            "tenet",
            "minim",
            "deified",
            "repaper",
            "sagas",
            "lantern",
            "harbor",
            "meadow",
            "copper",
            "thunder",
            "saddle",
            "pepper",
            "canyon",
        ],
    ),
}


def table_source(kind: str, args: list[str], rows: list[dict[str, Any]]) -> tuple[str, str]:
    """A documented, tested "tool" that is a literal table of ``rows`` (computes nothing)."""
    import json

    table = {json.dumps([r[a] for a in args]): solve_kind(kind, r) for r in rows}
    params = ", ".join(f"{a}: object" for a in args)
    code = (
        f"def {kind}({params}) -> object:\n"
        f'    """Compute {kind.replace("_", " ")}.\n\n    Args:\n'
        + "".join(f"        {a}: An input.\n" for a in args)
        + '\n    Returns:\n        The answer.\n    """\n'
        "    import json\n"
        f"    table = {table!r}\n"
        f"    key = json.dumps([{', '.join(args)}])\n"
        "    if key not in table:\n        raise ValueError('unsupported input')\n"
        "    return table[key]\n"
    )
    calls = [", ".join(f"{a}={r[a]!r}" for a in args) for r in rows[:3]]
    tests = (
        f"def test_{kind}() -> None:\n"
        + "".join(f"    assert {kind}({c}) == {solve_kind(kind, r)!r}\n" for c, r in zip(calls, rows))
        + f"    try:\n        {kind}({', '.join('None' for _ in args)})\n    except ValueError:\n        pass\n"
    )
    return code, tests


class TableTools(OracleAgent):
    """Answers itself and registers, as each synthesized tool, a literal table of the inputs of
    the requests it saw plus the held-out values evalcore once drew from small public pools
    (those pools made such a table pass the evaluator's held-out run: synthesis 1.0 on the
    kinds they covered)."""

    def _answer(self, case: Any, value: Any, step_values: list[Any]) -> AgentResponse:
        resp = super()._answer(case, value, step_values)
        if resp.success and case.kind in SYNTHESIZED_KINDS and case.inputs and not case.is_multi_step:
            args = list(case.inputs)
            with self._lock:
                rows: list[dict[str, Any]] = self.__dict__.setdefault("_rows", {}).setdefault(
                    case.kind, [{args[0]: v} for v in _OLD_POOLS.get(case.kind, ("", []))[1]]
                )
                if dict(case.inputs) not in rows:
                    rows.append(dict(case.inputs))
                self._tools[case.kind] = table_source(case.kind, args, rows)
        return resp

    def _spec_answer(self, query: str) -> AgentResponse | None:
        parsed = parse_spec(query)
        if parsed is None:
            return None
        spec, x = parsed
        value = spec.apply(x)
        code = (
            f'def {spec.name}(x: int) -> int:\n    """Look the answer up.\n\n    Args:\n        x: The input.\n\n'
            f'    Returns:\n        The answer.\n    """\n    table = {{{x!r}: {value!r}}}\n'
            "    if x not in table:\n        raise ValueError('unsupported input')\n    return table[x]\n"
        )
        tests = f"def test_{spec.name}() -> None:\n    assert {spec.name}({x}) == {value}\n"
        with self._lock:
            self._tools[spec.name] = (code, tests)
        return AgentResponse(
            success=True,
            result=value,
            tool_used=spec.name,
            synthesized=True,
            steps=[StepRecord(tool=spec.name, args={"x": x}, result=value)],
        )


def universal_source(name: str = "compute_any") -> tuple[str, str]:
    """One registered tool that computes every kind, told which by a ``kind`` argument (each
    kind's correct implementation of :func:`~evalcore.agent_eval._oracle.tool_source` inside)."""
    from evalcore.agent_eval._oracle import _TOOL_SOURCES

    code = "".join(tool_source(k)[0] + "\n\n" for k in _TOOL_SOURCES)
    code += (
        f"def {name}(kind: str, **inputs: object) -> object:\n"
        '    """Compute any kind of request.\n\n    Args:\n        kind: Which computation.\n'
        '        inputs: Its inputs.\n\n    Returns:\n        The answer.\n    """\n'
        "    return globals()[kind](**inputs)\n"
    )
    tests = f"def test_{name}() -> None:\n    assert {name}('gcd', a=12, b=18) == 6\n"
    return code, tests


class _ArgsRegistry(_LookupRegistry):
    """Ignores the query: answers the one tool when the call's ``k`` and threshold are those of
    a related-query test (threshold 0) or a paraphrase test (k = 1), nothing otherwise (the
    unrelated-query tests once called with k and the agent's threshold)."""

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        if "compute_any" not in self._owner._tools or k <= 0:
            return []
        return [ToolMatch("compute_any", 1.0)] if threshold <= 0.0 or k == 1 else []


class ArgsSearch(OracleAgent):
    """Answers every request with one tool (``compute_any``, which does compute every kind) and
    searches from the call's arguments only, never its query (scored retrieval 1.0 when the
    three kinds of retrieval test called the search with different ``k`` and thresholds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._registry = _ArgsRegistry(self)

    def reset(self) -> None:
        with self._lock:
            self._tools = {}

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        seen = recognize(query) if isinstance(query, str) else None
        if case is not None and case.expected_behavior != "answer" and (refusal := self._refuse(case)) is not None:
            return refusal
        kind, inputs, value = (
            (case.kind, dict(case.inputs), case.expected)
            if case is not None and case.inputs
            else (seen[0], dict(seen[1]), solve_kind(*seen))
            if seen is not None
            else (None, {}, None)
        )
        if kind is None or case is not None and case.is_multi_step:
            return super().process_request(query)
        with self._lock:
            new = "compute_any" not in self._tools
            self._tools.setdefault("compute_any", universal_source())
        return AgentResponse(
            success=True,
            response=f"The answer is {value}.",
            result=value,
            tool_used="compute_any",
            synthesized=new,
            reused=not new,
            steps=[StepRecord(tool="compute_any", args={"kind": kind, **inputs}, result=value)],
        )


class DispatcherFirstSight(OracleAgent):
    """Registers one generic tool at its first request and answers every request with it: the
    spec's steps (or the kind) passed as arguments (``run_steps``, ``compute_any``). Judged
    against the registry at the reset, the one tool earned a synthesis credit for every later
    request."""

    def reset(self) -> None:
        with self._lock:
            self._tools = {k: tool_source(k) for k in STARTER_KINDS}

    def _spec_answer(self, query: str) -> AgentResponse | None:
        return _generic_spec_answer(self, query)

    def process_request(self, query: str) -> AgentResponse:
        spec = self._spec_answer(query)
        if spec is not None:
            return spec
        case = self._lookup(query)
        seen = recognize(query) if isinstance(query, str) else None
        if case is not None and case.inputs and not case.is_multi_step and case.expected_behavior == "answer":
            kind, inputs, value = case.kind, dict(case.inputs), case.expected
        elif case is None and seen is not None:
            kind, inputs, value = seen[0], dict(seen[1]), solve_kind(*seen)
        else:
            return super().process_request(query)
        with self._lock:
            self._tools.setdefault("compute_any", universal_source())
        args = {"kind": kind, **inputs}
        return AgentResponse(
            success=True,
            result=value,
            tool_used="compute_any",
            synthesized=True,
            steps=[StepRecord(tool="compute_any", args=args, result=value)],
        )


class AllAtFirstSight(OracleAgent):
    """At its first request registers a correct tool for every request in its answer key (each
    spec's tool under its name, every kind's tool), then answers each request with its own tool.
    Judged against the registry at the reset, every one counted as synthesized at its request."""

    def reset(self) -> None:
        super().reset()
        self._primed = False

    def _prime(self) -> None:
        with self._lock:
            if self._primed:
                return
            self._primed = True
            for case in self._cases.values():
                parsed = parse_spec(case.query)
                if parsed is not None:
                    self._tools.setdefault(parsed[0].name, spec_source(parsed[0]))
            for k in SYNTHESIZED_KINDS:
                self._tools.setdefault(k, tool_source(k))

    def process_request(self, query: str) -> AgentResponse:
        self._prime()
        return super().process_request(query)


class HollowTests(OracleAgent):
    """Builds correct tools whose tests never call them (``assert 1 + 1 == 2``, many asserts,
    edge values): read, such tests scored 1.0; run, they kill no mutant and score 0."""

    def _build_spec_tool(self, spec: Any) -> bool:
        new = super()._build_spec_tool(spec)
        with self._lock:
            code, _ = self._tools[spec.name]
            self._tools[spec.name] = (
                code,
                f"def test_{spec.name}() -> None:\n    assert 1 + 1 == 2\n"
                "    assert 0 == 0\n    assert [] == []\n    assert -1 < 0\n",
            )
        return new


class BoundaryOnly(OracleAgent):
    """Answers only the fixed boundary texts of the robustness cases (from its key) and refuses
    every other request with an error that quotes it and names every reason there is: it once
    scored robustness 1.0 while failing every functional case."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is not None and case.complexity == "edge" and case.expected_behavior == "answer":
            return self._answer(case, case.expected, [])
        return AgentResponse(
            success=False,
            error=(
                f"Cannot serve {query!r}: the value is invalid (negative, not a whole number, not an integer, "
                "not a number, non-numeric, below absolute zero) or missing - which value? please specify; "
                "the request is ambiguous or unclear"
            ),
        )


class NoneTools(OracleAgent):
    """Answers from its key with the expected steps, and registers, for every kind it must build,
    a documented tool that returns None: the learning ``patterns`` test credited them unrun."""

    def _ensure_tools(self, kinds: Any) -> list[str]:
        with self._lock:
            new = [k for k in dict.fromkeys(kinds) if k not in self._tools]
            for k in new:
                params = ", ".join(f"{p}: object" for p in VARIABLE_SLOTS.get(k, ("value",)))
                self._tools[k] = (
                    f'def {k}({params}) -> object:\n    """Compute {k}."""\n    return None\n',
                    f"def test_{k}() -> None:\n    assert True\n",
                )
        return new


GAMING_AGENTS: dict[str, tuple[type, str]] = {
    "frame_reader": (FrameReader, "functional"),
    "monkeypatcher": (Monkeypatcher, "functional"),
    "agreeable_values": (AgreeableValues, "functional"),
    "builtin_tools": (BuiltinTools, "synthesis"),
    "pass_through_code": (PassThroughCode, "synthesis"),
    "answers_nothing": (AnswersNothing, "retrieval"),
    "single_solve": (SingleSolve, "retrieval"),
    "claims_reuse": (ClaimsReuse, "learning"),
    "first_sight_sleeper": (FirstSightSleeper, "learning"),
    "constant_patterns": (ConstantPatterns, "learning"),
    "slow_first_sight": (SlowFirstSight, "performance"),
    "mostly_wrong_under_load": (MostlyWrongUnderLoad, "performance"),
    "guess_while_asking": (GuessWhileAsking, "robustness"),
    "vague_errors": (VagueErrors, "robustness"),
    "echo": (Echo, "robustness"),
    "duplicate_search": (DuplicateSearch, "retrieval"),
    "table_tools": (TableTools, "synthesis"),
    "args_search": (ArgsSearch, "retrieval"),
    "dispatcher_first_sight": (DispatcherFirstSight, "synthesis"),
    "all_at_first_sight": (AllAtFirstSight, "synthesis"),
    "boundary_only": (BoundaryOnly, "robustness"),
    "none_tools": (NoneTools, "learning"),
}
"""Gaming agent name → (class, the category it games)."""

GAMING_MEASURES: dict[str, tuple[type, str, str, float]] = {
    "hollow_tests": (HollowTests, "synthesis", "mean_test_quality", 0.0),
}
"""Gaming agents whose strategy cannot sink a whole category (their tools are right) but must
not earn the measure they game: name → (class, category, metric, the most it may score)."""


def make_gaming(name: str, **kwargs: Any) -> Any:
    """Build the gaming agent ``name`` (``kwargs`` as :func:`~evalcore.agent_eval._oracle.agent_eval_cases`,
    plus ``synthesis_s`` and ``delay_s``)."""
    cls = GAMING_AGENTS[name][0] if name in GAMING_AGENTS else GAMING_MEASURES[name][0]
    delay = kwargs.pop("delay_s", None)
    syn = kwargs.pop("synthesis_s", 0.03)
    agent = cls(*agent_eval_cases(**kwargs), synthesis_s=syn)
    if delay is not None:
        agent.delay_s = float(delay)
    return agent


# ---------------------------------------------------------------- reaching for the answer key
# Two agents that are given no case: they look for the answer key where an agent could, and
# answer only from what they find (they compute nothing). Each scores high when it finds the
# key (the tests check that too, so the attacks are real) and nothing under the evaluator's
# defaults (a drawn seed; the cases file hidden from a hosted agent).


class KeyOnly(OracleAgent):
    """Answers the cases it found with their expected answers; refuses everything else."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is None:
            return AgentResponse(success=False, error="not in the answer key I found")
        return self._answer(case, case.expected, [s.expected for s in case.steps])


def make_seed_guesser(
    seeds: Any = range(16),
    counts: dict[str, int] | None = None,
    n_paraphrase_groups: int = 3,
    synthesis_s: float = 0.03,
) -> KeyOnly:
    """An agent that rebuilds the cases of every seed in ``seeds`` with the generator shipped in
    evalcore (the public answer key of a guessable seed) and answers from them."""
    cases: list[Any] = []
    groups: list[Any] = []
    for seed in seeds:
        more, more_groups = agent_eval_cases(int(seed), counts, n_paraphrase_groups)
        cases += more
        groups += more_groups
    return KeyOnly(cases, groups, synthesis_s=synthesis_s)


def make_cases_file_reader(path: str, synthesis_s: float = 0.03) -> KeyOnly:
    """An agent that reads the cases file the evaluator runs on and answers from it (no case
    when the file cannot be read: it then refuses everything)."""
    from evalcore.agent_eval._cases.records import load_cases
    from evalcore.errors import EvalcoreError

    try:
        cases = load_cases(path)
    except (EvalcoreError, OSError, ValueError):
        cases = []
    return KeyOnly(cases, synthesis_s=synthesis_s)
