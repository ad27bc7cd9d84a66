"""Number answer extraction (the ``"number"`` answer kind, GSM8K's): declared answers, then
(flexible) "A: 72", "[72]", the last number.

See :mod:`._exact_match` for the rules in order; shared parts are in :mod:`._extract_common`.
"""

from __future__ import annotations

import re
from fractions import Fraction

from evalcore.datasets import (
    NUMBER_PATTERN,
    NUMBER_RE,
    canonical_number,
    number_from_match,
)
from evalcore.evaluators._extract_common import (
    _MAX_VALUE,
    _NONE,
    Extraction,
    _boxed_spans,
    _clean_latex,
    _Declared,
    _field_declarations,
    _first_number,
    _hypothetical,
    _last_number,
    _line_start,
    _readable,
    _resolve,
    retraction_re,
)
from evalcore.evaluators._extract_number_reading import (
    clock_value,
    concluding_number,
    declines,
    equal_forms,
    first_value_is_clock,
    is_percent,
    reply_declines,
)

_HASH_RE = re.compile(r"####[ \t]*(?:\*\*)?[ \t]*(?P<body>[^\n]*)")
# "#### 1. Eggs left", "#### 2) Money": a numbered markdown heading, not a "####" answer
_NUMBERED_HEADING = re.compile(r"[ \t]*(?:(?:\*\*|__)[ \t]*)?\d{1,3}[.)][ \t]+(?:(?:\*\*|__)[ \t]*)?[^\W\d_]")
# "#### 1 000": after the marker a single number is expected, so space-separated groups of
# three digits are one number there (elsewhere "2 100" may well be two numbers).
_SPACED_THOUSANDS = re.compile(
    r"^(\s*(?:\*\*|\$|\\\(|\s)*[-−–]?[$€£¥]?\s?)(\d{1,3}(?: \d{3})+(?:\.\d+)?)(?!\d|[,.]\d| \d)"
)
# "answer" as a word of its own (never "long-answer", "answered"), optionally "final answer"
_ANSWER_WORD = re.compile(r"(?<![\w-])(?P<final>final\s+)?answer(?![\w-])", re.IGNORECASE)
# what may stand before "answer": nothing on the line, markup, punctuation or a determiner
_ANSWER_BEFORE_OK = re.compile(
    r"(?:^|[\n.!?:;,(\[{>#*_]|\b(?:the|my|our|your|its|this|that|correct|right|exact|numerical|numeric"
    r"|total|actual|true|complete|whole|resulting)\s)[\s*_]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_AFTER = re.compile(
    r"(?:\s+to\s+(?:the|this|our|that)\s+(?:question|problem))?(?:\s*\([^()\n]{0,30}\))?\s*(?:\*\*|__)?\s*"
    r"(?:is|will\s+be|would\s+be|should\s+be|must\s+be|has\s+to\s+be|comes\s+to|=|:|-|—)\s*(?:[:=]\s*)?"
    r"(?:(?:definitely|clearly|therefore|thus|then|indeed|exactly|simply|just|now|approximately|approx\.|about"
    r"|around|roughly|nearly|almost)\s+|[~≈]\s*)?"
    r"(?:\*\*|__|\$\$?|\\\(|\\\[|\s|either\s)*",
    re.IGNORECASE,
)
_FINAL_LABEL = re.compile(r"^[ \t]*(?:[#>*_-][ \t#*_]*)?$", re.MULTILINE)
# "### Final Answer", "**Answer**", "## The answer": a heading (or a bold line) whose value is
# the next line that is not blank ("**$18**"), when that line states a value alone
_HEADING_BEFORE = re.compile(r"[ \t]*(?:#{1,6}[ \t]*(?:\*\*|__)?|\*\*|__)[ \t]*(?:the[ \t]+)?\Z", re.IGNORECASE)
_HEADING_AFTER = re.compile(r"[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*\n(?:[ \t]*\n)*")
_LIST_MARKER = re.compile(r"\s*\n\s*(?:\*\*)?\d+[.)]\s+(?:\*\*)?[A-Za-z]")
_OR_NUMBER = re.compile(r"[^\n.;]{0,20}?\bor\b\s*(?:\*\*|\$|\s|about|approximately|maybe|perhaps)*(?=[-−–$€£¥\d.])")


