"""Multiple-comparison corrections and power, cross-checked against statsmodels and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower, TTestPower

from evalcore.errors import EvalcoreError
from evalcore.stats import (
    adjust_p_values,
    benjamini_hochberg,
    holm,
    min_detectable_difference,
    paired_power,
    paired_sd,
    sample_size_paired,
)


@pytest.mark.parametrize("seed", range(12))  # (multipletests runs gc.collect: keep it few)
def test_corrections_match_statsmodels_and_scipy(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.beta(0.5, 2.0, m)
    if seed % 3 == 0:
        p[: m // 2] = p[0]  # ties
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], atol=1e-14)
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], atol=1e-14)
    np.testing.assert_allclose(benjamini_hochberg(p), sps.false_discovery_control(p), atol=1e-14)
    np.testing.assert_array_equal(adjust_p_values(p, "none"), p)


def test_corrections_hand_computed_and_errors():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → cummax
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    # BH: m p / rank = 0.02, 0.02, 0.04, 0.04 → cummin from the top
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    assert holm([0.3]) == pytest.approx([0.3])
    for bad in ([], [0.1, 1.2], [0.1, float("nan")]):
        with pytest.raises(EvalcoreError):
            holm(bad)
    with pytest.raises(EvalcoreError, match="correction"):
        adjust_p_values([0.1], "bonferroni-ish")


def test_paired_sd_formula():
    assert paired_sd(1.0, 1.0, 0.0) == pytest.approx(math.sqrt(2))
    assert paired_sd(0.5, 0.3, 0.4) == pytest.approx(math.sqrt(0.25 + 0.09 - 2 * 0.4 * 0.15))
    assert paired_sd(1.0, 1.0, 1.0) == 0.0
    with pytest.raises(EvalcoreError, match="correlation"):
        paired_sd(1.0, 1.0, 1.5)
    with pytest.raises(EvalcoreError, match="sd_a"):
        paired_sd(-1.0, 1.0)


@pytest.mark.parametrize("seed", range(25))
def test_power_matches_statsmodels_normal_power(seed):
    rng = np.random.default_rng(seed)
    sd_a, sd_b = rng.uniform(0.2, 1.0, 2)
    rho = float(rng.uniform(-0.5, 0.9))
    delta = float(rng.uniform(0.02, 0.5))
    alpha = float(rng.choice([0.01, 0.05, 0.1]))
    power = float(rng.choice([0.7, 0.8, 0.9]))
    sd = paired_sd(sd_a, sd_b, rho)
    effect = delta / sd
    ref = NormalIndPower()
    n_ref = ref.solve_power(effect_size=effect, nobs1=None, alpha=alpha, power=power, ratio=0)
    n = sample_size_paired(delta, sd_a, sd_b, rho, alpha, power)
    assert n == max(2, math.ceil(n_ref - 1e-6))
    assert paired_power(delta, n, sd_a, sd_b, rho, alpha) >= power
    if n > 2:
        assert paired_power(delta, n - 1, sd_a, sd_b, rho, alpha) < power
    assert paired_power(delta, 37, sd_a, sd_b, rho, alpha) == pytest.approx(ref.power(effect, 37, alpha, ratio=0))
    mdd = min_detectable_difference(120, sd_a, sd_b, rho, alpha, power)
    e_ref = ref.solve_power(effect_size=None, nobs1=120, alpha=alpha, power=power, ratio=0)
    assert mdd == pytest.approx(e_ref * sd, rel=1e-4)  # statsmodels' solver stops early
    assert ref.power(mdd / sd, 120, alpha, ratio=0) == pytest.approx(power, abs=1e-9)
    # closed form n ≈ ((z_{1-α/2} + z_power) σ_d / δ)² is within one item
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    assert abs(n - (z * sd / delta) ** 2) <= 1.0 + 1e-9


@pytest.mark.parametrize(("delta", "sd", "rho"), [(0.1, 0.5, 0.5), (0.2, 1.0, 0.0), (0.05, 0.45, 0.7), (0.5, 1.0, 0.3)])
def test_normal_approximation_close_to_t_power(delta, sd, rho):
    n_normal = sample_size_paired(delta, sd, sd, rho)
    n_t = TTestPower().solve_power(effect_size=delta / paired_sd(sd, sd, rho), alpha=0.05, power=0.8)
    assert n_normal <= math.ceil(n_t) <= n_normal + 3


def test_power_directional_and_correlation_effects():
    # higher correlation between systems → fewer items
    assert sample_size_paired(0.05, 0.5, 0.5, 0.8) < sample_size_paired(0.05, 0.5, 0.5, 0.0)
    one = sample_size_paired(0.1, 0.5, 0.5, 0.5, alternative="larger")
    ref = NormalIndPower().solve_power(effect_size=0.1 / 0.5, alpha=0.05, power=0.8, ratio=0, alternative="larger")
    assert one == math.ceil(ref)
    assert sample_size_paired(-0.1, 0.5, 0.5, 0.5, alternative="smaller") == one
    assert min_detectable_difference(one, 0.5, 0.5, 0.5, alternative="larger") <= 0.1
    with pytest.raises(EvalcoreError, match="delta"):
        sample_size_paired(0.0, 0.5, 0.5)
    with pytest.raises(EvalcoreError, match="delta"):
        sample_size_paired(-0.1, 0.5, 0.5, alternative="larger")
    with pytest.raises(EvalcoreError, match="zero standard deviation"):
        sample_size_paired(0.1, 0.5, 0.5, 1.0)
    with pytest.raises(EvalcoreError, match="power"):
        sample_size_paired(0.1, 0.5, 0.5, power=1.0)
    with pytest.raises(EvalcoreError, match="n"):
        min_detectable_difference(0, 0.5, 0.5)
    for bad in ("100", 2.5, None, True):  # user errors, not TypeError
        with pytest.raises(EvalcoreError, match="field 'n'"):
            min_detectable_difference(bad, 0.5, 0.5)
        with pytest.raises(EvalcoreError, match="field 'n'"):
            paired_power(0.1, bad, 0.5, 0.5)
    assert paired_power(0.1, np.int64(100), 0.5, 0.5, 0.5) == pytest.approx(paired_power(0.1, 100, 0.5, 0.5, 0.5))


def test_power_by_simulation():
    # Monte Carlo check of the power model with a paired t-test on correlated normal scores
    rng = np.random.default_rng(0)
    sd_a, sd_b, rho, delta = 1.0, 1.0, 0.6, 0.25
    n = sample_size_paired(delta, sd_a, sd_b, rho)
    cov = [[sd_a**2, rho * sd_a * sd_b], [rho * sd_a * sd_b, sd_b**2]]
    sims = rng.multivariate_normal([delta, 0.0], cov, size=(2000, n))
    p = sps.ttest_rel(sims[..., 0], sims[..., 1], axis=1).pvalue
    assert np.mean(p < 0.05) == pytest.approx(0.8, abs=0.04)
