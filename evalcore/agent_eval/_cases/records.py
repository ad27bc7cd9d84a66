"""Agent test cases as records: :class:`AgentCase` and its :class:`ExpectedStep`, validated when
read from JSON, and the cases file (:func:`save_cases`, :func:`load_cases`)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from evalcore._io import read_json, write_json_atomic
from evalcore.agent_eval._cases.kinds import STARTER_KINDS
from evalcore.errors import EvalcoreError

COMPLEXITIES: tuple[str, ...] = ("simple", "medium", "complex", "edge")
BEHAVIORS: tuple[str, ...] = ("answer", "error", "clarification")


@dataclass
class ExpectedStep:
    """One expected step of a multi-step case.

    Attributes:
        tool: The tool (starter name or synthesized kind) a correct agent uses for the step.
        expected: The step's expected result.
        depends_on: Indices of earlier steps whose result must feed this step's arguments.
    """

    tool: str
    expected: Any
    depends_on: list[int] = field(default_factory=list)


@dataclass
class AgentCase:
    """One agent test case.

    Attributes:
        id: Stable identifier (``<complexity>-<nn>-<kind>``).
        query: The request sent to the agent.
        complexity: ``simple``, ``medium``, ``complex`` or ``edge``.
        kind: What the case exercises (a tool name, ``multi_step``, ``invalid_input`` …).
        categories: Evaluation categories the case is meant for (hints for the evaluation).
        tags: Free-form labels.
        expected: The expected structured result (None when a behaviour is expected).
        expected_behavior: ``answer``, ``error`` or ``clarification``.
        rel_tol: Relative tolerance for numeric answers (``math.isclose``).
        abs_tol: Absolute tolerance for numeric answers.
        expected_tools: Tools a correct agent uses, in order.
        steps: Expected steps of a multi-step case (empty for single-step cases).
        paraphrase_group: Group id shared by paraphrases of the same request, or None.
        inputs: The request's arguments by name (e.g. ``{"a": 12, "b": 18}`` for ``gcd``), read
            from its canonical phrasing; the evaluator runs an agent's registered tools on them
            (and on held-out inputs of the same kind) to check what the tools compute. Empty for
            multi-step, error and clarification cases.
        error_terms: For ``error`` and ``clarification`` cases: words of which a clear error
            message names at least one (the invalid value or the reason), case-insensitive.
    """

    id: str
    query: str
    complexity: str
    kind: str
    categories: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    expected: Any = None
    expected_behavior: str = "answer"
    rel_tol: float = 1e-9
    abs_tol: float = 1e-6
    expected_tools: list[str] = field(default_factory=list)
    steps: list[ExpectedStep] = field(default_factory=list)
    paraphrase_group: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    error_terms: list[str] = field(default_factory=list)

    @property
    def is_multi_step(self) -> bool:
        """True when the case has more than one expected step."""
        return len(self.steps) > 1

    @property
    def needs_synthesis(self) -> bool:
        """True when a correct agent must use a tool that is not a starter tool."""
        return any(t not in STARTER_KINDS for t in self.expected_tools)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON dictionary of the case."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, path: str | None = None, index: int | None = None) -> AgentCase:
        """Build and validate a case from a dictionary.

        Args:
            d: The dictionary (as written by :meth:`to_dict`).
            path: File the dictionary came from (for error messages).
            index: 0-based position of the case in that file (for error messages).

        Returns:
            The validated case.

        Raises:
            EvalcoreError: A required field is missing or has the wrong type or value.
        """

        def bad(msg: str, fld: str) -> EvalcoreError:
            where = f"cases[{index}]." if index is not None else ""
            return EvalcoreError(msg, path=path, field=where + fld)

        if not isinstance(d, Mapping):
            raise bad("a case must be a JSON object", "case")
        behavior = _check_case_fields(d, [f.name for f in fields(cls)], bad)
        steps = _check_steps(d, bad)
        group = d.get("paraphrase_group")
        if group is not None and not isinstance(group, str):
            raise bad("must be a string or null", "paraphrase_group")
        inputs = d.get("inputs", {})
        if not isinstance(inputs, Mapping) or not all(isinstance(k, str) for k in inputs):
            raise bad("must be an object with string keys", "inputs")
        terms = d.get("error_terms", [])
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise bad("must be a list of strings", "error_terms")
        return cls(
            id=d["id"],
            query=d["query"],
            complexity=d["complexity"],
            kind=d["kind"],
            categories=list(d.get("categories", [])),
            tags=list(d.get("tags", [])),
            expected=d.get("expected"),
            expected_behavior=behavior,
            rel_tol=float(d.get("rel_tol", 1e-9)),
            abs_tol=float(d.get("abs_tol", 1e-6)),
            expected_tools=list(d.get("expected_tools", [])),
            steps=steps,
            paraphrase_group=group,
            inputs=dict(inputs),
            error_terms=list(terms),
        )


def _check_case_fields(d: Mapping[str, Any], known: list[str], bad: Callable[[str, str], EvalcoreError]) -> str:
    """Check a case's fields but steps, paraphrase group, inputs and error terms; return its
    expected behaviour.

    Raises:
        EvalcoreError: (made by ``bad``) an unknown field, or a missing or wrong one.
    """
    unknown = sorted(str(k) for k in d if k not in known)
    if unknown:  # a misspelt field ("tolerance", "expect") would otherwise be ignored
        raise bad(f"unknown field(s) {unknown}; a case has {known}", unknown[0])
    for key in ("id", "query", "complexity", "kind"):
        if not isinstance(d.get(key), str):
            raise bad("missing or not a string", key)
    if d["complexity"] not in COMPLEXITIES:
        raise bad(f"must be one of {list(COMPLEXITIES)}, got {d['complexity']!r}", "complexity")
    behavior = d.get("expected_behavior", "answer")
    if behavior not in BEHAVIORS:
        raise bad(f"must be one of {list(BEHAVIORS)}, got {behavior!r}", "expected_behavior")
    if behavior == "answer" and d.get("expected") is None:
        raise bad("an 'answer' case needs an expected value", "expected")
    for key in ("categories", "tags", "expected_tools"):
        val = d.get(key, [])
        if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
            raise bad("must be a list of strings", key)
    from evalcore.agent_eval._config import CATEGORIES

    odd = [c for c in d.get("categories", []) if c not in CATEGORIES]
    if odd:  # an unknown category would drop the case from every category without a word
        raise bad(f"unknown categor{'y' if len(odd) == 1 else 'ies'} {odd}; use {list(CATEGORIES)}", "categories")
    for key in ("rel_tol", "abs_tol"):
        val = d.get(key, 1e-9 if key == "rel_tol" else 1e-6)
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < 0:
            raise bad("must be a finite non-negative number", key)
    return str(behavior)


def _check_steps(d: Mapping[str, Any], bad: Callable[[str, str], EvalcoreError]) -> list[ExpectedStep]:
    """A case's expected steps, checked: each a ``tool`` string, an ``expected`` value and
    ``depends_on`` indices of earlier steps, nothing else.

    Raises:
        EvalcoreError: (made by ``bad``) naming the step.
    """
    steps_raw = d.get("steps", [])
    if not isinstance(steps_raw, list):
        raise bad("must be a list", "steps")
    steps: list[ExpectedStep] = []
    for i, s in enumerate(steps_raw):
        if not isinstance(s, Mapping) or not isinstance(s.get("tool"), str):
            raise bad(f"step {i} needs a 'tool' string", "steps")
        extra = sorted(str(k) for k in s if k not in ("tool", "expected", "depends_on"))
        if extra:
            raise bad(f"step {i}: unknown field(s) {extra}; a step has tool, expected, depends_on", "steps")
        deps = s.get("depends_on", [])
        if not isinstance(deps, list) or not all(isinstance(j, int) and 0 <= j < i for j in deps):
            raise bad(f"step {i}: depends_on must list indices of earlier steps", "steps")
        steps.append(ExpectedStep(tool=s["tool"], expected=s.get("expected"), depends_on=list(deps)))
    return steps


_FORMAT = "evalcore-agent-cases"


def save_cases(cases: Sequence[AgentCase], path: str | os.PathLike[str]) -> Path:
    """Write cases to a JSON file atomically (temporary file, then ``os.replace``).

    Args:
        cases: The cases.
        path: Destination file.

    Returns:
        The written path.
    """
    path = Path(path)
    payload = {"format": _FORMAT, "version": 1, "cases": [c.to_dict() for c in cases]}
    write_json_atomic(path, payload, indent=1)
    return path


def load_cases(path: str | os.PathLike[str]) -> list[AgentCase]:
    """Read and validate cases written by :func:`save_cases` (or a bare JSON list of cases).

    Args:
        path: The JSON file.

    Returns:
        The cases.

    Raises:
        EvalcoreError: Missing file, invalid JSON, an unknown key (top level, case or step), an
            unknown category, another format or version, a malformed case, or duplicate
            ids/queries.
    """
    p = Path(path)
    if not p.is_file():
        raise EvalcoreError("no such file", path=p)
    data = read_json(p)
    if isinstance(data, dict):
        extra = sorted(str(k) for k in data if k not in ("format", "version", "cases"))
        if extra:
            raise EvalcoreError(
                f"unknown key(s) {extra}; a cases file has format, version, cases", path=p, field=extra[0]
            )
        if data.get("format", _FORMAT) != _FORMAT:
            raise EvalcoreError(f"format must be {_FORMAT!r}, got {data['format']!r}", path=p, field="format")
        if data.get("version", 1) != 1:
            raise EvalcoreError(
                f"version {data['version']!r} is not supported (this evalcore reads version 1)", path=p, field="version"
            )
    items = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise EvalcoreError("expected a list of cases or an object with a 'cases' list", path=p, field="cases")
    cases = [AgentCase.from_dict(d, path=str(p), index=i) for i, d in enumerate(items)]
    ids, queries = set(), set()
    for i, c in enumerate(cases):
        if c.id in ids:
            raise EvalcoreError(f"duplicate id {c.id!r}", path=p, field=f"cases[{i}].id")
        if c.query in queries:
            raise EvalcoreError(f"duplicate query {c.query!r}", path=p, field=f"cases[{i}].query")
        ids.add(c.id)
        queries.add(c.query)
    return cases
