"""Paired tests on per-item scores of two systems (already aligned by item id).

All functions take two equally long sequences ``a`` and ``b`` whose i-th entries belong to the
same item, and work on the differences d_i = a_i − b_i. Use :func:`evalcore.stats.compare` to
align series keyed by item id.

Sources: Student (1908), "The probable error of a mean", *Biometrika* 6(1), 1–25 (the paired
t-test); Wilcoxon, F. (1945), "Individual comparisons by ranking methods", *Biometrics Bulletin*
1(6), 80–83; McNemar, Q. (1947), "Note on the sampling error of the difference between correlated
proportions or percentages", *Psychometrika* 12(2), 153–157; Efron, B. (1979), "Bootstrap
methods: another look at the jackknife", *Annals of Statistics* 7(1), 1–26, and Efron, B. (1987),
"Better bootstrap confidence intervals", *JASA* 82(397), 171–185 (BCa), as in Efron, B. and
Tibshirani, R. (1993), *An Introduction to the Bootstrap*; Fisher, R. A. (1935), *The Design of
Experiments*, and Noreen, E. W. (1989), *Computer-Intensive Methods for Testing Hypotheses*
(the sign-flip permutation test); Cohen, J. (1988), *Statistical Power Analysis for the
Behavioral Sciences*, 2nd ed. (d_z); Cameron, A. C. and Miller, D. L. (2015), "A practitioner's
guide to cluster-robust inference", *Journal of Human Resources* 50(2), 317–372, and Miller, E.
(2024), "Adding error bars to evals", arXiv:2411.00640 (the clustered test).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

from evalcore._validate import (
    as_pair,
    check_binary,
    check_positive_int,
    check_probability,
    rng_from,
)
from evalcore.errors import EvalcoreError
from evalcore.stats._intervals import _codes, clustered_se
from evalcore.stats._resample import (
    all_sign_flip_sums,
    bca_interval_mean,
    bootstrap_means,
    percentile_interval,
    sign_flip_sums,
)

ArrayLike = Sequence[float] | np.ndarray
Alternative = Literal["two-sided", "less", "greater"]


@dataclass(frozen=True)
class TestResult:
    """Outcome of a paired test.

    Attributes:
        test: Name of the test ("paired_t", "wilcoxon", "mcnemar", "paired_bootstrap",
            "permutation").
        statistic: The test statistic (see the function's docstring).
        p_value: The p-value.
        n: Number of pairs.
        difference: Mean difference mean(a − b).
        ci_low: Lower bound of the interval of the mean difference (NaN when the test gives none).
        ci_high: Upper bound of that interval.
        details: Test-specific numbers (degrees of freedom, discordant counts, resamples …).
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    difference: float
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    details: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (``details`` flattened into it)."""
        d = asdict(self)
        details = d.pop("details") or {}
        d.update(details)
        return d


def _check_alternative(alternative: str) -> None:
    if alternative not in ("two-sided", "less", "greater"):
        raise EvalcoreError(
            f"unknown alternative {alternative!r}; use 'two-sided', 'less' or 'greater'",
            field="alternative",
        )


def paired_t(
    a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95, alternative: Alternative = "two-sided"
) -> TestResult:
    """Paired t-test (Student 1908; scipy ``ttest_rel``) with the t interval of the mean
    difference.

    t = d̄ / (s_d / √n), df = n − 1, d_i = a_i − b_i, s_d the sample standard deviation;
    interval d̄ ± t_{1−α/2, n−1} s_d / √n for a two-sided test; a one-sided test gets scipy's
    one-sided interval (``"less"``: (−∞, d̄ + t_{1−α, n−1} s_d / √n); ``"greater"``: (d̄ −
    t_{1−α, n−1} s_d / √n, ∞)). When every difference is equal (s_d = 0), t is 0 with
    p = 1 if d̄ = 0 and ±∞ with p = 0 otherwise, and the interval is (d̄, d̄).

    Args:
        a: Scores of system A, one per item.
        b: Scores of system B, same items in the same order.
        confidence: Confidence level of the interval.
        alternative: "two-sided", "less" (mean(a − b) < 0) or "greater".

    Returns:
        A :class:`TestResult` (``details``: ``df``, ``se``).

    Raises:
        EvalcoreError: fewer than 2 pairs, unequal lengths, non-finite values.

    Examples:
        >>> from evalcore.stats import paired_t
        >>> r = paired_t([0.9, 0.7, 0.8, 0.6], [0.5, 0.6, 0.7, 0.4])
        >>> round(r.statistic, 4), round(r.p_value, 4), round(r.difference, 4)
        (2.8284, 0.0663, 0.2)
        >>> round(r.ci_low, 4), round(r.ci_high, 4), r.details
        (-0.025, 0.425, {'df': 3, 'se': 0.07071067811865475})
    """
    x, y = as_pair(a, b)
    confidence = check_probability(confidence, "confidence")
    _check_alternative(alternative)
    n = x.size
    if n < 2:
        raise EvalcoreError("the paired t-test needs at least 2 items", field="a")
    d = x - y
    diff = float(d.mean())
    df = n - 1
    if np.ptp(d) == 0.0:
        if diff == 0.0:
            stat, p = 0.0, 1.0
        else:
            stat = math.copysign(math.inf, diff)
            p = 1.0 if (alternative == "less" and diff > 0) or (alternative == "greater" and diff < 0) else 0.0
        return TestResult("paired_t", stat, p, n, diff, diff, diff, {"df": df, "se": 0.0})
    res = sps.ttest_rel(x, y, alternative=alternative)
    ci = res.confidence_interval(confidence_level=confidence)
    se = float(d.std(ddof=1) / math.sqrt(n))
    return TestResult(
        "paired_t",
        float(res.statistic),
        float(res.pvalue),
        n,
        diff,
        float(ci.low),
        float(ci.high),
        {"df": df, "se": se},
    )


def wilcoxon(
    a: ArrayLike,
    b: ArrayLike,
    *,
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    alternative: Alternative = "two-sided",
    method: Literal["auto", "exact", "approx"] = "auto",
) -> TestResult:
    """Wilcoxon signed-rank test on the paired differences (Wilcoxon 1945; scipy ``wilcoxon``).

    W = Σ_{d_i > 0} rank(|d_i|) (scipy's statistic for a two-sided test is min(W⁺, W⁻)); zero
    differences are dropped (``"wilcox"``), ranked (``"pratt"``) or split (``"zsplit"``). When
    every difference is zero there is no evidence of a difference: statistic 0, p = 1.

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        zero_method: Treatment of zero differences.
        alternative: "two-sided", "less" or "greater".
        method: "auto", "exact" or "approx" (normal approximation). ``"auto"`` is scipy's
            (1.17): the exact distribution for up to 50 non-zero differences without ties,
            a full enumeration of the 2^n sign changes when there are ties or zeros and n ≤ 13,
            else the normal approximation (without continuity correction).

    Returns:
        A :class:`TestResult` (no interval; ``details``: ``n_nonzero``).

    Examples:
        >>> from evalcore.stats import wilcoxon
        >>> r = wilcoxon([0.9, 0.7, 0.8, 0.6, 0.75], [0.5, 0.6, 0.7, 0.4, 0.7])
        >>> r.statistic, r.p_value, r.n
        (0.0, 0.0625, 5)
    """
    x, y = as_pair(a, b)
    _check_alternative(alternative)
    d = x - y
    n = x.size
    n_nonzero = int(np.count_nonzero(d))
    diff = float(d.mean())
    if n_nonzero == 0:
        return TestResult("wilcoxon", 0.0, 1.0, n, diff, details={"n_nonzero": 0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = sps.wilcoxon(x, y, zero_method=zero_method, alternative=alternative, method=method)
    return TestResult("wilcoxon", float(res.statistic), float(res.pvalue), n, diff, details={"n_nonzero": n_nonzero})


def mcnemar(a: ArrayLike, b: ArrayLike, *, exact: bool | None = None, exact_below: int = 25) -> TestResult:
    """McNemar's test for paired binary scores (McNemar 1947).

    With n_10 = #{a = 1, b = 0} and n_01 = #{a = 0, b = 1} (the discordant pairs), m = n_10 + n_01:

    - exact (default when m < ``exact_below`` = 25): p = min(1, 2 · P[Bin(m, ½) ≤ min(n_10, n_01)]),
      statistic min(n_10, n_01);
    - χ² with continuity correction otherwise: χ² = (|n_10 − n_01| − 1)² / m, p = P[χ²₁ ≥ χ²].

    Matches ``statsmodels.stats.contingency_tables.mcnemar(table, exact=…, correction=True)``.
    No discordant pair gives p = 1.

    Args:
        a: Binary scores (0/1 or booleans) of system A.
        b: Binary scores of system B, same items in the same order.
        exact: Force the exact (True) or χ² (False) version; None chooses by ``exact_below``.
        exact_below: Discordant-pair count under which the exact test is used.

    Returns:
        A :class:`TestResult` (``details``: ``n_10``, ``n_01``, ``exact``).

    Examples:
        >>> from evalcore.stats import mcnemar
        >>> r = mcnemar([1, 1, 1, 1, 0, 1, 1, 0], [0, 0, 1, 0, 0, 1, 0, 0])
        >>> r.p_value, r.difference, r.details
        (0.125, 0.5, {'n_10': 4, 'n_01': 0, 'exact': True})
    """
    x, y = as_pair(a, b)
    check_binary(x, "a")
    check_binary(y, "b")
    n10 = int(np.count_nonzero((x == 1) & (y == 0)))
    n01 = int(np.count_nonzero((x == 0) & (y == 1)))
    m = n10 + n01
    use_exact = (m < exact_below) if exact is None else bool(exact)
    if use_exact:
        stat = float(min(n10, n01))
        p = 1.0 if m == 0 else min(1.0, 2.0 * float(sps.binom.cdf(min(n10, n01), m, 0.5)))
    elif m == 0:
        stat, p = 0.0, 1.0
    else:
        stat = (abs(n10 - n01) - 1.0) ** 2 / m
        p = float(sps.chi2.sf(stat, 1))
    diff = float((x - y).mean())
    return TestResult("mcnemar", stat, p, x.size, diff, details={"n_10": n10, "n_01": n01, "exact": use_exact})


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
    method: Literal["percentile", "bca"] = "bca",
) -> TestResult:
    """Paired bootstrap of the mean difference d̄ = mean(a − b) (Efron 1979; BCa Efron 1987).

    Items are resampled with replacement as pairs (so the correlation between systems is kept):
    θ*_b = mean of the resampled d, b = 1..B. Interval: percentile or BCa quantiles of θ*.
    Two-sided p-value from the bootstrap distribution shifted to the null (Efron & Tibshirani
    16.4): p = (1 + #{|θ*_b − d̄| ≥ |d̄|}) / (B + 1). The statistic is d̄; ``details["se"]`` is
    the standard deviation of θ*.

    Vectorized: 10,000 resamples of 10,000 items take well under a second (see
    ``benchmarks/bench_bootstrap.py``).

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        n_resamples: Number of resamples B.
        confidence: Confidence level of the interval.
        seed: Seed or Generator (deterministic for a given seed).
        method: "bca" (default) or "percentile".

    Returns:
        A :class:`TestResult`.

    Raises:
        EvalcoreError: fewer than 2 pairs, unequal lengths, non-finite values.

    Examples:
        >>> from evalcore.stats import paired_bootstrap
        >>> r = paired_bootstrap([0.9, 0.7, 0.8, 0.6, 0.75], [0.5, 0.6, 0.7, 0.4, 0.7], n_resamples=2000, seed=0)
        >>> round(r.difference, 4), round(r.ci_low, 4), round(r.ci_high, 4), round(r.p_value, 4)
        (0.17, 0.09, 0.33, 0.004)
    """
    x, y = as_pair(a, b)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    confidence = check_probability(confidence, "confidence")
    if method not in ("percentile", "bca"):
        raise EvalcoreError(f"unknown method {method!r}; use 'percentile' or 'bca'", field="method")
    if x.size < 2:
        raise EvalcoreError(
            "the paired bootstrap needs at least 2 items (one item cannot be resampled into a distribution)", field="a"
        )
    d = x - y
    diff = float(d.mean())
    theta_b = bootstrap_means(d, n_resamples, rng_from(seed))
    if method == "bca":
        low, high = bca_interval_mean(d, theta_b, confidence)
    else:
        low, high = percentile_interval(theta_b, confidence)
    tol = 1e-12 * max(1.0, abs(diff))
    extreme = int(np.count_nonzero(np.abs(theta_b - diff) >= abs(diff) - tol))
    p = (1.0 + extreme) / (n_resamples + 1.0)
    se = float(theta_b.std(ddof=1)) if n_resamples > 1 else 0.0
    return TestResult(
        "paired_bootstrap",
        diff,
        min(1.0, p),
        x.size,
        diff,
        low,
        high,
        {"se": se, "n_resamples": n_resamples, "method": method},
    )


def permutation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
) -> TestResult:
    """Approximate-randomization (sign-flip permutation) test of mean(a − b) = 0 (Fisher 1935;
    Noreen 1989).

    Under the null the labels within a pair are exchangeable, so each difference keeps or flips
    its sign: T(s) = (1/n) Σ s_i d_i with s ∈ {−1, +1}^n. When 2^n ≤ ``n_resamples`` all sign
    vectors are enumerated and p = #{|T(s)| ≥ |T_obs|} / 2^n (exact); otherwise B random sign
    vectors give p = (1 + #{|T(s_b)| ≥ |T_obs|}) / (B + 1). Agrees with
    ``scipy.stats.permutation_test(..., permutation_type="samples")``.

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        n_resamples: Random sign vectors B (when not exact).
        seed: Seed or Generator.

    Returns:
        A :class:`TestResult` (statistic = observed mean difference; ``details``: ``exact``,
        ``n_resamples``).

    Examples:
        >>> from evalcore.stats import permutation_test
        >>> r = permutation_test([0.9, 0.7, 0.8, 0.6, 0.75], [0.5, 0.6, 0.7, 0.4, 0.7])
        >>> round(r.difference, 4), r.p_value, r.details  # 5 pairs: all 2**5 sign flips
        (0.17, 0.0625, {'exact': True, 'n_resamples': 32})
    """
    x, y = as_pair(a, b)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    d = x - y
    n = d.size
    obs = float(d.sum())
    tol = 1e-12 * max(1.0, float(np.abs(d).sum()))
    exact = 2**n <= n_resamples
    if exact:
        null = all_sign_flip_sums(d)
        p = float(np.count_nonzero(np.abs(null) >= abs(obs) - tol)) / null.size
        used = int(null.size)
    else:
        null = sign_flip_sums(d, n_resamples, rng_from(seed))
        p = (1.0 + float(np.count_nonzero(np.abs(null) >= abs(obs) - tol))) / (n_resamples + 1.0)
        used = n_resamples
    return TestResult("permutation", obs / n, min(1.0, p), n, obs / n, details={"exact": exact, "n_resamples": used})


def clustered_difference(
    a: ArrayLike,
    b: ArrayLike,
    clusters: Sequence[Any] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> TestResult:
    """Paired t-test of mean(a − b) with a small-sample-corrected cluster-robust standard
    error (CR1 with G − 1 degrees of freedom; Cameron & Miller 2015, Miller 2024).

    With d_i = a_i − b_i, n items in G clusters c (e.g. questions sharing a subject):
    SE_CR0 = √( Σ_c (Σ_{i∈c} (d_i − d̄))² ) / n, SE = √(G/(G − 1)) · SE_CR0 (CR1: for an
    intercept-only model statsmodels' factor G/(G − 1) · (n − 1)/(n − k) is G/(G − 1)),
    t = d̄ / SE with G − 1 degrees of freedom, p = 2 · P(T_{G−1} > |t|), interval
    d̄ ± t_{1−α/2, G−1} · SE. This is statsmodels' ``OLS(d, 1).fit(cov_type="cluster",
    use_t=True)`` with its defaults (``use_correction=True``, ``df_correction=True``). Without the
    correction (a z-test on SE_CR0) the test is anti-conservative when the clusters are few:
    on 24 MMLU items in 11 subjects it gave p = 0.06 where exact McNemar gives 0.22.

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        clusters: Cluster label of each item.
        confidence: Confidence level of the interval.

    Returns:
        A :class:`TestResult` (``statistic`` is t; ``details``: ``se`` (CR1), ``se_cr0``,
        ``df`` (G − 1), ``n_clusters``).

    Raises:
        EvalcoreError: fewer than 2 clusters, or a label missing.

    Examples:
        >>> from evalcore.stats import clustered_difference
        >>> a = [1, 1, 0, 1, 1, 0, 1, 1]
        >>> b = [0, 1, 0, 0, 1, 0, 0, 1]
        >>> r = clustered_difference(a, b, ['x', 'x', 'y', 'y', 'z', 'z', 'w', 'w'])
        >>> r.difference, round(r.details['se'], 4), r.details['df'], round(r.p_value, 4)
        (0.375, 0.125, 3, 0.0577)
    """
    x, y = as_pair(a, b)
    confidence = check_probability(confidence, "confidence")
    d = x - y
    codes = _codes(clusters, d.size)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise EvalcoreError("clustered standard errors need at least 2 clusters", field="clusters")
    diff = float(d.mean())
    se0 = clustered_se(d, codes)
    se = se0 * math.sqrt(n_clusters / (n_clusters - 1))
    df = n_clusters - 1
    details = {"se": se, "se_cr0": se0, "df": df, "n_clusters": n_clusters}
    if se == 0.0:
        t, p = (0.0, 1.0) if diff == 0.0 else (math.copysign(math.inf, diff), 0.0)
        return TestResult("clustered", t, p, d.size, diff, diff, diff, details)
    t = diff / se
    p = float(2.0 * sps.t.sf(abs(t), df))
    half = float(sps.t.ppf(1.0 - (1.0 - confidence) / 2.0, df)) * se
    return TestResult("clustered", t, p, d.size, diff, diff - half, diff + half, details)


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's d for paired data (d_z; Cohen 1988): mean(d) / sd(d), d = a − b, sd with ddof = 1.

    Equals t / √n of the paired t-test. Constant differences give 0 when they are all zero and
    ±∞ otherwise.

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).

    Returns:
        The standardized mean difference.

    Examples:
        >>> from evalcore.stats import cohens_d_paired
        >>> round(cohens_d_paired([1, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0]), 4)
        0.6455
    """
    x, y = as_pair(a, b)
    if x.size < 2:
        raise EvalcoreError("Cohen's d needs at least 2 items", field="a")
    d = x - y
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


def mean_difference(a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95) -> dict[str, float]:
    """Mean difference d̄ = mean(a − b) with its t interval d̄ ± t_{1−α/2, n−1} s_d/√n
    (Student 1908).

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        confidence: Confidence level.

    Returns:
        ``{"difference", "ci_low", "ci_high", "se", "n"}``.

    Examples:
        >>> from evalcore.stats import mean_difference
        >>> d = mean_difference([0.9, 0.7, 0.8, 0.6], [0.5, 0.6, 0.7, 0.4])
        >>> {k: round(v, 4) for k, v in d.items()}
        {'difference': 0.2, 'ci_low': -0.025, 'ci_high': 0.425, 'se': 0.0707, 'n': 4}
    """
    res = paired_t(a, b, confidence=confidence)
    se = res.details["se"] if res.details else float("nan")
    return {"difference": res.difference, "ci_low": res.ci_low, "ci_high": res.ci_high, "se": float(se), "n": res.n}
