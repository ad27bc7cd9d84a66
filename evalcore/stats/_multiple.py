"""Multiple-comparison corrections of p-values.

Sources: Holm, S. (1979), "A simple sequentially rejective multiple test procedure",
*Scandinavian Journal of Statistics* 6(2), 65–70; Benjamini, Y. and Hochberg, Y. (1995),
"Controlling the false discovery rate: a practical and powerful approach to multiple testing",
*Journal of the Royal Statistical Society B* 57(1), 289–300. Both equal statsmodels'
``multipletests(p, method="holm" / "fdr_bh")`` (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore._validate import as_float_array
from evalcore.errors import EvalcoreError


def _p_values(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    p = as_float_array(p_values, "p_values")
    if np.any((p < 0.0) | (p > 1.0)):
        raise EvalcoreError("p-values must lie in [0, 1]", field="p_values")
    return p


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (controls the family-wise error rate; Holm 1979).

    With p_(1) ≤ … ≤ p_(m) sorted: p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)); returned in
    the input order. Reject H_i when p̃_i ≤ α.

    Args:
        p_values: Unadjusted p-values (1-D, in [0, 1]).

    Returns:
        Adjusted p-values, same order as the input.

    Examples:
        >>> from evalcore.stats import holm
        >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
        [0.03, 0.06, 0.06]
    """
    p = _p_values(p_values)
    m = p.size
    order = np.argsort(p, kind="mergesort")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (controls the false discovery rate; Benjamini &
    Hochberg 1995).

    With p_(1) ≤ … ≤ p_(m) sorted: p̃_(i) = min_{j ≥ i} min(1, m p_(j) / j); returned in the
    input order. Reject H_i when p̃_i ≤ q.

    Args:
        p_values: Unadjusted p-values (1-D, in [0, 1]).

    Returns:
        Adjusted p-values, same order as the input.

    Examples:
        >>> from evalcore.stats import benjamini_hochberg
        >>> benjamini_hochberg([0.01, 0.04, 0.03]).round(4).tolist()
        [0.03, 0.04, 0.04]
    """
    p = _p_values(p_values)
    m = p.size
    order = np.argsort(p, kind="mergesort")
    scaled = m * p[order] / np.arange(1, m + 1)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return adjusted


def adjust_p_values(p_values: Sequence[float] | np.ndarray, correction: str) -> np.ndarray:
    """Adjust p-values by name: ``"holm"``, ``"bh"`` (Benjamini–Hochberg) or ``"none"``.

    Examples:
        >>> from evalcore.stats import adjust_p_values
        >>> adjust_p_values([0.01, 0.04, 0.03], 'bh').round(4).tolist()
        [0.03, 0.04, 0.04]
        >>> adjust_p_values([0.01, 0.04, 0.03], 'none').tolist()
        [0.01, 0.04, 0.03]
    """
    if correction == "holm":
        return holm(p_values)
    if correction in ("bh", "fdr_bh", "benjamini_hochberg"):
        return benjamini_hochberg(p_values)
    if correction == "none":
        return _p_values(p_values).copy()
    raise EvalcoreError(f"unknown correction {correction!r}; use 'holm', 'bh' or 'none'", field="correction")
