"""Exact-match scoring for GSM8K (numbers) and MMLU (letters A–D).

Every extraction returns the value found *and* the method that found it, so a response the
extractor could not parse (``value is None``, method ``"none"``) is told apart from a parsed but
wrong answer. Two modes:

* **strict** — only an unambiguous answer marker counts. GSM8K: the number after the last
  ``####``. MMLU: "Answer: C", "The answer is (C)", ``\\boxed{C}``, a lone letter, "C." / "C)" /
  "(C)" at the start, or a single parenthesised letter.
* **flexible** — strict first, then looser shapes. GSM8K: ``\\boxed{72}``, "The answer is 72",
  "A: 72", "[72]", and finally the last number in the text. MMLU: an option's text matched back
  to its letter, or the first standalone letter A–D (the English article "A" is skipped).

GSM8K answers are compared numerically (``72 == 72.0 == "72.00" == "$72" == "1,248"``-style
normalisation), never as strings.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Literal, Sequence

from evalcore.errors import EvalcoreError

__all__ = [
    "Extraction",
    "ExactMatchEvaluator",
    "parse_number",
    "canonical_number",
    "gsm8k_reference",
    "mmlu_reference",
    "numbers_equal",
    "summarize_exact_match",
]

DatasetType = Literal["gsm8k", "mmlu"]
Mode = Literal["strict", "flexible"]
_MODES = ("strict", "flexible")
LETTERS = ("A", "B", "C", "D")

# ---------------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------------

# A number as people and models write it: optional sign, optional currency, digits with
# thousands separators (groups of exactly three) or plain digits, optional decimals; or a
# simple fraction "3/4". The sign must not be glued to a preceding word or digit ("10-3").
_NUM = (
    r"(?<![\w.])"  # not inside a word or after a decimal point
    r"(?P<sign>[-−–]?)"
    r"(?:(?P<cur>[$€£¥])\s?)?"
    r"(?P<num>"
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 1,248 / 1,248.50
    r"|\d{1,3}(?:[\u00a0\u2009\u202f]\d{3})+(?:\.\d+)?"  # 1 248 with a no-break or thin space
    r"|\d+/\d+"  # 3/4
    r"|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"  # 72 / 72.5 / 1.5e3
    r"|\.\d+(?:[eE][-+]?\d+)?"  # .5
    r")"
    r"(?![\d/]|,\d{3}|\.\d|[\u00a0\u2009\u202f]\d{3})"
)
_NUM_RE = re.compile(_NUM)
_SIGNED_SINGLE = re.compile(r"^\s*" + _NUM + r"\s*$")


def parse_number(text: str) -> Fraction | None:
    """Parse one number written as people write it into an exact :class:`~fractions.Fraction`.

    Accepts a sign, a currency symbol, thousands separators, decimals, a trailing period,
    a trailing percent sign or unit-free simple fractions (``"3/4"``).

    Args:
        text: The number, e.g. ``"$1,248.00"``, ``"-3"``, ``"72."``, ``"0.5"``, ``"3/4"``.

    Returns:
        The exact value, or ``None`` when ``text`` is not a single number.
    """
    s = str(text).strip().rstrip(".").strip()
    s = s.replace("**", "").strip()
    if s.endswith("%"):
        s = s[:-1].strip()
    m = _SIGNED_SINGLE.match(s)
    if not m:
        return None
    return _match_value(m)


def _match_value(m: re.Match[str]) -> Fraction | None:
    raw = m.group("num").replace(",", "").replace("\u00a0", "").replace("\u2009", "").replace("\u202f", "")
    try:
        if "/" in raw:
            num, den = raw.split("/")
            if int(den) == 0:
                return None
            value = Fraction(int(num), int(den))
        else:
            value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        return None
    return -value if m.group("sign") else value


def canonical_number(value: Fraction) -> str:
    """Write a number canonically: integers without decimals, others as short decimals.

    Args:
        value: An exact number.

    Returns:
        ``"72"`` for 72 and 72.0, ``"0.5"`` for 1/2, ``"-3.25"`` for -13/4; a non-terminating
        fraction is written with 12 significant digits (``"0.333333333333"``).
    """
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den == 1:  # terminating decimal: written exactly
        exact = Decimal(value.numerator) / Decimal(value.denominator)
        return format(exact.normalize(), "f")
    with localcontext() as ctx:
        ctx.prec = 12
        approx = Decimal(value.numerator) / Decimal(value.denominator)
    return format(approx, "f")


def numbers_equal(a: Fraction | float, b: Fraction | float, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Numeric equality with a tolerance for floats.

    ``|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)`` (:func:`math.isclose`); exact for
    fractions that are equal.

    Args:
        a: First number.
        b: Second number.
        rel_tol: Relative tolerance.
        abs_tol: Absolute tolerance.

    Returns:
        Whether the numbers are equal within the tolerance.
    """
    if isinstance(a, Fraction) and isinstance(b, Fraction) and a == b:
        return True
    return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=abs_tol)