def _number_read(text: str, value: Fraction) -> tuple[Fraction, bool]:
    """``(value, hedged)`` for the number ``value`` opening ``text``: hedged when "or <another
    number>" follows it; two equal forms of one value are one answer ("50% or 1/2" → 50, "1/2
    or 50%" → 50: a percentage is read as its number)."""
    cleaned = _clean_latex(text)
    first = NUMBER_RE.search(cleaned)
    if first is None:
        return value, False
    m = _OR_NUMBER.match(cleaned, first.end())
    if m is None:
        return value, False
    other = NUMBER_RE.match(cleaned, m.end())
    other_value = number_from_match(other) if other else None
    if other is None or other_value is None:
        return value, False
    same = equal_forms(value, is_percent(cleaned, first.end()), other_value, is_percent(cleaned, other.end()))
    if same is not None:
        return same, False
    # "45 minutes, or 0.75 hours": the same quantity in another unit, not a second answer
    unit1, unit2 = _UNIT.match(cleaned, first.end()), _UNIT.match(cleaned, other.end())
    return value, not (unit1 and unit2 and unit1.group(1).lower().rstrip("s") != unit2.group(1).lower().rstrip("s"))


_UNIT = re.compile(r"\s*([A-Za-z%]+)")
# what may stand before the "=" of a declared calculation ("48 / 2 = 24", "3 apples + 5 apples = 8")
_NOT_A_CALCULATION = re.compile(r",\s|;|\b(?:and|but|is|are|was|which|so|then|because|if|not|that)\b", re.IGNORECASE)


# an arithmetic expression opening a value ("(16 - 3 - 4) * 2", "48 / 2"); "3/4" is one number
_NUM_TOKEN = r"[$€£¥]?[ \t]?\d[\d,]*(?:\.\d+)?(?:/\d+)?"
_EXPRESSION_RE = re.compile(
    r"[\s*_`\"'$]*(?:[-−–]\s*)?(?:[(\[][(\[\s]*)?"
    + _NUM_TOKEN
    + r"(?:[\s)\]]*(?:[+*×÷·^]|[-−–]|(?<!\d)/|/(?!\d)|(?<=\s)x(?=\s))[\s(\[]*[-−–]?"
    + _NUM_TOKEN
    + r")+[\s)\]]*"
)


def _unevaluated(text: str) -> bool:
    """Whether ``text`` opens with an arithmetic expression that is never evaluated (no "=" after
    it in the same sentence): "(16 - 3 - 4) * 2" declares no number."""
    m = _EXPRESSION_RE.match(text)
    return m is not None and not re.match(r"[^\n.;]*=", text[m.end() :])


def _calc_or_first(text: str) -> Fraction | None:
    """A declared value: the result of a calculation ("5 * 12 = 60" → 60), else its first number;
    ``None`` for an expression left unevaluated ("(16 - 3 - 4) * 2")."""
    cleaned = _clean_latex(text)
    if "=" in cleaned:
        result = _first_number(cleaned.rsplit("=", 1)[1])
        if result is not None:
            return result
    if _unevaluated(cleaned):
        return None
    return _first_number(cleaned)


def _spaced_thousands(text: str) -> str:
    """``text`` with a value that opens it written in space-grouped thousands ("12 000") joined:
    after an answer marker a single number is expected."""
    return _SPACED_THOUSANDS.sub(lambda s: s.group(1) + s.group(2).replace(" ", ""), text)


