"""How the number kind's flexible reading (GSM8K's) treats a strong model's reply (issue 36): the number a concluding
sentence commits to (not a number restated after it), replies that decline to answer, equal
forms of one value ("50% or 1/2") and clock times ("2:00 pm").

The rules are documented in docs/benchmarks.md ("Exact match"); :mod:`._extract_number` calls them.
"""

from __future__ import annotations

import re
from fractions import Fraction

from evalcore.datasets import NUMBER_PATTERN, number_from_match
from evalcore.evaluators._extract_common import _clean_latex

# ---------------------------------------------------------------------------------------------
# clock times
# ---------------------------------------------------------------------------------------------

# "2:30 pm", "14:05", "2:00 p.m.": a clock time, one value (never its hours and its minutes)
CLOCK_PATTERN = r"(?<![\d:.,])(?P<hour>\d{1,2}):(?P<minute>[0-5]\d)(?![\d,]|:\d)(?:[ \t]?(?:[ap]\.?m\.?)(?![a-z]))?"
CLOCK_AT_START = re.compile(r"[\s*_`\"'$]*" + CLOCK_PATTERN, re.IGNORECASE)


def clock_value(m: re.Match[str]) -> Fraction | None:
    """The value a clock time stands for: its hour as written when it is on the hour ("2:00 pm"
    → 2, "14:00" → 14); ``None`` for any other time ("2:30 pm"), which no single number states."""
    return Fraction(int(m.group("hour"))) if m.group("minute") == "00" else None


# ---------------------------------------------------------------------------------------------
# equal forms of one value
# ---------------------------------------------------------------------------------------------

_PERCENT_AFTER = re.compile(r"[ \t]*(?:%|\\%|percent\b|per[ \t]cent\b)", re.IGNORECASE)


def is_percent(text: str, end: int) -> bool:
    """Whether the number ending at ``end`` in ``text`` is a percentage ("50%", "50 percent")."""
    return _PERCENT_AFTER.match(text, end) is not None


def equal_forms(a: Fraction, a_percent: bool, b: Fraction, b_percent: bool) -> Fraction | None:
    """The value two forms of one answer state, or ``None`` when they state two answers.

    Equal numbers are one answer; a percentage and a fraction or decimal of the same value
    ("50% or 1/2", "0.25, or 25%") are one answer, read as the percentage's number (50; 25), as
    GSM8K writes a percentage.
    """
    if a == b:
        return a
    if a_percent and not b_percent and a == b * 100:
        return a
    if b_percent and not a_percent and b == a * 100:
        return b
    return None


# ---------------------------------------------------------------------------------------------
# replies that decline to answer
# ---------------------------------------------------------------------------------------------

