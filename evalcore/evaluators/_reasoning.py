"""A reasoning model's scratchpad, told apart from its answer (light: the code-execution path
imports it too)."""

from __future__ import annotations

import re

# A reasoning model's scratchpad: "<think> ... </think>" (DeepSeek-R1, QwQ, Qwen3; also
# "<thinking>", "<reasoning>"). Chat templates that open the block themselves leave only its
# end in the reply, on a line of its own ("...\n</think>\n\nThe answer is 18.").
_OPENS = re.compile(r"\s*<(?P<tag>think|thinking|reasoning)>", re.IGNORECASE)
_ENDS_LINE = re.compile(r"(?:^|(?<=\n))[ \t]*</(?:think|thinking|reasoning)>", re.IGNORECASE)


def after_reasoning(text: str) -> str:
    """What follows a reply's closed reasoning block: the answer, not the model's drafts (a
    guess declared while thinking is no second answer). The block either opens the reply or
    ends on a line of its own, so a closing tag inside code ("text.split('</think>')") is left
    alone. A reply that says nothing after the block, or whose block is never closed, is read
    whole."""
    if "</" not in text:
        return text
    opened = _OPENS.match(text)
    ends = re.compile(rf"</{opened.group('tag')}>", re.IGNORECASE) if opened else _ENDS_LINE
    matches = list(ends.finditer(text))
    last = matches[-1] if matches else None
    if last is None or not text[last.end() :].strip():
        return text
    return text[last.end() :]
