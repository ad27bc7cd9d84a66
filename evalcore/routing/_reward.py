"""The one routing objective: reward = quality − λ · normalized cost."""

from __future__ import annotations

import math

import numpy as np

from evalcore.errors import EvalcoreError


def normalized_cost(cost: np.ndarray, *, price_range: tuple[float, float] | None = None) -> np.ndarray:
    """Scale costs by the arms' price range.

    ``c̃ = (c − c_min) / (c_max − c_min)``, where ``c_min`` and ``c_max`` are the smallest and
    largest cost in the outcome matrix (every item × arm), so ``c̃`` lies in ``[0, 1]`` and the
    cheapest call costs 0 and the dearest 1. When every call costs the same, ``c̃ = 0``.

    Args:
        cost: Costs, any shape (usually items × arms).
        price_range: ``(c_min, c_max)`` to scale with instead of the range of ``cost``
            (e.g. to keep the scale fixed while comparing subsets).

    Returns:
        The normalized costs, same shape as ``cost``, clipped to ``[0, 1]``.
    """
    c = np.asarray(cost, dtype=float)
    lo, hi = (float(np.min(c)), float(np.max(c))) if price_range is None else price_range
    if not np.isfinite(hi - lo) or hi - lo <= 0:
        return np.zeros_like(c)
    return np.clip((c - lo) / (hi - lo), 0.0, 1.0)


def compute_rewards(
    quality: np.ndarray,
    cost: np.ndarray,
    error: np.ndarray | None = None,
    *,
    lam: float = 0.0,
    price_range: tuple[float, float] | None = None,
) -> np.ndarray:
    """Reward of every item × arm under the single documented objective.

    ``reward = quality − λ · c̃`` with ``c̃`` from :func:`normalized_cost`. A failed call
    (``error`` set) earns the minimum possible reward ``−λ`` (quality 0 at full normalized
    cost), so it never earns more than a wrong answer, whatever the failed call cost.

    Args:
        quality: Objective quality in ``[0, 1]`` (items × arms).
        cost: Cost of each call (same shape).
        error: Boolean flags of failed calls (same shape), or None.
        lam: The cost weight λ ≥ 0 (0 = quality only).
        price_range: Optional fixed ``(c_min, c_max)`` for the normalization.

    Returns:
        Rewards, same shape as ``quality``.

    Raises:
        EvalcoreError: λ is negative, not finite or not a number (field ``lambda``).
    """
    try:
        lam = float(lam)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number, got {lam!r}", field="lambda") from None
    if not math.isfinite(lam) or lam < 0:
        raise EvalcoreError(f"must be a finite number >= 0, got {lam!r}", field="lambda")
    q = np.asarray(quality, dtype=float)
    r = q - lam * normalized_cost(cost, price_range=price_range)
    if error is not None:
        r = np.where(np.asarray(error, dtype=bool), -float(lam), r)
    return r
