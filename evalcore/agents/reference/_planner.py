"""A deterministic planner: split a request into steps and resolve references to earlier results."""

from __future__ import annotations

import json
import re
from typing import Any

_QUOTED = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|(?<![A-Za-z])'[^']*'|\u2018[^\u2019]*\u2019")
_SPLIT = re.compile(
    r"\s*(?:;|,?\s*\band\s+then\b|,?\s*\bthen\b|,?\s*\b(?:and\s+)?after\s+that\b|"
    r",?\s*\bafterwards\b|,?\s*\band\s+finally\b|,?\s*\bfinally\b|,?\s*\band\s+also\b)[\s,:]*",
    re.I,
)
_LEADING = re.compile(r"^\s*(?:first(?:ly)?|to\s+start)\b[\s,:]*", re.I)
_NOUN_REF = re.compile(
    r"\b(?:the|that|this)\s+(?:previous\s+|last\s+|above\s+|prior\s+)?"
    r"(?:result|answer|number|value|output|outcome|string|word|text)\b"
    r"(?!\s*[\"'\u201c\u2018\d])",
    re.I,
)
_AMOUNT_REF = re.compile(r"\b(?:that|this)\s+(?:many|much)\b", re.I)
_PRONOUN_REF = re.compile(
    r"\b(?:it|that|this)\b(?=\s*(?:$|[.,;:!?)]|\s(?:by|to|in|into|from|of|and|backwards|"
    r"around|again|as|with|times|plus|minus)\b))",
    re.I,
)


def split_steps(query: str) -> list[str]:
    """Split a request into its sequential steps.

    Steps are separated by ";", "then", "and then", "after that", "afterwards", "finally",
    "and also"; quoted strings are never split. A leading "first" is dropped.

    Args:
        query: The request.

    Returns:
        The non-empty step texts in order (the whole query when it has one step).
    """
    spans: list[str] = []

    def hide(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _QUOTED.sub(hide, query)
    parts = [p for p in _SPLIT.split(hidden) if p and p.strip(" ,.")]
    out = []
    for p in parts:
        p = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], p)
        p = _LEADING.sub("", p).strip(" ,")
        if p:
            out.append(p)
    return out or [query.strip()]


def literal(value: Any) -> str:
    """Write an earlier step's result into the text of a later step (strings quoted)."""
    if isinstance(value, str):
        return f'"{value}"' if '"' not in value else f"'{value}'"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return json.dumps(value, default=str)


def resolve_references(step: str, previous: Any, has_previous: bool) -> tuple[str, bool]:
    """Replace references to the previous step's result by its value.

    References: "the/that/this [previous|last] result|answer|number|value|output|string|word|
    text" (not when a literal follows, as in "this string 'abc'"), "that many"/"that much", and
    a bare "it"/"that"/"this" at the end or before a preposition ("take 20% of it").

    Args:
        step: The step text.
        previous: The previous step's result.
        has_previous: Whether there is a previous step with a result.

    Returns:
        The rewritten text and whether a reference was resolved.
    """
    if not has_previous:
        return step, False
    for pattern in (_NOUN_REF, _AMOUNT_REF):
        text, n = pattern.subn(literal(previous), step, count=1)
        if n:
            return text, True
    text, n = _PRONOUN_REF.subn(literal(previous), step, count=1)
    return text, bool(n)