def _number_value(text: str) -> tuple[str | None, bool]:
    """Read a strongly declared value (a field, ``####``, ``\\boxed``, "Final answer:" line)."""
    text = _spaced_thousands(text)
    if declines(text):
        return None, False  # "Cannot be determined (3 unknowns)": no answer, whatever it mentions
    clock = first_value_is_clock(text)
    value = clock_value(clock) if clock else _calc_or_first(text)
    if value is None:
        return None, False
    value, hedged = _number_read(text, value)
    if hedged:
        return None, True
    return canonical_number(value), False


# a clock time is one value: its hour when on the hour ("2:00 pm" → 2), else no number ("2:30 pm",
# "14:05"): reading its hours would be a confident misread


_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = dict(zip("twenty thirty forty fifty sixty seventy eighty ninety".split(), range(20, 100, 10)))
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_NUMBER_WORD = "|".join(sorted([*_SMALL, *_TENS, *_SCALES], key=len, reverse=True))
# "eighteen", "twenty-five dollars", "one hundred and five": a number in words opening a value,
# then at most three words (its unit) and the end of the sentence; never "one of the ...",
# "two more than ...", "three times ..."
_WORDS_VALUE = re.compile(
    r"[\s*_`\"']*(?P<words>(?:" + _NUMBER_WORD + r")(?:(?:[ \t]+|-|[ \t]+and[ \t]+)(?:" + _NUMBER_WORD + r"))*)\b"
    r"(?:(?:[ \t]+(?!(?:of|than|more|less|fewer|times|as|or|and|to|per|each)\b)[^\W\d_][\w'’-]*){0,3})"
    r"[ \t*_`\"']*(?:$|[.,;!?)\n])",
    re.IGNORECASE,
)


def _words_number(words: str) -> int | None:
    """The value of a number written in words ("twenty-five", "one hundred and five")."""
    total, current, seen = 0, 0, False
    for token in re.split(r"[\s-]+", words.lower()):
        if token == "and":
            continue
        if token in _SMALL:
            current += _SMALL.index(token)
        elif token in _TENS:
            current += _TENS[token]
        elif token == "hundred":
            current = (current or 1) * 100
        elif token in _SCALES:
            total, current = total + (current or 1) * _SCALES[token], 0
        else:
            return None
        seen = True
    return total + current if seen else None


def _first_sentence(text: str) -> str:
    """The first sentence of ``text`` (LaTeX cleaned), up to a line break or a full stop."""
    return re.split(r"\n|\.(?=\s|$)", _clean_latex(text), maxsplit=1)[0]


def _answer_value(tail: str) -> Fraction | None:
    """The number an answer phrase announces: the one that opens ``tail``, or, when the
    announced sentence is a calculation ("5 + 3 = 8."), the result after its last ``=``;
    ``None`` for a clock time ("2:30 pm")."""
    sentence = _first_sentence(tail)
    clock = first_value_is_clock(sentence)
    if clock:
        return clock_value(clock)
    if (
        "=" in sentence
        and _first_number_at_start(sentence) is not None
        and not _NOT_A_CALCULATION.search(sentence.split("=", 1)[0])
    ):
        result = _last_number(sentence.rsplit("=", 1)[1])
        if result is not None:
            return result
    if _unevaluated(sentence):
        return None  # "The answer is (16 - 3 - 4) * 2": an expression, not a number
    value = _first_number_at_start(tail)
    if value is None:
        words = _WORDS_VALUE.match(sentence)
        number = _words_number(words.group("words")) if words else None
        value = Fraction(number) if number is not None else None
    return value


# the number opening a value, then at most three words (its unit: "18 dollars per day"), then
# the end of the sentence, an aside or a justification ("72 clips, 48 in April ...", "18 because ...")
_BARE_VALUE = re.compile(
    r"[\s*_`\"'$]*[-−–]?" + _NUM_TOKEN + r"(?:[ \t]+(?:\*\*)?[^\W\d_][\w'’-]*(?:\*\*)?){0,3}[ \t*_]*"
    r"(?:$|[,;:(—–!?]|\s-\s|\b(?:because|since|as|for|from|given|using|which|i\.e|e\.g)\b)",
    re.IGNORECASE,
)


