"""Ground-truth references and the numbers they hold: a final ``#### N`` number, an option letter.

The lowest home of answer parsing: the dataset loaders canonicalise references with it, the
exact-match scorer compares extracted answers with :func:`numbers_equal`, and routing's
majority vote uses the same rule, so every layer agrees on when two answers are one.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from evalcore.errors import EvalcoreError

__all__ = [
    "CHOICE_LETTERS",
    "LETTERS",
    "NUMBER_PATTERN",
    "NUMBER_RE",
    "canonical_number",
    "choice_reference",
    "gsm8k_reference",
    "letter_reference",
    "mmlu_reference",
    "number_from_match",
    "number_reference",
    "numbers_equal",
    "parse_number",
]

LETTERS = ("A", "B", "C", "D")
#: The letters of multiple-choice options: up to ten options, A-J (four-option questions use A-D).
CHOICE_LETTERS = tuple("ABCDEFGHIJ")

# ---------------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------------

# A number as people and models write it: optional sign, optional currency, digits with
# thousands separators (groups of exactly three) or plain digits, optional decimals; or a
# simple fraction "3/4". The sign must not be glued to a preceding word or digit ("10-3").
NUMBER_PATTERN = (
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
    r"(?!\d|/\d|,\d{3}|\.\d|[\u00a0\u2009\u202f]\d{3})"  # "25,000/year": a unit after the slash
)
NUMBER_RE = re.compile(NUMBER_PATTERN)
_SIGNED_SINGLE = re.compile(r"^\s*" + NUMBER_PATTERN + r"\s*$")


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
    return number_from_match(m)


def number_from_match(m: re.Match[str]) -> Fraction | None:
    """The number a match of ``NUMBER_RE`` holds, exactly (None if it does not parse)."""
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
    try:
        return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=abs_tol)
    except OverflowError:  # a number beyond float's range (a 4000-digit answer): exactly
        try:
            fa, fb = Fraction(a), Fraction(b)
        except (OverflowError, ValueError):  # the other one is an infinite or NaN float
            return False
        return abs(fa - fb) <= max(Fraction(rel_tol) * max(abs(fa), abs(fb)), Fraction(abs_tol))


def number_reference(answer: Any) -> str:
    """The canonical final number of a reference (a worked solution's ``#### N``, as GSM8K writes it).

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
        raise EvalcoreError(
            f"a number reference must be a number or a '#### N' solution, got {answer!r}", field="answer"
        )
    if isinstance(answer, (int, float)):
        if isinstance(answer, float) and not math.isfinite(answer):
            raise EvalcoreError(f"the number reference is not a finite number: {answer!r}", field="answer")
        return canonical_number(
            Fraction(answer).limit_denominator(10**12) if isinstance(answer, float) else Fraction(answer)
        )
    text = str(answer)
    if "####" in text:
        tail = text.rsplit("####", 1)[1]
        value = parse_number(tail.strip().splitlines()[0] if tail.strip() else "")
    else:
        value = parse_number(text)
    if value is None:
        raise EvalcoreError(
            f"the reference has no final number (expected '#### N' or a bare number): {text[-80:]!r}",
            field="answer",
        )
    return canonical_number(value)


def letter_reference(answer: Any) -> str:
    """A four-option ground truth as a letter (MMLU writes a letter or an index).

    Args:
        answer: A letter ``"A"``–``"D"`` (any case, optionally ``"(C)"``) or an index
            ``0``–``3`` / ``"0"``–``"3"``.

    Returns:
        ``"A"``, ``"B"``, ``"C"`` or ``"D"``.

    Raises:
        EvalcoreError: For anything else (field ``answer``).
    """
    if isinstance(answer, bool):
        raise EvalcoreError(f"a letter answer must be a letter A-D or an index 0-3, got {answer!r}", field="answer")
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
    raise EvalcoreError(f"a letter answer must be a letter A-D or an index 0-3, got {answer!r}", field="answer")


def choice_reference(answer: Any, n_options: int = 4, *, labels: str = "letters", base: int | None = None) -> str:
    """A multiple-choice reference as a letter, read by the labels its data set states.

    With ``labels="letters"`` the reference is a letter among the first ``n_options`` of A-J (any
    case, optionally ``"(C)"``); a number is refused, never read as an index. With
    ``labels="numbers"`` it is an option number counted from ``base`` (0 or 1, stated, never
    guessed): with base 1, ``"1"`` is A; with base 0, ``0`` is A.

    Args:
        answer: The reference as the data set gives it.
        n_options: How many options the question has (2 to 10).
        labels: ``"letters"`` or ``"numbers"``.
        base: The number of the first option when ``labels="numbers"`` (0 or 1).

    Returns:
        The letter, ``"A"`` to ``"J"``.

    Raises:
        EvalcoreError: A value outside the labels (field ``answer``), unknown labels or base.
    """
    if not 2 <= n_options <= len(CHOICE_LETTERS):
        raise EvalcoreError(f"a question has 2 to 10 options (A-J), got {n_options}", field="answer")
    letters = CHOICE_LETTERS[:n_options]
    span = f"{letters[0]}-{letters[-1]}"
    if labels == "letters":
        if isinstance(answer, str) and answer.strip().strip("().").strip().upper() in letters:
            return answer.strip().strip("().").strip().upper()
        if isinstance(answer, (int, float)) and not isinstance(answer, bool) or str(answer).strip().isdigit():
            raise EvalcoreError(
                f"answer {answer!r} is a number but the labels are letters {span}; to read numbers state "
                "the scorer's labels: numbers and base: 0 or 1 (nothing is shifted unasked)",
                field="answer",
            )
        if isinstance(answer, str) and answer.strip().strip("().").strip().upper() in CHOICE_LETTERS:
            raise EvalcoreError(
                f"answer {answer!r} names no option (the question has {n_options}: {span})", field="answer"
            )
        raise EvalcoreError(f"answer {answer!r} is not one of the letters {span}", field="answer")
    if labels != "numbers":
        raise EvalcoreError(f"unknown labels {labels!r}; use 'letters' or 'numbers'", field="labels")
    if base not in (0, 1) or isinstance(base, bool):
        raise EvalcoreError(f"numeric labels need a base of 0 or 1, got {base!r}", field="base")
    value: int | None = None
    if isinstance(answer, int) and not isinstance(answer, bool):
        value = answer
    elif isinstance(answer, float) and answer.is_integer():
        value = int(answer)
    elif isinstance(answer, str) and answer.strip().isdigit():
        value = int(answer.strip())
    first, last = base, base + n_options - 1
    if value is None or not first <= value <= last:
        raise EvalcoreError(
            f"answer {answer!r} is not one of the option numbers {first}-{last} (labels: numbers, base {base})",
            field="answer",
        )
    return letters[value - base]


gsm8k_reference = number_reference
"""The name :func:`number_reference` had before answer kinds were named for what they read."""
mmlu_reference = letter_reference
"""The name :func:`letter_reference` had before answer kinds were named for what they read."""
