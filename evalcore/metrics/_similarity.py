"""String and vector similarity."""

from __future__ import annotations

from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from evalcore._validate import ZeroDivision, as_float_array, check_zero_division
from evalcore.errors import EvalcoreError


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise EvalcoreError(f"expected a string, got {type(value).__name__}", field=field)
    return value


def levenshtein_distance(a: str, b: str) -> int:
    """Levenshtein edit distance: the minimum number of single-character insertions, deletions
    and substitutions turning ``a`` into ``b`` (each of cost 1; rapidfuzz).

    Args:
        a: First string.
        b: Second string.

    Returns:
        The distance (0 when equal).

    Examples:
        >>> from evalcore.metrics import levenshtein_distance
        >>> levenshtein_distance('kitten', 'sitting')
        3
    """
    return int(Levenshtein.distance(_text(a, "a"), _text(b, "b")))


def levenshtein_similarity(a: str, b: str) -> float:
    """Normalized Levenshtein similarity: 1 − distance(a, b) / max(|a|, |b|) (1.0 for two empty
    strings; rapidfuzz ``Levenshtein.normalized_similarity``).

    Args:
        a: First string.
        b: Second string.

    Returns:
        Similarity in [0, 1].

    Examples:
        >>> from evalcore.metrics import levenshtein_similarity
        >>> round(levenshtein_similarity('kitten', 'sitting'), 4)  # 1 - 3/7
        0.5714
    """
    return float(Levenshtein.normalized_similarity(_text(a, "a"), _text(b, "b")))


def _unit_rows(m: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero). Each row is divided by its largest
    magnitude first, so that neither 1e200 (whose squares overflow) nor 1e-200 (whose squares
    underflow) loses the direction."""
    scale = np.max(np.abs(m), axis=1, keepdims=True) if m.size else np.ones((len(m), 1))
    scale[scale == 0] = 1.0
    m = m / scale
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def cosine_similarity(a: Any, b: Any = None, *, zero_division: ZeroDivision = 0.0) -> float | np.ndarray:
    """Cosine similarity: cos(u, v) = u·v / (‖u‖ ‖v‖).

    Shapes: two vectors (d,) → a float; a vector and a matrix (m, d) → an array (m,); two
    matrices (n, d) and (m, d) → the (n, m) matrix of row-pair similarities; ``b=None`` with a
    matrix → its rows against each other. A pair involving a zero vector answers
    ``zero_division`` (default 0.0, as scikit-learn's ``cosine_similarity``). Each row is
    scaled by its largest magnitude before its norm is taken, so vectors of 1e200 or 1e-200 get
    their true similarity (scikit-learn answers NaN or 0 for them: their squares overflow or
    underflow).

    Args:
        a: Vector or matrix of row vectors.
        b: Vector or matrix with the same dimension d (or None).
        zero_division: Value for a zero-norm vector (number or "error").

    Returns:
        A float or an array of similarities in [−1, 1].

    Examples:
        >>> from evalcore.metrics import cosine_similarity
        >>> round(cosine_similarity([1.0, 0.0], [1.0, 1.0]), 4)
        0.7071
        >>> cosine_similarity([[1.0, 0.0], [0.0, 2.0]]).tolist()  # one matrix: all pairs of rows
        [[1.0, 0.0], [0.0, 1.0]]
    """
    check_zero_division(zero_division)
    x = np.asarray(a.to_numpy() if hasattr(a, "to_numpy") else a, dtype=np.float64)
    y = x if b is None else np.asarray(b.to_numpy() if hasattr(b, "to_numpy") else b, dtype=np.float64)
    for arr, name in ((x, "a"), (y, "b")):
        as_float_array(arr, name, ndim=arr.ndim if arr.ndim in (1, 2) else 1)
    if x.shape[-1] != y.shape[-1]:
        raise EvalcoreError(f"dimensions differ: {x.shape[-1]} vs {y.shape[-1]}", field="b")
    x2, y2 = _unit_rows(np.atleast_2d(x)), _unit_rows(np.atleast_2d(y))
    zero = np.outer(~np.any(x2 != 0, axis=1), np.ones(len(y2), bool)) | np.outer(
        np.ones(len(x2), bool), ~np.any(y2 != 0, axis=1)
    )
    if np.any(zero) and zero_division == "error":
        raise EvalcoreError("cosine similarity of a zero vector is undefined", field="zero_division")
    sims = np.clip(x2 @ y2.T, -1.0, 1.0)
    if np.any(zero):
        sims[zero] = float(zero_division)
    if x.ndim == 1 and y.ndim == 1:
        return float(sims[0, 0])
    if x.ndim == 1:
        return sims[0]
    if y.ndim == 1:
        return sims[:, 0]
    return sims
