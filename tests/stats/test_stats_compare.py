"""compare / compare_many: alignment by item id, test choice, tidy records, corrections."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evalcore.errors import EvalcoreError
from evalcore.stats import ComparisonResult, compare, compare_many


def _binary(seed: int, n: int = 120, pa: float = 0.7, pb: float = 0.55):
    rng = np.random.default_rng(seed)
    ids = [f"item-{i}" for i in range(n)]
    a = (rng.random(n) < pa).astype(int)
    b = np.where(rng.random(n) < 0.6, a, (rng.random(n) < pb).astype(int))
    return dict(zip(ids, a.tolist())), dict(zip(ids, b.tolist()))


def _continuous(seed: int, n: int = 80, shift: float = 0.2):
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    a = rng.random(n)
    b = np.clip(a - shift + rng.normal(0, 0.2, n), 0, 1)
    return pd.Series(a, index=ids), pd.Series(b, index=ids)


def test_binary_scores_use_mcnemar():
    a, b = _binary(0)
    res = compare(a, b, name_a="model-a", name_b="model-b")
    assert isinstance(res, ComparisonResult)
    assert res.test == "mcnemar" and res.ci_method == "paired_bootstrap"
    ids = sorted(a)
    x = np.array([a[i] for i in ids])
    y = np.array([b[i] for i in ids])
    n10, n01 = int(np.sum((x == 1) & (y == 0))), int(np.sum((x == 0) & (y == 1)))
    ref = sm_mcnemar([[0, n10], [n01, 0]], exact=n10 + n01 < 25, correction=True)
    assert res.p_value == pytest.approx(ref.pvalue)
    assert (res.extra["n_10"], res.extra["n_01"]) == (n10, n01)
    assert res.mean_a == pytest.approx(x.mean()) and res.mean_b == pytest.approx(y.mean())
    assert res.difference == pytest.approx(x.mean() - y.mean())
    assert res.ci_low <= res.difference <= res.ci_high
    assert res.correlation == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert res.n == 120 and res.n_dropped == 0 and res.p_adjusted is None
    assert res.significant == (res.p_value <= 0.05)


def test_continuous_scores_use_paired_t_with_secondary_tests():
    a, b = _continuous(1)
    res = compare(a, b)
    ref = sps.ttest_rel(a.to_numpy(), b.to_numpy())
    assert res.test == "paired_t" and res.ci_method == "paired_t"
    assert res.p_value == pytest.approx(ref.pvalue)
    ci = ref.confidence_interval(0.95)
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high))
    assert res.extra["wilcoxon_p"] == pytest.approx(sps.wilcoxon(a, b).pvalue)
    assert 0 <= res.extra["bootstrap_p"] <= 1
    assert res.extra["bootstrap_ci_low"] < res.difference < res.extra["bootstrap_ci_high"]
    d = a - b
    assert res.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert res.significant  # a shift of 0.2 with 80 items
    # minimum detectable difference from the observed σ_d = sd(a − b): (z_.975 + z_.8) σ_d / √n
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert res.extra["mdd_80"] == pytest.approx(z * d.std(ddof=1) / math.sqrt(80), rel=1e-3)


@pytest.mark.parametrize("test", ["wilcoxon", "paired_bootstrap", "permutation"])
def test_forced_tests(test):
    a, b = _continuous(2, shift=0.05)
    res = compare(a, b, test=test)
    assert res.test == test
    assert "paired_t_p" in res.extra
    if test == "wilcoxon":
        assert res.p_value == pytest.approx(sps.wilcoxon(a, b).pvalue)
    if test == "paired_bootstrap":
        assert res.ci_method == "paired_bootstrap"


def test_alignment_is_by_item_id_not_position():
    a, b = _continuous(3)
    shuffled_b = b.sample(frac=1.0, random_state=0)
    assert compare(a, shuffled_b).to_dict() == compare(a, b).to_dict()
    reordered = dict(reversed(list(a.to_dict().items())))
    assert compare(reordered, b).to_dict() == compare(a, b).to_dict()


def test_swapping_systems_negates_the_difference():
    a, b = _continuous(4)
    ab, ba = compare(a, b), compare(b, a)
    assert ba.difference == pytest.approx(-ab.difference)
    assert ba.p_value == pytest.approx(ab.p_value)
    assert (ba.ci_low, ba.ci_high) == pytest.approx((-ab.ci_high, -ab.ci_low))


def test_misaligned_and_duplicated_ids_are_refused():
    a, b = _binary(5, n=30)
    b.pop("item-3")
    b["extra"] = 1
    with pytest.raises(EvalcoreError, match="different items") as err:
        compare(a, b)
    assert "item-3" in str(err.value) and "extra" in str(err.value)
    res = compare(a, b, align="intersection")
    assert res.n == 29 and res.n_dropped == 2
    dup = pd.Series([1.0, 0.0, 1.0], index=["x", "y", "x"])
    with pytest.raises(EvalcoreError, match="duplicated item ids: 'x'"):
        compare(dup, pd.Series([1.0, 0.0], index=["x", "y"]))
    with pytest.raises(EvalcoreError, match="not finite"):
        compare({"x": 1.0, "y": float("nan")}, {"x": 1.0, "y": 0.0})
    with pytest.raises(EvalcoreError, match="not a number"):
        compare({"x": 1.0, "y": "high"}, {"x": 1.0, "y": 0.0})
    with pytest.raises(EvalcoreError, match="at least 2"):
        compare({"x": 1.0}, {"x": 0.0})
    with pytest.raises(EvalcoreError, match="no scores"):
        compare({}, {})
    with pytest.raises(EvalcoreError, match="share no"):
        compare({"x": 1.0}, {"y": 0.0}, align="intersection")
    with pytest.raises(EvalcoreError, match="dict or pandas"):
        compare([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(EvalcoreError, match="align"):
        compare(a, a, align="outer")
    with pytest.raises(EvalcoreError, match="test"):
        compare(a, a, test="anova")


def test_identical_systems():
    a, _ = _binary(6, n=20)
    res = compare(a, a)
    assert res.p_value == 1.0 and res.difference == 0.0 and not res.significant
    assert res.ci_low == res.ci_high == 0.0


def test_to_dict_is_json_ready():
    a, b = _binary(7, n=50)
    constant = {k: 1 for k in a}
    d = compare(a, constant).to_dict()
    assert d["correlation"] is None  # undefined for a constant series → None, not NaN
    text = json.dumps(d, allow_nan=False)
    for key in (
        "mean_a",
        "mean_b",
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "test",
        "n",
        "correlation",
        "effect_size",
        "significant",
        "p_adjusted",
    ):
        assert key in json.loads(text)


def test_compare_many_holm_and_bh():
    rng = np.random.default_rng(8)
    ids = [f"i{k}" for k in range(60)]
    base = rng.random(60)
    systems = {
        name: dict(zip(ids, np.clip(base + shift + rng.normal(0, 0.15, 60), 0, 1)))
        for name, shift in [("a", 0.0), ("b", 0.05), ("c", 0.15), ("d", 0.0)]
    }
    holm_df = compare_many(systems, correction="holm")
    assert len(holm_df) == 6
    assert list(zip(holm_df.name_a, holm_df.name_b))[:3] == [("a", "b"), ("a", "c"), ("a", "d")]
    np.testing.assert_allclose(holm_df.p_adjusted, multipletests(holm_df.p_value, method="holm")[1])
    assert (holm_df.significant == (holm_df.p_adjusted <= 0.05)).all()
    assert (holm_df.correction == "holm").all()
    bh_df = compare_many(systems, correction="bh", alpha=0.1)
    np.testing.assert_allclose(bh_df.p_adjusted, multipletests(bh_df.p_value, method="fdr_bh")[1])
    assert (bh_df.significant == (bh_df.p_adjusted <= 0.1)).all()
    raw = compare_many(systems, correction=None)
    assert raw.p_adjusted.isna().all()
    np.testing.assert_allclose(raw.p_value, holm_df.p_value)
    frame = pd.DataFrame(systems)
    np.testing.assert_allclose(compare_many(frame).p_adjusted, holm_df.p_adjusted)
    with pytest.raises(EvalcoreError, match="at least 2"):
        compare_many({"a": systems["a"]})
    with pytest.raises(EvalcoreError, match="correction"):
        compare_many(systems, correction="sidak")


def test_compare_many_dataframe_with_missing_cells_needs_intersection():
    frame = pd.DataFrame({"a": [1, 0, 1, 1], "b": [1, 1, 0, np.nan], "c": [0, 0, 1, 1]}, index=["w", "x", "y", "z"])
    with pytest.raises(EvalcoreError, match="different items"):
        compare_many(frame)
    df = compare_many(frame, align="intersection")
    assert df.set_index(["name_a", "name_b"]).loc[("a", "b"), "n_dropped"] == 1
    assert df.set_index(["name_a", "name_b"]).loc[("a", "c"), "n"] == 4
    assert math.isfinite(df.p_value.sum())


def test_clusters_switch_to_the_clustered_test():
    rng = np.random.default_rng(9)
    ids = [f"q{i}" for i in range(90)]
    subjects = {i: f"subject-{k % 9}" for k, i in enumerate(ids)}
    a = {i: int(rng.random() < 0.7) for i in ids}
    b = {i: int(rng.random() < 0.6) for i in ids}
    auto = compare(a, b, clusters=subjects)  # 9 clusters: few, the wild cluster bootstrap
    assert auto.test == "wild_cluster" and auto.ci_method == "wild_cluster" and "clustered_p" in auto.extra
    res = compare(a, b, clusters=subjects, test="clustered")
    assert res.test == "clustered" and res.ci_method == "clustered" and "wild_cluster_p" in res.extra
    assert res.p_value == auto.extra["clustered_p"] and auto.p_value == res.extra["wild_cluster_p"]
    assert "mcnemar_p" in res.extra and res.extra["n_clusters"] == 9
    x = np.array([a[i] for i in sorted(ids)], dtype=float)
    y = np.array([b[i] for i in sorted(ids)], dtype=float)
    from evalcore.stats import clustered_se

    se = clustered_se(x - y, [subjects[i] for i in sorted(ids)]) * math.sqrt(9 / 8)  # CR1
    assert res.extra["clustered_se"] == pytest.approx(se) and res.extra["clustered_df"] == 8
    assert res.p_value == pytest.approx(2 * sps.t.sf(abs((x - y).mean()) / se, 8))
    with pytest.raises(EvalcoreError, match="no cluster label"):
        compare(a, b, clusters={i: "s" for i in ids[:10]})
    with pytest.raises(EvalcoreError, match="cluster"):
        compare(a, b, test="clustered")
    forced = compare(a, b, clusters=subjects, test="mcnemar")
    assert forced.test == "mcnemar" and "clustered_p" in forced.extra
