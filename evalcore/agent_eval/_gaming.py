"""Adversarial self-test agents: each games one category of the agent evaluation.

Every agent here was once able to score high on what it games (issue 13); the evaluator's
self-test (:func:`evalcore.agent_eval.run_self_test`) and the test suite check that each now scores
low in that category, in process, over HTTP and hosted in a process of its own. They answer
from the answer key (the cases rebuilt from the seed) unless their strategy says otherwise.

:data:`GAMING_AGENTS` maps each name to ``(class, category it games)``; :func:`make_gaming`
builds one by name (``--agent evalcore.agent_eval._gaming:make_gaming`` with ``name=...``).
"""

from __future__ import annotations

from typing import Any

from evalcore.agent_eval._cases.kinds import (
    STARTER_KINDS,
    SYNTHESIZED_KINDS,
    VARIABLE_SLOTS,
    recognize,
    solve_kind,
)
from evalcore.agent_eval._cases.specs import parse_spec, spec_source
from evalcore.agent_eval._gaming_answers import (  # noqa: F401 (re-exported: tests and specs name them here)
    RUN_STEPS,
    AgreeableValues,
    AnswersNothing,
    BuiltinTools,
    ClaimsReuse,
    ConstantPatterns,
    DuplicateSearch,
    Echo,
    FirstSightSleeper,
    FrameReader,
    GuessWhileAsking,
    Monkeypatcher,
    MostlyWrongUnderLoad,
    PassThroughCode,
    SingleSolve,
    SlowFirstSight,
    VagueErrors,
    _generic_spec_answer,
)
from evalcore.agent_eval._oracle import OracleAgent, _LookupRegistry, agent_eval_cases, tool_source
from evalcore.agents import AgentResponse, StepRecord, ToolMatch


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
