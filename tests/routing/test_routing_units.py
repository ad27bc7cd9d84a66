"""Reward, tie-breaking, router internals and metrics, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore.errors import EvalcoreError
from evalcore.routing import (
    ALGORITHMS,
    LinUCB,
    ReplayEnv,
    aiq,
    aiq_table,
    compute_rewards,
    convergence_point,
    lambda_sweep,
    make_router,
    normalized_cost,
    pairwise_comparisons,
    pareto_frontier,
    random_argmax,
    replay,
    simulate_outcomes,
)


# ------------------------------------------------------------------ reward
def test_normalized_cost_scales_by_price_range():
    c = np.array([[1.0, 3.0], [2.0, 5.0]])
    np.testing.assert_allclose(normalized_cost(c), [[0, 0.5], [0.25, 1]])
    np.testing.assert_allclose(normalized_cost(np.full((2, 2), 7.0)), 0.0)
    np.testing.assert_allclose(normalized_cost(c, price_range=(0, 10)), c / 10)


def test_reward_formula():
    q = np.array([[1.0, 0.0], [0.5, 1.0]])
    c = np.array([[1.0, 3.0], [2.0, 5.0]])
    r = compute_rewards(q, c, lam=0.4)
    np.testing.assert_allclose(r, q - 0.4 * np.array([[0, 0.5], [0.25, 1]]))
    np.testing.assert_allclose(compute_rewards(q, c, lam=0.0), q)
    for bad in (-1, float("nan"), float("inf"), "x"):
        with pytest.raises(EvalcoreError, match="lambda"):
            compute_rewards(q, c, lam=bad)
    with pytest.raises(EvalcoreError, match="lambda"):  # the Python API reaches it too
        replay(
            simulate_outcomes(20, arm_quality=(0.2, 0.8), arm_cost=(1, 2), seed=0),
            "random",
            orderings=2,
            lam=-0.5,
            progress=False,
        )


def test_failed_call_earns_no_more_than_wrong_answer():
    q = np.array([[1.0, 0.0, 0.0]])
    c = np.array([[5.0, 9.0, 1.0]])  # the failed call (col 2) is the cheapest
    err = np.array([[False, False, True]])
    for lam in (0.0, 0.3, 2.0):
        r = compute_rewards(q, c, err, lam=lam)
        assert r[0, 2] <= r[0, 1]  # never above the dearest wrong answer
        assert r[0, 2] == pytest.approx(-lam)
    m = simulate_outcomes(50, error_rate=0.3, seed=0)
    assert np.all(m.quality[m.error] == 0.0)
    r = m.rewards(1.0)
    wrong = (m.quality == 0) & ~m.error
    assert r[m.error].max() <= r[wrong].min() + 1e-12


# ------------------------------------------------------------------ tie-breaking
def test_random_argmax_breaks_ties_uniformly_not_by_order():
    rng = np.random.default_rng(0)
    scores = np.tile([0.7, 0.2, 0.7, 0.7], (30000, 1))
    picks = random_argmax(scores, rng)
    counts = np.bincount(picks, minlength=4)
    assert counts[1] == 0
    assert sps.chisquare(counts[[0, 2, 3]]).pvalue > 1e-3
    # infinite (untried) arms tie with each other too
    picks = random_argmax(np.tile([np.inf, 0.0, np.inf], (1000, 1)), rng)
    assert set(np.unique(picks)) == {0, 2}


@pytest.mark.parametrize("name", ALGORITHMS)  # every registered router, not a hand-written list
def test_identical_arms_are_not_chosen_by_arm_order(name):
    k = 4
    m = simulate_outcomes(40, arm_quality=(0.5,) * k, arm_cost=(1.0,) * k, seed=0)
    m.quality[:] = 1.0
    m.cost[:] = 1.0
    res = replay(m, name, orderings=400, seed=0, progress=False)
    first = np.bincount(res.traces[name].arm[:, 0], minlength=k)
    assert first.min() > 50, first  # every arm is picked first in some orderings


# ------------------------------------------------------------------ routers
def test_linucb_inverse_matches_direct_inverse():
    rng = np.random.default_rng(1)
    T, R, K, d = 60, 3, 2, 4
    x = rng.standard_normal((T, d))
    rewards = rng.random((T, K))
    orders = np.tile(np.arange(T), (R, 1))
    env = ReplayEnv(rewards=rewards, cost=np.ones((T, K)), orders=orders, features=x)
    lin = LinUCB(alpha=0.5, reg=2.0, dtype=np.float64)
    lin.reset(env, np.random.default_rng(0))
    A = np.tile(2.0 * np.eye(d + 1), (R, K, 1, 1))
    b = np.zeros((R, K, d + 1))
    rows = np.arange(R)
    for t in range(T):
        items = orders[:, t]
        xt = x[items]
        arms = lin.select(t, items, xt)
        xa = np.c_[np.ones(R), xt]
        # the score LinUCB used equals the closed form with a direct inverse
        inv = np.linalg.inv(A)
        theta = np.einsum("rkij,rkj->rki", inv, b)
        score = np.einsum("rki,ri->rk", theta, xa) + 0.5 * np.sqrt(np.einsum("ri,rkij,rj->rk", xa, inv, xa))
        assert np.all(score[rows, arms] >= score.max(1) - 1e-9)
        r = rewards[items, arms]
        lin.update(t, items, xt, arms, r)
        A[rows, arms] += xa[:, :, None] * xa[:, None, :]
        b[rows, arms] += r[:, None] * xa
    np.testing.assert_allclose(lin.A_inv, np.linalg.inv(A), atol=1e-10)
    np.testing.assert_allclose(lin.theta(), np.einsum("rkij,rkj->rki", np.linalg.inv(A), b), atol=1e-10)


def test_contextual_thompson_samples_have_posterior_spread():
    # no data: the sampled score of each arm is N(0, σ²·xᵀx/reg)
    rng = np.random.default_rng(0)
    R, d = 20000, 3
    x = np.ones((1, d))
    env = ReplayEnv(rewards=np.zeros((1, 2)), cost=np.ones((1, 2)), orders=np.zeros((R, 1), dtype=int), features=x)
    ct = make_router("contextual_thompson", noise_variance=0.25, reg=1.0)
    ct.reset(env, rng)
    ct._project(ct._aug(np.repeat(x, R, 0)))
    assert np.allclose(ct._s, d + 1)  # xᵀA⁻¹x with the intercept
    picks = ct.select(0, np.zeros(R, int), np.repeat(x, R, 0))
    assert 0.45 < picks.mean() < 0.55


def test_thompson_kind_auto():
    m = simulate_outcomes(30, seed=0)
    env = ReplayEnv(rewards=m.rewards(0.0), cost=m.cost, orders=np.tile(np.arange(30), (2, 1)))
    ts = make_router("thompson_sampling")
    ts.reset(env, np.random.default_rng(0))
    assert ts.mode == "beta"
    env.rewards = m.rewards(0.5)
    ts.reset(env, np.random.default_rng(0))
    assert ts.mode == "gaussian"
    with pytest.raises(EvalcoreError):
        make_router("thompson_sampling", kind="beta").reset(env, np.random.default_rng(0))


def test_epsilon_decay_and_bad_parameters():
    m = simulate_outcomes(400, arm_quality=(0.1, 0.9), arm_cost=(1, 1), seed=0)
    res = replay(
        m,
        "epsilon_greedy",
        orderings=50,
        seed=0,
        progress=False,
        params={"epsilon_greedy": {"epsilon": 1.0, "decay": 0.05}},
    )
    arm = res.traces["epsilon_greedy"].arm
    assert np.mean(arm[:, :10] == 1) < 0.8 and np.mean(arm[:, -100:] == 1) > 0.9
    with pytest.raises(EvalcoreError):
        make_router("ucb1", c=-1)
    with pytest.raises(EvalcoreError):
        make_router("nope")
    with pytest.raises(EvalcoreError):
        make_router("linucb", gamma=3)


def test_hybrid_switches_from_ucb1_to_linucb():
    from evalcore.routing import simulate_contextual

    m = simulate_contextual(600, 3, n_features=6, seed=1)
    q = {}
    for switch in (0, 150, 600):
        res = replay(m, "hybrid", orderings=8, seed=0, progress=False, params={"hybrid": {"switch_after": switch}})
        tr = res.traces["hybrid"]
        assert tr.params["switch_after"] == switch
        q[switch] = tr.quality.mean(1).mean()
        if switch == 150:
            # UCB1 phase: every arm is tried once before any repeats (untried arms first)
            assert all(len(set(row)) == 3 for row in tr.arm[:, :3])
            late = tr.quality[:, 150:].mean()
            early = tr.quality[:, :150].mean()
            assert late > early + 0.1  # LinUCB takes over warm
    ucb = replay(m, "ucb1", orderings=8, seed=0, progress=False).traces["ucb1"].quality.mean()
    assert abs(q[600] - ucb) < 0.05  # never switching is UCB1
    assert q[0] > q[600] + 0.15  # switching at once is LinUCB


# ------------------------------------------------------------------ metrics
def test_convergence_point_definition():
    w = 10
    settled = np.r_[np.array([0, 1, 2, 3] * 5), np.full(80, 2)]  # settles on 2 at step 20
    cp = convergence_point(settled[None, :], window=w)
    # steps 17, 18, 19 are 1, 2, 3: the window starting at 18 holds nine 2s (≥ 0.9), the one
    # starting at 17 only eight
    assert cp[0] == 18
    assert convergence_point(np.full((1, 50), 1), window=w)[0] == 0
    alternating = np.tile([0, 1], 50)
    assert np.isnan(convergence_point(alternating, window=w)[0])
    relapse = np.r_[np.full(60, 2), np.zeros(3, int), np.full(37, 2)]  # 3 off inside a window
    # lapse at steps 60–62: the window starting at 62 holds one lapse step (0.9), at 61 two
    assert convergence_point(relapse, window=w)[0] == 62
    # threshold 0.7 tolerates the lapse
    assert convergence_point(relapse, window=w, threshold=0.7)[0] == 0
    with pytest.raises(EvalcoreError):
        convergence_point(settled, threshold=0)


def _brute_convergence(c, w, thr):
    T = len(c)
    tail = c[T - w :]
    dom = np.bincount(tail).argmax()
    share = [np.mean(c[j : j + w] == dom) for j in range(T - w + 1)]
    if share[-1] < thr:
        return np.nan
    for j in range(len(share)):
        if all(s >= thr for s in share[j:]):
            return j
    return np.nan


def test_convergence_point_matches_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(50):
        T = int(rng.integers(20, 80))
        p = rng.random()
        c = np.where(rng.random(T) < np.linspace(0.3, 1.0, T) * p + (1 - p), 1, rng.integers(0, 3, T))
        got = convergence_point(c, window=8, threshold=0.8)[0]
        want = _brute_convergence(c, 8, 0.8)
        assert (np.isnan(got) and np.isnan(want)) or got == want


def test_pareto_frontier():
    cost = np.array([1.0, 2.0, 2.0, 3.0, 0.5])
    qual = np.array([0.5, 0.7, 0.6, 0.7, 0.2])
    assert pareto_frontier(cost, qual).tolist() == [True, True, False, False, True]


def test_aiq_hand_computed():
    # hull: (1,0.5)→(2,0.8) linear, flat to 3: area 0.65 + 0.8 = 1.45 over width 2
    assert aiq([1, 2], [0.5, 0.8], cost_range=(1, 3)) == pytest.approx(0.725, abs=1e-6)
    # a point under the hull changes nothing; a dominated dearer point neither
    assert aiq([1, 2, 1.5, 2.5], [0.5, 0.8, 0.6, 0.7], cost_range=(1, 3)) == pytest.approx(0.725, abs=1e-6)
    # anchor joins the cheapest arm to the first point
    assert aiq([2], [0.8], cost_range=(0, 2), anchor=(0, 0.4)) == pytest.approx(0.6, abs=1e-6)


def test_aiq_table_and_lambda_sweep():
    m = simulate_outcomes(150, arm_quality=(0.3, 0.6, 0.9), arm_cost=(1, 2, 6), seed=0)
    sweep = lambda_sweep(m, "oracle,always_best,always_cheapest", (0.0, 0.5, 1.0, 3.0), orderings=6, seed=0)
    assert len(sweep) == 12
    oc = sweep[sweep.algorithm == "oracle"].sort_values("lambda").mean_cost.to_numpy()
    assert np.all(np.diff(oc) <= 1e-9)  # the oracle spends less as cost weighs more
    tab = aiq_table(sweep, m.arm_table()).set_index("algorithm")
    cheap = sweep[sweep.algorithm == "always_cheapest"].mean_quality.mean()
    # RouterBench's paper AIQ (published definition, issue 36): a router always at the
    # cheapest arm holds its quality over the whole cost range
    assert tab.loc["always_cheapest", "aiq_paper"] == pytest.approx(cheap, abs=0.02)
    assert tab.loc["oracle", "aiq_paper"] > tab.loc["always_best", "aiq_paper"]
    # the oracle beats the Zero router (the arms' hull) by a clear margin; three arms: no APGR
    assert tab.loc["oracle", "margin_paper"] > 0.05 and tab.loc["zero_router", "margin_paper"] == 0.0
    assert tab["apgr_routellm"].isna().all()
    assert tab.loc["oracle", "savings_at_best_arm_quality"] > 0.3


def test_pairwise_comparisons_agree_with_scipy_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    vals = {"a": rng.normal(0, 1, 30), "b": rng.normal(0.3, 1, 30), "c": rng.normal(0.1, 1, 30)}
    df = pairwise_comparisons(vals, correction="holm")
    p = [sps.ttest_rel(vals[x], vals[y]).pvalue for x, y in (("a", "b"), ("a", "c"), ("b", "c"))]
    np.testing.assert_allclose(df.p_value, p)
    np.testing.assert_allclose(df.p_adjusted, multipletests(p, method="holm")[1])
    bh = pairwise_comparisons(vals, correction="bh", test="wilcoxon")
    pw = [sps.wilcoxon(vals[x], vals[y]).pvalue for x, y in (("a", "b"), ("a", "c"), ("b", "c"))]
    np.testing.assert_allclose(bh.p_value, pw)
    np.testing.assert_allclose(bh.p_adjusted, multipletests(pw, method="fdr_bh")[1])
    with pytest.raises(EvalcoreError):
        pairwise_comparisons(vals, test="z")


def test_summary_convergence_for_fixed_arm():
    m = simulate_outcomes(100, seed=0)
    s = replay(m, "always_best,random", orderings=5, seed=0, progress=False).summary()
    s = s.set_index("algorithm")
    assert s.loc["always_best", "convergence_point"] == 0
    assert s.loc["always_best", "converged_share"] == 1.0
    assert np.isnan(s.loc["random", "convergence_point"])
    assert isinstance(s, pd.DataFrame)


# ------------------------------------------------------------------ features
def test_tfidf_features_and_reduction():
    from evalcore.routing import query_features, reduce_features

    qs = [f"question number {i} about {'apples' if i % 2 else 'history of Rome'}" for i in range(30)]
    x = query_features(qs, dims=8, embedder="tfidf")
    assert x.shape == (30, 8) and np.all(np.isfinite(x))
    np.testing.assert_allclose(x.std(0, ddof=1), 1.0, rtol=1e-6)  # whitened components
    z = reduce_features(np.c_[np.ones(5), np.arange(5.0)], dims=64)
    assert z.shape == (5, 1)  # constant column dropped
    with pytest.raises(EvalcoreError):
        query_features(qs, embedder="bert")


@pytest.mark.integration  # loads torch and the sentence-transformers model (tens of seconds)
def test_minilm_features_when_installed():
    from evalcore.routing._features import minilm_path, text_embeddings

    if minilm_path() is None:
        pytest.skip("all-MiniLM-L6-v2 not installed")
    qs = ["How many apples does John have left?", "How many oranges does Mary have left?", "Who wrote the play Hamlet?"]
    emb, used = text_embeddings(qs, embedder="auto")
    assert used == "minilm" and emb.shape == (3, 384)
    sim = emb @ emb.T
    assert sim[0, 1] > sim[0, 2] + 0.2


def test_aiq_is_the_exact_area_under_the_hull():
    # a hull that rises within the first 1e-4 of the cost range: a grid of 2,001 points gave
    # 0.99975; the area is 1 - 0.5e-4 = 0.99995
    assert aiq([0, 1e-4, 1], [0, 1, 1], cost_range=(0, 1)) == pytest.approx(0.99995, abs=1e-12)
    assert aiq([0.2, 0.6], [0.5, 0.9], cost_range=(0, 1)) == pytest.approx(
        (0.2 * 0.5 + 0.4 * (0.5 + 0.9) / 2 + 0.4 * 0.9) / 1.0, abs=1e-12
    )


def test_pairwise_significance_at_p_equal_alpha_matches_stats_compare():
    from evalcore import stats

    a, b = [1.0, 2.0, 3.0, 4.0, 5.0], [0.0] * 5  # exact permutation p = 2 / 32 = 0.0625
    df = pairwise_comparisons({"a": np.array(a), "b": np.array(b)}, test="permutation", correction="none", alpha=0.0625)
    assert df["p_adjusted"].iloc[0] == pytest.approx(0.0625)
    assert bool(df["significant"].iloc[0]) is True
    ids = [f"q{i}" for i in range(5)]
    assert stats.compare(dict(zip(ids, a)), dict(zip(ids, b)), test="permutation", alpha=0.0625).significant is True
