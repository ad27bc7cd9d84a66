"""Answer matching: structured results against expected values, never substrings of text."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}


def normalize_string(value: str) -> str:
    """Normalize a string answer: Unicode NFC and surrounding whitespace removed.

    Case, inner whitespace and punctuation are kept (reversing ``'Hello'`` must give ``'olleH'``).

    Args:
        value: The string.

    Returns:
        The normalized string.
    """
    return unicodedata.normalize("NFC", value).strip()


def to_number(value: Any) -> float | None:
    """Read a structured numeric result.

    Accepts ``int`` and ``float`` (not ``bool``) and a string that is *entirely* one number
    (optionally with thousands separators, e.g. ``"3,628,800"``). A string that merely contains a
    number (``"about 25 dollars"``) is not a number.

    Args:
        value: The agent's structured result.

    Returns:
        The number, or None when ``value`` is not one.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # beyond the float range: ±inf, which matches nothing
            return math.inf if value > 0 else -math.inf
    if isinstance(value, float):
        return value
    if hasattr(value, "__float__") and not isinstance(value, str):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            return None
    if isinstance(value, str):
        s = value.strip()
        if _NUMBER.fullmatch(s):
            return float(s)
        if _THOUSANDS.fullmatch(s):
            return float(s.replace(",", ""))
    return None


def _as_int(value: Any) -> int | None:
    """An ``int`` (not bool) or a string that is entirely an integer (thousands separators allowed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        s = value.strip()
        if _THOUSANDS.fullmatch(s) and "." not in s:
            s = s.replace(",", "")
        if re.fullmatch(r"[+-]?\d+", s):
            try:
                return int(s)
            except ValueError:  # more digits than int() accepts from a string
                return None
    return None


def values_match(actual: Any, expected: Any, rel_tol: float = 1e-6, abs_tol: float = 1e-6) -> bool:
    """Whether a structured result equals the expected answer.

    Rules: a boolean expected value needs a boolean (or the strings true/false/yes/no); a numeric
    one needs a number (see :func:`to_number`) with
    ``math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=abs_tol)`` (two integers, or an
    integer and a string of one, in exact integer arithmetic: ``|a − e| ≤ max(abs_tol,
    rel_tol·max(|a|, |e|))``, so values beyond the float range compare); a string one needs a
    string equal after :func:`normalize_string`; a list needs a list of the same length whose
    elements match in order. ``None`` never matches.

    Args:
        actual: The agent's structured result.
        expected: The expected answer.
        rel_tol: Relative tolerance for numbers.
        abs_tol: Absolute tolerance for numbers.

    Returns:
        True when they match.
    """
    if expected is None or actual is None:
        return False
    if isinstance(expected, bool):
        if isinstance(actual, bool):
            return actual is expected
        if isinstance(actual, str):
            s = actual.strip().lower()
            return (s in _TRUE and expected) or (s in _FALSE and not expected)
        return False
    if isinstance(expected, int) and (exact := _as_int(actual)) is not None:
        # integers compared exactly in integer arithmetic (factorials exceed the float range)
        diff = abs(exact - expected)
        return diff <= abs_tol or diff <= Fraction(rel_tol) * max(abs(exact), abs(expected))
    if isinstance(expected, (int, float)):
        num = to_number(actual)
        if num is None or not math.isfinite(num):
            return False
        return math.isclose(num, float(expected), rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(expected, str):
        return isinstance(actual, str) and normalize_string(actual) == normalize_string(expected)
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return False
        return all(values_match(a, e, rel_tol, abs_tol) for a, e in zip(actual, expected, strict=True))
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return False
        return all(values_match(actual[k], expected[k], rel_tol, abs_tol) for k in expected)
    return bool(actual == expected)


def is_clear_error(error: Any, terms: Sequence[str] = ()) -> bool:
    """Whether an error message is one a person can act on.

    A clear error is a string of at least 8 characters that is not a raw Python traceback and,
    when ``terms`` are given (a case's ``error_terms``), names at least one of them
    (case-insensitive): the invalid value or the reason.

    Args:
        error: ``AgentResponse.error``.
        terms: Words of which the message must name one.

    Returns:
        True when the message is clear.
    """
    if not isinstance(error, str):
        return False
    text = error.strip()
    if len(text) < 8 or "Traceback (most recent call last)" in text:
        return False
    return not terms or any(t.lower() in text.lower() for t in terms)
