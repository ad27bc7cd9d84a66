"""What every exact-match extractor shares: the :class:`Extraction` record, the method names,
LaTeX and fence helpers, and the declared-answer fields (JSON/YAML) with the correction rule.

The GSM8K and MMLU rules are in :mod:`._extract_number` and :mod:`._extract_choice`; the scorer
is :mod:`._exact_match`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from evalcore.datasets import NUMBER_RE, canonical_number, number_from_match
from evalcore.evaluators._reasoning import after_reasoning

# ---------------------------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    """What an extractor found.

    Attributes:
        value: The canonical answer (``"72"``; ``"C"``), or ``None`` for a parse failure.
        method: How it was found; see :data:`METHODS` for every name in order of precedence.
            Declared answers (both modes): ``"json_field"``, ``"yaml_field"``, ``"xml_tag"``
            (``<answer>42</answer>``), ``"hash"``
            (GSM8K ``#### 72``), ``"boxed"``, ``"answer_is"``, ``"correction"`` (a declared
            answer withdrawn after it: "Wait, that's wrong: it's 25", "Oops, I meant C"). MMLU strict also reads
            ``"lone_letter"``, ``"letter_start"`` and ``"paren_letter"``. Flexible only — GSM8K:
            ``"answer_prefix"``, ``"bracket"``, ``"conclusion"`` (the number a concluding sentence
            commits to, not its last: "$64 for the 16 glasses"), ``"last_number"``; MMLU: ``"option_text"``,
            ``"conclusion"``, ``"first_letter"``. Parse failures: ``"none"`` (nothing readable,
            also a declared answer without a number or letter, a GSM8K reply that declines to
            answer) and ``"hedged"`` (two different
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
    "json_field",
    "yaml_field",
    "xml_tag",
    "hash",
    "boxed",
    "answer_is",
    "correction",
    "lone_letter",
    "letter_start",
    "paren_letter",
    "answer_prefix",
    "bracket",
    "option_text",
    "conclusion",
    "first_letter",
    "last_number",
    "hedged",
    "none",
)
EXTRACTION_METHODS = METHODS
#: Methods that read an answer the reply declared (strongest, both modes).
DECLARED_METHODS: frozenset[str] = frozenset(
    {"json_field", "yaml_field", "xml_tag", "hash", "boxed", "answer_is", "correction"}
)
_FIELD_METHODS = ("json_field", "yaml_field", "xml_tag")


# --- shared helpers --------------------------------------------------------------------------

_LATEX_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


# a text command keeps its text and loses only the command: \boxed{\text{18}} is 18,
# 18 \text{ dollars} is "18 dollars"
_LATEX_TEXT_RE = re.compile(r"\\(?:text(?:bf|rm|it|normal|sf)?|math(?:rm|bf|sf|it)|mbox)\s*\{([^{}]*)\}")
# ~~struck-through~~ text is withdrawn by the writer: never read ("~~$16~~ $18" is 18)
_STRUCK_RE = re.compile(r"(?<!~)~~(?!~)[^~\n]+(?<!~)~~(?!~)")


def _clean_latex(text: str) -> str:
    text = _LATEX_FRAC_RE.sub(lambda m: f"{m.group(1)}/{m.group(2)}", text)
    text = text.replace("{,}", ",")
    text = _LATEX_TEXT_RE.sub(lambda m: f" {m.group(1)} ", text)
    text = text.replace("\\$", "$").replace("\\!", "").replace("\\,", ",")
    return text


_BLANKS = re.compile(r"[^\S\n]{2,}")
_BLANK_LINES = re.compile(r"[^\S\n]?\n(?:[^\S\n]?\n)+[^\S\n]?")