def _opens_working(tail: str) -> bool:
    """Whether the text after an "Answer:" label (or a line "A:") opens a worked solution
    instead of stating a value: its first sentence states several numbers ("3 friends each paid
    $12 ...", "2 adults and 3 children ..."), or is a calculation that the working continues
    after ("16 - 3 - 4 = 9 eggs are left.\n9 * 2 = 18"). The value is then the solution's
    conclusion, not the first number after the label."""
    cleaned = _clean_latex(tail).lstrip(" \t\n*_")
    parts = re.split(r"(\n|\.(?=\s|$))", cleaned, maxsplit=1)
    sentence = re.sub(r"\([^()\n]*\)", " ", parts[0])  # an aside: "18 (9 eggs × $2)"
    if _EXPRESSION_RE.match(sentence):
        rest = "".join(parts[1:])
        paragraph = re.split(r"\n[ \t]*\n", rest, maxsplit=1)[0]
        return NUMBER_RE.search(paragraph) is not None
    if _BARE_VALUE.match(sentence):
        return False
    return len(NUMBER_RE.findall(sentence)) > 1


def _first_number_at_start(text: str) -> Fraction | None:
    """The number that opens ``text`` (after markup), within the first few characters."""
    head = _clean_latex(text[:80])
    m = NUMBER_RE.search(head)
    if m is None:
        return None
    between = head[: m.start()]
    if re.search(r"[A-Za-z]{2,}", between) or len(between.strip()) > 6:
        return None
    return number_from_match(m)


def _number_declarations(text: str) -> list[_Declared]:
    declared = _field_declarations(text, _number_value, number_ok=True)
    for m in _HASH_RE.finditer(text):
        if _NUMBERED_HEADING.match(m.group("body")):
            continue  # "#### 1. Eggs left": a numbered heading
        body = _spaced_thousands(m.group("body"))
        clock = first_value_is_clock(body)
        if clock:  # "#### 2:00 pm" is 2; "#### 2:30" no number
            hour = clock_value(clock)
            declared.append(_Declared(m.start(), m.end(), "hash", canonical_number(hour) if hour is not None else None))
            continue
        first = _first_number_at_start(body)
        if first is None:
            first = _answer_value(body)  # "#### seventy-two"
        if first is not None and _EXPRESSION_RE.match(_clean_latex(body)):
            first = _calc_or_first(body.split("\n", 1)[0])  # "#### 9 * 2 = 18"; "#### 9 * 2" is none
            if first is None:
                declared.append(_Declared(m.start(), m.end(), "hash", None))
                continue
        if first is not None:
            first, hedged = _number_read(body, first)
            value = None if hedged else canonical_number(first)
        else:
            inner = _number_answer_words(body)
            if not inner:
                continue  # a markdown heading ("#### Step 1: ..."), not an answer
            value, hedged = inner[-1].value, inner[-1].hedged
        declared.append(_Declared(m.start(), m.end(), "hash", value, hedged))
    for start, end, contents in _boxed_spans(text):
        value, hedged = _number_value(contents)
        declared.append(_Declared(start, end, "boxed", value, hedged, contents))
    declared.extend(_number_answer_words(text))
    if declared:
        last = max(declared, key=lambda d: d.end)
        declared.extend(_number_corrections(text, last.end, last.value))
    return declared


# "... Wait, that's wrong: it's 25", "Oops, I meant 25", "Sorry, the correct total is $1,250"
_RETRACTION = retraction_re(
    r"(?:the\s+)?(?:correct|right|real|true|actual)\s+(?:value|total|number|result|amount|count|figure)\s+is",
    r"[\s:=*_$]*(?:(?:actually|really|just|only)\s+)?(?=[-−–$€£¥\d.])",
)
# "Wait, let me check: it's 5 cm each ...": setting out to verify the answer, not withdrawing it
# ("but actually, after checking, it is 25" withdraws it)
_VERIFYING = re.compile(
    r"\b(?:let\s+me|let'?s|let\s+us|i'?ll|i\s+will|to)\s+(?:\w+\s+){0,2}?(?:check|verif|confirm|make\s+sure|recount"
    r"|double|sanity)",
    re.IGNORECASE,
)


