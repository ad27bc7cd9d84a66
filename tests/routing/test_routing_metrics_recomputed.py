"""The router benchmark recomputed: every value is recomputed here with plain numpy from the
outcome matrix and the recorded choices, never with evalcore's own helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.routing import (
    OutcomeMatrix,
    ReplayEnv,
    item_bootstrap,
    make_orderings,
    make_router,
    replay,
    simulate_outcomes,
)
from evalcore.routing import _algorithms as algorithms


def _rewards(m: OutcomeMatrix, lam: float, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """quality − λ·(c − c_min)/(c_max − c_min); a failed call −λ (written out by hand)."""
    lo = m.cost.min() if lo is None else lo
    hi = m.cost.max() if hi is None else hi
    out = m.quality - lam * (m.cost - lo) / (hi - lo)
    out[m.error] = -lam
    return out


# --------------------------------------------------------------------------- trust
class _Spy(algorithms.Router):
    """A learner that records everything its environment offers and plays arm 0."""

    name = "ucb1"
    seen: dict = {}

    def reset(self, env, rng):
        super().reset(env, rng)
        _Spy.seen = {
            "rewards": env.rewards,
            "cost": env.cost,
            "orders_writeable": env.orders.flags.writeable,
            "updates": [],
        }

    def select(self, t, items, x):
        return np.zeros(self.R, dtype=int)

    def update(self, t, items, x, arms, rewards):
        _Spy.seen["updates"].append((np.array(items), np.array(arms), np.array(rewards)))


class _Peeker(algorithms.Router):
    """A learner that tries to route by reading the current query's whole outcome row."""

    name = "ucb1"

    def select(self, t, items, x):
        rewards = getattr(self.env, "rewards", None)
        if rewards is None:
            return np.zeros(self.R, dtype=int)
        return np.asarray(rewards)[items].argmax(1)


def test_a_learner_sees_only_the_chosen_arms_reward(monkeypatch):
    m = simulate_outcomes(60, arm_quality=(0.2, 0.5, 0.8), arm_cost=(1, 2, 3), seed=4)
    monkeypatch.setitem(algorithms.ROUTERS, "ucb1", _Spy)
    res = replay(m, "ucb1", orderings=3, seed=0, progress=False, workers=1)
    seen = _Spy.seen
    assert seen["rewards"] is None and seen["cost"] is None
    assert seen["orders_writeable"] is False
    r = _rewards(m, 0.0)
    assert len(seen["updates"]) == m.n_items
    for t, (items, arms, revealed) in enumerate(seen["updates"]):
        np.testing.assert_array_equal(items, res.orders[:, t])
        np.testing.assert_array_equal(arms, 0)
        np.testing.assert_array_equal(revealed, r[items, 0])  # only the chosen arm's reward


def test_a_learner_cannot_route_by_reading_the_outcome_matrix(monkeypatch):
    m = simulate_outcomes(300, arm_quality=(0.2, 0.5, 0.8), arm_cost=(1, 2, 3), seed=5)
    monkeypatch.setitem(algorithms.ROUTERS, "ucb1", _Peeker)
    res = replay(m, "ucb1", orderings=4, seed=0, progress=False, workers=1)
    r = _rewards(m, 0.0)
    # the peeker falls back to arm 0: its regret is that of arm 0, not the oracle's zero
    expected = (r.max(1) - r[:, 0]).sum()
    np.testing.assert_allclose(res.per_ordering("ucb1")["regret_vs_oracle"], expected)
    assert expected > 50


def test_full_information_baselines_still_see_the_matrix():
    m = simulate_outcomes(80, arm_quality=(0.2, 0.5, 0.8), arm_cost=(1, 2, 3), seed=6)
    res = replay(m, "oracle,always_cheapest", orderings=3, seed=0, progress=False)
    r = _rewards(m, 0.0)
    np.testing.assert_array_equal(res.traces["oracle"].reward, r.max(1)[res.orders])
    assert np.all(res.traces["always_cheapest"].arm == np.argmin(m.cost.mean(0)))


