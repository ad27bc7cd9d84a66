"""Replay behaviour on simulated outcomes with known structure."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.routing import (
    ALGORITHMS,
    make_orderings,
    replay,
    simulate_contextual,
    simulate_outcomes,
)

NON_CONTEXTUAL = (
    "random",
    "always_best",
    "always_cheapest",
    "epsilon_greedy",
    "ucb1",
    "thompson_sampling",
    "dueling_bandit",
)


@pytest.fixture(scope="module")
def known_best():
    m = simulate_outcomes(4000, arm_quality=(0.2, 0.5, 0.8), arm_cost=(1, 1, 1), seed=1)
    res = replay(
        m, "random,oracle,ucb1,thompson_sampling,dueling_bandit,always_best", orderings=40, seed=0, progress=False
    )
    return m, res


def test_oracle_regret_is_zero(known_best):
    _, res = known_best
    assert np.all(res.regret_curves("oracle", "oracle") == 0.0)
    # and the oracle's reward is the max reward of every item it met
    assert np.array_equal(res.traces["oracle"].reward, res.oracle_reward)


def test_ucb1_and_thompson_regret_sublinear(known_best):
    _, res = known_best
    t = np.array([100, 250, 500, 1000, 2000, 4000])
    envelope = np.sqrt(t) * np.log(t)
    for name in ("ucb1", "thompson_sampling"):
        reg = res.expected_regret_curves(name).mean(0)[t - 1]
        ratio = reg / envelope
        assert np.all(ratio < 0.5), (name, ratio)
        assert ratio[-1] < ratio[0], (name, ratio)  # falls against √T·log T: sublinear
        # the second half adds far less regret than the first
        assert reg[-1] - reg[-2] < 0.5 * reg[-2], (name, reg)


def test_random_regret_is_linear(known_best):
    m, res = known_best
    mu = m.quality.mean(0)
    reg = res.expected_regret_curves("random").mean(0)
    t = np.arange(1, reg.size + 1)
    slope = mu.max() - mu.mean()
    np.testing.assert_allclose(reg[999::1000] / t[999::1000], slope, rtol=0.05)
    envelope = np.sqrt(t) * np.log(t)
    assert reg[-1] > envelope[-1]  # outgrows the sublinear envelope
    assert reg[-1] / envelope[-1] > 2 * reg[499] / envelope[499]


def test_always_best_calibration_finds_best_arm(known_best):
    _, res = known_best
    arms = res.traces["always_best"].arm
    assert np.all(arms == arms[:, :1])  # one fixed arm per ordering
    assert np.mean(arms[:, 0] == 2) > 0.95


def test_dueling_bandit_learns_better_arm(known_best):
    _, res = known_best
    tr = res.traces["dueling_bandit"]
    late = slice(3000, 4000)
    assert np.mean(tr.arm[:, late] == 2) > 0.9
    # duels are real: early steps call two different arms and pay for both
    duels = tr.arm2 != tr.arm
    assert duels[:, :200].mean() > 0.3
    assert duels[:, late].mean() < 0.2
    # cost of both arms is counted on duel steps (every arm costs ~1 here)
    assert np.all(tr.cost[duels] > 1.4 * tr.cost[~duels].mean() * 0.9)


def test_dueling_bandit_uses_only_pairwise_wins():
    # arm 1 beats arm 0 on every query where they differ; reward scale must not matter
    m = simulate_outcomes(1500, arm_quality=(0.3, 0.7), arm_cost=(1, 1), seed=3)
    res = replay(m, "dueling_bandit", orderings=20, seed=0, progress=False)
    assert np.mean(res.traces["dueling_bandit"].arm[:, -300:] == 1) > 0.9


@pytest.fixture(scope="module")
def contextual():
    m = simulate_contextual(1500, 3, n_features=6, seed=0)
    return m, replay(m, "all", orderings=16, seed=0, progress=False)


def test_contextual_beat_non_contextual(contextual):
    _, res = contextual
    s = res.summary().set_index("algorithm")
    best_plain = s.loc[list(NON_CONTEXTUAL), "mean_quality"].max()
    for name in ("linucb", "contextual_thompson"):
        assert s.loc[name, "mean_quality"] > best_plain + 0.15, s["mean_quality"]
        assert s.loc[name, "regret_vs_oracle"] < s.loc[list(NON_CONTEXTUAL), "regret_vs_oracle"].min()
        # the upper interval bound of every non-contextual router is below its lower bound
        assert s.loc[name, "mean_quality_ci_low"] > s.loc[list(NON_CONTEXTUAL), "mean_quality_ci_high"].max()


def test_contextual_do_not_collapse(contextual):
    m, res = contextual
    for name in ("linucb", "contextual_thompson"):
        late = res.traces[name].arm[:, 750:]
        shares = np.stack([(late == k).mean(1) for k in range(m.n_arms)], 1)
        assert shares.max(1).max() < 0.6, (name, shares.max(1))
        assert shares.min(1).min() > 0.15
        assert np.isnan(res.convergence_points(name)).all()


def test_pairwise_comparisons_significant(contextual):
    _, res = contextual
    cmp = res.compare()
    row = cmp[(cmp.a == "random") & (cmp.b == "linucb")].iloc[0]
    assert row.difference < 0 and row.significant
    assert (cmp.p_adjusted >= cmp.p_value - 1e-15).all()
    n = len(ALGORITHMS)
    assert len(cmp) == n * (n - 1) // 2


def test_orderings_are_shared_and_seeded():
    o1 = make_orderings(50, 7, seed=3)
    assert np.array_equal(o1, make_orderings(50, 7, seed=3))
    assert not np.array_equal(o1, make_orderings(50, 7, seed=4))
    assert all(np.array_equal(np.sort(row), np.arange(50)) for row in o1)
    m = simulate_outcomes(60, seed=0)
    a = replay(m, "ucb1,random", orderings=5, seed=9, progress=False)
    b = replay(m, "random", orderings=5, seed=9, progress=False)
    # same seed: the same algorithm makes the same choices whatever else is replayed
    assert np.array_equal(a.traces["random"].arm, b.traces["random"].arm)


def test_trace_bookkeeping_matches_outcomes():
    m = simulate_outcomes(80, seed=2, error_rate=0.1)
    res = replay(m, "random,dueling_bandit", orderings=6, seed=1, lam=0.5, progress=False)
    r = m.rewards(0.5)
    tr = res.traces["random"]
    items = res.orders
    np.testing.assert_allclose(tr.quality, m.quality[items, tr.arm])
    np.testing.assert_allclose(tr.cost, m.cost[items, tr.arm])
    np.testing.assert_allclose(tr.reward, r[items, tr.arm])
    du = res.traces["dueling_bandit"]
    duel = du.arm2 != du.arm
    both = m.cost[items, du.arm] + np.where(duel, m.cost[items, du.arm2], 0)
    np.testing.assert_allclose(du.cost, both)
    np.testing.assert_allclose(du.quality, (m.quality[items, du.arm] + m.quality[items, du.arm2]) / 2)


def test_summary_and_curves_shapes():
    m = simulate_outcomes(120, seed=0)
    res = replay(m, "all", orderings=8, seed=0, progress=False)
    s = res.summary()
    for col in ("mean_quality", "total_cost", "regret_vs_oracle", "regret_vs_best_fixed", "convergence_point"):
        assert col in s and f"{col}_ci_low" in s and f"{col}_ci_high" in s
    assert list(s.algorithm) == list(ALGORITHMS)
    ok = s.dropna(subset=["mean_quality"])
    assert (ok.mean_quality_ci_low <= ok.mean_quality + 1e-12).all()
    assert (ok.mean_quality <= ok.mean_quality_ci_high + 1e-12).all()
    c = res.curves(every=10)
    assert set(c.algorithm) == set(ALGORITHMS)
    last = c[c.step == 120].set_index("algorithm")
    np.testing.assert_allclose(
        last.loc[list(s.algorithm), "regret_vs_oracle"].to_numpy(), s.regret_vs_oracle.to_numpy()
    )
    sh = res.selection_share()
    tot = sh.groupby(["algorithm", "step"]).share.sum()
    np.testing.assert_allclose(tot.to_numpy(), 1.0)
    pts = res.points()
    assert pts.pareto.any()
    ab = s.set_index("algorithm").loc["always_best"]
    assert ab.cost_savings_vs_always_best == 0.0 and ab.quality_vs_always_best == 0.0


def test_parallel_replay_equals_serial():
    m = simulate_outcomes(150, seed=4)
    a = replay(m, "all", orderings=6, seed=2, lam=0.3, progress=False, workers=1)
    b = replay(m, "all", orderings=6, seed=2, lam=0.3, progress=False, workers=3)
    assert a.algorithms == b.algorithms == list(ALGORITHMS)
    for name in ALGORITHMS:
        assert np.array_equal(a.traces[name].arm, b.traces[name].arm), name
        np.testing.assert_array_equal(a.traces[name].reward, b.traces[name].reward)


def test_replay_user_errors_are_evalcore_errors():
    from evalcore.errors import EvalcoreError

    m = simulate_outcomes(40, arm_quality=(0.2, 0.8), arm_cost=(1, 2), seed=0)
    with pytest.raises(EvalcoreError, match="orderings must be an integer"):
        replay(m, "ucb1", orderings=2.5, progress=False)
    res = replay(m, "ucb1,random", orderings=3, progress=False)
    with pytest.raises(EvalcoreError, match="unknown metric 'nope'"):
        res.compare(metric="nope")
    with pytest.raises(EvalcoreError, match="'linucb' was not replayed"):
        res.per_ordering("linucb")
    with pytest.raises(EvalcoreError, match="not replayed"):
        res.regret_curves("oracle")
    cmp = res.compare(metric="regret_vs_oracle")
    po = {n: res.per_ordering(n)["regret_vs_oracle"].to_numpy() for n in ("ucb1", "random")}
    assert cmp.loc[0, "difference"] == pytest.approx(float((po["ucb1"] - po["random"]).mean()))
