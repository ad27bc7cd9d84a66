"""Self-test agents for checking the evaluator itself.

They are honest implementations of the :class:`~evalcore.agents.Agent` protocol with real tools:
every kind of request has a correct, documented implementation with tests
(:func:`tool_source`), registered under the kind's name; the four starter kinds are registered
at :meth:`reset`, every other kind when it is first requested (after ``synthesis_s`` seconds,
the stand-in for the cost of writing a tool), so the evaluator can run the registered code on
held-out inputs and see it learned.

* :class:`OracleAgent` answers a request of a case it was given with the case's expected
  answer and steps, and any other request in canonical phrasing by running its tool.
* :class:`HonestAgent` never reads an answer: it runs its own registered tool on the inputs it
  parsed from the request (multi-step requests it takes step by step from the cases it was
  given, as a planner would).
* :class:`WrongAgent` returns plausibly wrong answers (off by one, ×10, a digit appended, an
  unreversed or truncated string, a negated boolean) while its response *text* still contains
  the correct answer, so an evaluator that checks substrings of the text is caught.
* :class:`FailingAgent` fails every request.

Factories (``make_oracle`` …) rebuild the cases from a seed, so these agents can be hosted in a
process of their own (``--agent evalcore.agent_eval._oracle:make_oracle``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from evalcore.agent_eval._cases.generator import AgentCaseGenerator
from evalcore.agent_eval._cases.kinds import STARTER_KINDS, recognize
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._cases.specs import Spec, parse_spec, spec_source
from evalcore.agents import AgentResponse, StepRecord, ToolMatch

_TOOL_SOURCES: dict[str, tuple[str, str, str]] = {
    # kind: (parameters, body, tests)
    "percentage": (
        "percent: float, value: float",
        "return percent * value / 100",
        "assert percentage(15, 80) == 12\n    assert percentage(50, 10) == 5\n    assert percentage(0, 7) == 0",
    ),
    "reverse_string": (
        "text: str",
        "return text[::-1]",
        "assert reverse_string('abc') == 'cba'\n    assert reverse_string('') == ''\n"
        "    assert reverse_string('ab c') == 'c ba'",
    ),
    "factorial": (
        "n: int",
        "import math\n    if n < 0 or int(n) != n:\n        raise ValueError(f'factorial needs a "
        "whole number >= 0, got {n!r}')\n    return math.factorial(int(n))",
        "assert factorial(0) == 1\n    assert factorial(5) == 120\n    assert factorial(10) == 3628800",
    ),
    "temperature_conversion": (
        "value: float, from_unit: str, to_unit: str",
        "if from_unit == to_unit:\n        return value\n"
        "    return value * 9 / 5 + 32 if from_unit == 'C' else (value - 32) * 5 / 9",
        "assert temperature_conversion(100, 'C', 'F') == 212\n"
        "    assert temperature_conversion(32, 'F', 'C') == 0\n"
        "    assert temperature_conversion(-40, 'C', 'F') == -40",
    ),
    "word_count": (
        "text: str",
        "return len(text.split())",
        "assert word_count('a b c') == 3\n    assert word_count('') == 0\n    assert word_count('one') == 1",
    ),
    "is_prime": (
        "n: int",
        "if n < 2:\n        return False\n    d = 2\n    while d * d <= n:\n"
        "        if n % d == 0:\n            return False\n        d += 1\n    return True",
        "assert is_prime(2)\n    assert not is_prime(1)\n    assert not is_prime(91)\n    assert is_prime(97)",
    ),
    "gcd": (
        "a: int, b: int",
        "import math\n    return math.gcd(int(a), int(b))",
        "assert gcd(12, 18) == 6\n    assert gcd(7, 5) == 1\n    assert gcd(0, 4) == 4",
    ),
    "lcm": (
        "a: int, b: int",
        "import math\n    return int(a) * int(b) // math.gcd(int(a), int(b))",
        "assert lcm(4, 6) == 12\n    assert lcm(3, 5) == 15\n    assert lcm(1, 9) == 9",
    ),
    "sum_list": (
        "numbers: list",
        "return sum(numbers)",
        "assert sum_list([1, 2, 3]) == 6\n    assert sum_list([]) == 0\n    assert sum_list([-1, 1]) == 0",
    ),
    "max_list": (
        "numbers: list",
        "if not numbers:\n        raise ValueError('max_list needs at least one number')\n    return max(numbers)",
        "assert max_list([1, 5, 3]) == 5\n    assert max_list([-2]) == -2\n    assert max_list([0, 0]) == 0",
    ),
    "average_list": (
        "numbers: list",
        "if not numbers:\n        raise ValueError('average_list needs at least one number')\n"
        "    return round(sum(numbers) / len(numbers), 6)",
        "assert average_list([1, 2, 3]) == 2\n    assert average_list([5]) == 5\n"
        "    assert average_list([0, 1]) == 0.5",
    ),
    "celsius_to_kelvin": (
        "celsius: float",
        "return round(celsius + 273.15, 6)",
        "assert celsius_to_kelvin(0) == 273.15\n    assert celsius_to_kelvin(-273.15) == 0\n"
        "    assert celsius_to_kelvin(100) == 373.15",
    ),
    "vowel_count": (
        "text: str",
        "return sum(ch in 'aeiou' for ch in text.lower())",
        "assert vowel_count('python') == 1\n    assert vowel_count('') == 0\n    assert vowel_count('AEIOU') == 5",
    ),
    "is_palindrome": (
        "text: str",
        "return text == text[::-1]",
        "assert is_palindrome('level')\n    assert not is_palindrome('ab')\n    assert is_palindrome('')",
    ),
}


def tool_source(kind: str) -> tuple[str, str]:
    """A correct, documented implementation of ``kind`` and its tests: ``(code, tests)``.

    The function is named like the kind and takes the kind's inputs
    (:func:`~evalcore.agent_eval._cases.kinds.parse_inputs`) as keyword arguments.
    """
    params, body, tests = _TOOL_SOURCES[kind]
    code = (
        f"def {kind}({params}) -> object:\n"
        f'    """Compute {kind.replace("_", " ")}.\n\n    Args:\n'
        + "".join(f"        {p.split(':')[0]}: The request's {p.split(':')[0]}.\n" for p in params.split(", "))
        + '\n    Returns:\n        The answer.\n    """\n'
        f"    {body}\n"
    )
    return code, f"def test_{kind}() -> None:\n    {tests}\n"