_DECLINE = re.compile(
    r"\b(?:cannot|can\s*not|can'?t|can’t|could\s*n[o']t|couldn’t|unable\s+to|not\s+(?:be\s+)?able\s+to"
    r"|impossible\s+to|no\s+way\s+to|not\s+possible\s+to)\s+(?:be\s+)?(?:uniquely\s+|exactly\s+|definitively\s+)?"
    r"(?:determin|solv|answer|calculat|comput|find|know|tell|say|give\s+(?:a|an|the|one)|figur|work\s+out"
    r"|provide\s+(?:a|an|the)|help|pin\s+down|establish|conclude)\w*"
    r"|\b(?:not|insufficient|isn'?t|aren'?t|isn’t|aren’t)\s+(?:enough|sufficient)\s+(?:information|info|data|details)"
    r"|\binsufficient\s+(?:information|data|details)\b"
    r"|\b(?:missing|lacks?|lacking)\s+(?:\w+\s+){0,2}?(?:information|data|details)\b"
    r"|\b(?:does\s+not|doesn'?t|doesn’t|did\s+not|didn'?t|do\s+not|don'?t|don’t)\s+(?:give|provide|specify|state"
    r"|say|tell\s+(?:us|me)|include|mention)\b[^.\n]{0,40}?\b(?:enough|how\s+many|how\s+much|how\s+long|what|which"
    r"|any|the)\b"
    r"|\b(?:unanswerable|unsolvable|indeterminate|underdetermined|ill-posed|undeterminable)\b"
    r"|\bnot\s+(?:determinable|solvable|answerable|computable|calculable)\b"
    r"|\b(?:is|are|seems|appears)\s+(?:\w+\s+)?(?:ambiguous|contradictory|inconsistent|incomplete)\b"
    r"|\bno\s+(?:single|unique|definite|definitive)\s+(?:answer|solution|value)",
    re.IGNORECASE,
)
# after the cue in its sentence: the reply goes on to answer (under an assumption, another way)
_DECLINE_UNDONE = re.compile(
    r"\b(?:(?:but|however|though|although|yet)\b(?!,?\s+(?:not|no|never|without|it|this|that|the|there|we\s+do"
    r"\s+not|we\s+don'?t)\b)|unless|assum(?:e|es|ed|ing)|if\s+we|if\s+you|so\s+we|instead|directly"
    r"|right\s+away|immediately|first|until|without\s+first|by\s+itself|alone|just\s+by|let'?s|let\s+us"
    r"|(?:we|you|i)\s+can(?!not|'t|’t)|can\s+be\s+(?:found|computed|calculated|derived|worked\s+out|inferred|deduced)"
    r"|infer|deduce)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"[^.!?;\n]+(?:[.!?;]+|\n|$)")


def _declining_sentence(sentence: str) -> bool:
    m = _DECLINE.search(sentence)
    return m is not None and not _DECLINE_UNDONE.search(sentence, m.end())


def declines(text: str) -> bool:
    """Whether ``text`` (a declared value, or a sentence) says the question cannot be answered:
    "Cannot be determined", "There is not enough information (3 unknowns)"."""
    return any(_declining_sentence(s.group(0)) for s in _SENTENCES.finditer(_clean_latex(text)))


def reply_declines(text: str) -> bool:
    """Whether a reply that declares no answer declines to answer: its first sentence or a
    sentence of its last two paragraphs says the question cannot be answered ("The problem
    doesn't say how many eggs she ate, so the answer cannot be determined."), with no
    "but"/"assuming"/"first" after the cue that makes it a step of the working ("We can't add
    them directly; first ...")."""
    stripped = text.strip()
    paragraphs = re.split(r"\n[ \t]*\n", stripped)
    first = _SENTENCES.search(_clean_latex(stripped))
    if first is not None and _declining_sentence(first.group(0)):
        return True
    return declines("\n".join(paragraphs[-2:]))


# ---------------------------------------------------------------------------------------------
# the number a concluding sentence commits to
# ---------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(CLOCK_PATTERN + "|" + NUMBER_PATTERN, re.IGNORECASE)
_CALC_RESULT = re.compile(r"=[ \t*_]*(?:\\\(|\$\$?)?[ \t]*" + NUMBER_PATTERN)
_SENTENCE_END = re.compile(r"\n|[.!?;](?=\s|$)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__")
# what, after the sentence's first number, opens a phrase that restates the question's numbers:
# "$64 *for the* 16 glasses", "3 hours *to download* the 200 GB file", "4 boxes *since* 4 x 6 = 24"
_RESTATEMENT = re.compile(
    r"(?:\s(?:for|from|by|over|after|with|in|during|within|on|of|out\s+of|each\s+of|among|between)\s+"
    r"(?:the|a|an|his|her|their|its|our|all|each|every|those|these|this|that|both|just|only|\d)"
    r"|\s(?:out\s+of|of|from)\s+[$€£¥]\d|\s(?:after|before|by|from|for|when|while)\s+[a-z]+ing\b"
    r"|:\s|,\s+[$€£¥]?\d"
    r"|\sto\s+(?!\d|[$€£¥]|(?:get|give|make|obtain|arrive|yield|equal|total|end\s+up|come|bring)\b)[a-z]"
    r"|\s\(|,\s*which\b|\s(?:since|because|as|given|when|using|while)\b|\s[—–-]\s)",
    re.IGNORECASE,
)
# a phrase that states a new result after the restated numbers: "divide 90 by 4, which gives us 36"
_RESULT_CUE = re.compile(
    r"\b(?:gives?(?:\s+(?:us|you|me))?|giving(?:\s+(?:us|you|me))?|makes?|making|leaves?|leaving|equals?|results?\s+in"
    r"|to\s+get|comes?\s+to|coming\s+to|totals?|totaling|totalling|for\s+a\s+total\s+of|that'?s|that\s+is)"
    r"[\s*_]*(?:(?:a|an|the|of|just|only|about|exactly)\s+)?(?=[-−–$€£¥]?\d)",
    re.IGNORECASE,
)
# a paragraph that remarks on the solution after its conclusion
_NOTE_START = re.compile(
    r"[ \t]*[(*_>]*[ \t]*(?:notes?|assumptions?|p\.?\s?s\.?|disclaimer|caveat|remark)\b", re.IGNORECASE
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _before_trailing_notes(text: str) -> int:
    """Where up to three trailing paragraphs opening with "Note", "Assumption", "P.S." ... start
    (``len(text)`` when there are none)."""
    end = len(text.rstrip())
    for _ in range(3):
        breaks = list(_PARAGRAPH_BREAK.finditer(text, max(0, end - 2000), end))
        if not breaks or not _NOTE_START.match(text, breaks[-1].end()):
            break
        end = breaks[-1].start()
    return end if end < len(text.rstrip()) else len(text)


_JUSTIFICATION = re.compile(r"\s(?:since|because|as|given)\b|\s\(|,\s*which\b", re.IGNORECASE)


def _tokens(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int, Fraction | None]]:
    """``(start, end, value)`` of every number and clock time in ``text[start:end]``."""
    out = []
    for m in _TOKEN_RE.finditer(text, start, len(text) if end is None else end):
        value = clock_value(m) if m.group("hour") else number_from_match(m)
        if m.group("hour") or value is not None:
            out.append((m.start(), m.end(), value))
    return out


def _last_sentence_with_number(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the last sentence of ``text`` that holds a number or a clock time."""
    last = None
    for m in _TOKEN_RE.finditer(text):
        last = m
    if last is None:
        return None
    start = 0
    for m in _SENTENCE_END.finditer(text, 0, last.start()):
        start = m.end()
    stop = _SENTENCE_END.search(text, last.end())
    return start, stop.start() if stop else len(text)


def _restating_sentence(text: str, span: tuple[int, int]) -> tuple[int, int] | None:
    """The sentence before ``span`` that a trailing sentence at ``span`` only restates numbers
    after: "8 × $8 = $64. Kylar needs to pay $64. That covers all 16 glasses." (16 was in the
    question; 64, the last calculation's result, is in the sentence before). ``None`` when the
    sentence at ``span`` calculates, states a new number or the last result, or when the
    sentence before does not state that result in words (no "=" in it)."""
    start, end = span
    if "=" in text[start:end]:
        return None
    results = list(_CALC_RESULT.finditer(text, 0, start))
    result = number_from_match(results[-1]) if results else None
    if result is None:
        return None
    values = {v for _a, _b, v in _tokens(text, start, end)}
    earlier = {v for _a, _b, v in _tokens(text, 0, start)}
    if result in values or not values <= earlier:
        return None
    previous = _last_sentence_with_number(text[:start].rstrip())
    if previous is None or "=" in text[previous[0] : previous[1]]:
        return None
    if result not in {v for _a, _b, v in _tokens(text, *previous)}:
        return None
    return previous


def _calculation_result(
    cleaned: str, tokens: list[tuple[int, int, Fraction | None]], s_start: int, s_end: int
) -> tuple[Fraction | None] | None:
    """The value a calculating sentence commits to (``(value,)``), or None to read on.

    The result after its last "=", unless a justification holds the calculation ("4 boxes,
    since 4 × 6 = 24": 4) or a phrase restating the question follows the result.
    """
    sentence = cleaned[s_start:s_end]
    first_eq = s_start + sentence.index("=")
    justification = _JUSTIFICATION.search(cleaned, tokens[0][1], first_eq)
    if justification is not None:
        before = [t for t in tokens if t[1] <= justification.start()]
        if before:
            return (before[-1][2],)
    after = [t for t in tokens if t[0] > s_start + sentence.rindex("=")]
    if not after or after[0] is tokens[-1]:
        return (after[0][2] if after else tokens[-1][2],)
    if _RESTATEMENT.search(cleaned[after[0][1] : after[1][0]]):
        return (_stated_after(cleaned, tokens, after[0], s_end),)  # "9 × $2 = $18 for the 9 eggs"
    return None


def concluding_number(text: str) -> tuple[Fraction | None, bool] | None:
    """The number a reply without a declared answer concludes with: ``(value, differs)``, where
    ``differs`` says that it is not the reply's last number; ``None`` when there is no number.

    Read in the last sentence that holds a number (the conclusion). When it states several
    values, the one it commits to is, in order:

    1. the only value in bold ("So Kylar pays **$64** for the 16 glasses.");
    2. when the sentence calculates ("Total = 10 + 15 = 25 points"), the result after its last
       "=", unless a justification holds the calculation ("4 boxes, since 4 × 6 = 24": 4);
    3. the result of the reply's last calculation before it, when the sentence states it before
       any phrase that restates the question ("8 × $8 = $64. Kylar needs to pay $64 for the 16
       glasses.": 64; not "$350 over the 3 weeks: $50 + $100 + $200");
    4. the last value before a phrase that restates the question's numbers ("$64 for the 16
       glasses", "3 hours to download the 200 GB file", "$35 out of her $100");
    5. else the last value.

    Up to three trailing paragraphs that open with "Note", "Assumption", "P.S." ... remark on the
    solution and are not its conclusion. A clock time is one value (its hour when on the hour,
    else no number: value ``None``).
    """
    cleaned = _clean_latex(text)
    span = _last_sentence_with_number(cleaned)
    if span is None:
        return None
    last_value = _tokens(cleaned, *span)[-1][2]
    cut = _before_trailing_notes(cleaned)
    if cut < len(cleaned) and _last_sentence_with_number(cleaned[:cut]) is not None:
        cleaned = cleaned[:cut]  # "Note: the problem doesn't give the tax on the 3 items"
        span = _last_sentence_with_number(cleaned)
        assert span is not None
    for _ in range(2):
        previous = _restating_sentence(cleaned, span)
        if previous is None:
            break
        span = previous
    s_start, s_end = span
    tokens = _tokens(cleaned, s_start, s_end)

    def pick(value: Fraction | None) -> tuple[Fraction | None, bool]:
        return value, value != last_value

    if len({v for _a, _b, v in tokens}) < 2:
        return pick(tokens[-1][2])

    bold = {
        v
        for b in _BOLD.finditer(cleaned, s_start, s_end)
        for _a, _b, v in _tokens(cleaned, b.start(), b.end())
        if v is not None
    }
    if len(bold) == 1:
        return pick(bold.pop())
    if "=" in cleaned[s_start:s_end]:
        calculated = _calculation_result(cleaned, tokens, s_start, s_end)
        if calculated is not None:
            return pick(calculated[0])
    restated = _RESTATEMENT.search(cleaned, tokens[0][1], s_end)
    main = [t for t in tokens if restated is None or t[1] <= restated.start()]
    results = list(_CALC_RESULT.finditer(cleaned, 0, s_start))
    if results:
        result = number_from_match(results[-1])
        if result is not None and any(v == result for _a, _b, v in main):
            return pick(result)
    if len(main) < len(tokens):
        return pick(_stated_after(cleaned, tokens, main[-1], s_end))
    return pick(tokens[-1][2])


def _stated_after(
    text: str, tokens: list[tuple[int, int, Fraction | None]], chosen: tuple[int, int, Fraction | None], end: int
) -> Fraction | None:
    """``chosen``'s value, unless a phrase after it states a new result ("divide 90 by 4, which
    gives us 36": 36): then the value that phrase states."""
    cues = list(_RESULT_CUE.finditer(text, chosen[1], end))
    if cues:
        later = [t for t in tokens if t[0] >= cues[-1].end()]
        if later:
            return later[0][2]
    return chosen[2]


def first_value_is_clock(text: str) -> re.Match[str] | None:
    """The clock time opening ``text`` (after markup), if any."""
    return CLOCK_AT_START.match(_clean_latex(text))


__all__ = [
    "clock_value",
    "concluding_number",
    "declines",
    "equal_forms",
    "first_value_is_clock",
    "is_percent",
    "reply_declines",
]
