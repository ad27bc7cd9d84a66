"""Self-test agents for checking the evaluator itself.

They are honest implementations of the :class:`~evalcore.agents.Agent` protocol: each looks the
request up by its text among the cases it was given and answers from there.

* :class:`OracleAgent` returns every case's expected answer (and expected steps), so a correct
  evaluator must give it full marks on functional and workflow tests.
* :class:`WrongAgent` returns plausibly wrong answers (off by one, ×10, a digit appended, an
  unreversed or truncated string, a negated boolean) while its response *text* still contains
  the correct answer, so an evaluator that checks substrings of the text is caught.
* :class:`FailingAgent` fails every request.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Iterable, Sequence

from evalcore.agents._protocol import AgentResponse, StepRecord, ToolMatch
from evalcore.datasets._agent_cases import STARTER_TOOLS, AgentCase


def _tool_code(kind: str) -> tuple[str, str]:
    code = (
        f"def {kind}(value: object) -> object:\n"
        f'    """Self-test tool for {kind.replace("_", " ")} requests.\n\n'
        "    Args:\n        value: The request's input.\n\n    Returns:\n        The answer.\n"
        '    """\n'
        "    if value is None:\n        raise ValueError('value is required')\n"
        "    return value\n"
    )
    tests = (
        f"def test_{kind}() -> None:\n"
        f"    assert {kind}(1) == 1\n"
        f"    assert {kind}('a') == 'a'\n"
        f"    assert {kind}(0) == 0\n"
        "    try:\n"
        f"        {kind}(None)\n"
        "    except ValueError:\n        pass\n"
    )
    return code, tests


class _LookupRegistry:
    """Registry of a self-test agent: a query's relevant tool scores 1.0 once it exists."""

    def __init__(self, owner: "_CaseAgent") -> None:
        self._owner = owner
        self.threshold = 0.5

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        case = self._owner._lookup(query)
        if case is None or k <= 0:
            return []
        hits = [ToolMatch(t, 1.0) for t in dict.fromkeys(case.expected_tools) if t in self._owner._tools]
        return [h for h in hits if h.score >= threshold][:k]

    def list_tools(self) -> list[str]:
        return sorted(self._owner._tools)

    def describe(self, name: str) -> dict[str, Any]:
        if name not in self._owner._tools:
            raise KeyError(name)
        code, tests = _tool_code(name)
        return {"name": name, "code": code, "tests": tests, "docstring": f"Self-test tool {name}",
                "origin": "starter" if name in STARTER_TOOLS else "synthesized"}


class _CaseAgent:
    """Shared lookup and bookkeeping of the self-test agents."""

    def __init__(self, cases: Iterable[AgentCase] = (), paraphrase_groups: Sequence[Sequence[AgentCase]] = ()) -> None:
        self._cases: dict[str, AgentCase] = {}
        for c in list(cases) + [c for g in paraphrase_groups for c in g]:
            self._cases.setdefault(c.query.strip(), c)
        self._lock = threading.Lock()
        self._registry = _LookupRegistry(self)
        self.threshold = 0.5
        self.reset()

    @property
    def registry(self) -> _LookupRegistry:
        return self._registry

    def reset(self) -> None:
        with self._lock:
            self._tools: set[str] = set(STARTER_TOOLS)
            self._patterns: Counter[str] = Counter()

    def workflow_patterns(self) -> dict[str, int]:
        with self._lock:
            return dict(self._patterns)

    def _lookup(self, query: str) -> AgentCase | None:
        return self._cases.get(query.strip()) if isinstance(query, str) else None

    def _answer(self, case: AgentCase, value: Any, step_values: list[Any]) -> AgentResponse:
        if case.expected_behavior == "error":
            return AgentResponse(success=False, error=f"Invalid input for {case.kind}: cannot serve {case.query!r}")
        if case.expected_behavior == "clarification":
            return AgentResponse(success=False, needs_clarification=True,
                                 error="The request is ambiguous: which value should be used?")
        with self._lock:
            new = [t for t in case.expected_tools if t not in self._tools]
            self._tools.update(case.expected_tools)
            if len(case.steps) > 1:
                self._patterns[" -> ".join(s.tool for s in case.steps)] += 1
        steps = [StepRecord(tool=s.tool, args={f"input_{i}": step_values[i] for i in s.depends_on} or {"query": case.query},
                            result=step_values[j], depends_on=list(s.depends_on))
                 for j, s in enumerate(case.steps)]
        if not steps and case.expected_tools:
            steps = [StepRecord(tool=case.expected_tools[0], args={"query": case.query}, result=value)]
        return AgentResponse(success=True, response=self._text(case, value), result=value,
                             tool_used=case.expected_tools[-1] if case.expected_tools else None,
                             synthesized=bool(new), reused=not new, steps=steps)

    def _text(self, case: AgentCase, value: Any) -> str:
        return f"The answer is {value}."


class OracleAgent(_CaseAgent):
    """Answers every known case with its expected answer and expected steps.

    Args:
        cases: Cases to answer.
        paraphrase_groups: More cases (paraphrases) to answer.
    """

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is None:
            return AgentResponse(success=False, error=f"no tool can serve this request: {query!r}")
        return self._answer(case, case.expected, [s.expected for s in case.steps])


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
        return [value + 1, value * 10 if value else 10.0, float(f"{value}5") if "e" not in repr(value) else value * 3][salt % 3]
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
        return self._answer(case, perturb(case.expected, salt),
                            [perturb(s.expected, salt + i) for i, s in enumerate(case.steps)])

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
