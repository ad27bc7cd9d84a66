"""Paired tests: cross-checks against scipy, statsmodels and hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.weightstats import DescrStatsW

from evalcore.errors import EvalcoreError
from evalcore.stats import (
    cohens_d_paired,
    mcnemar,
    mean_difference,
    paired_bootstrap,
    paired_t,
    permutation_test,
    wilcoxon,
)


def _pair(seed: int, n: int = 40, shift: float = 0.3):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    return a, 0.6 * a + rng.normal(shift, 1.0, size=n)


@pytest.mark.parametrize("seed", range(15))
def test_paired_t_matches_statsmodels_and_formula(seed):
    a, b = _pair(seed, n=int(np.random.default_rng(seed).integers(2, 80)))
    d = a - b
    res = paired_t(a, b, confidence=0.9)
    ds = DescrStatsW(d)
    t_ref, p_ref, _ = ds.ttest_mean(0.0)
    assert res.statistic == pytest.approx(t_ref)
    assert res.p_value == pytest.approx(p_ref)
    assert (res.ci_low, res.ci_high) == pytest.approx(ds.tconfint_mean(alpha=0.1))
    assert res.statistic == pytest.approx(d.mean() / (d.std(ddof=1) / math.sqrt(d.size)))
    assert res.difference == pytest.approx(d.mean()) and res.n == d.size
    assert res.details["df"] == d.size - 1
    for alt in ("less", "greater"):
        assert paired_t(a, b, alternative=alt).p_value == pytest.approx(sps.ttest_rel(a, b, alternative=alt).pvalue)


def test_paired_t_constant_differences_and_errors():
    r = paired_t([1, 2, 3], [1, 2, 3])
    assert (r.statistic, r.p_value, r.ci_low, r.ci_high) == (0.0, 1.0, 0.0, 0.0)
    r = paired_t([2, 3, 4], [1, 2, 3])
    assert r.statistic == math.inf and r.p_value == 0.0 and r.ci_low == r.ci_high == 1.0
    assert paired_t([2, 3, 4], [1, 2, 3], alternative="less").p_value == 1.0
    with pytest.raises(EvalcoreError, match="at least 2"):
        paired_t([1.0], [0.0])
    with pytest.raises(EvalcoreError, match="length"):
        paired_t([1.0, 2.0], [0.0])
    with pytest.raises(EvalcoreError, match="empty"):
        paired_t([], [])
    with pytest.raises(EvalcoreError, match="alternative"):
        paired_t([1, 2], [2, 1], alternative="bigger")


@pytest.mark.parametrize("seed", range(10))
def test_wilcoxon_matches_scipy_and_normal_approximation(seed):
    a, b = _pair(seed, n=30)
    res = wilcoxon(a, b)
    ref = sps.wilcoxon(a, b)
    assert res.statistic == ref.statistic and res.p_value == pytest.approx(ref.pvalue)
    # independent normal approximation (no ties, no zeros): W+ = Σ ranks of positive d
    d = a - b
    ranks = sps.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    n = d.size
    z = (w_plus - n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    approx = wilcoxon(a, b, method="approx")
    assert approx.p_value == pytest.approx(2 * sps.norm.sf(abs(z)), rel=1e-9)


def test_wilcoxon_hand_computed_exact_and_ties():
    # d = [1, 2, 3, 4, 5] all positive: W- = 0, exact two-sided p = 2 / 2^5
    r = wilcoxon([2, 4, 6, 8, 10], [1, 2, 3, 4, 5])
    assert r.statistic == 0.0 and r.p_value == pytest.approx(2 / 32)
    r = wilcoxon([1, 1, 1], [1, 1, 1])
    assert r.p_value == 1.0 and r.details["n_nonzero"] == 0
    assert wilcoxon([3.0], [1.0]).p_value == 1.0  # n = 1: no evidence either way


@pytest.mark.parametrize("seed", range(30))
def test_mcnemar_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    a = (rng.random(n) < rng.uniform(0.2, 0.9)).astype(int)
    flip = rng.random(n) < rng.uniform(0.0, 0.4)
    b = np.where(flip, 1 - a, a)
    res = mcnemar(a, b)
    n10 = int(np.sum((a == 1) & (b == 0)))
    n01 = int(np.sum((a == 0) & (b == 1)))
    table = [[np.sum((a == 1) & (b == 1)), n10], [n01, np.sum((a == 0) & (b == 0))]]
    exact = n10 + n01 < 25
    assert res.details["exact"] is exact
    if n10 + n01 == 0:
        assert res.p_value == 1.0
        return
    ref = sm_mcnemar(table, exact=exact, correction=True)
    assert res.p_value == pytest.approx(min(1.0, ref.pvalue), abs=1e-12)
    assert res.statistic == pytest.approx(ref.statistic)
    for forced in (True, False):
        ref = sm_mcnemar(table, exact=forced, correction=True)
        assert mcnemar(a, b, exact=forced).p_value == pytest.approx(min(1.0, ref.pvalue))


def test_mcnemar_hand_computed_and_errors():
    # 5 discordant pairs all favouring a: p = 2 * 0.5^5
    a = [1] * 5 + [1, 0]
    b = [0] * 5 + [1, 0]
    r = mcnemar(a, b)
    assert r.p_value == pytest.approx(2 / 32) and r.details == {"n_10": 5, "n_01": 0, "exact": True}
    assert mcnemar([True, False], [True, False]).p_value == 1.0
    with pytest.raises(EvalcoreError, match="binary"):
        mcnemar([0.5, 1.0], [1.0, 0.0])


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_paired_bootstrap_agrees_with_scipy(method):
    a, b = _pair(3, n=200)
    ours = paired_bootstrap(a, b, n_resamples=20_000, seed=0, method=method)
    ref = sps.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(1),
        method="BCa" if method == "bca" else "percentile",
    )
    se = ref.standard_error
    assert ours.details["se"] == pytest.approx(se, rel=0.03)
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.08 * se)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.08 * se)
    assert ours.difference == pytest.approx(np.mean(a - b))


def test_paired_bootstrap_p_value_and_determinism():
    a, b = _pair(4, n=300, shift=0.5)
    strong = paired_bootstrap(a, b, seed=0)
    assert strong.p_value < 0.001 and strong.ci_high < 0
    assert paired_bootstrap(a, b, seed=0) == strong
    null_a, null_b = _pair(5, n=300, shift=0.0)
    t_p = paired_t(null_a, null_b).p_value
    boot_p = paired_bootstrap(null_a, null_b, seed=0).p_value
    assert boot_p == pytest.approx(t_p, abs=0.03)
    same = paired_bootstrap([1, 2, 3], [1, 2, 3])
    assert same.p_value == 1.0 and same.ci_low == same.ci_high == 0.0
    with pytest.raises(EvalcoreError, match="n_resamples"):
        paired_bootstrap(a, b, n_resamples=0)
    # n = 1: a single pair cannot be resampled into evidence (it used to give p = 1/(B + 1))
    with pytest.raises(EvalcoreError, match="at least 2 items"):
        paired_bootstrap([1.0], [0.0])


@pytest.mark.parametrize("seed", range(8))
def test_permutation_exact_matches_scipy(seed):
    a, b = _pair(seed, n=int(np.random.default_rng(seed).integers(3, 11)))
    ours = permutation_test(a, b)
    ref = sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    )
    assert ours.details["exact"] is True
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_permutation_monte_carlo_agrees_with_scipy_and_t():
    a, b = _pair(11, n=60, shift=0.25)
    ours = permutation_test(a, b, n_resamples=20_000, seed=0)
    ref = sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(2),
    )
    assert ours.details["exact"] is False
    assert ours.p_value == pytest.approx(ref.pvalue, abs=0.01)
    assert ours.p_value == pytest.approx(paired_t(a, b).p_value, abs=0.02)
    assert permutation_test(a, b, n_resamples=5000, seed=1) == permutation_test(a, b, n_resamples=5000, seed=1)


def test_cohens_d_and_mean_difference():
    a, b = _pair(6, n=50)
    d = a - b
    assert cohens_d_paired(a, b) == pytest.approx(d.mean() / d.std(ddof=1))
    assert cohens_d_paired(a, b) == pytest.approx(paired_t(a, b).statistic / math.sqrt(50))
    assert cohens_d_paired([1, 2], [1, 2]) == 0.0
    assert cohens_d_paired([1, 2], [0, 1]) == math.inf
    md = mean_difference(a, b, confidence=0.99)
    ref = DescrStatsW(d).tconfint_mean(alpha=0.01)
    assert (md["ci_low"], md["ci_high"]) == pytest.approx(ref)
    assert md["se"] == pytest.approx(sps.sem(d)) and md["n"] == 50
    with pytest.raises(EvalcoreError):
        cohens_d_paired([1.0], [2.0])


def test_clustered_difference_matches_statsmodels_cluster_robust_t_cr1():
    import statsmodels.api as sm

    from evalcore.stats import clustered_difference

    rng = np.random.default_rng(12)
    groups = np.repeat(np.arange(12), 10)
    effect = rng.normal(0, 0.3, 12)[groups]  # differences correlated within a cluster
    a = rng.random(120) + effect
    b = rng.random(120)
    res = clustered_difference(a, b, groups, confidence=0.9)
    # statsmodels' defaults: CR1 factor (use_correction=True) and t with G − 1 df
    fit = sm.OLS(a - b, np.ones((120, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert fit.df_resid_inference == 11
    assert res.details["se"] == pytest.approx(float(fit.bse[0]))
    assert res.statistic == pytest.approx(float(fit.tvalues[0]))
    assert res.p_value == pytest.approx(float(fit.pvalues[0]))
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(fit.conf_int(alpha=0.1)[0]))
    assert res.details["n_clusters"] == 12 and res.details["df"] == 11
    # wider than the unclustered interval when differences cluster
    t = paired_t(a, b, confidence=0.9)
    assert res.ci_high - res.ci_low > t.ci_high - t.ci_low
    with pytest.raises(EvalcoreError, match="2 clusters"):
        clustered_difference(a, b, np.zeros(120))
    same = clustered_difference([1, 2, 3], [1, 2, 3], ["x", "y", "y"])
    assert same.p_value == 1.0


def test_paired_bootstrap_on_ten_thousand_items():
    # Its speed is measured by benchmarks/bench_bootstrap.py (tests assert behaviour, not timings).
    rng = np.random.default_rng(0)
    a = rng.random(10_000)
    b = np.clip(a + rng.normal(0.01, 0.2, 10_000), 0, 1)
    res = paired_bootstrap(a, b, n_resamples=10_000, seed=0)
    assert res.difference == pytest.approx(float(np.mean(a - b)))
    assert res.ci_low < res.difference < res.ci_high