class _LookupRegistry:
    """Registry of a self-test agent: a query's relevant tool scores 1.0 once it exists."""

    def __init__(self, owner: _CaseAgent) -> None:
        self._owner = owner
        self.threshold = 0.5

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        kinds = self._owner._kinds(query)
        if not kinds or k <= 0:
            return []
        hits = [ToolMatch(t, 1.0) for t in dict.fromkeys(kinds) if t in self._owner._tools]
        return [h for h in hits if h.score >= threshold][:k]

    def list_tools(self) -> list[str]:
        with self._owner._lock:
            return sorted(self._owner._tools)

    def describe(self, name: str) -> dict[str, Any]:
        with self._owner._lock:
            if name not in self._owner._tools:
                raise KeyError(name)
            code, tests = self._owner._tools[name]
        return {
            "name": name,
            "code": code,
            "tests": tests,
            "docstring": f"Self-test tool {name}",
            "origin": "starter" if name in STARTER_KINDS else "synthesized",
        }


class _CaseAgent:
    """Shared lookup, tools and bookkeeping of the self-test agents."""

    def __init__(
        self,
        cases: Iterable[AgentCase] = (),
        paraphrase_groups: Sequence[Sequence[AgentCase]] = (),
        *,
        synthesis_s: float = 0.03,
    ) -> None:
        self._cases: dict[str, AgentCase] = {}
        for c in list(cases) + [c for g in paraphrase_groups for c in g]:
            self._cases.setdefault(c.query.strip(), c)
        self._lock = threading.Lock()
        self._registry = _LookupRegistry(self)
        self.threshold = 0.5
        self.synthesis_s = synthesis_s
        self.reset()

    @property
    def registry(self) -> _LookupRegistry:
        return self._registry

    def reset(self) -> None:
        with self._lock:
            self._tools: dict[str, tuple[str, str]] = {k: tool_source(k) for k in STARTER_KINDS}

    def _lookup(self, query: str) -> AgentCase | None:
        return self._cases.get(query.strip()) if isinstance(query, str) else None

    def _kinds(self, query: str) -> list[str]:
        case = self._lookup(query)
        if case is not None:
            return list(case.expected_tools)
        seen = recognize(query) if isinstance(query, str) else None
        return [seen[0]] if seen else []

    def _ensure_tools(self, kinds: Sequence[str]) -> list[str]:
        """Register the tools of ``kinds`` not registered yet (paying ``synthesis_s`` each)."""
        with self._lock:
            new = [k for k in dict.fromkeys(kinds) if k not in self._tools and k in _TOOL_SOURCES]
        for k in new:
            time.sleep(self.synthesis_s)
            with self._lock:
                self._tools[k] = tool_source(k)
        return new

    def _build_spec_tool(self, spec: Spec) -> bool:
        """Write and register the tool of a synthesis spec read from its request (paying
        ``synthesis_s``); False when a tool of that name is registered already."""
        with self._lock:
            if spec.name in self._tools:
                return False
        time.sleep(self.synthesis_s)
        with self._lock:
            self._tools[spec.name] = spec_source(spec)
        return True

    def _spec_answer(self, query: str) -> AgentResponse | None:
        """Answer a request to write a tool from a spec (:mod:`~evalcore.agent_eval._cases.specs`):
        build the tool from the spec read from the request, run it; None for any other request."""
        parsed = parse_spec(query)
        if parsed is None:
            return None
        spec, x = parsed
        new = self._build_spec_tool(spec)
        try:
            value = self._run_tool(spec.name, {"x": x})
        except Exception as exc:
            return AgentResponse(success=False, error=f"{spec.name} failed on x={x}: {exc}")
        return AgentResponse(
            success=True,
            response=f"{spec.name}({x}) = {value}.",
            result=value,
            tool_used=spec.name,
            synthesized=new,
            reused=not new,
            steps=[StepRecord(tool=spec.name, args={"x": x}, result=value)],
        )

    def _run_tool(self, kind: str, inputs: dict[str, Any]) -> Any:
        """Run the registered code of ``kind`` in this (the agent's own) process."""
        with self._lock:
            code = self._tools[kind][0]
        scope: dict[str, Any] = {}
        exec(compile(code, f"<tool {kind}>", "exec"), scope)  # noqa: S102 - the agent's own tool code
        return scope[kind](**inputs)

    def _refuse(self, case: AgentCase) -> AgentResponse | None:
        if case.expected_behavior == "error":
            why = ", ".join(t.replace("_", " ") for t in case.tags if t != "edge") or "invalid"
            return AgentResponse(success=False, error=f"Invalid input ({why}): cannot serve {case.query!r}")
        if case.expected_behavior == "clarification":
            return AgentResponse(
                success=False, needs_clarification=True, error="The request is ambiguous: which value should be used?"
            )
        return None

    def _answer(self, case: AgentCase, value: Any, step_values: list[Any]) -> AgentResponse:
        refusal = self._refuse(case)
        if refusal is not None:
            return refusal
        new = self._ensure_tools(case.expected_tools)
        steps = self._plan(case, lambda j, tool, args: step_values[j]) or [
            StepRecord(
                tool=s.tool,
                args={f"input_{i}": step_values[i] for i in s.depends_on} or {"query": case.query},
                result=step_values[j],
                depends_on=list(s.depends_on),
            )
            for j, s in enumerate(case.steps)
        ]
        if not steps and case.expected_tools:
            steps = [
                StepRecord(tool=case.expected_tools[0], args=dict(case.inputs) or {"query": case.query}, result=value)
            ]
        return AgentResponse(
            success=True,
            response=self._text(case, value),
            result=value,
            tool_used=case.expected_tools[-1] if case.expected_tools else None,
            synthesized=bool(new),
            reused=not new,
            steps=steps,
        )

    def _plan(self, case: AgentCase, value_of: Any) -> list[StepRecord] | None:
        """The steps of a multi-step case with the arguments its tools take (read from the
        request, a dependent step fed the result of the step it depends on); each step's result
        is ``value_of(j, tool, args)``. None when a step has no plan."""
        import re

        numbers = [float(x) if "." in x else int(x) for x in re.findall(r"-?\d+(?:\.\d+)?", case.query)]
        quoted = re.findall(r"'([^']*)'", case.query)
        listed = re.findall(r"\[([^\]]*)\]", case.query)
        list_numbers = {int(x) for part in listed for x in part.split(",")}
        free = [n for n in numbers if n not in list_numbers]
        values: list[Any] = []
        steps: list[StepRecord] = []
        for j, s in enumerate(case.steps):
            fed = values[s.depends_on[-1]] if s.depends_on else None
            if s.tool == "factorial":
                args = {"n": fed if fed is not None else free.pop(0)}
            elif s.tool == "percentage":
                args = (
                    {"percent": free.pop(0), "value": fed}
                    if fed is not None
                    else {"percent": free.pop(0), "value": free.pop(0)}
                )
            elif s.tool == "temperature_conversion":
                args = {"value": fed if fed is not None else free.pop(0), "from_unit": "C", "to_unit": "F"}
            elif s.tool == "reverse_string":
                args = {"text": quoted.pop(0)}
            elif s.tool == "sum_list":
                args = {"numbers": [int(x) for x in listed[0].split(",")]}
            elif s.tool in ("gcd", "lcm"):
                args = {"a": free.pop(0), "b": free.pop(0)}
            else:
                return None
            v = value_of(j, s.tool, args)
            values.append(v)
            steps.append(StepRecord(tool=s.tool, args={**args}, result=v, depends_on=list(s.depends_on)))
        return steps

    def _computed(self, query: str) -> AgentResponse:
        """Answer a request in canonical phrasing by running the registered tool."""
        seen = recognize(query) if isinstance(query, str) else None
        if seen is None:
            return AgentResponse(success=False, error=f"no tool can serve this request: {query!r}")
        kind, inputs = seen
        new = self._ensure_tools([kind])
        try:
            value = self._run_tool(kind, inputs)
        except Exception as exc:
            return AgentResponse(success=False, error=f"{kind} failed on {inputs}: {exc}")
        return AgentResponse(
            success=True,
            response=f"The answer is {value}.",
            result=value,
            tool_used=kind,
            synthesized=bool(new),
            reused=not new,
            steps=[StepRecord(tool=kind, args=dict(inputs), result=value)],
        )

    def _text(self, case: AgentCase, value: Any) -> str:
        return f"The answer is {value}."


