"""Power analysis for paired comparisons (normal approximation).

For paired scores the test works on d = a − b whose standard deviation is
σ_d = √(σ_a² + σ_b² − 2 ρ σ_a σ_b): the higher the correlation ρ between the two systems'
per-item scores, the fewer items a difference needs. With effect e = δ / σ_d and
z_q = Φ⁻¹(q), the two-sided power at n items and level α is
power(n) = Φ(e√n − z_{1−α/2}) + Φ(−e√n − z_{1−α/2}),
and the one-sided ("larger"/"smaller") power is Φ(±e√n − z_{1−α}). This is the same model as
statsmodels' ``NormalIndPower`` with ``ratio=0`` (one sample); the t-based ``TTestPower`` needs a
few more items at small n.

Source: Cohen, J. (1988), *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.
(power of the z-test for a standardized mean difference, here d_z of the paired differences).
"""

from __future__ import annotations

import math
from typing import Literal

from scipy import integrate, optimize
from scipy import stats as sps

from evalcore._validate import check_positive_int, check_probability
from evalcore.errors import EvalcoreError

PowerAlternative = Literal["two-sided", "larger", "smaller"]


def _nonneg(value: float, field: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number, got {value!r}", field=field) from None
    if not math.isfinite(v) or v < 0:
        raise EvalcoreError(f"must be a finite number ≥ 0, got {value!r}", field=field)
    return v


def paired_sd(sd_a: float, sd_b: float, correlation: float = 0.0) -> float:
    """Standard deviation of paired differences: σ_d = √(σ_a² + σ_b² − 2 ρ σ_a σ_b).

    Args:
        sd_a: Standard deviation of system A's per-item scores.
        sd_b: Standard deviation of system B's per-item scores.
        correlation: Pearson correlation ρ ∈ [−1, 1] between them.

    Returns:
        σ_d.

    Examples:
        >>> from evalcore.stats import paired_sd
        >>> round(paired_sd(0.5, 0.5, correlation=0.5), 4)
        0.5
    """
    sa, sb = _nonneg(sd_a, "sd_a"), _nonneg(sd_b, "sd_b")
    rho = float(correlation)
    if not -1.0 <= rho <= 1.0:
        raise EvalcoreError(f"must lie in [-1, 1], got {correlation!r}", field="correlation")
    return math.sqrt(max(0.0, sa * sa + sb * sb - 2.0 * rho * sa * sb))


def _check_alt(alternative: str) -> None:
    if alternative not in ("two-sided", "larger", "smaller"):
        raise EvalcoreError(
            f"unknown alternative {alternative!r}; use 'two-sided', 'larger' or 'smaller'",
            field="alternative",
        )


def _z_alpha(alpha: float, alternative: str) -> float:
    """The critical value z_{1−α/2} (two-sided) or z_{1−α} (one-sided)."""
    return float(sps.norm.ppf(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha)))


def _power(effect: float, n: float, alpha: float, alternative: str) -> float:
    root = effect * math.sqrt(n)
    z = _z_alpha(alpha, alternative)
    if alternative == "two-sided":
        return float(sps.norm.cdf(root - z) + sps.norm.cdf(-root - z))
    sign = 1.0 if alternative == "larger" else -1.0
    return float(sps.norm.cdf(sign * root - z))


def _sd_d(sd_a: float, sd_b: float, correlation: float) -> float:
    sd = paired_sd(sd_a, sd_b, correlation)
    if sd == 0.0:
        raise EvalcoreError(
            "the paired differences have zero standard deviation (identical systems); power is undefined",
            field="correlation",
        )
    return sd


def paired_power(
    delta: float,
    n: int,
    sd_a: float,
    sd_b: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    *,
    alternative: PowerAlternative = "two-sided",
) -> float:
    """Power to detect a paired mean difference δ with n items (formula in the module docstring).

    Args:
        delta: True mean difference δ = μ_a − μ_b.
        n: Number of items.
        sd_a: Standard deviation of A's per-item scores (binary: √(p(1 − p))).
        sd_b: Standard deviation of B's per-item scores.
        correlation: Correlation ρ of A's and B's per-item scores.
        alpha: Significance level.
        alternative: "two-sided", "larger" (δ > 0) or "smaller".

    Returns:
        The probability of rejecting H0: δ = 0.

    Examples:
        >>> from evalcore.stats import paired_power
        >>> round(paired_power(0.05, 500, 0.5, 0.5, correlation=0.5), 3)
        0.609
    """
    _check_alt(alternative)
    alpha = check_probability(alpha, "alpha")
    n = check_positive_int(n, "n")
    return _power(float(delta) / _sd_d(sd_a, sd_b, correlation), float(n), alpha, alternative)