def _squeeze(text: str) -> str:
    """``text`` with every run of two or more blanks (spaces, tabs, no-break spaces ...) one
    space (a single no-break or thin space stays: "12 500") and every run of blank lines one
    blank line: what the rules read is unchanged, and no run of
    whitespace is long enough to make a pattern that allows whitespace in several places in a
    row backtrack for minutes (a reply of 1,000 spaces between "The answer:" and "(" used to
    take seconds, 4,000 spaces minutes)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _BLANK_LINES.sub("\n\n", _BLANKS.sub(" ", text))


def _strike_out(text: str) -> str:
    """``text`` with struck-through spans (``~~16~~``) blanked (positions kept)."""
    return _STRUCK_RE.sub(lambda m: " " * len(m.group(0)), text) if "~~" in text else text


def _readable(text: str) -> str:
    """The part of a reply the rules read, normalised: after any closed reasoning block
    (:func:`after_reasoning`), blanks squeezed (:func:`_squeeze`), struck-through text blanked
    (:func:`_strike_out`)."""
    return _strike_out(_squeeze(after_reasoning(text)))


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
# an answer in tags, as many prompts ask for it: "<answer>42</answer>", "<final_answer>C</final_answer>"
_TAG_RE = re.compile(r"<(?P<tag>" + _FIELD_NAME + r")>(?P<val>[^<]{0,400})</(?P=tag)>", re.IGNORECASE)
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
    """JSON fields ``"answer": ...`` anywhere, YAML ``answer: ...`` in a fenced block, tags
    ``<answer>...</answer>``."""
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
            raw, end = (block.group(0).strip(), m.end() + block.end()) if block else ("", end)
        raw = raw.strip().strip("\"'").strip()
        got, hedged = parse(raw)
        out.append(_Declared(m.start(), end, "yaml_field", got, hedged, raw))
    for m in _TAG_RE.finditer(text):
        raw = m.group("val").strip()
        got, hedged = parse(raw)
        out.append(_Declared(m.start(), m.end(), "xml_tag", got, hedged, raw))
    return sorted(out, key=lambda d: d.start)


# A retraction of an answer already declared, restating it without the word "answer": a cue
# that withdraws ("Wait, that's wrong", "Oops", "Actually, no"), then within the sentence (or the
# next) "it's"/"it is"/"it should be"/"I meant"/"make that" and, at the returned pattern's end,
# the new value. Every cue is also a correction cue (below), so the later value wins.
_RETRACTION_CUE = (
    r"\b(?:wait|actually|oops|sorry|correction|scratch\s+that|my\s+(?:mistake|bad)|(?:i\s+made|that'?s)\s+(?:a|an)\s+"
    r"(?:mistake|error)|that'?s\s+(?:wrong|incorrect|not\s+right)|on\s+second\s+thought|no(?=\s*[,.!:;—–-]))"
    r"(?:[^.;?\n]|\.[ \t]+){0,60}?\b(?:it'?s|it\s+is|it\s+(?:should|must|has\s+to|would)\s+be|(?:i|we)\s+meant?"
    r"|make\s+(?:that|it)"
)


def retraction_re(restatements: str, value: str) -> re.Pattern[str]:
    """The pattern of a retraction (see :data:`_RETRACTION_CUE`): its cue, one of the common
    restatements or ``restatements`` (a dataset's own, e.g. "the correct total is"), then
    ``value`` (the text up to where the new value starts, or the value itself)."""
    return re.compile(_RETRACTION_CUE + "|" + restatements + ")" + value, re.IGNORECASE)


# Between two different declared answers, one of these words makes the later one a
# correction ("... wait, the answer is 8"); without any, the reply offers both: a hedge.
_CORRECTION_CUE = re.compile(
    r"\b(?:wait|actually|correct(?:ion|ed|ing)|mistake|error|oops|hmm+|re-?check\w*|re-?calculat\w*"
    r"|re-?evaluat\w*|re-?examin\w*|re-?consider\w*|re-?visit\w*|second\s+thought|double[- ]check\w*"
    r"|verif\w*|let\s+me|let's|but|however|instead|final(?:ly)?|therefore|thus|hence|so|conclu\w*"
    r"|summar\w*|overall|revis\w*|updat\w*|no(?=[,.!])|sorry|scratch\s+that|my\s+bad|i\s+meant?"
    r"|that'?s\s+(?:wrong|incorrect|not\s+right))\b",
    re.IGNORECASE,
)


# "You might think the answer is 20", "It's tempting to say the answer is A", "If the answer
# were C": an answer someone else might give, not the reply's own (unless a contrast follows:
# "It's tempting to pick A, but the answer is B")
_HYPOTHETICAL = re.compile(
    r"\b(?:(?:you|one|someone|somebody|people|many|some|students|readers?)\s+(?:might|may|could|would|will)"
    r"\s+(?:be\s+tempted\s+to\s+)?(?:think|say|assume|guess|expect|conclude|believe|answer|pick|choose)"
    r"|(?:it'?s|it\s+is|is|seems)\s+tempting|tempted\s+to|easy\s+to\s+(?:think|say|assume|conclude|pick|choose)"
    r"|(?:mistake|trap|error)\s+(?:would\s+be|is)\s+to|if\s+the\s+answer\s+(?:were|was))\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|however|yet|though|although|instead|actually|rather)\b", re.IGNORECASE)


def _hypothetical(text: str, pos: int) -> bool:
    """Whether the sentence holding ``pos`` frames what follows as someone's guess, up to ``pos``."""
    low = max(0, pos - 200)
    start = max(text.rfind(c, low, pos) for c in ".!?;\n") + 1
    start = max(start, low)
    frame = _HYPOTHETICAL.search(text, start, pos)
    return frame is not None and not _CONTRAST.search(text, frame.end(), pos)


def _resolve(text: str, declared: list[_Declared]) -> _Declared | Extraction | None:
    """The declaration that answers, a hedge, or ``None`` when nothing was declared.

    Fields (JSON/YAML) outrank prose; among the rest a declaration nested in another
    ("#### The answer is 64") belongs to the outer one; the last declaration wins (a final
    statement beats earlier ones) unless it names two answers itself, or the reply changes its
    answer anywhere without a correction cue between the two declarations: then it hedges.
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
    # Every change of answer along the way must be a correction: a reply that goes on to
    # another answer without one offers both ("The answer is (B). The correct answer is (C)."),
    # also when it later repeats one of them.
    for prev, nxt in zip(tier, tier[1:]):
        if (
            (prev.hedged or prev.value != nxt.value)
            and nxt.method != "correction"
            and not _CORRECTION_CUE.search(text, prev.end, nxt.end)
        ):  # a retraction is its own cue
            return _HEDGED
    return last


# --- GSM8K -----------------------------------------------------------------------------------