class OracleAgent(_CaseAgent):
    """Answers every known case with its expected answer and expected steps (other requests in
    canonical phrasing by running its tool).

    Args:
        cases: Cases to answer.
        paraphrase_groups: More cases (paraphrases) to answer.
        synthesis_s: Seconds a new tool takes to register.
    """

    def process_request(self, query: str) -> AgentResponse:
        spec = self._spec_answer(query)
        if spec is not None:
            return spec
        case = self._lookup(query)
        if case is None:
            return self._computed(query)
        return self._answer(case, case.expected, [s.expected for s in case.steps])


class HonestAgent(_CaseAgent):
    """Reads no answer: single-step requests are computed by running its registered tool on the
    inputs parsed from the request; multi-step ones step by step, each step by its tool."""

    def process_request(self, query: str) -> AgentResponse:
        spec = self._spec_answer(query)
        if spec is not None:
            return spec
        case = self._lookup(query)
        if case is not None and (refusal := self._refuse(case)) is not None:
            return refusal
        if case is not None and case.is_multi_step:
            return self._multi(case)
        if case is not None and case.inputs and case.kind in _TOOL_SOURCES:
            new = self._ensure_tools([case.kind])
            try:
                value = self._run_tool(case.kind, dict(case.inputs))
            except Exception as exc:
                return AgentResponse(success=False, error=f"{case.kind} failed: {exc}")
            return AgentResponse(
                success=True,
                response=f"The answer is {value}.",
                result=value,
                tool_used=case.kind,
                synthesized=bool(new),
                reused=not new,
                steps=[StepRecord(tool=case.kind, args=dict(case.inputs), result=value)],
            )
        return self._computed(query)

    def _multi(self, case: AgentCase) -> AgentResponse:
        # the planner's output for this request: the tools in order and what feeds what; values
        # come from running the tools
        self._ensure_tools([s.tool for s in case.steps])

        def run(j: int, tool: str, args: dict[str, Any]) -> Any:
            v = self._run_tool(tool, args)
            if isinstance(v, float) and v.is_integer() and tool != "temperature_conversion":
                v = int(v)
            return v

        steps = self._plan(case, run)
        if steps is None:
            return AgentResponse(success=False, error="no plan for this request")
        values = [s.result for s in steps]
        result = values[-1] if "dependent" in case.tags else values
        return AgentResponse(
            success=True, response=f"The answer is {result}.", result=result, tool_used=steps[-1].tool, steps=steps
        )


