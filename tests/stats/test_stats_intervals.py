"""Intervals: Wilson vs statsmodels, clustered SE vs statsmodels OLS, bootstrap vs scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from evalcore.errors import EvalcoreError
from evalcore.stats import bootstrap_interval, clustered_se, mean_ci, wilson_interval


@pytest.mark.parametrize("seed", range(40))
def test_wilson_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    s = int(rng.integers(0, n + 1))
    conf = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    lo, hi = proportion_confint(s, n, alpha=1 - conf, method="wilson")
    assert wilson_interval(s, n, conf) == pytest.approx((lo, hi), abs=1e-12)


def test_wilson_edges_and_errors():
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    lo, hi = wilson_interval(1, 1)
    assert 0.0 < lo < 1.0 and hi == 1.0
    # hand-computed: s=5, n=10, z=1.959964: centre 0.5, half = z/(1+z²/10)*sqrt(0.025+z²/400)
    z = sps.norm.ppf(0.975)
    half = z / (1 + z * z / 10) * math.sqrt(0.025 + z * z / 400)
    assert wilson_interval(5, 10) == pytest.approx((0.5 - half, 0.5 + half))
    for bad in [
        dict(successes=1, n=0),
        dict(successes=11, n=10),
        dict(successes=-1, n=10),
        dict(successes=1, n=10, confidence=1.0),
    ]:
        with pytest.raises(EvalcoreError):
            wilson_interval(**bad)


@pytest.mark.parametrize("seed", range(10))
def test_clustered_se_matches_statsmodels_cluster_robust_ols(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    groups = rng.integers(0, int(rng.integers(2, 12)), n)
    x = (rng.random(n) < 0.3 + 0.05 * groups).astype(float)
    fit = sm.OLS(x, np.ones((n, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    assert clustered_se(x, groups) == pytest.approx(float(fit.bse[0]), rel=1e-10)
    # labels of any type
    assert clustered_se(x, [f"subject-{g}" for g in groups]) == pytest.approx(float(fit.bse[0]))


def test_clustered_se_hand_computed_and_singletons():
    # x = [1, 0, 1, 1], mean 0.75; clusters {a: [1, 0], b: [1, 1]}
    # sums of deviations: a: 0.25 - 0.75 = -0.5, b: 0.25 + 0.25 = 0.5 → sqrt(0.5)/4
    assert clustered_se([1, 0, 1, 1], ["a", "a", "b", "b"]) == pytest.approx(math.sqrt(0.5) / 4)
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    assert clustered_se(x, range(50)) == pytest.approx(math.sqrt(np.sum((x - x.mean()) ** 2)) / 50)
    with pytest.raises(EvalcoreError, match="cluster"):
        clustered_se([1, 2, 3], ["a", "b"])
    with pytest.raises(EvalcoreError, match="missing cluster"):
        clustered_se([1, 2], ["a", None])


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_interval_agrees_with_scipy(method, seed):
    rng = np.random.default_rng(seed)
    x = rng.exponential(size=150)  # skewed, so BCa and percentile differ
    se = x.std(ddof=1) / math.sqrt(x.size)
    ours = bootstrap_interval(x, n_resamples=20_000, seed=seed, method=method)
    ref = sps.bootstrap(
        (x,),
        np.mean,
        n_resamples=20_000,
        rng=np.random.default_rng(99),
        method="BCa" if method == "bca" else "percentile",
    ).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.08 * se)
    assert ours[1] == pytest.approx(ref.high, abs=0.08 * se)


def test_bootstrap_interval_is_deterministic_and_general_statistic():
    x = np.random.default_rng(1).normal(size=300)
    assert bootstrap_interval(x, seed=3) == bootstrap_interval(x, seed=3)
    assert bootstrap_interval(x, seed=3) != bootstrap_interval(x, seed=4)
    lo, hi = bootstrap_interval(x, statistic=np.median, n_resamples=2000, seed=0)
    assert lo < np.median(x) < hi
    assert bootstrap_interval(x, statistic=np.median, n_resamples=2000, seed=0) == (lo, hi)
    # constant data and n = 1 give a point interval
    assert bootstrap_interval([2.0, 2.0, 2.0]) == (2.0, 2.0)
    assert bootstrap_interval([5.0], method="percentile") == (5.0, 5.0)
    with pytest.raises(EvalcoreError, match="empty"):
        bootstrap_interval([])
    with pytest.raises(EvalcoreError, match="method"):
        bootstrap_interval([1.0, 2.0], method="studentized")


def test_bootstrap_multinomial_path_has_the_index_resampling_distribution():
    from evalcore.stats._resample import bootstrap_means

    x = np.r_[np.ones(30), np.zeros(70)]
    means = bootstrap_means(x, 40_000, np.random.default_rng(0))  # multinomial path
    assert means.mean() == pytest.approx(0.3, abs=0.002)
    assert means.std() == pytest.approx(math.sqrt(0.3 * 0.7 / 100), rel=0.03)
    cont = x + np.linspace(0, 1e-9, 100)  # 100 distinct values → index path
    means2 = bootstrap_means(cont, 40_000, np.random.default_rng(0))
    assert means2.std() == pytest.approx(math.sqrt(0.3 * 0.7 / 100), rel=0.03)


def test_bootstrap_percentile_interval_coverage():
    rng = np.random.default_rng(7)
    hits = 0
    trials = 150
    for i in range(trials):
        x = rng.normal(1.0, 2.0, size=60)
        lo, hi = bootstrap_interval(x, n_resamples=1000, seed=i, method="bca")
        hits += lo <= 1.0 <= hi
    assert 0.88 <= hits / trials <= 0.99


def test_mean_ci_methods():
    binary = np.array([1, 0, 1, 1, 0, 1, 1, 1], dtype=float)
    w = mean_ci(binary)
    assert w["method"] == "wilson" and w["n"] == 8 and w["mean"] == 0.75
    assert (w["ci_low"], w["ci_high"]) == pytest.approx(wilson_interval(6, 8))
    assert w["se"] == pytest.approx(math.sqrt(0.75 * 0.25 / 8))
    x = np.random.default_rng(0).normal(size=40)
    t = mean_ci(x)
    ref = sps.t.interval(0.95, 39, loc=x.mean(), scale=sps.sem(x))
    assert t["method"] == "t" and (t["ci_low"], t["ci_high"]) == pytest.approx(ref)
    b = mean_ci(x, method="bootstrap", seed=1)
    assert b["ci_low"] < x.mean() < b["ci_high"]
    assert b["se"] == pytest.approx(sps.sem(x), rel=0.1)
    c = mean_ci(x, clusters=np.arange(40) % 4)
    se = clustered_se(x, np.arange(40) % 4) * math.sqrt(4 / 3)  # CR1, G = 4
    assert c["method"] == "clustered" and c["se"] == pytest.approx(se) and c["n_clusters"] == 4
    assert c["ci_high"] - c["mean"] == pytest.approx(sps.t.ppf(0.975, 3) * se)
    assert all(isinstance(v, (int, float, str)) for v in c.values())


def test_mean_ci_edges_and_errors():
    one = mean_ci([0.4])
    assert one["mean"] == 0.4 and math.isnan(one["ci_low"]) and math.isnan(one["se"])
    assert mean_ci([1.0])["method"] == "wilson"
    single_cluster = mean_ci([0.1, 0.5], clusters=["a", "a"])
    assert math.isnan(single_cluster["se"])
    with pytest.raises(EvalcoreError, match="empty"):
        mean_ci([])
    with pytest.raises(EvalcoreError, match="clusters"):
        mean_ci([1, 0], clusters=["a", "b"], method="wilson")
    with pytest.raises(EvalcoreError, match="binary"):
        mean_ci([0.5, 1.0], method="wilson")
    with pytest.raises(EvalcoreError, match="method"):
        mean_ci([0.5, 1.0], method="jackknife")
    with pytest.raises(EvalcoreError, match="non-finite"):
        mean_ci([0.5, float("nan")])
    with pytest.raises(EvalcoreError, match="clusters"):
        mean_ci([0.5, 1.0], method="clustered")
