"""The Wilson score interval in plain Python, so that light commands can report it.

``evalcore score gsm8k|mmlu`` prints each accuracy with its Wilson interval; computing it here,
with the standard library's normal quantile (``statistics.NormalDist``, equal to scipy's
``norm.ppf`` within 1e-15 relative), keeps those commands free of numpy, pandas and scipy.
"""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist

from evalcore.errors import EvalcoreError

__all__ = ["wilson_interval"]


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    With p̂ = s/n and z = Φ⁻¹(1 − α/2):
    centre = (p̂ + z²/(2n)) / (1 + z²/n),
    half-width = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/(4n²)),
    interval = [centre − half-width, centre + half-width] (exactly 0 when s = 0, 1 when s = n).

    Args:
        successes: Number of successes s (0 ≤ s ≤ n; fractional counts allowed).
        n: Number of trials (≥ 1).
        confidence: Confidence level 1 − α in (0, 1).

    Returns:
        ``(low, high)``.

    Raises:
        EvalcoreError: n < 1, s outside [0, n], or a confidence outside (0, 1).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):  # numpy integers are Integral
        raise EvalcoreError(f"expected an integer, got {n!r}", field="n")
    if int(n) < 1:
        raise EvalcoreError(f"must be at least 1, got {n}", field="n")
    n = int(n)
    try:
        level = float(confidence)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number, got {confidence!r}", field="confidence") from None
    if not 0.0 < level < 1.0:  # also refuses nan
        raise EvalcoreError(f"must lie in (0, 1), got {confidence!r}", field="confidence")
    try:
        s = float(successes)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number, got {successes!r}", field="successes") from None
    if not (0.0 <= s <= n):
        raise EvalcoreError(f"must lie in [0, n={n}], got {successes!r}", field="successes")
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    p = s / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    low = 0.0 if s == 0 else max(0.0, centre - half)
    high = 1.0 if s == n else min(1.0, centre + half)
    return low, high