def sample_size_paired(
    delta: float,
    sd_a: float,
    sd_b: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    alternative: PowerAlternative = "two-sided",
) -> int:
    """Items needed to detect a paired mean difference δ.

    Closed form (ignoring the far tail of a two-sided test):
    n ≈ ((z_{1−α/2} + z_{power}) σ_d / δ)², σ_d = √(σ_a² + σ_b² − 2ρσ_aσ_b);
    the value returned is the smallest integer n (≥ 2) with power(n) ≥ ``power`` under the exact
    normal power function of the module docstring.

    Args:
        delta: Mean difference to detect (≠ 0).
        sd_a: Standard deviation of A's per-item scores.
        sd_b: Standard deviation of B's per-item scores.
        correlation: Correlation ρ between A's and B's per-item scores.
        alpha: Significance level.
        power: Target power 1 − β.
        alternative: "two-sided", "larger" or "smaller".

    Returns:
        The number of items.

    Examples:
        >>> from evalcore.stats import sample_size_paired
        >>> sample_size_paired(0.05, 0.5, 0.5, correlation=0.5)
        785
    """
    _check_alt(alternative)
    alpha = check_probability(alpha, "alpha")
    power = check_probability(power, "power")
    delta = float(delta)
    if delta == 0.0 or not math.isfinite(delta):
        raise EvalcoreError(f"must be a finite non-zero difference, got {delta!r}", field="delta")
    if alternative == "larger" and delta < 0 or alternative == "smaller" and delta > 0:
        raise EvalcoreError(f"delta={delta} points away from alternative={alternative!r}", field="delta")
    effect = delta / _sd_d(sd_a, sd_b, correlation)
    z_a = _z_alpha(alpha, alternative)
    n0 = ((z_a + sps.norm.ppf(power)) / effect) ** 2
    if power <= alpha:
        return 2

    def gap(n: float) -> float:
        return _power(effect, n, alpha, alternative) - power

    if gap(n0) < 0:  # cannot happen analytically; guard against rounding
        return max(2, math.ceil(n0))
    lo = 1e-9
    n_star = optimize.brentq(gap, lo, n0, xtol=1e-10) if gap(lo) < 0 else lo
    return max(2, math.ceil(n_star - 1e-9))


def min_detectable_difference(
    n: int,
    sd_a: float,
    sd_b: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    alternative: PowerAlternative = "two-sided",
    max_difference: float | None = None,
) -> float:
    """Smallest paired mean difference |δ| detectable with n items at the given power.

    Closed form (ignoring the far tail): δ ≈ (z_{1−α/2} + z_{power}) σ_d / √n; the value
    returned solves power(δ) = ``power`` exactly under the module's normal power function.

    Args:
        n: Number of items.
        sd_a: Standard deviation of A's per-item scores.
        sd_b: Standard deviation of B's per-item scores.
        correlation: Correlation ρ between them.
        alpha: Significance level.
        power: Target power.
        alternative: "two-sided", "larger" or "smaller" (the magnitude is returned).
        max_difference: The largest difference the scores allow (their range: 1 for 0/1
            scores); the MDD returned is never above it (the normal approximation can exceed it
            at small n, e.g. 1.6 for two 0/1 items). A returned value equal to it means that no
            possible difference is detected with the given power.

    Returns:
        The minimum detectable difference (≥ 0), in the scores' units.

    Examples:
        >>> from evalcore.stats import min_detectable_difference
        >>> round(min_detectable_difference(500, 0.5, 0.5, correlation=0.5), 4)
        0.0626
    """
    _check_alt(alternative)
    alpha = check_probability(alpha, "alpha")
    power = check_probability(power, "power")
    n = check_positive_int(n, "n")
    sd = _sd_d(sd_a, sd_b, correlation)
    alt = "larger" if alternative != "two-sided" else alternative
    z_a = _z_alpha(alpha, alternative)
    if power <= alpha:
        return 0.0
    d0 = (z_a + sps.norm.ppf(power)) * sd / math.sqrt(n)

    def gap(delta: float) -> float:
        return _power(delta / sd, float(n), alpha, alt) - power

    if d0 <= 0 or gap(d0) < 0:
        return _capped(float(max(d0, 0.0)), max_difference)
    return _capped(float(optimize.brentq(gap, 0.0, d0, xtol=1e-14)), max_difference)


