"""Input checks shared by :mod:`evalcore.stats` and :mod:`evalcore.metrics`.

Every check raises :class:`~evalcore.errors.EvalcoreError` naming the offending field, so a
bad argument is reported the same way wherever it enters. It sits at the bottom of the package,
beside ``errors`` and ``_io``, so that both packages use it without ``metrics`` reaching into a
private module of ``stats``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from evalcore.errors import EvalcoreError

#: How a ratio with a zero denominator is answered: a number (0.0, 1.0, ``nan``) or ``"error"``.
ZeroDivision = float | Literal["error"]


def as_float_array(values: Any, field: str = "values", *, allow_empty: bool = False, ndim: int = 1) -> np.ndarray:
    """Convert ``values`` to a finite float array of the given dimension.

    Args:
        values: Array-like of numbers (booleans count as 0/1); a pandas Series is taken by value.
        field: Name reported in the error message.
        allow_empty: Accept an array with no elements.
        ndim: Required number of dimensions.

    Returns:
        A float64 numpy array.

    Raises:
        EvalcoreError: Not numeric, wrong shape, empty, or containing NaN/inf.
    """
    if isinstance(values, (str, bytes)):
        raise EvalcoreError("expected numbers, got a string", field=field)
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    elif not isinstance(values, np.ndarray) and isinstance(values, Iterable):
        values = list(values)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvalcoreError(f"expected numbers: {exc}", field=field) from None
    if arr.ndim != ndim:
        raise EvalcoreError(f"expected a {ndim}-D array, got shape {arr.shape}", field=field)
    if arr.size == 0 and not allow_empty:
        raise EvalcoreError("empty input: at least one value is needed", field=field)
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise EvalcoreError(f"non-finite value at position {bad}", field=field)
    return arr


def as_pair(a: Any, b: Any, field_a: str = "a", field_b: str = "b") -> tuple[np.ndarray, np.ndarray]:
    """Two equally long, non-empty, finite 1-D float arrays (paired observations)."""
    x = as_float_array(a, field_a)
    y = as_float_array(b, field_b)
    if x.shape != y.shape:
        raise EvalcoreError(
            f"paired inputs differ in length ({x.size} vs {y.size}); align them by item id first",
            field=field_b,
        )
    return x, y


def is_binary(arr: np.ndarray) -> bool:
    """Whether every value is exactly 0 or 1."""
    return bool(np.all((arr == 0.0) | (arr == 1.0)))


def check_binary(arr: np.ndarray, field: str) -> None:
    """Raise unless every value is 0 or 1."""
    if not is_binary(arr):
        raise EvalcoreError("expected binary scores (0/1 or booleans)", field=field)


def check_probability(value: float, field: str, *, open_interval: bool = True) -> float:
    """A number strictly inside (0, 1) (or inside [0, 1] when ``open_interval`` is False)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number, got {value!r}", field=field) from None
    ok = (0.0 < v < 1.0) if open_interval else (0.0 <= v <= 1.0)
    if not ok or math.isnan(v):
        span = "(0, 1)" if open_interval else "[0, 1]"
        raise EvalcoreError(f"must lie in {span}, got {value!r}", field=field)
    return v


def check_positive_int(value: Any, field: str, *, minimum: int = 1) -> int:
    """An integer ≥ ``minimum`` (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise EvalcoreError(f"expected an integer, got {value!r}", field=field)
    if int(value) < minimum:
        raise EvalcoreError(f"must be at least {minimum}, got {value}", field=field)
    return int(value)


def check_zero_division(zero_division: Any) -> None:
    """Validate a ``zero_division`` argument: a finite number, ``nan``, or ``"error"``."""
    if isinstance(zero_division, str):
        if zero_division != "error":
            raise EvalcoreError(f"must be a number or 'error', got {zero_division!r}", field="zero_division")
        return
    if isinstance(zero_division, bool) or not isinstance(zero_division, (int, float, np.floating)):
        raise EvalcoreError(f"must be a number or 'error', got {zero_division!r}", field="zero_division")


def safe_ratio(num: float, den: float, zero_division: ZeroDivision, what: str) -> float:
    """``num / den``; when ``den == 0`` answer ``zero_division`` (or raise when it is 'error')."""
    if den == 0:
        if zero_division == "error":
            raise EvalcoreError(f"{what} is undefined: its denominator is 0", field="zero_division")
        return float(zero_division)
    return float(num) / float(den)


def rng_from(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed (or the Generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise EvalcoreError(f"seed must be an integer or None, got {seed!r}", field="seed")
    return np.random.default_rng(seed)
