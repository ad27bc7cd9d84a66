"""The Wilson score interval in plain Python: evalcore's one implementation of it.

Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
*Journal of the American Statistical Association* 22(158), 209–212.

Every Wilson interval evalcore reports comes from :func:`wilson_bounds`: a run's accuracy
(:func:`wilson_interval` through :func:`evalcore.stats.mean_ci`), the multi-epoch accuracy by
effective sample size (:func:`evalcore.stats.clustered_wilson`), the threshold sweep's rates and
the light ``evalcore score gsm8k|mmlu``. It is the formula of statsmodels'
``proportion_confint(count, nobs, alpha, method="wilson")``, and the tests check the two agree to
1e-12 on random counts, but it is written here rather than delegated: ``evalcore score`` prints
the interval and must start without numpy, pandas, scipy or statsmodels (importing statsmodels
alone takes about a second; ``tests/cli/test_cli_startup.py`` pins this). The normal quantile is
the standard library's (``statistics.NormalDist``, equal to scipy's ``norm.ppf`` within 1e-15
relative).
"""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist

from evalcore.errors import EvalcoreError

__all__ = ["wilson_bounds", "wilson_interval"]


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

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

    Examples:
        >>> from evalcore.stats import wilson_interval
        >>> low, high = wilson_interval(8, 10)
        >>> round(low, 4), round(high, 4)
        (0.4902, 0.9433)
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
    return wilson_bounds(s, float(n), level)


def wilson_bounds(successes: float, n: float, confidence: float) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` in ``n`` trials, arguments already checked.

    The computation behind :func:`wilson_interval` (which checks its arguments first) and
    :func:`evalcore.stats.clustered_wilson` (whose ``n`` is an effective sample size, not an
    integer). Wilson (1927); equal to statsmodels' ``proportion_confint(successes, n,
    alpha=1 - confidence, method="wilson")`` clipped to [0, 1], with the end at 0 exactly when
    there are no successes and at 1 exactly when every trial succeeds.

    Args:
        successes: 0 ≤ s ≤ n.
        n: Trials, > 0 (real: an effective sample size is allowed).
        confidence: 1 − α in (0, 1).

    Returns:
        ``(low, high)``.
    """
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    s, n = float(successes), float(n)
    p = s / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    low = 0.0 if s == 0 else max(0.0, centre - half)
    high = 1.0 if s == n else min(1.0, centre + half)
    return low, high