def min_detectable_difference_se(
    se: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    df: int | None = None,
    max_difference: float | None = None,
) -> float:
    """Smallest mean difference |δ| a two-sided test with standard error ``se`` detects at the
    given power: the MDD of a test whose variance is already known, e.g. the clustered paired
    test (:func:`evalcore.stats.clustered_difference`, whose SE is cluster-robust with the CR1
    factor and whose reference distribution is t with G − 1 degrees of freedom).

    With ``df=None`` the test is a z-test: δ solves Φ(δ/SE − z_{1−α/2}) + Φ(−δ/SE − z_{1−α/2})
    = power (≈ (z_{1−α/2} + z_{power}) · SE). With ``df`` the test is a t-test with ``df``
    degrees of freedom: δ solves P(|T′| > t_{1−α/2, df}) = power where T′ is noncentral t with
    ``df`` degrees of freedom and noncentrality δ/SE (larger than the normal value, much larger
    with few clusters).

    Args:
        se: Standard error of the mean difference (> 0).
        alpha: Significance level.
        power: Target power.
        df: Degrees of freedom of the t reference distribution, or None for the normal.
        max_difference: The largest difference the scores allow (their range: 1 for 0/1
            scores); the MDD returned is never above it. A returned value equal to it means
            that no possible difference is detected with the given power.

    Returns:
        The minimum detectable difference (≥ 0), in the scores' units.

    Examples:
        >>> from evalcore.stats import min_detectable_difference_se
        >>> round(min_detectable_difference_se(0.02), 4)  # (1.96 + 0.84) * se
        0.056
    """
    se = _nonneg(se, "se")
    if se == 0.0:
        raise EvalcoreError("the standard error is 0: every difference is detected", field="se")
    alpha = check_probability(alpha, "alpha")
    power = check_probability(power, "power")
    if power <= alpha:
        return 0.0
    if df is None:
        crit = float(sps.norm.ppf(1.0 - alpha / 2.0))

        def pw(nc: float) -> float:
            return float(sps.norm.sf(crit - nc) + sps.norm.cdf(-crit - nc))

        guess = crit + float(sps.norm.ppf(power))
    else:
        df = check_positive_int(df, "df")
        crit = float(sps.t.ppf(1.0 - alpha / 2.0, df))

        def pw(nc: float) -> float:
            return _t_power(crit, df, nc)

        guess = crit + float(sps.t.ppf(power, df))
    hi = max(guess, 1.0)
    while pw(hi) < power:
        hi *= 2.0
    nc = optimize.brentq(lambda v: pw(v) - power, 0.0, hi, xtol=1e-12)
    return _capped(float(nc * se), max_difference)


def _t_power(crit: float, df: int, nc: float) -> float:
    """P(|T′| > crit) for T′ noncentral t (df, nc).

    scipy's ``nct`` returns NaN for large noncentralities at 1 or 2 degrees of freedom (the
    cause of the crash of the clustered MDD with 2 or 3 clusters); there the power is computed
    from T′ = (Z + nc)/√(V/df), V ~ χ²_df: P = E_V[Φ(nc − crit·s) + Φ(−nc − crit·s)],
    s = √(V/df), by numerical integration over the χ distribution of √V.
    """
    value = float(sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc))
    if math.isfinite(value) and 0.0 <= value <= 1.0:
        return value

    def integrand(r: float) -> float:
        s = r / math.sqrt(df)
        return float((sps.norm.cdf(nc - crit * s) + sps.norm.cdf(-nc - crit * s)) * sps.chi.pdf(r, df))

    total, _ = integrate.quad(integrand, 0.0, math.inf, limit=200)
    return float(min(1.0, max(0.0, total)))


def _capped(mdd: float, max_difference: float | None) -> float:
    if max_difference is None:
        return mdd
    cap = _nonneg(max_difference, "max_difference")
    return min(mdd, cap)
