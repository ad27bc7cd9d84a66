"""mean_ci(method='clustered') carries the CR1 factor and t with G - 1 degrees of freedom.

With 11 clusters the uncorrected z interval (the old one) is anti-conservative; the corrected
interval must equal statsmodels' cluster-robust OLS of the scores on a constant.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from evalcore.stats import clustered_se, mean_ci


def _data(seed: int, n: int = 24, g: int = 11):
    rng = np.random.default_rng(seed)
    clusters = np.array([f"s{i % g}" for i in range(n)])
    values = rng.integers(0, 2, size=n).astype(float)
    return values, clusters


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_clustered_mean_ci_matches_statsmodels_cluster_robust_ols(seed):
    values, clusters = _data(seed)
    codes = np.unique(clusters, return_inverse=True)[1]
    fit = sm.OLS(values, np.ones((values.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    low, high = fit.conf_int(alpha=0.05)[0]
    got = mean_ci(values, clusters=clusters)
    assert got["method"] == "clustered"
    assert got["n_clusters"] == 11
    assert got["se"] == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert got["ci_low"] == pytest.approx(float(low), rel=1e-10)
    assert got["ci_high"] == pytest.approx(float(high), rel=1e-10)


def test_clustered_interval_is_wider_than_the_uncorrected_z_interval():
    values, clusters = _data(5)
    got = mean_ci(values, clusters=clusters)
    z_half = 1.959963984540054 * clustered_se(values, clusters)
    assert (got["ci_high"] - got["ci_low"]) / 2 > z_half * 1.15  # t_10 / z * sqrt(11/10) = 1.19