def perturb(value: Any, salt: int = 0) -> Any:
    """A plausibly wrong version of an answer.

    Numbers cycle through off by one, ×10 and a digit appended (``salt`` picks which); strings are
    reversed back (a palindrome gets an ``x`` appended); booleans are
    negated; lists are perturbed element-wise.

    Args:
        value: The correct answer.
        salt: Selects the kind of error.

    Returns:
        A wrong answer of the same type.
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return [value + 1, value * 10 if value else 10, int(f"{value}5")][salt % 3]
    if isinstance(value, float):
        wrong = [value + 1, value * 10 if value else 10.0, float(f"{value}5") if "e" not in repr(value) else value * 3][
            salt % 3
        ]
        # a digit appended past a float's 17 significant digits changes nothing (5.4479999999999995)
        return wrong if not math.isclose(wrong, value, rel_tol=1e-6, abs_tol=1e-6) else value + 1
    if isinstance(value, str):
        return value[::-1] if value != value[::-1] else value + "x"
    if isinstance(value, (list, tuple)):
        return [perturb(v, salt + i) for i, v in enumerate(value)]
    return value


class WrongAgent(_CaseAgent):
    """Claims success with plausibly wrong structured answers; its text contains the right one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._salt = 0

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is None:
            return AgentResponse(success=False, error=f"no tool can serve this request: {query!r}")
        with self._lock:
            self._salt += 1
            salt = self._salt
        if case.expected_behavior != "answer":
            return AgentResponse(success=True, response="Done.", result=0, tool_used=None)
        return self._answer(
            case, perturb(case.expected, salt), [perturb(s.expected, salt + i) for i, s in enumerate(case.steps)]
        )

    def _text(self, case: AgentCase, value: Any) -> str:
        return f"The answer is {value} (the correct answer would be {case.expected})."


