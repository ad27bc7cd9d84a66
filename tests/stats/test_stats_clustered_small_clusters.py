"""Clustered inference with few clusters (issue 31, item 3): CR1 standard error and t with
G − 1 degrees of freedom, checked against statsmodels' cluster-robust OLS; the MDD from the
same variance; the compare report names the number of clusters."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from evalcore.errors import EvalcoreError
from evalcore.stats import (
    clustered_difference,
    compare,
    mcnemar,
    min_detectable_difference,
    min_detectable_difference_se,
)

# 24 MMLU-like items in 11 subjects; A right and B wrong on 7, the reverse on 2
SUBJECTS = [f"s{k}" for k in [0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 10]]
A = np.array([1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0], float)
B = np.array([0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0], float)


def _statsmodels_fit(d: np.ndarray, groups) -> object:
    codes = np.unique(np.asarray(groups), return_inverse=True)[1]
    # statsmodels' defaults for cluster-robust OLS: use_correction=True (CR1 factor
    # G/(G−1)·(n−1)/(n−k), which is G/(G−1) with a constant alone) and df_correction=True
    # (t with G − 1 degrees of freedom when use_t=True)
    return sm.OLS(d, np.ones((d.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "use_correction": True, "df_correction": True}, use_t=True
    )


def test_clustered_test_on_24_items_in_11_subjects_matches_statsmodels_cluster_robust_ols():
    res = clustered_difference(A, B, SUBJECTS)
    fit = _statsmodels_fit(A - B, SUBJECTS)
    assert fit.df_resid_inference == 10
    assert res.details["n_clusters"] == 11 and res.details["df"] == 10
    assert res.details["se"] == pytest.approx(float(fit.bse[0]), rel=1e-12)
    assert res.statistic == pytest.approx(float(fit.tvalues[0]), rel=1e-12)
    assert res.p_value == pytest.approx(float(fit.pvalues[0]), rel=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(fit.conf_int(alpha=0.05)[0]))
    # the uncorrected z-test (CR0, normal) was anti-conservative here: p 0.076 where the
    # exact McNemar test gives 0.18; the corrected test lies between the two
    z_p = 2 * sps.norm.sf(abs(res.difference) / res.details["se_cr0"])
    assert z_p == pytest.approx(0.0758, abs=1e-3)
    assert mcnemar(A, B).p_value == pytest.approx(0.1797, abs=1e-3)
    assert res.p_value == pytest.approx(0.1213, abs=1e-3)
    assert z_p < res.p_value < mcnemar(A, B).p_value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_difference_matches_statsmodels_on_random_clusters(seed):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(3, 15))
    groups = rng.integers(0, g, 80)
    groups[:g] = np.arange(g)  # every cluster present
    a = rng.normal(size=80) + rng.normal(0, 0.5, g)[groups]
    b = rng.normal(size=80)
    res = clustered_difference(a, b, groups, confidence=0.9)
    fit = _statsmodels_fit(a - b, groups)
    assert res.details["se"] == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert res.p_value == pytest.approx(float(fit.pvalues[0]), rel=1e-8)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(fit.conf_int(alpha=0.1)[0]))
    assert res.details["se"] == pytest.approx(res.details["se_cr0"] * math.sqrt(g / (g - 1)))


def test_mdd_of_the_clustered_comparison_uses_its_variance_and_degrees_of_freedom():
    ids = [f"q{i:02d}" for i in range(24)]
    res = compare(dict(zip(ids, A)), dict(zip(ids, B)), clusters=dict(zip(ids, SUBJECTS)), test="clustered")
    assert res.test == "clustered" and res.extra["n_clusters"] == 11
    se, df = res.extra["clustered_se"], res.extra["clustered_df"]
    assert df == 10 and res.extra["mdd_basis"] == "clustered"
    mdd = res.extra["mdd_80"]
    assert mdd == pytest.approx(min_detectable_difference_se(se, 0.05, 0.8, df=10))
    # 80% power of the two-sided t-test with 10 df at a true difference of mdd
    crit = sps.t.ppf(0.975, 10)
    power = sps.nct.sf(crit, 10, mdd / se) + sps.nct.cdf(-crit, 10, mdd / se)
    assert power == pytest.approx(0.8, abs=1e-9)
    # larger than the MDD that ignores the clusters (paired SD, normal approximation)
    plain = compare(dict(zip(ids, A)), dict(zip(ids, B)))
    assert plain.extra["mdd_basis"] == "paired" and mdd > plain.extra["mdd_80"]


def test_mdd_from_a_standard_error_without_df_is_the_normal_mdd():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=50), rng.normal(size=50)
    sd_a, sd_b = x.std(ddof=1), y.std(ddof=1)
    rho = float(np.corrcoef(x, y)[0, 1])
    sd_d = math.sqrt(sd_a**2 + sd_b**2 - 2 * rho * sd_a * sd_b)
    assert min_detectable_difference_se(sd_d / math.sqrt(50)) == pytest.approx(
        min_detectable_difference(50, sd_a, sd_b, rho), rel=1e-9
    )
    # t with few degrees of freedom needs a larger difference than the normal
    assert (
        min_detectable_difference_se(0.1, df=3)
        > min_detectable_difference_se(0.1, df=30)
        > min_detectable_difference_se(0.1)
    )
    with pytest.raises(EvalcoreError, match="standard error is 0"):
        min_detectable_difference_se(0.0)
    with pytest.raises(EvalcoreError):
        min_detectable_difference_se(0.1, df=0)


FIXTURES = Path(__file__).resolve().parents[1] / "imports" / "fixtures"


def test_compare_report_says_how_many_clusters(tmp_path):
    from evalcore.imports import compare_sources, format_comparison

    (results,) = (FIXTURES / "lm_eval").rglob("results_*.json")
    sources = [results, FIXTURES / "inspect" / "ec_mmlu.eval", FIXTURES / "evalcore" / "evalcore-mmlu"]
    cmp = compare_sources(
        sources,
        metric=["exact_match,letter", "choice", "flexible"],
        task="ec_mmlu",
        labels=["lm", "inspect", "ec"],
        import_dir=tmp_path,
        n_resamples=200,
        cluster="subject",
    )
    g = len(set(cmp.alignment.clusters.values()))
    assert g >= 2 and set(cmp.table["n_clusters"]) == {g}
    assert cmp.to_dict()["n_clusters"] == g
    text = format_comparison(cmp)
    # few clusters (at most 12): the wild cluster bootstrap, and the report says so
    assert f"{g} clusters (subject): few clusters, so a wild cluster bootstrap (WCR, null imposed" in text
    assert "MDD80 from the CR1 variance, t with G-1 df" in text and set(cmp.table["test"]) == {"wild_cluster"}
    for row in cmp.table.itertuples():
        if row.mdd_80 == row.mdd_80 and row.mdd_80 is not None:
            expected = min_detectable_difference_se(
                row.clustered_se, 0.05, 0.8, df=g - 1, max_difference=row.score_range
            )
            assert row.mdd_80 == pytest.approx(expected)
