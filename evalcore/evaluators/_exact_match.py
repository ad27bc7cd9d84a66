"""Exact-match scoring for GSM8K (numbers) and MMLU (letters A–D).

Every extraction returns the value found *and* the method that found it, so a response the
extractor could not parse (``value is None``, method ``"none"`` or ``"hedged"``) is told apart
from a parsed but wrong answer. The rules, as ordered, named steps (:data:`METHODS`):

1. **Declared answers**, the strongest pattern in *both* modes: a JSON field ``answer`` /
   ``final_answer`` (also inside a fenced block), a YAML ``answer:`` in a fenced block or a
   ``final_answer:`` line, GSM8K ``#### 72``, ``\\boxed{...}``, and "answer" as a word of its own
   followed by the answer ("The answer is (C)", "**Final Answer:** 18"). When a reply declares its
   answer nothing else in it is read. Fields outrank prose; the last declaration wins (a final
   statement beats earlier ones, "... wait, the answer is 8"); a declaration naming two answers
   ("B or C", ``"answer": "B, C"``) or two different declarations with no correction between them
   are a hedge (method ``"hedged"``, a parse failure); a declared answer without a number or letter
   ("Cannot be determined") is a parse failure.
2. **strict** reads nothing else for GSM8K; for MMLU also a lone letter, a letter opening the
   reply, or a single parenthesised option letter.
3. **flexible** falls back to looser shapes. GSM8K: "A: 72", "[72]", the last number. MMLU: an
   option's text matched back to its letter, the letter stated as the conclusion when mentions
   disagree, else the first letter that can be an answer.

MMLU letters inside math or code (``$A$``), notation ("P(A)", "vitamin C"), labels of quantities
("magnetic field strength (B)") and negated mentions ("not (C)", "rather than B", "A is wrong")
never count. GSM8K answers are compared numerically (``72 == 72.0 == "72.00" == "$72" ==
"1,248"``-style normalisation, "$25,000/year" is 25000), never as strings.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Literal, Sequence

from evalcore.datasets import (  # the reference and number names are re-exported below
    LETTERS,
    NUMBER_PATTERN,
    NUMBER_RE,
    canonical_number,
    gsm8k_reference,
    mmlu_reference,
    number_from_match,
    numbers_equal,
    parse_number,
)
from evalcore.errors import EvalcoreError

__all__ = [
    "DECLARED_METHODS",
    "EXTRACTION_METHODS",
    "Extraction",
    "ExactMatchEvaluator",
    "parse_number",
    "canonical_number",
    "gsm8k_reference",
    "mmlu_reference",
    "numbers_equal",
    "extraction_method_counts",
    "summarize_exact_match",
]

DatasetType = Literal["gsm8k", "mmlu"]
Mode = Literal["strict", "flexible"]
_MODES = ("strict", "flexible")

# ---------------------------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    """What an extractor found.

    Attributes:
        value: The canonical answer (``"72"``; ``"C"``), or ``None`` for a parse failure.
        method: How it was found; see :data:`METHODS` for every name in order of precedence.
            Declared answers (both modes): ``"json_field"``, ``"yaml_field"``, ``"hash"``
            (GSM8K ``#### 72``), ``"boxed"``, ``"answer_is"``. MMLU strict also reads
            ``"lone_letter"``, ``"letter_start"`` and ``"paren_letter"``. Flexible only — GSM8K:
            ``"answer_prefix"``, ``"bracket"``, ``"last_number"``; MMLU: ``"option_text"``,
            ``"conclusion"``, ``"first_letter"``. Parse failures: ``"none"`` (nothing readable,
            also a declared answer without a number or letter) and ``"hedged"`` (two different
            answers declared: "B or C", ``"answer": "B, C"``, ``#### 10`` then ``#### 12``).
    """

    value: str | None
    method: str

    @property
    def failed(self) -> bool:
        """Whether nothing could be extracted."""
        return self.value is None


_NONE = Extraction(None, "none")
_HEDGED = Extraction(None, "hedged")

#: Every extraction method, in order of precedence (declared answers first, failures last).
METHODS: tuple[str, ...] = (
    "json_field", "yaml_field", "hash", "boxed", "answer_is",
    "lone_letter", "letter_start", "paren_letter",
    "answer_prefix", "bracket", "option_text", "conclusion", "first_letter", "last_number",
    "hedged", "none",
)
EXTRACTION_METHODS = METHODS
#: Methods that read an answer the reply declared (strongest, both modes).
DECLARED_METHODS: frozenset[str] = frozenset({"json_field", "yaml_field", "hash", "boxed", "answer_is"})
_FIELD_METHODS = ("json_field", "yaml_field")


# --- shared helpers --------------------------------------------------------------------------

_LATEX_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


def _clean_latex(text: str) -> str:
    text = _LATEX_FRAC_RE.sub(lambda m: f"{m.group(1)}/{m.group(2)}", text)
    text = re.sub(r"\\text\{[^{}]*\}|\\mathrm\{[^{}]*\}", " ", text)
    text = text.replace("\\$", "$").replace("\\!", "").replace("\\,", ",").replace("{,}", ",")
    return text


def _first_number(text: str) -> Fraction | None:
    m = NUMBER_RE.search(_clean_latex(text))
    return number_from_match(m) if m else None


def _last_number(text: str) -> Fraction | None:
    last = None
    for m in NUMBER_RE.finditer(_clean_latex(text)):
        value = number_from_match(m)
        if value is not None:
            last = value
    return last


_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
# how far past a marker a declared value is read (keeps extraction linear in the reply's length)
_MAX_VALUE = 400


def _boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, contents)`` of every ``\\boxed{...}`` (nested braces balanced)."""
    out = []
    for m in _BOXED_RE.finditer(text):
        depth, i = 1, m.end()
        stop = min(len(text), m.end() + _MAX_VALUE)  # a box holds an answer, not a page
        while i < stop and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth == 0:
            out.append((m.start(), i, text[m.end() : i - 1]))
    return out


def _line_start(text: str, pos: int, window: int = 200) -> int:
    """Where the line holding ``pos`` starts, looking back at most ``window`` characters (on a
    longer line, a position inside it: nothing there counts as the start of the line)."""
    low = max(0, pos - window)
    newline = text.rfind("\n", low, pos)
    return newline + 1 if newline >= 0 else low


_FENCE_RE = re.compile(r"^[ \t]*(?P<f>```|~~~)[^\n]*\n(?P<body>.*?)(?:^[ \t]*(?P=f)[ \t]*$|\Z)", re.M | re.S)


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the bodies of fenced code blocks (an unclosed fence runs to the end)."""
    return [(m.start("body"), m.end("body")) for m in _FENCE_RE.finditer(text)]


@dataclass(frozen=True)
class _Declared:
    """One answer the reply declared: where, how, and what it says."""

    start: int
    end: int
    method: str
    value: str | None  # canonical value; None when the declaration holds no readable answer
    hedged: bool = False  # it names two different answers itself ("B or C")
    raw: str = ""  # the declared text (MMLU: matched against the option texts)


# A field named answer / final_answer (also correct_answer, answer_letter...): JSON keys are
# quoted, YAML keys are not (and count as fields only inside a fenced block or as final_answer).
_FIELD_NAME = r"(?:final[_ ]?answer|correct[_ ]answer|answer)(?:[_ ](?:letter|choice|option|value|number))?"
_JSON_KEY_RE = re.compile(r"(?P<q>[\"'])" + _FIELD_NAME + r"(?P=q)\s*:\s*", re.IGNORECASE)
_YAML_KEY_RE = re.compile(
    r"^[ \t]*(?:-[ \t]+)?(?P<key>" + _FIELD_NAME + r")[ \t]*:[ \t]*(?P<val>[^\n]*)$", re.IGNORECASE | re.MULTILINE
)
_JSON_DECODER = json.JSONDecoder(strict=False)
_SINGLE_QUOTED = re.compile(r"'((?:[^'\\\n]|\\.)*)'")
_BARE_VALUE = re.compile(r"[^,}\n]*")


def _json_value(text: str, pos: int) -> tuple[Any, int]:
    """The value that starts at ``pos``: JSON when it parses, else a quoted or bare token."""
    try:
        return _JSON_DECODER.raw_decode(text, pos)
    except ValueError:
        pass
    m = _SINGLE_QUOTED.match(text, pos)
    if m:
        return m.group(1), m.end()
    m = _BARE_VALUE.match(text, pos)
    assert m is not None
    return m.group(0).strip(), m.end()


# reads a declared value's text: (canonical value or None, whether it names two answers)
_ValueParser = Callable[[str], "tuple[str | None, bool]"]


def _field_value(value: Any, parse: _ValueParser, number_ok: bool) -> tuple[str | None, bool, str]:
    """Read a field's (JSON-decoded) value: ``(canonical value, hedged, raw text)``."""
    if isinstance(value, bool) or value is None:
        return None, False, ""
    if isinstance(value, (int, float)):
        if not number_ok or (isinstance(value, float) and not math.isfinite(value)):
            return None, False, str(value)
        exact = Fraction(value).limit_denominator(10**12) if isinstance(value, float) else Fraction(value)
        return canonical_number(exact), False, str(value)
    if isinstance(value, dict):
        for key in ("value", "answer", "final_answer", "number", "letter", "choice", "option"):
            if key in value:
                return _field_value(value[key], parse, number_ok)
        return None, False, json.dumps(value)
    if isinstance(value, list):
        found = [_field_value(v, parse, number_ok) for v in value]
        values = {v for v, _h, _r in found if v is not None}
        if len(values) > 1 or any(h for _v, h, _r in found):
            return None, True, json.dumps(value)
        return (values.pop() if values else None), False, " ".join(r for _v, _h, r in found)
    text = str(value)
    got, hedged = parse(text)
    return got, hedged, text


def _field_declarations(text: str, parse: _ValueParser, number_ok: bool) -> list[_Declared]:
    """JSON fields ``"answer": ...`` anywhere, YAML ``answer: ...`` in a fenced block."""
    out = []
    for m in _JSON_KEY_RE.finditer(text):
        value, end = _json_value(text, m.end())
        got, hedged, raw = _field_value(value, parse, number_ok)
        out.append(_Declared(m.start(), end, "json_field", got, hedged, raw))
    fences = _fenced_spans(text)
    for m in _YAML_KEY_RE.finditer(text):
        in_fence = any(a <= m.start() < b for a, b in fences)
        if not in_fence and "_" not in m.group("key"):
            continue  # "Answer: C" in prose is a label (answer_is), not a field
        raw, end = m.group("val").strip(), m.end()
        if raw in ("", "|", ">", "|-", ">-"):  # a block scalar: the indented lines below
            block = re.match(r"(?:\n[ \t]+[^\n]*)+", text[m.end() :])
            raw, end = ((block.group(0).strip(), m.end() + block.end()) if block else ("", end))
        raw = raw.strip().strip("\"'").strip()
        got, hedged = parse(raw)
        out.append(_Declared(m.start(), end, "yaml_field", got, hedged, raw))
    return sorted(out, key=lambda d: d.start)


# Between two different declared answers, one of these words makes the later one a
# correction ("... wait, the answer is 8"); without any, the reply offers both: a hedge.
_CORRECTION_CUE = re.compile(
    r"\b(?:wait|actually|correct(?:ion|ed|ing)|mistake|error|oops|hmm+|re-?check\w*|re-?calculat\w*"
    r"|re-?evaluat\w*|re-?examin\w*|re-?consider\w*|re-?visit\w*|second\s+thought|double[- ]check\w*"
    r"|verif\w*|let\s+me|let's|but|however|instead|final(?:ly)?|therefore|thus|hence|so|conclu\w*"
    r"|summar\w*|overall|revis\w*|updat\w*|no(?=[,.!]))\b",
    re.IGNORECASE,
)


def _resolve(text: str, declared: list[_Declared]) -> _Declared | Extraction | None:
    """The declaration that answers, a hedge, or ``None`` when nothing was declared.

    Fields (JSON/YAML) outrank prose; among the rest a declaration nested in another
    ("#### The answer is 64") belongs to the outer one; the last declaration wins (a final
    statement beats earlier ones) unless it names two answers itself, or differs from the
    declaration before it with no correction cue between them: then the reply hedges.
    """
    fields = [d for d in declared if d.method in _FIELD_METHODS]
    tier: list[_Declared] = []
    for d in sorted(fields or declared, key=lambda d: (d.start, -d.end)):
        if tier and d.start < tier[-1].end:
            continue
        tier.append(d)
    if not tier:
        return None
    last = tier[-1]
    if last.hedged:
        return _HEDGED
    if len(tier) > 1:
        prev = tier[-2]
        if (prev.hedged or prev.value != last.value) and not _CORRECTION_CUE.search(text, prev.end, last.end):
            return _HEDGED
    return last


# --- GSM8K -----------------------------------------------------------------------------------

_HASH_RE = re.compile(r"####[ \t]*(?:\*\*)?[ \t]*(?P<body>[^\n]*)")
# "#### 1 000": after the marker a single number is expected, so space-separated groups of
# three digits are one number there (elsewhere "2 100" may well be two numbers).
_SPACED_THOUSANDS = re.compile(r"^(\s*(?:\*\*|\$|\\\(|\s)*[-−–]?[$€£¥]?\s?)(\d{1,3}(?: \d{3})+(?:\.\d+)?)(?!\d|[,.]\d| \d)")
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
    r"(?:(?:definitely|clearly|therefore|thus|then|indeed|exactly|simply|just|now)\s+)?"
    r"(?:\*\*|__|\$\$?|\\\(|\\\[|\s|either\s)*",
    re.IGNORECASE,
)
_FINAL_LABEL = re.compile(r"^[ \t]*(?:[#>*_-][ \t#*_]*)?$", re.MULTILINE)
_LIST_MARKER = re.compile(r"\s*\n\s*(?:\*\*)?\d+[.)]\s+(?:\*\*)?[A-Za-z]")
_OR_NUMBER = re.compile(r"[^\n.;]{0,20}?\bor\b\s*(?:\*\*|\$|\s|about|approximately|maybe|perhaps)*(?=[-−–$€£¥\d.])")


def _gsm8k_hedged(text: str, value: Fraction) -> bool:
    """Whether the number opening ``text`` is followed by "or <another number>"."""
    cleaned = _clean_latex(text)
    first = NUMBER_RE.search(cleaned)
    if first is None:
        return False
    m = _OR_NUMBER.match(cleaned, first.end())
    if m is None:
        return False
    other = NUMBER_RE.match(cleaned, m.end())
    other_value = number_from_match(other) if other else None
    if other_value is None or other_value == value:
        return False
    # "45 minutes, or 0.75 hours": the same quantity in another unit, not a second answer
    unit1, unit2 = _UNIT.match(cleaned, first.end()), _UNIT.match(cleaned, other.end())  # type: ignore[union-attr]
    return not (unit1 and unit2 and unit1.group(1).lower().rstrip("s") != unit2.group(1).lower().rstrip("s"))


_UNIT = re.compile(r"\s*([A-Za-z%]+)")
# what may stand before the "=" of a declared calculation ("48 / 2 = 24", "3 apples + 5 apples = 8")
_NOT_A_CALCULATION = re.compile(r",\s|;|\b(?:and|but|is|are|was|which|so|then|because|if|not|that)\b", re.IGNORECASE)


def _calc_or_first(text: str) -> Fraction | None:
    """A declared value: the result of a calculation ("5 * 12 = 60" → 60), else its first number."""
    cleaned = _clean_latex(text)
    if "=" in cleaned:
        result = _first_number(cleaned.rsplit("=", 1)[1])
        if result is not None:
            return result
    return _first_number(cleaned)


def _gsm8k_value(text: str) -> tuple[str | None, bool]:
    """Read a strongly declared value (a field, ``####``, ``\\boxed``, "Final answer:" line)."""
    value = _calc_or_first(text)
    if value is None:
        return None, False
    if _gsm8k_hedged(text, value):
        return None, True
    return canonical_number(value), False


def _answer_value(tail: str) -> Fraction | None:
    """The number an answer phrase announces: the one that opens ``tail``, or, when the
    announced sentence is a calculation ("5 + 3 = 8."), the result after its last ``=``."""
    sentence = re.split(r"\n|\.(?=\s|$)", _clean_latex(tail), maxsplit=1)[0]
    if "=" in sentence and _first_number_at_start(sentence) is not None and not _NOT_A_CALCULATION.search(
        sentence.split("=", 1)[0]
    ):
        result = _last_number(sentence.rsplit("=", 1)[1])
        if result is not None:
            return result
    return _first_number_at_start(tail)


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


def _gsm8k_declarations(text: str) -> list[_Declared]:
    declared = _field_declarations(text, _gsm8k_value, number_ok=True)
    for m in _HASH_RE.finditer(text):
        body = _SPACED_THOUSANDS.sub(lambda s: s.group(1) + s.group(2).replace(" ", ""), m.group("body"))
        first = _first_number_at_start(body)
        if first is not None:
            hedged = _gsm8k_hedged(body, first)
            value = None if hedged else canonical_number(first)
        else:
            inner = _gsm8k_answer_words(body)
            if not inner:
                continue  # a markdown heading ("#### Step 1: ..."), not an answer
            value, hedged = inner[-1].value, inner[-1].hedged
        declared.append(_Declared(m.start(), m.end(), "hash", value, hedged))
    for start, end, contents in _boxed_spans(text):
        value, hedged = _gsm8k_value(contents)
        declared.append(_Declared(start, end, "boxed", value, hedged, contents))
    declared.extend(_gsm8k_answer_words(text))
    return declared


def _gsm8k_answer_words(text: str) -> list[_Declared]:
    """ "The answer is 72", "Answer: 72", "**Final Answer:** 72" ("answer" followed by a number).

    A line that starts with a "Final answer:" label is declared even without a number (a
    parse failure then); a list marker after "the answer:" is never the answer.
    """
    out = []
    for m in _ANSWER_WORD.finditer(text):
        line_start = _line_start(text, m.start())
        if m.start() != line_start and not _ANSWER_BEFORE_OK.search(text, max(line_start, m.start() - 60), m.start()):
            continue  # "he could answer: 40 + 30 = 70" — a verb, not the answer
        after = _ANSWER_AFTER.match(text, m.end())
        if after is None:
            continue
        tail = text[after.end() : after.end() + _MAX_VALUE]
        if _LIST_MARKER.match(text, m.end() + len(after.group(0).rstrip())):
            continue  # "the answer:\n\n1. First ..."
        value = _answer_value(tail)
        label = m.group("final") and _FINAL_LABEL.match(text, line_start, m.start()) and ":" in after.group(0)
        if value is None:
            if label:  # "**Final Answer:** Cannot be determined"
                line = tail.lstrip(" \t").split("\n", 1)[0] or tail.lstrip().split("\n", 1)[0]
                got, hedged = _gsm8k_value(line)
                out.append(_Declared(m.start(), after.end(), "answer_is", got, hedged, line))
            continue
        hedged = _gsm8k_hedged(tail, value)
        out.append(_Declared(m.start(), after.end(), "answer_is", None if hedged else canonical_number(value), hedged))
    return out


_A_PREFIX_RE = re.compile(r"(?:^|\n)\s*(?:\*\*)?A\s*(?:\*\*)?\s*:\s*(?:\*\*)?", re.MULTILINE)
_BRACKET_RE = re.compile(r"\[\s*" + NUMBER_PATTERN + r"\s*\]")


def _gsm8k_declared(text: str) -> Extraction | None:
    got = _resolve(text, _gsm8k_declarations(text))
    if got is None or isinstance(got, Extraction):
        return got
    return Extraction(got.value, got.method) if got.value is not None else _NONE


def _gsm8k_strict(text: str) -> Extraction:
    return _gsm8k_declared(text) or _NONE


def _gsm8k_flexible(text: str) -> Extraction:
    declared = _gsm8k_declared(text)
    if declared is not None:
        return declared  # a declared answer: nothing else in the reply is read
    for m in reversed(list(_A_PREFIX_RE.finditer(text))):
        value = _answer_value(text[m.end() :])
        if value is not None:
            return Extraction(canonical_number(value), "answer_prefix")
    cleaned = _clean_latex(text)
    brackets = list(_BRACKET_RE.finditer(cleaned))
    if brackets and NUMBER_RE.search(cleaned, brackets[-1].end()) is None:
        value = number_from_match(brackets[-1])
        if value is not None:
            return Extraction(canonical_number(value), "bracket")
    value = _last_number(text)
    if value is not None:
        return Extraction(canonical_number(value), "last_number")
    return _NONE


# --- MMLU ------------------------------------------------------------------------------------

_LETTER_END = r"(?![A-Za-z0-9+#'’-])"
# an answer letter: upper case standing alone, or lower case only where it cannot be a word
# ("answer: c", "answer is (c)"), so "the answer is a prime number" is not "A"
_LETTER = (
    r"(?P<letter>(?-i:[A-D])" + _LETTER_END + r"|(?-i:[a-d])(?=\s*(?:$|[.,;:)\]\n*])))"
)
_MARKUP = r"(?:\*\*|__|\$|\\\(|\\text(?:bf)?\{|\\mathbf\{|\s)*"
_MMLU_ANSWER_IS = [
    re.compile(
        # "answer" with any separator; "option"/"choice" only qualified ("correct choice: B") or
        # with a verb ("the option is B"), so "each option:\nA) ..." is no declaration
        r"(?<![\w-])(?:(?:correct\s+|final\s+|best\s+|right\s+)?answers?"
        r"|(?:correct|final|best|right|my)\s+(?:option|choice)|(?:option|choice)(?=\s*(?:\*\*)?\s*[a-z]))"
        r"\s*(?:\*\*)?\s*"
        r"(?:is|are|would\s+be|will\s+be|should\s+be|must\s+be|has\s+to\s+be|=|:|-)\s*"
        r"(?:[:=]\s*)?(?:(?:definitely|clearly|therefore|thus|then|indeed|probably|likely|most\s+likely|simply)\s+)?"
        r"(?:either\s+|both\s+)?(?:option\s+|choice\s+|letter\s+)?" + _MARKUP + r"[\(\[]?\s*" + _LETTER,
        re.IGNORECASE,
    ),
    re.compile(r"(?<![\w-])(?:answer\s*(?:is\s*)?|(?:option|choice)\s+is\s*)[\(\[]\s*(?P<letter>[a-dA-D])\s*[\)\]]", re.IGNORECASE),
    re.compile(r"(?:^|\n)\s*(?:\*\*)?answer(?:\*\*)?\s*[:=]?\s*(?:\*\*)?\s*[\(\[]?" + _LETTER, re.IGNORECASE),
]
# a strongly declared value: the letter opening it ("C", "(C) higher accuracy", "Option C")
_VALUE_LETTER = re.compile(
    r"^[\s*_`\"'$]*(?:\\(?:text|textbf|mathbf|mathrm)\{)?\s*(?:(?:option|choice|letter|answer)\s*[:#]?\s*)?"
    r"[\(\[]?\s*(?:\*\*)?(?P<letter>(?-i:[A-D])" + _LETTER_END + r"|(?-i:[a-d])(?=\s*(?:$|[.,;:)\]}*])))",
    re.IGNORECASE,
)
_FINAL_LABEL_MMLU = re.compile(r"(?:^|\n)[ \t]*(?:[#>*_-][ \t#*_]*)?final\s+answer(?:\*\*)?\s*:[ \t]*(?:\*\*)?[ \t]*(?P<val>[^\n]*)", re.IGNORECASE)
# words after which a leading "A" is a letter, not the English article ("A is correct")
_A_NOT_ARTICLE = re.compile(
    r"\s(?:is|was|seems|would|should|could|must|looks|appears|fits|matches|and|or|because|since|it)\b"
)
# "B or C", "B/C", "B and C", "B, C": a second letter offered right after the first is a hedge.
_HEDGE_AFTER = re.compile(
    r"\s*[\)\]]?\s*(?:\*\*)?\s*(?:/|&|,|\bor\b|\band\b)\s*(?:option\s+|choice\s+)?(?:\*\*)?[\(\[]?\s*"
    r"(?P<other>(?-i:[A-D]))(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# "(C) higher accuracy and (B) faster response": another answer-shaped letter later in the
# same sentence, after "and"/"or", before any word that turns it into reasoning ("because")
_HEDGE_STOP = re.compile(
    r"\b(?:because|since|as|not|unlike|rather|while|whereas|but|than|instead|which|that|eliminat\w*"
    r"|incorrect|wrong|false|except|over|vs|versus)\b|[.;:!?\n]",
    re.IGNORECASE,
)
_HEDGE_LATER = re.compile(
    r"(?:\band\b|\bor\b|/|&|,)\s*(?:\*\*|__)?\s*(?:option\s+|choice\s+)?(?:\*\*)?"
    r"(?:\((?P<o1>[A-D])\)|(?<=\*\*)(?P<o2>[A-D])(?![A-Za-z0-9])|(?<=option )(?P<o3>[A-D])(?![A-Za-z0-9]))",
    re.IGNORECASE,
)


def _mmlu_hedged(text: str, end: int, letter: str) -> bool:
    """Whether the letter ending at ``end`` is offered together with another one."""
    m = _HEDGE_AFTER.match(text, end)
    if m is not None and m.group("other") != letter.upper() and not _NEGATED_AFTER.match(text[m.end() : m.end() + 80]):
        return True  # "B or C" (but not "B and C is wrong")
    stop = _HEDGE_STOP.search(text, end, end + _MAX_VALUE)
    later = text[end : stop.start() if stop else end + _MAX_VALUE]
    for h in _HEDGE_LATER.finditer(later):
        other = h.group("o1") or h.group("o2") or h.group("o3")
        if other and other.upper() != letter.upper():
            return True
    return False


def _mmlu_value(text: str) -> tuple[str | None, bool]:
    """Read a strongly declared value (a field, ``\\boxed``, "Final answer:" line) as a letter."""
    m = _VALUE_LETTER.match(text)
    if m is None:
        inner = _mmlu_answer_is(text)
        if inner:
            return inner[-1].value, inner[-1].hedged
        return None, False
    letter = m.group("letter")
    if letter == "A" and re.match(r"\s[a-z]", text[m.end() : m.end() + 3]) and not _A_NOT_ARTICLE.match(text[m.end() :]):
        return None, False  # "A cell membrane": the article
    if _mmlu_hedged(text, m.end(), letter):
        return None, True
    return letter.upper(), False


# "A) ...\nB) ...": a letter opening a list of options is not a declared answer
_OPTION_LIST = re.compile(r"[A-D][.)][ \t]+[^\n]*\n[ \t]*(?:[-*][ \t]*)?(?:\*\*)?\(?[A-D][.):]")


def _mmlu_answer_is(text: str) -> list[_Declared]:
    out = []
    for pattern in _MMLU_ANSWER_IS:
        for m in pattern.finditer(text):
            letter = m.group("letter")
            if _OPTION_LIST.match(text, m.start("letter")):
                continue  # "Let me check each answer:\nA) ...\nB) ..."
            hedged = _mmlu_hedged(text, m.end("letter"), letter)
            out.append(_Declared(m.start(), m.end("letter"), "answer_is", None if hedged else letter.upper(), hedged))
    return out


def _mmlu_declarations(text: str) -> list[_Declared]:
    declared = _field_declarations(text, _mmlu_value, number_ok=False)
    for start, end, contents in _boxed_spans(text):
        value, hedged = _mmlu_value(contents.strip())
        declared.append(_Declared(start, end, "boxed", value, hedged, contents))
    prose = _mmlu_answer_is(text)
    for m in _FINAL_LABEL_MMLU.finditer(text):
        if not any(p.start >= m.start() and p.start < m.end() for p in prose):
            value, hedged = _mmlu_value(m.group("val"))  # "Final answer: cannot be determined"
            declared.append(_Declared(m.start(), m.end(), "answer_is", value, hedged, m.group("val")))
    declared.extend(prose)
    return declared


# --- MMLU letters outside declarations -------------------------------------------------------

_LONE_RE = re.compile(r"^[\s*_`\"'(\[]*(?P<letter>[A-Da-d])[\s*_`\"')\].:]*$")
_START_RE = re.compile(r"^[\s*_`\"']*(?:\((?P<p>[A-Da-d])\)|(?P<letter>[A-D])\s*[.):](?!\d))")
_MENTION_RE = re.compile(
    r"(?<![A-Za-z0-9'’_\\-])(?:(?P<letter>[A-D])" + _LETTER_END + r"|\((?P<lower>[a-d])\)|(?P<lower2>[a-d])\))"
)
# math and code: letters there are notation ("Since $A$ and $B$ are similar")
_MATH_RE = re.compile(
    r"\$\$.*?\$\$|\$(?=[^\s\d])[^$\n]{1,200}?(?<=\S)\$(?!\d)|\\\(.*?\\\)|\\\[.*?\\\]|`[^`\n]+`|```.*?(?:```|\Z)",
    re.S,
)
_OPERATOR = "=<>^_∩∪×·→←↔⇒≠≤≥∈∉⊂⊆+÷√∑∏'′"
_NOTATION_BEFORE = re.compile(r"[A-Za-z0-9]\Z|[" + re.escape(_OPERATOR) + r"][ \t]*\Z|(?<!\*)\*[ \t]*\Z")
_NOTATION_AFTER = re.compile(r"\s*[" + re.escape(_OPERATOR) + r"]|\s*\*(?!\*)")
_PREV_WORD = re.compile(r"([A-Za-z][A-Za-z'’.:-]*)[ \t]*\Z")
# what may stand before a parenthesised answer letter; after any other word "(B)" labels a
# quantity ("magnetic field strength (B)", "resistors (R) and capacitors (C)")
_PAREN_OK_BEFORE = frozenset(
    "option options choice choices answer answers letter is are be was pick picks choose chose select "
    "selected with and or between both either neither namely therefore thus so hence correct final "
    "best right to go going i'd i'll would is: e.g i.e".split()
)
# nouns after which a bare capital letter is a name, not an answer ("vitamin C", "matrix A")
_NOTATION_NOUNS = frozenset(
    "vitamin vitamins hepatitis matrix matrices set sets point points vertex vertices node nodes gene genes "
    "type types class grade plan part parts group groups person company firm country countries player "
    "players city species population allele alleles strain site region line lines angle triangle segment "
    "vector event events variable factor compound substance element object particle charge block box ball "
    "car train team project patient subject sample samples population firm nation state states island "
    "planet star galaxy tube cell cells region zone phase stage step scenario case cases figure table "
    "appendix chapter section exhibit column row protein enzyme receptor drug treatment product brand "
    "model models store shop market manager employee worker student students candidate party parties".split()
)
_NEGATED_BEFORE = re.compile(
    r"\b(?:not|n't|never|rather\s+than|instead\s+of|unlike|except|other\s+than|than|eliminat\w*|rule\s+out"
    r"|ruled\s+out|rules\s+out|exclud\w*|reject\w*|nor|neither|against|discard\w*)"
    r"[\s,]*(?:\*\*|__)?\s*(?:the\s+)?(?:option\s+|choice\s+|answer\s+|letter\s+)?(?:\*\*)?[\(\[]?\Z",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"^[\)\]]?(?:\*\*)?[^.;\n]{0,40}?\b(?:is|are|was|seems|appears|looks|can\s+be|must\s+be)\s+(?:also\s+|clearly\s+|therefore\s+)?"
    r"(?:not\b|incorrect|wrong|false|invalid|irrelevant|unlikely|eliminated|ruled\s+out|a\s+distractor|out\b)"
    r"|^[\)\]]?(?:\*\*)?\s*(?:isn't|doesn't|does\s+not|cannot|can't|fails|is\s+a\s+trap)\b",
    re.IGNORECASE,
)
_CONCLUSION_AFTER = re.compile(
    r"^[\)\]]?(?:\*\*)?[^.;\n]{0,25}?\b(?:is|seems|appears|looks|must\s+be|would\s+be)\s+(?:to\s+be\s+)?(?:the\s+)?"
    r"(?:most\s+|only\s+|best\s+|single\s+)?(?:correct|right|best|true|accurate|appropriate|likely|answer|valid|plausible)",
    re.IGNORECASE,
)
_CONCLUSION_BEFORE = re.compile(
    r"\b(?:(?:so|therefore|thus|hence)(?:[\s,]+(?:it'?s|it\s+is|(?:it|this|that)\s+(?:must|has\s+to|should|would|is\s+to)\s+be))?"
    r"|choose|pick|select|go\s+with|going\s+with|conclude|conclusion|leaves|leaving"
    r"|(?:wait|actually|no)[^.;\n]{0,30}?\b(?:it'?s|it\s+is|it\s+must\s+be))"
    r"[\s,:]*(?:is\s+)?(?:the\s+)?(?:option\s+|choice\s+|answer\s+)?(?:\*\*)?[\(\[]?\Z",
    re.IGNORECASE,
)
# a verdict in a table row: "| C | correct |", "| A | ✗ |"
_TABLE_YES = re.compile(r"^[\)\]]?(?:\*\*)?\s*\|[^|\n]*\|?\s*(?:\*\*)?\s*(?:✓|✔|✅|correct|right|true|yes)(?!\w)", re.IGNORECASE)
_TABLE_NO = re.compile(r"^[\)\]]?(?:\*\*)?\s*\|[^|\n]*\|?\s*(?:\*\*)?\s*(?:✗|✘|❌|incorrect|wrong|false|no)(?!\w)", re.IGNORECASE)


# the verdict on a line that opens with an option ("B) Ribosome - correct", "A. ... ✗")
_VERDICT_NO = re.compile(
    r"\b(?:incorrect|wrong|false|not\s+(?:correct|right|true|the\s+answer)|eliminated?|ruled\s+out|irrelevant)\b|[✗✘❌]",
    re.IGNORECASE,
)
_VERDICT_YES = re.compile(r"\b(?:correct|right|true|best\s+answer|the\s+answer)\b|[✓✔✅]", re.IGNORECASE)


def _line_verdict(text: str, start: int, end: int) -> bool | None:
    """For a letter opening its line (a list of options): ``False`` when the rest of the line
    rejects it, ``True`` when it accepts it, ``None`` otherwise (or when not opening a line)."""
    line_start = _line_start(text, start)
    if text[line_start:start].strip(" \t*-#>|_") or text[end : end + 1] not in (")", ".", ":", " ", "-", "—", "*"):
        return None
    line_end = text.find("\n", end, end + _MAX_VALUE)
    rest = text[end : line_end if line_end >= 0 else end + _MAX_VALUE]
    if _VERDICT_NO.search(rest):
        return False
    return True if _VERDICT_YES.search(rest) else None


_MAX_MENTIONS = 300


def _mask(text: str) -> str:
    """``text`` with math and code replaced by spaces (positions kept)."""
    return _MATH_RE.sub(lambda m: " " * len(m.group(0)), text)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int  # after the letter (and its closing parenthesis when there is one)
    letter: str
    paren: bool


def _letter_mentions(text: str, choices: Sequence[str] | None) -> list[_Mention]:
    """Letters A–D that can be an answer: not in math or code, not the article "A", not
    notation ("P(A)", "A = 5", "vitamin C"), not the label of a quantity ("strength (B)")
    and not negated ("not (C)", "rather than B", "A is wrong")."""
    masked = _mask(text)
    out = []
    found = list(_MENTION_RE.finditer(masked))
    if len(found) > 2 * _MAX_MENTIONS:  # a page of letters: its first and last mentions decide
        found = found[:_MAX_MENTIONS] + found[-_MAX_MENTIONS:]
    for m in found:
        letter = m.group("letter") or (m.group("lower") or m.group("lower2")).upper()
        s, e = m.start(), m.end()
        paren = m.group("lower") is not None or (s > 0 and masked[s - 1] == "(" and masked[e : e + 1] == ")")
        if m.group("letter") is not None and paren:
            s, e = s - 1, e + 1
        before, after = masked[max(0, s - 60) : s], masked[e : e + 80]
        if m.group("letter") == "A" and not paren and after[:1].isspace() and after[1:2].islower() and not _A_NOT_ARTICLE.match(after):
            continue  # the English article ("A cell is ...")
        if _NOTATION_BEFORE.search(before) or _NOTATION_AFTER.match(after):
            continue  # notation: "P(A)", "A = 5", "x + B"
        word = _PREV_WORD.search(before)
        prev = word.group(1).lower() if word else ""
        if paren and prev and prev not in _PAREN_OK_BEFORE and not _names_option(before, letter, choices):
            continue  # "magnetic field strength (B)": a label, not an answer
        if not paren and prev in _NOTATION_NOUNS:
            continue  # "vitamin C", "matrix A"
        if _NEGATED_BEFORE.search(before) or _NEGATED_AFTER.match(after) or _TABLE_NO.match(after) or (
            _line_verdict(masked, s, e) is False
        ):
            continue  # "not (C)", "rather than B", "A is wrong"
        out.append(_Mention(s, e, letter, paren))
    return out


def _names_option(before: str, letter: str, choices: Sequence[str] | None) -> bool:
    """Whether the text before "(X)" ends with option X's text ("the mitochondrion (A)")."""
    if not choices or LETTERS.index(letter) >= len(choices):
        return False
    option = _norm_text(str(choices[LETTERS.index(letter)]))
    return bool(option) and _norm_text(before).endswith(option)


def _norm_text(s: str) -> str:
    s = s.lower().replace("**", "")
    s = re.sub(r"[\s]+", " ", s)
    return s.strip(" .,:;!?\"'`*()[]")


def _mmlu_declared(text: str, choices: Sequence[str] | None, flexible: bool) -> Extraction | None:
    got = _resolve(text, _mmlu_declarations(text))
    if got is None or isinstance(got, Extraction):
        return got
    if got.value is not None:
        return Extraction(got.value, got.method)
    if flexible and got.raw:  # "answer": "Golgi apparatus" — the option's text
        raw = re.sub(r"\\(?:text|textbf|mathrm)\{([^{}]*)\}", r"\1", got.raw)
        return _mmlu_option_text(raw, choices, containment=False)
    return _NONE


def _mmlu_strict(text: str, choices: Sequence[str] | None = None) -> Extraction:
    declared = _mmlu_declared(text, choices, flexible=False)
    if declared is not None:
        return declared
    return _mmlu_shapes(text, choices)


def _mmlu_shapes(text: str, choices: Sequence[str] | None, mentions: list[_Mention] | None = None) -> Extraction:
    """A lone letter, a letter opening the reply, or a single parenthesised letter."""
    m = _LONE_RE.match(text)
    if m:
        return Extraction(m.group("letter").upper(), "lone_letter")
    m = _START_RE.match(text)
    if m and not _NEGATED_AFTER.match(text[m.end() - (1 if m.group("letter") else 0) :][:80]):
        return Extraction((m.group("p") or m.group("letter")).upper(), "letter_start")
    if mentions is None:
        mentions = _letter_mentions(text, choices)
    parens = {m.letter for m in mentions if m.paren and text[m.start + 1].isupper()}
    if len(parens) == 1:
        return Extraction(parens.pop(), "paren_letter")
    return _NONE


def _mmlu_option_text(text: str, choices: Sequence[str] | None, *, containment: bool) -> Extraction:
    if not choices:
        return _NONE
    norm_choices = [_norm_text(str(c)) for c in choices[:4]]
    norm = _norm_text(text)
    for i, c in enumerate(norm_choices):
        if c and norm == c:
            return Extraction(LETTERS[i], "option_text")
    # "the answer is <option text>"
    m = None
    for m in re.finditer(r"(?:answer|option|choice)\s*(?:is|would\s+be|=|:)\s*", text, re.IGNORECASE):
        pass
    if m is not None:
        tail = _norm_text(re.split(r"[.\n]", text[m.end() :] + ".", maxsplit=1)[0])
        from rapidfuzz import fuzz

        scored = [(fuzz.ratio(tail, c), i) for i, c in enumerate(norm_choices) if c]
        if scored:
            best = max(scored)
            if best[0] >= 90 and sum(1 for s, _ in scored if s == best[0]) == 1:
                return Extraction(LETTERS[best[1]], "option_text")
    if containment:
        found = []
        for i, c in enumerate(norm_choices):
            if len(c) >= 2 and re.search(r"(?<![\w])" + re.escape(c) + r"(?![\w])", norm):
                found.append(i)
        # drop options contained in another found option ("Vitamin C" inside "Vitamin C and D")
        found = [i for i in found if not any(j != i and norm_choices[i] in norm_choices[j] for j in found)]
        if len(found) == 1:
            return Extraction(LETTERS[found[0]], "option_text")
    return _NONE


def _mmlu_letters(text: str, choices: Sequence[str] | None, mentions: list[_Mention] | None = None) -> Extraction:
    """Letters outside declarations: when every mention names one letter, that letter
    (``first_letter``); when they differ, the last one stated as the conclusion ("so C",
    "C is correct": ``conclusion``), else the first; two letters offered together are a hedge."""
    if mentions is None:
        mentions = _letter_mentions(text, choices)
    kept: list[_Mention] = []
    hedge_end, hedged = -1, False
    for mention in mentions:
        if mention.start < hedge_end:
            continue  # the second letter of a hedge
        hedge = _HEDGE_AFTER.match(text, mention.end - (1 if mention.paren else 0))
        if hedge is not None and hedge.group("other") != mention.letter:
            hedge_end, hedged = hedge.end(), True
            continue
        kept.append(mention)
    if not kept:
        return _HEDGED if hedged else _NONE
    if len({k.letter for k in kept}) > 1:
        final = _final_line_letter(text, kept)
        if final is not None:
            return Extraction(final, "conclusion")
        for k in reversed(kept):
            after = text[k.end : k.end + 80]
            if _CONCLUSION_AFTER.match(after) or _TABLE_YES.match(after) or _line_verdict(text, k.start, k.end) or (
                _CONCLUSION_BEFORE.search(text[max(0, k.start - 40) : k.start])
            ):
                return Extraction(k.letter, "conclusion")
    return Extraction(kept[0].letter, "first_letter")


_OPENS_WITH_LETTER = re.compile(r"[ \t>*_#-]*\(?[A-D][.):\s*]")


def _final_line_letter(text: str, kept: list[_Mention]) -> str | None:
    """The letter that opens the reply's last line ("**C) Changing social norms**") after an
    analysis, unless that line is just the last item of a list of options."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text)]
    if len(lines) < 2:
        return None
    (last_start, last_end), (prev_start, _prev_end) = lines[-1], lines[-2]
    for k in kept:
        if last_start <= k.start < last_end and not text[last_start : k.start].strip(" \t*_#>(-"):
            prev = _OPENS_WITH_LETTER.match(text, prev_start)
            if prev and ord(k.letter) == ord(prev.group(0).strip(" \t>*_#-(")[0]) + 1:
                return None  # "...\nC) ...\nD) ...": the next item of a list, not a conclusion
            return k.letter
    return None


def _mmlu_flexible(text: str, choices: Sequence[str] | None) -> Extraction:
    declared = _mmlu_declared(text, choices, flexible=True)
    if declared is not None:
        return declared  # a declared answer: nothing else in the reply is read
    mentions = _letter_mentions(text, choices)
    shaped = _mmlu_shapes(text, choices, mentions)
    if not shaped.failed:
        return shaped
    by_text = _mmlu_option_text(text, choices, containment=False)
    if not by_text.failed:
        return by_text
    letter = _mmlu_letters(text, choices, mentions)
    if not letter.failed or letter is _HEDGED:
        return letter
    return _mmlu_option_text(text, choices, containment=True)


# ---------------------------------------------------------------------------------------------
# evaluator
# ---------------------------------------------------------------------------------------------


class ExactMatchEvaluator:
    """Exact-match scorer for GSM8K and MMLU with strict and flexible extraction.

    Score (per response): ``1.0`` if the extracted answer equals the reference (GSM8K:
    numerically, ``|x - y| <= max(1e-6·max(|x|,|y|), 1e-9)``; MMLU: same letter), else ``0.0``;
    a parse failure scores ``0.0`` and is reported separately.

    Args:
        dataset_type: ``"gsm8k"`` or ``"mmlu"``.

    Raises:
        EvalcoreError: For an unknown dataset type.
    """

    def __init__(self, dataset_type: DatasetType = "gsm8k") -> None:
        if dataset_type not in ("gsm8k", "mmlu"):
            raise EvalcoreError(f"dataset_type must be 'gsm8k' or 'mmlu', got {dataset_type!r}", field="dataset_type")
        self.dataset_type: DatasetType = dataset_type

    def __repr__(self) -> str:
        return f"ExactMatchEvaluator({self.dataset_type!r})"

    def extract_answer(self, response: str | None, mode: Mode = "flexible", choices: Sequence[str] | None = None) -> Extraction:
        """Extract the answer from a model response.

        Args:
            response: The model's text (``None`` is treated as empty).
            mode: ``"strict"`` or ``"flexible"``.
            choices: MMLU option texts (A–D), used by flexible mode to match an option's text
                back to its letter.

        Returns:
            The :class:`Extraction` (value ``None`` and method ``"none"`` on parse failure).
        """
        if mode not in _MODES:
            raise EvalcoreError(f"mode must be 'strict' or 'flexible', got {mode!r}", field="mode")
        text = "" if response is None else str(response)
        if self.dataset_type == "gsm8k":
            return _gsm8k_strict(text) if mode == "strict" else _gsm8k_flexible(text)
        return _mmlu_strict(text, choices) if mode == "strict" else _mmlu_flexible(text, choices)

    def reference(self, ground_truth: Any) -> str:
        """Normalise the ground truth (GSM8K: final number string; MMLU: letter).

        Args:
            ground_truth: As the dataset gives it (GSM8K solution or number; MMLU letter/index).

        Returns:
            The canonical reference.
        """
        return gsm8k_reference(ground_truth) if self.dataset_type == "gsm8k" else mmlu_reference(ground_truth)

    def matches(self, extracted: str | None, reference: str) -> bool:
        """Whether an extracted value equals a canonical reference."""
        if extracted is None:
            return False
        if self.dataset_type == "mmlu":
            return extracted == reference
        a, b = parse_number(extracted), parse_number(reference)
        return a is not None and b is not None and numbers_equal(a, b)

    def evaluate(
        self,
        response: str | None,
        ground_truth: Any,
        mode: Mode = "flexible",
        choices: Sequence[str] | None = None,
    ) -> float:
        """Score one response: 1.0 when the extracted answer equals the reference, else 0.0.

        Args:
            response: The model's text.
            ground_truth: The reference as the dataset gives it.
            mode: ``"strict"`` or ``"flexible"``.
            choices: MMLU option texts.

        Returns:
            ``1.0`` or ``0.0``.
        """
        reference = self.reference(ground_truth)
        return 1.0 if self.matches(self.extract_answer(response, mode, choices).value, reference) else 0.0

    def score(self, response: str | None, ground_truth: Any, choices: Sequence[str] | None = None) -> dict[str, Any]:
        """Score one response in both modes.

        Args:
            response: The model's text.
            ground_truth: The reference as the dataset gives it.
            choices: MMLU option texts.

        Returns:
            ``{"strict", "flexible"}`` (0.0/1.0), ``extracted_strict``, ``extracted_flexible``,
            ``method_strict``, ``method_flexible``, ``parse_failure_strict``,
            ``parse_failure_flexible`` (bools) and ``reference`` (canonical).
        """
        reference = self.reference(ground_truth)
        out: dict[str, Any] = {}
        for mode in _MODES:
            ex = self.extract_answer(response, mode, choices)  # type: ignore[arg-type]
            out[mode] = 1.0 if self.matches(ex.value, reference) else 0.0
            out[f"extracted_{mode}"] = ex.value
            out[f"method_{mode}"] = ex.method
            out[f"parse_failure_{mode}"] = ex.failed
        out["reference"] = reference
        return out

    @staticmethod
    def summarize(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Summarise :meth:`score` dicts; see :func:`summarize_exact_match`."""
        return summarize_exact_match(scores)


def summarize_exact_match(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-response scores.

    ``accuracy_m = (1/n) Σ_i score_m(i)`` for m in {strict, flexible};
    ``parse_failure_rate = (1/n) Σ_i [flexible extraction failed]`` (and the same for strict).

    Args:
        scores: Dicts as returned by :meth:`ExactMatchEvaluator.score`.

    Returns:
        ``{"accuracy_strict", "accuracy_flexible", "parse_failure_rate",
        "parse_failure_rate_strict", "n", "methods_strict", "methods_flexible"}``; rates are
        ``None`` when ``n == 0``; ``methods_*`` count how the answers were read
        (:func:`extraction_method_counts`).
    """
    n = len(scores)
    methods = {f"methods_{mode}": extraction_method_counts(scores, mode) for mode in _MODES}
    if n == 0:
        return {"accuracy_strict": None, "accuracy_flexible": None, "parse_failure_rate": None,
                "parse_failure_rate_strict": None, "n": 0, **methods}
    return {
        "accuracy_strict": sum(float(s["strict"]) for s in scores) / n,
        "accuracy_flexible": sum(float(s["flexible"]) for s in scores) / n,
        "parse_failure_rate": sum(bool(s["parse_failure_flexible"]) for s in scores) / n,
        "parse_failure_rate_strict": sum(bool(s["parse_failure_strict"]) for s in scores) / n,
        "n": n,
        **methods,
    }


def extraction_method_counts(scores: Sequence[dict[str, Any]], mode: str = "flexible") -> dict[str, int]:
    """How many answers each extraction method read, in order of precedence.

    Args:
        scores: Dicts as returned by :meth:`ExactMatchEvaluator.score` (anything with a
            ``method_<mode>`` key; rows without one are skipped).
        mode: ``"strict"`` or ``"flexible"``.

    Returns:
        ``{method: count}`` for the methods that occur, in the order of :data:`METHODS`
        (unknown method names, e.g. from an older run, come after them, alphabetically).

    Raises:
        EvalcoreError: For an unknown mode.
    """
    if mode not in _MODES:
        raise EvalcoreError(f"mode must be 'strict' or 'flexible', got {mode!r}", field="mode")
    counts: dict[str, int] = {}
    for s in scores:
        method = s.get(f"method_{mode}")
        if isinstance(method, str):
            counts[method] = counts.get(method, 0) + 1
    rank = {m: i for i, m in enumerate(METHODS)}
    return dict(sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
