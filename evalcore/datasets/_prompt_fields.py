"""An item's question as prompt text, and the question recovered from a rendered prompt.

The one home of three things several layers need: MMLU's options as prompt lines
(:func:`choices_text`, rendered by ``runs`` prompt templates as ``{choices_text}``), an item's
question as one text (:func:`question_text`: the query routing computes context features
from) and the question read back from a recorded request (:func:`prompt_question`: the
``question`` column of the benchmark views and routing's query of a recorded run).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from string import Formatter
from typing import Any

from evalcore.datasets._references import CHOICE_LETTERS
from evalcore.errors import EvalcoreError

__all__ = ["choices_text", "prompt_question", "question_text"]


def choices_text(choices: Sequence[Any]) -> str:
    """Options as prompt lines, ``(A) first`` to ``(D) fourth`` (up to ten: ``(J)``), one per line.

    Args:
        choices: The option texts, in letter order.

    Returns:
        The lines joined by newlines.

    Raises:
        EvalcoreError: More than ten options (there are letters A-J only).
    """
    if len(choices) > len(CHOICE_LETTERS):
        raise EvalcoreError(f"at most 10 options (A-J), got {len(choices)}", field="choices")
    return "\n".join(f"({CHOICE_LETTERS[i]}) {c}" for i, c in enumerate(choices))


def question_text(fields: Mapping[str, Any]) -> str:
    """An item's question as one text: ``question`` (HumanEval: ``prompt``), then the options.

    Args:
        fields: An item's fields (``question`` and for MMLU the ``choices`` list) or the
            fields recovered from a prompt (``question`` and ``choices_text``).

    Returns:
        The question, followed for MMLU by :func:`choices_text` on the next lines.
    """
    text = str(fields.get("question") or fields.get("prompt") or "")
    options = fields.get("choices_text")
    choices = fields.get("choices")
    if options is None and choices and not isinstance(choices, str):
        options = choices_text(choices)
    if options:
        text += "\n" + str(options)
    return text


@lru_cache(maxsize=64)
def _template_pattern(template: str) -> re.Pattern[str] | None:
    """A regex that recovers the ``{field}`` values of a prompt rendered from ``template``.

    None when the template has no ``{question}`` or ``{prompt}`` field (nothing to recover)
    or is not a valid format string.
    """
    parts = ["^"]
    seen: set[str] = set()
    try:
        parsed = list(Formatter().parse(template))
    except ValueError:
        return None
    for literal, name, _, _ in parsed:
        parts.append(re.escape(literal))
        if name:
            if name.isidentifier() and name not in seen:
                parts.append(f"(?P<{name}>.*?)")
                seen.add(name)
            else:
                parts.append(".*?")
    parts.append("$")
    if "question" not in seen and "prompt" not in seen:
        return None
    return re.compile("".join(parts), re.DOTALL)


def prompt_question(messages: Iterable[Mapping[str, Any]] | None, template: str | None = None) -> str:
    """The item's question in a recorded chat request, without the template's instructions.

    The last user turn is matched against the prompt template it was rendered from; the
    recovered ``{question}`` (or ``{prompt}``), followed by ``{choices_text}`` when the template
    has it, is the question (:func:`question_text`). Without a template, or when the turn does
    not match it, the whole last user turn is returned.

    Args:
        messages: The request's messages (``{"role", "content"}``).
        template: The ``user`` text of the prompt template (``config["prompt"]["user"]``).

    Returns:
        The question ("" when there is no user turn).
    """
    users = [m.get("content", "") for m in messages or [] if m.get("role") == "user"]
    text = str(users[-1]) if users else ""
    pattern = _template_pattern(template) if template else None
    if pattern is not None:
        match = pattern.match(text)
        if match:
            question = question_text(match.groupdict())
            if question.strip():
                return question
    return text