# --------------------------------------------------------------------------- duel reward
def test_a_duel_pays_for_both_calls_in_its_reward_and_regret():
    m = simulate_outcomes(200, arm_quality=(0.3, 0.6, 0.7), arm_cost=(1, 3, 9), seed=3, error_rate=0.05)
    lam = 1.0
    res = replay(m, "dueling_bandit", orderings=6, seed=0, lam=lam, progress=False, workers=1)
    tr = res.traces["dueling_bandit"]
    o, a, b = res.orders, tr.arm.astype(int), tr.arm2.astype(int)
    duel = a != b
    assert duel.mean() > 0.5
    lo, hi = m.cost.min(), m.cost.max()
    term = lam * (m.cost - lo) / (hi - lo)  # λ·c̃ of each call, λ for a failed one
    term[m.error] = lam
    q = (m.quality[o, a] + m.quality[o, b]) / 2
    reward = q - term[o, a] - np.where(duel, term[o, b], 0.0)
    np.testing.assert_allclose(tr.reward, reward)
    np.testing.assert_allclose(tr.cost, m.cost[o, a] + np.where(duel, m.cost[o, b], 0.0))
    r = _rewards(m, lam)
    po = res.per_ordering("dueling_bandit")
    np.testing.assert_allclose(po["regret_vs_oracle"], (r.max(1)[o] - reward).sum(1))
    best = int(np.argmax(r.mean(0)))
    np.testing.assert_allclose(po["regret_vs_best_fixed"], (r[o, best] - reward).sum(1))
    np.testing.assert_allclose(po["mean_reward"], reward.mean(1))
    # pseudo-regret: the same accounting with each arm's means
    mq, mt = m.quality.mean(0), term.mean(0)
    got = (mq[a] + mq[b]) / 2 - mt[a] - np.where(duel, mt[b], 0.0)
    np.testing.assert_allclose(res.expected_regret_curves("dueling_bandit"), np.cumsum(r.mean(0).max() - got, axis=1))


def test_a_duel_at_lambda_zero_is_credited_its_mean_quality():
    m = simulate_outcomes(100, arm_quality=(0.3, 0.6, 0.7), arm_cost=(1, 3, 9), seed=8)
    res = replay(m, "dueling_bandit", orderings=4, seed=1, progress=False)
    tr = res.traces["dueling_bandit"]
    o, a, b = res.orders, tr.arm.astype(int), tr.arm2.astype(int)
    np.testing.assert_allclose(tr.reward, (m.quality[o, a] + m.quality[o, b]) / 2)


# --------------------------------------------------------------------------- item bootstrap
def test_item_bootstrap_replicates_score_the_original_objective():
    m = simulate_outcomes(12, arm_quality=(0.3, 0.6, 0.7), arm_cost=(1, 3, 9), seed=4)
    lam = 1.0
    bs = item_bootstrap(m, "oracle,always_cheapest", n_boot=60, orderings=2, seed=0, lam=lam, progress=False)
    lo, hi = m.cost.min(), m.cost.max()
    oracle, cheapest = [], []
    for idx in bs.indices:
        r = m.quality[idx] - lam * (m.cost[idx] - lo) / (hi - lo)  # the original price range
        oracle.append(r.max(1).mean())
        cheapest.append(r[:, np.argmin(m.cost[idx].mean(0))].mean())
    np.testing.assert_allclose(bs.values["oracle"]["mean_reward"], oracle, atol=1e-12)
    np.testing.assert_allclose(bs.values["always_cheapest"]["mean_reward"], cheapest, atol=1e-12)
    lo_ci, hi_ci = np.percentile(oracle, [2.5, 97.5])
    row = bs.summary().set_index("algorithm").loc["oracle"]
    assert row["mean_reward_ci_low"] == pytest.approx(lo_ci)
    assert row["mean_reward_ci_high"] == pytest.approx(hi_ci)


# --------------------------------------------------------------------------- summary
def test_summary_states_n_and_its_percentile_ranges_match_numpy():
    m = simulate_outcomes(150, arm_quality=(0.3, 0.6, 0.7), arm_cost=(1, 3, 9), seed=9, error_rate=0.05)
    lam = 0.5
    res = replay(m, "random,ucb1,always_best", orderings=17, seed=2, lam=lam, progress=False)
    s = res.summary().set_index("algorithm")
    r = _rewards(m, lam)
    best = int(np.argmax(r.mean(0)))
    for name in ("random", "ucb1", "always_best"):
        row, tr = s.loc[name], res.traces[name]
        assert row["n_orderings"] == 17 and row["n_items"] == 150
        o, a = res.orders, tr.arm.astype(int)
        per = {
            "mean_quality": m.quality[o, a].mean(1),
            "total_cost": m.cost[o, a].sum(1),
            "regret_vs_oracle": (r.max(1)[o] - r[o, a]).sum(1),
            "regret_vs_best_fixed": (r[o, best] - r[o, a]).sum(1),
        }
        for col, v in per.items():
            assert row[col] == pytest.approx(v.mean())
            lo, hi = np.percentile(v, [2.5, 97.5])
            assert row[f"{col}_ci_low"] == pytest.approx(lo)
            assert row[f"{col}_ci_high"] == pytest.approx(hi)