def gsm8k_reference(answer: Any) -> str:
    """The canonical final number of a GSM8K reference.

    Args:
        answer: The reference as the dataset gives it: a worked solution ending in ``#### N``
            (the number after the *last* ``####`` is taken, commas removed), or a bare number
            (``"72"``, ``72``, ``"1,248"``).

    Returns:
        The canonical number string (``"1248"``).

    Raises:
        EvalcoreError: When no number can be found (field ``answer``).
    """
    if isinstance(answer, bool) or answer is None:
        raise EvalcoreError(f"GSM8K reference must be a number or a '#### N' solution, got {answer!r}", field="answer")
    if isinstance(answer, (int, float)):
        if isinstance(answer, float) and not math.isfinite(answer):
            raise EvalcoreError(f"GSM8K reference is not a finite number: {answer!r}", field="answer")
        return canonical_number(Fraction(answer).limit_denominator(10**12) if isinstance(answer, float) else Fraction(answer))
    text = str(answer)
    if "####" in text:
        tail = text.rsplit("####", 1)[1]
        value = parse_number(tail.strip().splitlines()[0] if tail.strip() else "")
    else:
        value = parse_number(text)
    if value is None:
        raise EvalcoreError(
            f"GSM8K reference has no final number (expected '#### N' or a bare number): {text[-80:]!r}",
            field="answer",
        )
    return canonical_number(value)


def mmlu_reference(answer: Any) -> str:
    """The MMLU ground truth as a letter.

    Args:
        answer: A letter ``"A"``–``"D"`` (any case, optionally ``"(C)"``) or an index
            ``0``–``3`` / ``"0"``–``"3"``.

    Returns:
        ``"A"``, ``"B"``, ``"C"`` or ``"D"``.

    Raises:
        EvalcoreError: For anything else (field ``answer``).
    """
    if isinstance(answer, bool):
        raise EvalcoreError(f"MMLU answer must be a letter A-D or an index 0-3, got {answer!r}", field="answer")
    if isinstance(answer, int) and 0 <= answer <= 3:
        return LETTERS[answer]
    if isinstance(answer, float) and answer.is_integer() and 0 <= answer <= 3:
        return LETTERS[int(answer)]
    if isinstance(answer, str):
        s = answer.strip().strip("().").strip().upper()
        if s in LETTERS:
            return s
        if s in ("0", "1", "2", "3"):
            return LETTERS[int(s)]
    raise EvalcoreError(f"MMLU answer must be a letter A-D or an index 0-3, got {answer!r}", field="answer")


