"""The item bootstrap (the comparison that generalizes), the order-variability check, the
λ-sweep notes and the routing figures' palette and labels."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore.routing import (
    ALGORITHMS,
    ROUTER_COLORS,
    OutcomeMatrix,
    aiq_table,
    bootstrap_figure,
    item_bootstrap,
    lambda_sweep,
    pairwise_comparisons,
    pareto_figure,
    regret_figure,
    replay,
    router_color,
    simulate_outcomes,
    sweep_figure,
)


def _matrix(quality: np.ndarray, cost: np.ndarray) -> OutcomeMatrix:
    t, k = quality.shape
    return OutcomeMatrix(
        item_ids=[f"i{i}" for i in range(t)],
        arms=[f"a{j}" for j in range(k)],
        quality=quality,
        cost=cost,
        latency=np.ones((t, k)),
        tokens=np.ones((t, k)),
        error=np.zeros((t, k), bool),
    )


@pytest.fixture(scope="module")
def small():
    return simulate_outcomes(12, arm_quality=(0.3, 0.7), arm_cost=(1, 3), seed=3)


def test_item_bootstrap_resamples_items_as_documented(small):
    bs = item_bootstrap(small, "oracle,always_cheapest,random", n_boot=30, orderings=4, seed=5)
    expected = np.random.default_rng([5, 0xB007]).integers(0, 12, size=(30, 12))
    np.testing.assert_array_equal(bs.indices, expected)
    rewards = small.rewards(0.0)
    # order-independent routers: each replicate is the plain mean over the resampled items
    np.testing.assert_allclose(bs.values["oracle"]["mean_reward"], rewards.max(1)[expected].mean(1))
    cheap = int(np.argmin(small.cost.mean(0)))
    np.testing.assert_allclose(bs.values["always_cheapest"]["mean_quality"], small.quality[:, cheap][expected].mean(1))
    np.testing.assert_allclose(bs.values["always_cheapest"]["mean_cost"], small.cost[:, cheap][expected].mean(1))
    # estimate on the original items
    assert bs.estimate["oracle"]["mean_reward"] == pytest.approx(rewards.max(1).mean())
    assert bs.n_boot == 30 and bs.n_items == 12 and bs.orderings == 4


def test_item_bootstrap_interval_agrees_with_scipy():
    rng = np.random.default_rng(0)
    q = (rng.random((40, 2)) < [0.4, 0.6]).astype(float)
    m = _matrix(q, np.tile([1.0, 2.0], (40, 1)))
    bs = item_bootstrap(m, "oracle", n_boot=1500, orderings=1, seed=1)
    summary = bs.summary().set_index("algorithm")
    best = q.max(1)
    ref = sps.bootstrap(
        (best,), np.mean, n_resamples=20000, method="percentile", confidence_level=0.95, random_state=0
    ).confidence_interval
    assert summary.loc["oracle", "mean_reward"] == pytest.approx(best.mean())
    assert summary.loc["oracle", "mean_reward_ci_low"] == pytest.approx(ref.low, abs=0.03)
    assert summary.loc["oracle", "mean_reward_ci_high"] == pytest.approx(ref.high, abs=0.03)


def test_item_bootstrap_compare_by_hand(small):
    bs = item_bootstrap(small, "oracle,always_cheapest,random", n_boot=50, orderings=3, seed=0)
    cmp = bs.compare(reference="always_cheapest", correction="none")
    assert list(cmp["b"]) == ["always_cheapest", "always_cheapest"]
    row = cmp.set_index("a").loc["oracle"]
    d = bs.values["oracle"]["mean_reward"] - bs.values["always_cheapest"]["mean_reward"]
    assert row["ci_low"] == pytest.approx(np.quantile(d, 0.025))
    assert row["ci_high"] == pytest.approx(np.quantile(d, 0.975))
    hand = min(1.0, 2 * (1 + min(np.sum(d <= 0), np.sum(d >= 0))) / (d.size + 1))
    assert row["p_value"] == pytest.approx(hand)
    assert row["difference"] == pytest.approx(
        bs.estimate["oracle"]["mean_reward"] - bs.estimate["always_cheapest"]["mean_reward"]
    )
    every = bs.compare(correction="holm")
    assert len(every) == 3 and (every["p_adjusted"] >= every["p_value"]).all()
    with pytest.raises(Exception, match="metric"):
        bs.compare(metric="regret")
    with pytest.raises(Exception, match="n_boot"):
        item_bootstrap(small, "oracle", n_boot=1)


def test_item_bootstrap_separates_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(2)
    same = (rng.random((30, 1)) < 0.5).astype(float)
    # a1 is a copy of a0: no difference; a2 is right on every item
    q = np.hstack([same, same, np.ones((30, 1))])
    m = _matrix(q, np.tile([1.0, 2.0, 3.0], (30, 1)))
    bs = item_bootstrap(m, "oracle,always_cheapest,random", n_boot=200, orderings=5, seed=0)
    cmp = bs.compare(correction="none").set_index(["a", "b"])
    # oracle is always right, always_cheapest (a0) right half the time: a real difference
    assert cmp.loc[("oracle", "always_cheapest"), "ci_low"] > 0
    assert cmp.loc[("oracle", "always_cheapest"), "significant"]
    # the item bootstrap's interval is much wider than the spread over orderings alone
    res = replay(m, "oracle,always_cheapest", orderings=200, seed=0, progress=False)
    order = res.compare()
    assert order["note"].iloc[0].startswith("same difference in every ordering")
    width = cmp.loc[("oracle", "always_cheapest"), "ci_high"] - cmp.loc[("oracle", "always_cheapest"), "ci_low"]
    assert width > 0.2 and order["ci_high"].iloc[0] == order["ci_low"].iloc[0]


def test_pairwise_comparisons_are_labelled_order_checks():
    vals = {
        "a": np.array([1.0, 2.0, 3.0, 4.0]),
        "b": np.array([0.0, 1.0, 2.0, 3.0]),
        "c": np.array([0.5, 2.5, 2.0, 4.5]),
    }
    df = pairwise_comparisons(vals)
    assert set(df["varies_over"]) == {"arrival order (same items)"}
    const = df[(df.a == "a") & (df.b == "b")].iloc[0]
    # a − b is 1 in every ordering: no spread, no statistic of ±inf, no p-value
    assert np.isnan(const["statistic"]) and np.isnan(const["p_value"])
    assert np.isnan(const["p_adjusted"]) and not const["significant"]
    assert const["difference"] == 1.0 and "nothing to test" in const["note"]
    other = df[(df.a == "a") & (df.b == "c")].iloc[0]
    assert np.isfinite(other["p_value"]) and other["note"] == ""
    # the two finite p-values are Holm-corrected together, the NaN left out
    finite = df["p_value"].dropna().sort_values()
    assert df["p_adjusted"].dropna().max() == pytest.approx(min(1.0, max(2 * finite.iloc[0], finite.iloc[1])))


def test_aiq_table_says_why_a_value_is_missing():
    sweep = pd.DataFrame(
        {
            "algorithm": ["x", "x", "y"],
            "lambda": [0.0, 1.0, 0.0],
            "mean_quality": [0.5, 0.4, 0.9],
            "mean_cost": [2.0, 1.0, 3.0],
        }
    )
    arms = pd.DataFrame({"arm": ["cheap", "best"], "mean_quality": [0.4, 0.9], "mean_cost": [1.0, 3.0]})
    tab = aiq_table(sweep, arms).set_index("algorithm")
    assert np.isnan(tab.loc["x", "cost_at_best_arm_quality"])
    assert tab.loc["x", "note"].endswith("never reaches the best arm's quality at the λ values swept")
    assert "never reaches" not in tab.loc["y", "note"] and tab.loc["y", "savings_at_best_arm_quality"] == 0.0
    # RouteLLM's APGR needs each point's strong-call share (published definition, issue 36)
    assert "no strong_share" in tab.loc["y", "note"] and np.isnan(tab.loc["y", "apgr_routellm"])
    flat = aiq_table(sweep.assign(strong_share=[0.0, 0.5, 1.0]), arms.assign(mean_quality=[0.5, 0.5]))
    assert (
        "no APGR/CPT: the cheapest and the best arm have the same quality"
        in flat.set_index("algorithm").loc["x", "note"]
    )


def test_one_colour_per_router_in_every_figure(small):
    import matplotlib.colors as mc
    import matplotlib.pyplot as plt

    names = ["random", "always_best", "ucb1", "thompson_sampling", "oracle"]
    assert set(ROUTER_COLORS) == set(ALGORITHMS) | {"random_swept", "zero_router"}
    assert len(set(ROUTER_COLORS.values())) == len(ROUTER_COLORS)
    assert router_color("my_router") == router_color("my_router")
    res = replay(small, names, orderings=10, seed=0, progress=False)
    fig = regret_figure(res, against="best_fixed")
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert set(panels) == set(names)
    for name, ax in panels.items():
        widest = max(ax.get_lines(), key=lambda ln: ln.get_linewidth())
        assert mc.to_hex(widest.get_color()) == ROUTER_COLORS[name]
        np.testing.assert_allclose(widest.get_ydata(), np.median(res.regret_curves(name, "best_fixed"), 0))
    plt.close(fig)
    fig = pareto_figure(res)
    ax = fig.axes[0]
    assert len(ax.texts) == 0  # names in the legend: no labels piled up on the points
    handles, labels = ax.get_legend_handles_labels()
    by_label = dict(zip(labels, handles))
    for name in names:
        assert mc.to_hex(by_label[name].get_facecolor()[0]) == ROUTER_COLORS[name]
    plt.close(fig)
    sweep = lambda_sweep(small, names, (0.0, 1.0), orderings=3, seed=0)
    fig = sweep_figure(sweep, small.arm_table(0.0))
    for line in fig.axes[0].get_lines():
        assert mc.to_hex(line.get_color()) == ROUTER_COLORS[line.get_label()]
    plt.close(fig)
    bs = item_bootstrap(small, names, n_boot=10, orderings=2, seed=0)
    fig = bootstrap_figure(bs, reference="always_best")
    colours = {mc.to_hex(ln.get_color()) for ln in fig.axes[0].get_lines()[:-1]}
    assert colours == {ROUTER_COLORS[n] for n in names if n != "always_best"}
    plt.close(fig)