def _number_corrections(text: str, after: int, current: str | None) -> list[_Declared]:
    """Retractions after the reply's last declared answer (``current``, ending at ``after``):
    "... Wait, that's wrong: it's 25". Read when the retraction's sentence states one value
    ("it's 25 dollars.", "it's 25 or 26": a hedge) or is a calculation ending in it ("it's
    5 * 5 = 25."), never a sentence that goes on working ("it's 5 cm each, so ..."), nor one
    that restates the declared value."""
    out = []
    for m in _RETRACTION.finditer(text, after):
        if _VERIFYING.search(text, m.start(), m.end()):
            continue
        tail = _spaced_thousands(text[m.end() : m.end() + _MAX_VALUE])
        value = _answer_value(tail)
        if value is None:
            continue
        value, hedged = _number_read(tail, value)
        if hedged:
            out.append(_Declared(m.start(), m.end(), "correction", None, True))
            current = None
            continue
        sentence = _first_sentence(tail)
        if _opens_working(tail) or (len(NUMBER_RE.findall(sentence)) != 1 and not _EXPRESSION_RE.match(sentence)):
            continue
        if canonical_number(value) != current:
            current = canonical_number(value)
            out.append(_Declared(m.start(), m.end(), "correction", current))
    return out


def _number_answer_words(text: str) -> list[_Declared]:
    """ "The answer is 72", "Answer: 72", "**Final Answer:** 72" ("answer" followed by a number).

    A line that starts with a "Final answer:" label is declared even without a number (a
    parse failure then); a list marker after "the answer:" is never the answer.
    """
    out = []
    for m in _ANSWER_WORD.finditer(text):
        line_start = _line_start(text, m.start())
        if m.start() != line_start and not _ANSWER_BEFORE_OK.search(text, max(line_start, m.start() - 60), m.start()):
            continue  # "he could answer: 40 + 30 = 70" — a verb, not the answer
        if _hypothetical(text, m.start()):
            continue  # "You might think the answer is 20, ..."
        after = _ANSWER_AFTER.match(text, m.end())
        if after is None and _HEADING_BEFORE.match(text, line_start, m.start()):
            out.extend(_heading_answer(text, m))  # "### Final Answer⏎⏎**$18**"
            continue
        if after is None:
            continue
        tail = _spaced_thousands(text[after.end() : after.end() + _MAX_VALUE])
        if _LIST_MARKER.match(text, m.end() + len(after.group(0).rstrip())):
            continue  # "the answer:\n\n1. First ..."
        if ":" in after.group(0) and _opens_working(tail):
            continue  # "**Answer:**\n\n3 friends each paid $12 ...": the label of the working
        value = _answer_value(tail)
        label = m.group("final") and _FINAL_LABEL.match(text, line_start, m.start()) and ":" in after.group(0)
        if value is None and (_unevaluated(_clean_latex(tail)) or first_value_is_clock(tail)):
            out.append(_Declared(m.start(), after.end(), "answer_is", None))  # "(16 - 3 - 4) * 2", "2:30 pm"
            continue
        if declines(_first_sentence(tail)):
            out.append(_Declared(m.start(), after.end(), "answer_is", None))  # "cannot be determined (3 ...)"
            continue
        if value is None:
            if label:  # "**Final Answer:** Cannot be determined"
                line = tail.lstrip(" \t").split("\n", 1)[0] or tail.lstrip().split("\n", 1)[0]
                got, hedged = _number_value(line)
                out.append(_Declared(m.start(), after.end(), "answer_is", got, hedged, line))
            continue
        value, hedged = _number_read(tail, value)
        out.append(_Declared(m.start(), after.end(), "answer_is", None if hedged else canonical_number(value), hedged))
    return out


