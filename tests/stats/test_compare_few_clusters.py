"""compare(..., clusters=...) for every number of clusters from 2 to 30 (issue 36): a result, never
a SciPy error; an MDD within the scores' range; the wild cluster bootstrap for few clusters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.stats import compare, min_detectable_difference, min_detectable_difference_se

GS = list(range(2, 31))


def _data(g: int, layout: str, kind: str, seed: int = 0) -> tuple[dict, dict, dict]:
    rng = np.random.default_rng(1000 * g + seed)
    sizes = [4] * g if layout == "balanced" else [1 + (3 * k) % 7 + (k == 0) * 10 for k in range(g)]
    labels = np.repeat(np.arange(g), sizes)
    n = labels.size
    if kind == "binary":
        effect = rng.normal(0, 0.3, g)[labels]
        a = (rng.random(n) < 0.6 + 0.2 * np.tanh(effect)).astype(float)
        b = (rng.random(n) < 0.5).astype(float)
    elif kind == "continuous":
        a = rng.normal(0.2, 1, n) + rng.normal(0, 0.5, g)[labels]
        b = rng.normal(0, 1, n)
    else:  # all-equal scores
        a = np.ones(n)
        b = np.ones(n)
    ids = [f"q{i:03d}" for i in range(n)]
    return dict(zip(ids, a)), dict(zip(ids, b)), {i: f"s{c}" for i, c in zip(ids, labels)}


def _check(res, a: dict, b: dict) -> None:
    values = np.array(list(a.values()) + list(b.values()))
    rng_ = float(values.max() - values.min())
    assert 0.0 <= res.p_value <= 1.0
    assert math.isfinite(res.ci_low) and math.isfinite(res.ci_high)
    assert res.ci_low - 1e-9 <= res.difference <= res.ci_high + 1e-9
    assert -rng_ - 1e-12 <= res.ci_low and res.ci_high <= rng_ + 1e-12 or res.test == "clustered"
    mdd = res.extra["mdd_80"]
    assert mdd is None or 0.0 < mdd <= rng_ + 1e-12
    assert res.extra["mdd_capped"] == (mdd is not None and mdd >= rng_)


@pytest.mark.parametrize("g", GS)
@pytest.mark.parametrize("layout", ["balanced", "unbalanced"])
@pytest.mark.parametrize("kind", ["binary", "continuous", "equal"])
def test_compare_with_2_to_30_clusters_always_returns(g, layout, kind):
    a, b, clusters = _data(g, layout, kind)
    res = compare(a, b, clusters=clusters, n_resamples=499)
    assert res.extra["n_clusters"] == g
    assert res.test == ("wild_cluster" if g <= 12 else "clustered")
    _check(res, a, b)
    for forced in ("clustered", "wild_cluster"):
        _check(compare(a, b, clusters=clusters, n_resamples=499, test=forced), a, b)
    if kind == "equal":
        assert res.p_value == 1.0 and (res.ci_low, res.ci_high) == pytest.approx((0.0, 0.0), abs=1e-12)
        assert res.extra["ci_collapsed"] and res.extra["mdd_80"] is None


@pytest.mark.parametrize("g", [2, 3])
def test_two_or_three_clusters_cannot_reach_significance_and_say_so(g):
    # the SciPy ValueError of the issue: two subjects, binary scores
    a, b, clusters = _data(g, "unbalanced", "binary", seed=5)
    res = compare(a, b, clusters=clusters)
    assert res.extra["wild_weights"] == "webb" and res.extra["wild_enumerated"]
    assert res.extra["wild_draws"] == 6**g and res.extra["wild_p_floor"] == pytest.approx(6.0 ** (1 - g))
    if g == 2:  # 1/6 > 0.05: the bootstrap rejects nothing, the interval is the whole range
        assert res.p_value >= 1 / 6 - 1e-12 and not res.significant
        assert (res.ci_low, res.ci_high) == (-1.0, 1.0) and res.extra["ci_capped"]
        assert res.extra["mdd_80"] == 1.0 and res.extra["mdd_capped"]
    cr1 = compare(a, b, clusters=clusters, test="clustered")
    assert cr1.extra["mdd_80"] is None or cr1.extra["mdd_80"] <= 1.0


def test_a_single_cluster_is_one_clear_refusal():
    a, b, _ = _data(3, "balanced", "binary")
    with pytest.raises(EvalcoreError, match="at least 2 clusters"):
        compare(a, b, clusters={k: "one" for k in a})


def test_mdd_of_two_binary_items_is_capped_at_one():
    # the 1.617: the normal approximation at n = 2 exceeds any possible difference
    res = compare({"x": 1, "y": 0}, {"x": 0, "y": 0})
    assert res.extra["mdd_80"] == 1.0 and res.extra["mdd_capped"] and res.extra["score_range"] == 1.0
    raw = min_detectable_difference(2, 0.7071067811865476, 0.0, 0.0)
    assert raw > 1.0 and min_detectable_difference(2, 0.7071067811865476, 0.0, 0.0, max_difference=1.0) == 1.0


@pytest.mark.parametrize("df", [1, 2, 3, 5, 30])
def test_mdd_from_a_standard_error_with_few_degrees_of_freedom_has_the_power(df):
    from scipy import integrate
    from scipy import stats as sps

    se = 0.07
    mdd = min_detectable_difference_se(se, 0.05, 0.8, df=df)
    crit = sps.t.ppf(0.975, df)
    nc = mdd / se

    def integrand(r: float) -> float:  # P(|T'| > crit) by conditioning on the chi variable
        s = r / math.sqrt(df)
        return (sps.norm.cdf(nc - crit * s) + sps.norm.cdf(-nc - crit * s)) * sps.chi.pdf(r, df)

    power, _ = integrate.quad(integrand, 0, np.inf, limit=200)
    assert power == pytest.approx(0.8, abs=1e-6)
    assert min_detectable_difference_se(se, 0.05, 0.8, df=df, max_difference=0.1) == min(mdd, 0.1)


def test_constant_differences_collapse_and_are_flagged():
    ids = [f"q{i}" for i in range(12)]
    clusters = {i: f"s{k % 4}" for k, i in enumerate(ids)}
    res = compare({i: 0 for i in ids}, {i: 1 for i in ids}, clusters=clusters)
    assert res.difference == -1.0 and res.extra["ci_collapsed"]
    assert (res.ci_low, res.ci_high) == pytest.approx((-1.0, -1.0), abs=1e-9)
    plain = compare({i: 0 for i in ids}, {i: 1 for i in ids})
    assert plain.extra["ci_collapsed"] and plain.extra["mdd_80"] is None


def _comparison(series: dict, clusters: dict | None):
    import pandas as pd

    from evalcore.imports._compare import Alignment, Comparison, compare_series

    series = {k: pd.Series(v, dtype=float) for k, v in series.items()}
    table = compare_series(series, clusters=clusters, n_resamples=500)
    runs = [
        {"label": k, "harness": "evalcore", "task": "t", "metric": "m", "items": len(v), "mean": float(v.mean())}
        | {"reported_by_harness": None}
        for k, v in series.items()
    ]
    alignment = Alignment(key="item_id", series=series, shared=sorted(next(iter(series.values())).index))
    return Comparison(
        runs=runs,
        alignment=alignment,
        table=table,
        correction="holm",
        alpha=0.05,
        cluster="subject" if clusters else None,
    )


def test_cli_text_says_when_an_interval_collapses_and_the_mdd_is_capped():
    from evalcore.imports import format_comparison

    ids = [f"q{i}" for i in range(6)]
    text = format_comparison(_comparison({"A": {i: 0 for i in ids}, "B": {i: 1 for i in ids}}, None))
    assert "[-1.000, -1.000]" in text and "note: A vs B: the interval collapsed to the point -1.000" in text
    two = format_comparison(_comparison({"A": {"x": 1, "y": 0}, "B": {"x": 0, "y": 0}}, None))
    assert ">=1.000" in two and "MDD80 is capped at the scores' range (1.000)" in two
    assert "collapsed" not in two


def test_cli_text_with_two_subjects_uses_the_wild_bootstrap_and_says_nothing_can_be_significant():
    from evalcore.imports import format_comparison

    a, b, clusters = _data(2, "unbalanced", "binary", seed=5)
    cmp = _comparison({"A": a, "B": b}, clusters)
    row = cmp.table.iloc[0]
    assert row["test"] == "wild_cluster" and row["n_clusters"] == 2 and not row["significant"]
    text = format_comparison(cmp)
    assert "2 clusters (subject): few clusters, so a wild cluster bootstrap" in text
    assert "webb weights, all weight vectors enumerated" in text
    assert "no p-value below 0.1667 is possible" in text
    assert "[-1.000, 1.000]" in text and "the interval reaches the scores' range (+/-1.000)" in text
    assert ">=1.000" in text