# ---------------------------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    """What an extractor found.

    Attributes:
        value: The canonical answer (``"72"``; ``"C"``), or ``None`` for a parse failure.
        method: How it was found. GSM8K: ``"hash"``, ``"boxed"``, ``"answer_is"``,
            ``"answer_prefix"``, ``"bracket"``, ``"last_number"``. MMLU: ``"answer_is"``,
            ``"boxed"``, ``"lone_letter"``, ``"letter_start"``, ``"paren_letter"``,
            ``"option_text"``, ``"first_letter"``. ``"none"`` when nothing was found;
            ``"hedged"`` (MMLU) when two letters were offered ("B or C"), also a parse failure.
    """

    value: str | None
    method: str

    @property
    def failed(self) -> bool:
        """Whether nothing could be extracted."""
        return self.value is None


_NONE = Extraction(None, "none")

# GSM8K patterns
_HASH_RE = re.compile(r"####\s*(?:\*\*)?\s*(?P<body>[^\n]*)")
_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_IS_RE = re.compile(
    r"\b(?:final\s+answer|the\s+answer|answer)\s*(?:is|will\s+be|would\s+be|=|:)\s*"
    r"(?:[:=]\s*)?(?:\*\*|\$\$?|\\\(|\\\[|\s)*",
    re.IGNORECASE,
)
_A_PREFIX_RE = re.compile(r"(?:^|\n)\s*(?:\*\*)?A\s*(?:\*\*)?\s*:\s*(?:\*\*)?", re.MULTILINE)
_BRACKET_RE = re.compile(r"\[\s*" + _NUM + r"\s*\]")
_LATEX_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


def _clean_latex(text: str) -> str:
    text = _LATEX_FRAC_RE.sub(lambda m: f"{m.group(1)}/{m.group(2)}", text)
    text = re.sub(r"\\text\{[^{}]*\}|\\mathrm\{[^{}]*\}", " ", text)
    text = text.replace("\\$", "$").replace("\\!", "").replace("\\,", ",").replace("{,}", ",")
    return text


def _first_number(text: str) -> Fraction | None:
    m = _NUM_RE.search(_clean_latex(text))
    return _match_value(m) if m else None


def _last_number(text: str) -> Fraction | None:
    last = None
    for m in _NUM_RE.finditer(_clean_latex(text)):
        value = _match_value(m)
        if value is not None:
            last = value
    return last


def _boxed_contents(text: str) -> list[str]:
    out = []
    for m in _BOXED_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


# "#### 1 000": after the marker a single number is expected, so space-separated groups of
# three digits are one number there (elsewhere "2 100" may well be two numbers).
_SPACED_THOUSANDS = re.compile(r"^(\s*(?:\*\*|\$|\\\(|\s)*[-−–]?[$€£¥]?\s?)(\d{1,3}(?: \d{3})+(?:\.\d+)?)(?!\d|[,.]\d| \d)")


def _gsm8k_strict(text: str) -> Extraction:
    matches = list(_HASH_RE.finditer(text))
    if not matches:
        return _NONE
    body = _SPACED_THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), matches[-1].group("body"))
    value = _first_number(body)
    return Extraction(canonical_number(value), "hash") if value is not None else _NONE


def _gsm8k_flexible(text: str) -> Extraction:
    strict = _gsm8k_strict(text)
    if not strict.failed:
        return strict
    boxed = _boxed_contents(text)
    if boxed:
        value = _first_number(boxed[-1])
        if value is not None:
            return Extraction(canonical_number(value), "boxed")
    for m in reversed(list(_ANSWER_IS_RE.finditer(text))):
        value = _answer_value(text[m.end() :])
        if value is not None:
            return Extraction(canonical_number(value), "answer_is")
    for m in reversed(list(_A_PREFIX_RE.finditer(text))):
        value = _answer_value(text[m.end() :])
        if value is not None:
            return Extraction(canonical_number(value), "answer_prefix")
    cleaned = _clean_latex(text)
    brackets = list(_BRACKET_RE.finditer(cleaned))
    if brackets and _NUM_RE.search(cleaned, brackets[-1].end()) is None:
        value = _match_value(brackets[-1])
        if value is not None:
            return Extraction(canonical_number(value), "bracket")
    value = _last_number(text)
    if value is not None:
        return Extraction(canonical_number(value), "last_number")
    return _NONE


def _answer_value(tail: str) -> Fraction | None:
    """The number an answer phrase announces: the one that opens ``tail``, or, when the
    announced sentence is a calculation ("5 + 3 = 8."), the result after its last ``=``."""
    sentence = re.split(r"\n|\.(?=\s|$)", _clean_latex(tail), maxsplit=1)[0]
    if "=" in sentence and _first_number_at_start(sentence) is not None:
        result = _last_number(sentence.rsplit("=", 1)[1])
        if result is not None:
            return result
    return _first_number_at_start(tail)


def _first_number_at_start(text: str) -> Fraction | None:
    """The number that opens ``text`` (after markup), within the first few characters."""
    head = _clean_latex(text[:80])
    m = _NUM_RE.search(head)
    if m is None:
        return None
    between = head[: m.start()]
    if re.search(r"[A-Za-z]{2,}", between) or len(between.strip()) > 6:
        return None
    return _match_value(m)


# MMLU patterns
_LETTER_END = r"(?![A-Za-z0-9+#'’-])"
# an answer letter: upper case standing alone, or lower case only where it cannot be a word
# ("answer: c", "answer is (c)"), so "the answer is a prime number" is not "A"
_LETTER = (
    r"(?P<letter>(?-i:[A-D])" + _LETTER_END + r"|(?-i:[a-d])(?=\s*(?:$|[.,;:)\]\n*])))"
)
_MMLU_ANSWER_IS = [
    re.compile(
        r"\b(?:correct\s+|final\s+|best\s+|right\s+)?(?:answer|option|choice)\s*"
        r"(?:is|would\s+be|will\s+be|should\s+be|=|:|-)\s*"
        r"(?:[:=]\s*)?(?:option\s+|choice\s+|letter\s+)?(?:\*\*|\$|\\\(|\s)*[\(\[]?\s*" + _LETTER,
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:answer\s*(?:is\s*)?|(?:option|choice)\s+is\s*)[\(\[]\s*(?P<letter>[a-dA-D])\s*[\)\]]", re.IGNORECASE),
    re.compile(r"(?:^|\n)\s*(?:\*\*)?answer(?:\*\*)?\s*[:=]?\s*(?:\*\*)?\s*[\(\[]?" + _LETTER, re.IGNORECASE),
]
_LONE_RE = re.compile(r"^[\s*_`\"'(\[]*(?P<letter>[A-Da-d])[\s*_`\"')\].:]*$")
_START_RE = re.compile(r"^[\s*_`\"']*(?:\((?P<p>[A-Da-d])\)|(?P<letter>[A-D])\s*[.):](?!\d))")
_PAREN_RE = re.compile(r"\((?P<letter>[A-D])\)")
_FIRST_LETTER_RE = re.compile(
    r"(?<![A-Za-z0-9'’_-])(?:(?P<letter>[A-D])" + _LETTER_END + r"|\((?P<lower>[a-d])\)|(?P<lower2>[a-d])\))"
)
# words after which a leading "A" is a letter, not the English article ("A is correct")
_A_NOT_ARTICLE = re.compile(
    r"\s(?:is|was|seems|would|should|could|must|looks|appears|fits|matches|and|or|because|since|it)\b"
)


def _norm_text(s: str) -> str:
    s = s.lower().replace("**", "")
    s = re.sub(r"[\s]+", " ", s)
    return s.strip(" .,:;!?\"'`*()[]")


# "B or C", "B/C", "B and C": a second letter offered right after the first is a hedge.
_HEDGE_AFTER = re.compile(
    r"\s*[\)\]]?\s*(?:\*\*)?\s*(?:/|&|\bor\b|\band\b)\s*(?:option\s+|choice\s+)?[\(\[]?\s*"
    r"(?P<other>(?-i:[A-D]))(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_HEDGED = Extraction(None, "hedged")


def _hedged(text: str, end: int, letter: str) -> bool:
    """Whether the letter ending at ``end`` is offered together with another one."""
    m = _HEDGE_AFTER.match(text, end)
    return m is not None and m.group("other") != letter.upper()


def _mmlu_strict(text: str) -> Extraction:
    hits: list[tuple[int, int, str]] = []
    for pattern in _MMLU_ANSWER_IS:
        for m in pattern.finditer(text):
            hits.append((m.start("letter"), m.end("letter"), m.group("letter").upper()))
    if hits:
        _start, end, letter = max(hits)
        return _HEDGED if _hedged(text, end, letter) else Extraction(letter, "answer_is")
    boxed = [b.strip().strip("()").strip() for b in _boxed_contents(text)]
    boxed = [b.replace("\\text{", "").rstrip("}").strip() for b in boxed]
    if boxed and boxed[-1].upper() in LETTERS:
        return Extraction(boxed[-1].upper(), "boxed")
    m = _LONE_RE.match(text)
    if m:
        return Extraction(m.group("letter").upper(), "lone_letter")
    m = _START_RE.match(text)
    if m:
        return Extraction((m.group("p") or m.group("letter")).upper(), "letter_start")
    parens = {m.group("letter") for m in _PAREN_RE.finditer(text)}
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


def _mmlu_first_letter(text: str) -> Extraction:
    """The first standalone letter that is not offered together with another ("B or C")."""
    hedge_end = -1
    for m in _FIRST_LETTER_RE.finditer(text):
        if m.start() < hedge_end:
            continue  # the second letter of a hedge
        letter = m.group("letter")
        if letter is None:
            letter = (m.group("lower") or m.group("lower2")).upper()
        else:
            after = text[m.end() : m.end() + 12]
            # the English article "A" ("A cell is ...") is not an answer; "A is correct" is
            if letter == "A" and re.match(r"\s[a-z]", after) and not _A_NOT_ARTICLE.match(after):
                continue
        hedge = _HEDGE_AFTER.match(text, m.end())
        if hedge is not None and hedge.group("other") != letter:
            hedge_end = hedge.end()
            continue
        return Extraction(letter, "first_letter")
    return _HEDGED if hedge_end >= 0 else _NONE


def _mmlu_flexible(text: str, choices: Sequence[str] | None) -> Extraction:
    strict = _mmlu_strict(text)
    if not strict.failed or strict is _HEDGED:
        return strict  # a hedged answer stays a parse failure in both modes
    by_text = _mmlu_option_text(text, choices, containment=False)
    if not by_text.failed:
        return by_text
    letter = _mmlu_first_letter(text)
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
        return _mmlu_strict(text) if mode == "strict" else _mmlu_flexible(text, choices)

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
        "parse_failure_rate_strict", "n"}``; rates are ``None`` when ``n == 0``.
    """
    n = len(scores)
    if n == 0:
        return {"accuracy_strict": None, "accuracy_flexible": None, "parse_failure_rate": None,
                "parse_failure_rate_strict": None, "n": 0}
    return {
        "accuracy_strict": sum(float(s["strict"]) for s in scores) / n,
        "accuracy_flexible": sum(float(s["flexible"]) for s in scores) / n,
        "parse_failure_rate": sum(bool(s["parse_failure_flexible"]) for s in scores) / n,
        "parse_failure_rate_strict": sum(bool(s["parse_failure_strict"]) for s in scores) / n,
        "n": n,
    }
