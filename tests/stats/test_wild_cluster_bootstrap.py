"""The wild cluster bootstrap (WCR) against the `wildboottest` package, a brute-force enumeration
and its own test inversion."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.stats import wild_cluster_bootstrap

wbt = pytest.importorskip("wildboottest.wildboottest")

B = 9999


def _clustered(g: int, seed: int, effect: float = 0.15):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 12, g)
    labels = np.repeat(np.arange(g), sizes)
    n = labels.size
    a = rng.normal(effect, 1.0, n) + rng.normal(0, 0.4, g)[labels]
    b = rng.normal(0.0, 1.0, n)
    return a, b, labels


def _wildboottest_p(d: np.ndarray, labels: np.ndarray, weights: str, seed: int) -> tuple[float, float]:
    boot = wbt.WildboottestCL(
        X=np.ones((d.size, 1)), Y=d, cluster=labels, R=np.array([1.0]), B=B, seed=seed, parallel=False
    )
    boot.get_scores(bootstrap_type="11", impose_null=True)
    boot.get_weights(weights_type=weights)
    boot.get_numer()
    boot.get_denom()
    boot.get_tboot()
    boot.get_vcov()
    boot.get_tstat()
    boot.get_pvalue(pval_type="two-tailed")
    return float(np.ravel(boot.pvalue)[0]), float(np.ravel(boot.t_stat)[0])


@pytest.mark.parametrize(
    ("g", "weights", "seed"),
    [(6, "webb", 1), (9, "webb", 2), (12, "webb", 3), (15, "rademacher", 4), (20, "rademacher", 5), (28, "webb", 6)],
)
def test_p_value_agrees_with_wildboottest_within_monte_carlo_error(g, weights, seed):
    a, b, labels = _clustered(g, seed)
    ours = wild_cluster_bootstrap(a, b, labels, weights=weights, n_resamples=B, seed=seed)
    assert not ours.details["enumerated"] and ours.details["weights"] == weights
    ref_p, ref_t = _wildboottest_p(a - b, labels, weights, seed + 100)
    assert ours.statistic == pytest.approx(ref_t, rel=1e-9)  # the same CR1 t
    # two independent draws of B each: sd of the difference √(2p(1−p)/B); 4.5 sd
    tol = 4.5 * math.sqrt(2 * max(ref_p * (1 - ref_p), 1e-4) / B)
    assert abs(ours.p_value - ref_p) <= tol, (ours.p_value, ref_p, tol)
    assert 0.0 < ours.p_value < 1.0


def test_p_value_agrees_with_wildboottest_on_binary_scores():
    rng = np.random.default_rng(11)
    labels = np.repeat(np.arange(16), rng.integers(3, 9, 16))
    a = (rng.random(labels.size) < 0.7).astype(float)
    b = (rng.random(labels.size) < 0.55).astype(float)
    ours = wild_cluster_bootstrap(a, b, labels, weights="rademacher", n_resamples=B, seed=1)
    ref_p, _ = _wildboottest_p(a - b, labels, "rademacher", 7)
    assert abs(ours.p_value - ref_p) <= 4.5 * math.sqrt(2 * max(ref_p * (1 - ref_p), 1e-4) / B)


def _brute_force_p(d: np.ndarray, labels: np.ndarray, values: list[float], delta0: float = 0.0) -> float:
    """Every weight vector, a loop per draw: the textbook WCR with an OLS fit per draw."""
    groups = np.unique(labels)
    g, n = groups.size, d.size
    c = g / (g - 1)

    def t_of(y: np.ndarray) -> float:
        est = y.mean()
        sums = np.array([(y[labels == k] - est).sum() for k in groups])
        se = math.sqrt(c * float(sums @ sums)) / n
        return (est - delta0) / se

    t = abs(t_of(d))
    resid = d - delta0
    count = total = 0
    for v in itertools.product(values, repeat=g):
        w = np.array(v)[np.searchsorted(groups, labels)]
        count += abs(t_of(delta0 + w * resid)) >= t * (1 - 1e-10)
        total += 1
    return count / total


@pytest.mark.parametrize(("weights", "values"), [("rademacher", [-1.0, 1.0]), ("webb", None)])
def test_enumeration_is_exact(weights, values):
    if values is None:
        values = [-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)]
    a, b, labels = _clustered(4, 21, effect=0.6)
    res = wild_cluster_bootstrap(a, b, labels, weights=weights, n_resamples=len(values) ** 4)
    assert res.details["enumerated"] and res.details["draws"] == len(values) ** 4
    assert res.p_value == pytest.approx(_brute_force_p(a - b, labels, values), abs=1e-12)
    assert res.p_value >= res.details["p_floor"] == pytest.approx(len(values) ** -3)


def test_interval_is_the_set_of_differences_the_test_does_not_reject():
    a, b, labels = _clustered(10, 31, effect=0.4)
    res = wild_cluster_bootstrap(a, b, labels, n_resamples=1999, seed=3, confidence=0.9)
    assert res.ci_low < res.difference < res.ci_high
    assert not (res.details["ci_capped_low"] or res.details["ci_capped_high"])
    width = res.ci_high - res.ci_low

    def p_at(delta0: float) -> float:  # H0: δ = δ0 is H0: δ = 0 on the shifted scores
        return wild_cluster_bootstrap(a - delta0, b, labels, n_resamples=1999, seed=3).p_value

    for end, outward in ((res.ci_low, -1.0), (res.ci_high, 1.0)):
        assert p_at(end - outward * 1e-3 * width) > 0.1  # just inside: not rejected at 10 %
        assert p_at(end + outward * 1e-3 * width) <= 0.1  # just outside: rejected


def test_two_clusters_reject_nothing_and_the_interval_is_the_range():
    a = np.array([1, 1, 0, 1, 1, 1, 0], dtype=float)
    b = np.array([0, 0, 0, 0, 1, 0, 0], dtype=float)
    labels = ["x", "x", "x", "y", "y", "y", "y"]
    for weights, floor in (("rademacher", 0.5), ("webb", 1 / 6)):
        res = wild_cluster_bootstrap(a, b, labels, weights=weights)
        assert res.details["p_floor"] == pytest.approx(floor) and res.p_value >= floor - 1e-12
        assert (res.ci_low, res.ci_high) == (-1.0, 1.0)
        assert res.details["ci_capped_low"] and res.details["ci_capped_high"]


def test_bad_input_is_refused():
    with pytest.raises(EvalcoreError, match="at least 2 clusters"):
        wild_cluster_bootstrap([1.0, 0.0], [0.0, 0.0], ["s", "s"])
    with pytest.raises(EvalcoreError, match="unknown weights"):
        wild_cluster_bootstrap([1.0, 0.0], [0.0, 0.0], ["s", "t"], weights="mammen")  # type: ignore[arg-type]
