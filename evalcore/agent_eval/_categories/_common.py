"""What the categories share: the requests they draw while they run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalcore.agent_eval._cases.generator import answer_tolerance
from evalcore.agent_eval._cases.records import AgentCase


def drawn_case(
    case_id: str,
    kind: str,
    inputs: dict[str, Any],
    query: str,
    answer: Any,
    *,
    complexity: str,
    category: str,
    tag: str,
    expected_tools: Sequence[str] | None = None,
) -> AgentCase:
    """A single-step request a category draws while it runs (learning rows, robustness
    controls, performance load), with the evaluator's own answer.

    Args:
        case_id: The case's id.
        kind: The kind of request.
        inputs: Its arguments by name.
        query: The request's text (its canonical phrasing of ``inputs``).
        answer: The evaluator's answer (``solve_kind(kind, inputs)``).
        complexity: The case's complexity.
        category: The one category the case is hinted for.
        tag: Its first tag (the second is ``kind``).
        expected_tools: The tools a correct agent uses (default ``[kind]``).

    Returns:
        The case, with the tolerances :func:`answer_tolerance` gives ``answer``.
    """
    rel, abs_ = answer_tolerance(answer)
    return AgentCase(
        id=case_id,
        query=query,
        complexity=complexity,
        kind=kind,
        categories=[category],
        tags=[tag, kind],
        expected=answer,
        rel_tol=rel,
        abs_tol=abs_,
        expected_tools=[kind] if expected_tools is None else list(expected_tools),
        inputs=inputs,
    )