# --------------------------------------------------------------------------- routers
def test_ucb1_plays_the_argmax_of_mean_plus_sqrt_2_ln_t_over_n():
    m = simulate_outcomes(300, arm_quality=(0.3, 0.6, 0.7, 0.65), arm_cost=(1, 3, 9, 4), seed=3)
    rew = _rewards(m, 0.3)
    orders = make_orderings(m.n_items, 5, 0)
    env = ReplayEnv(rewards=rew, cost=m.cost, orders=orders).learner_view()
    router = make_router("ucb1")
    router.reset(env, np.random.default_rng(0))
    n, s = np.zeros((5, 4)), np.zeros((5, 4))
    rows = np.arange(5)
    for t in range(m.n_items):
        items = orders[:, t]
        arm = router.select(t, items, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(n > 0, s / np.maximum(n, 1) + np.sqrt(2 * math.log(max(t, 1)) / np.maximum(n, 1)), np.inf)
        assert np.all(score[rows, arm] >= score.max(1) - 1e-9)
        router.update(t, items, None, arm, rew[items, arm])
        n[rows, arm] += 1
        s[rows, arm] += rew[items, arm]


def test_thompson_reports_its_posterior_and_beta_refuses_non_binary_with_location():
    m = simulate_outcomes(40, arm_quality=(0.3, 0.6), arm_cost=(1, 3), seed=2)
    res = replay(m, "thompson_sampling", orderings=2, seed=0, lam=0.5, progress=False)
    assert res.traces["thompson_sampling"].params["posterior"] == "gaussian"
    res = replay(m, "thompson_sampling", orderings=2, seed=0, lam=0.0, progress=False)
    assert res.traces["thompson_sampling"].params["posterior"] == "beta"
    q = m.quality.copy()
    q[7, 1] = 0.5
    m2 = OutcomeMatrix(
        item_ids=m.item_ids,
        arms=m.arms,
        quality=q,
        cost=m.cost,
        latency=m.latency,
        tokens=m.tokens,
        error=m.error,
        features=m.features,
    )
    with pytest.raises(EvalcoreError) as exc:
        replay(m2, "thompson_sampling", orderings=2, params={"thompson_sampling": {"kind": "beta"}}, progress=False)
    assert f"item {m.item_ids[7]!r} on arm 'arm1'" in str(exc.value)
    assert "reward 0.5" in str(exc.value)


# --------------------------------------------------------------------------- bad input
def _table(n_items: int = 6, arms=("m1", "m2")) -> pd.DataFrame:
    rows = [
        {
            "item_id": f"q{i}",
            "arm": a,
            "quality": float((i + j) % 2),
            "cost": 1.0 + j,
            "latency": 0.1,
            "query": f"what is {i} + {i}?",
        }
        for i in range(n_items)
        for j, a in enumerate(arms)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "table, words",
    [
        (_table(arms=("m1",)), ["at least two arms", "'m1'"]),
        (_table(n_items=1), ["at least two items", "'q0'"]),
    ],
)
def test_route_refuses_one_arm_or_one_item(tmp_path, capsys, table, words):
    path = tmp_path / "outcomes.csv"
    table.to_csv(path, index=False)
    out = tmp_path / "out"
    rc = main(["route", "--outcomes", str(path), "--orderings", "3", "--bootstrap", "0", "--output", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert all(w in err for w in words), err
    assert not (out / "summary.csv").exists()


def test_missing_value_message_names_line_and_column(tmp_path, capsys):
    df = _table()
    df.loc[3, "quality"] = np.nan
    path = tmp_path / "outcomes.csv"
    df.to_csv(path, index=False)
    rc = main(
        ["route", "--outcomes", str(path), "--orderings", "3", "--bootstrap", "0", "--output", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert "line 5" in err and "'quality'" in err and "missing value" in err
    assert "np.float64" not in err


def test_matrix_errors_name_the_item_and_arm():
    t, k = 4, 2
    base = dict(
        item_ids=[f"i{j}" for j in range(t)],
        arms=["a", "b"],
        quality=np.zeros((t, k)),
        cost=np.ones((t, k)),
        latency=np.zeros((t, k)),
        tokens=np.zeros((t, k)),
        error=np.zeros((t, k), bool),
    )
    q = np.zeros((t, k))
    q[2, 1] = np.nan
    with pytest.raises(EvalcoreError, match=r"item 'i2', arm 'b'"):
        OutcomeMatrix(**{**base, "quality": q})
    q[2, 1] = 1.5
    with pytest.raises(EvalcoreError, match=r"\[0, 1\] \(item 'i2', arm 'b': 1.5\)"):
        OutcomeMatrix(**{**base, "quality": q})
    c = np.ones((t, k))
    c[3, 0] = -2
    with pytest.raises(EvalcoreError, match=r"item 'i3', arm 'a': -2"):
        OutcomeMatrix(**{**base, "cost": c})
    with pytest.raises(EvalcoreError, match=r"'i1' appears 2 times"):
        OutcomeMatrix(**{**base, "item_ids": ["i0", "i1", "i1", "i3"]})