def _heading_answer(text: str, m: re.Match[str]) -> list[_Declared]:
    """The value on the line after an answer heading ("### Final Answer⏎⏎**$18**"), if bare."""
    after = _HEADING_AFTER.match(text, m.end())
    if after is None:
        return []
    tail = _spaced_thousands(text[after.end() : after.end() + _MAX_VALUE])
    line = tail.split("\n", 1)[0]
    value = _answer_value(line)
    hedged = False
    if value is not None:
        value, hedged = _number_read(line, value)
    if hedged:
        return [_Declared(m.start(), after.end(), "answer_is", None, True)]  # "18 or 19"
    if value is not None and not _opens_working(tail) and _BARE_VALUE.match(_clean_latex(line)):
        return [_Declared(m.start(), after.end(), "answer_is", canonical_number(value))]
    return []


_A_PREFIX_RE = re.compile(r"(?:^|\n)\s*(?:\*\*)?A\s*(?:\*\*)?\s*:\s*(?:\*\*)?", re.MULTILINE)
_BRACKET_RE = re.compile(r"\[\s*" + NUMBER_PATTERN + r"\s*\]")


def _number_declared(text: str) -> Extraction | None:
    got = _resolve(text, _number_declarations(text))
    if got is None or isinstance(got, Extraction):
        return got
    return Extraction(got.value, got.method) if got.value is not None else _NONE


# "A: 12 apples\nB: 15 apples": a line "A:" followed by a line "B:" labels item A of a list
_B_LINE_RE = re.compile(r"[^\n]*\n(?:[ \t]*\n)*[ \t]*(?:\*\*)?B[ \t]*(?:\*\*[ \t]*)?:")


def _number_strict(text: str) -> Extraction:
    return _number_declared(_readable(text)) or _NONE


def _number_flexible(text: str) -> Extraction:
    text = _readable(text)
    declared = _number_declared(text)
    if declared is not None:
        return declared  # a declared answer: nothing else in the reply is read
    if reply_declines(text):
        return _NONE  # "... so it cannot be determined": no answer, whatever numbers it mentions
    for m in reversed(list(_A_PREFIX_RE.finditer(text))):
        tail = text[m.end() : m.end() + _MAX_VALUE]
        if _B_LINE_RE.match(tail) or _opens_working(tail):
            continue  # "A: 12 apples\nB: 15 apples"; "A: 9 eggs are left ... she makes $18"
        value = _answer_value(tail)
        if value is not None:
            return Extraction(canonical_number(value), "answer_prefix")
    cleaned = _clean_latex(text)
    brackets = list(_BRACKET_RE.finditer(cleaned))
    if brackets and NUMBER_RE.search(cleaned, brackets[-1].end()) is None:
        value = number_from_match(brackets[-1])
        if value is not None:
            return Extraction(canonical_number(value), "bracket")
    concluded = concluding_number(text)
    if concluded is not None and concluded[0] is not None:
        value = _equal_form_of(cleaned, concluded[0])
        return Extraction(canonical_number(value), "conclusion" if concluded[1] else "last_number")
    return _NONE


def _equal_form_of(cleaned: str, value: Fraction) -> Fraction:
    """The percentage's number when ``value`` is one of two equal forms joined by "or" in the
    reply ("The probability is 50% or 1/2." → 50, as for a declared answer); else ``value``."""
    numbers = list(NUMBER_RE.finditer(cleaned))
    for first, second in zip(reversed(numbers[:-1]), reversed(numbers[1:])):
        a, b = number_from_match(first), number_from_match(second)
        if a is None or b is None or value not in (a, b):
            continue
        joined = _OR_NUMBER.match(cleaned, first.end())
        if joined is None or joined.end() > second.start() + 1:
            continue
        same = equal_forms(a, is_percent(cleaned, first.end()), b, is_percent(cleaned, second.end()))
        if same is not None:
            return same
    return value


# --- MMLU ------------------------------------------------------------------------------------