class FailingAgent:
    """Fails every request with a clear error (never raises)."""

    def __init__(self) -> None:
        self._registry = _LookupRegistry(_CaseAgent())
        self.threshold = 0.5

    @property
    def registry(self) -> _LookupRegistry:
        return self._registry

    def reset(self) -> None:
        return None

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, error="this agent fails every request (self-test)")


def agent_eval_cases(
    seed: int = 0,
    counts: dict[str, int] | None = None,
    n_paraphrase_groups: int = 3,
    paraphrase_size: int = 3,
    cases: list[dict[str, Any]] | None = None,
    groups: list[list[dict[str, Any]]] | None = None,
) -> tuple[list[AgentCase], list[list[AgentCase]]]:
    """The cases and paraphrase groups an evaluation with these settings uses (for factories):
    given as JSON dicts, or rebuilt from the seed."""
    gen = AgentCaseGenerator(seed, counts)
    main = [AgentCase.from_dict(c) for c in cases] if cases is not None else gen.generate()
    if groups is not None:
        return main, [[AgentCase.from_dict(c) for c in g] for g in groups]
    return main, (gen.paraphrase_groups(n_paraphrase_groups, paraphrase_size) if n_paraphrase_groups else [])


def make_oracle(**kwargs: Any) -> OracleAgent:
    """Factory of :class:`OracleAgent` (``kwargs`` as :func:`agent_eval_cases`, plus ``synthesis_s``)."""
    syn = kwargs.pop("synthesis_s", 0.03)
    return OracleAgent(*agent_eval_cases(**kwargs), synthesis_s=syn)


def make_honest(**kwargs: Any) -> HonestAgent:
    """Factory of :class:`HonestAgent`."""
    syn = kwargs.pop("synthesis_s", 0.03)
    return HonestAgent(*agent_eval_cases(**kwargs), synthesis_s=syn)


def make_wrong(**kwargs: Any) -> WrongAgent:
    """Factory of :class:`WrongAgent`."""
    return WrongAgent(*agent_eval_cases(**kwargs))


def make_failing(**kwargs: Any) -> FailingAgent:
    """Factory of :class:`FailingAgent`."""
    return FailingAgent()


SELF_TEST_AGENTS: tuple[str, ...] = ("oracle", "honest", "wrong", "failing")
"""Names of the self-test agents (``--agent NAME``; each built by ``make_<name>``)."""
