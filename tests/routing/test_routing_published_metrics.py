"""The published routing metrics against independent reimplementations of the published code.

RouterBench (withmartian/routerbench, ``evaluation/AIQ.py``): the non-decreasing convex hull is
built by checking every pair of points against every point between them, and AIQ is the
trapezoid area under the hull extended to the largest cost, divided by that cost. RouteLLM
(lm-sys/RouteLLM, ``routellm/evals/benchmarks.py`` + ``evaluate.py``): thresholds are
``pd.qcut``'s bin edges of the router's scores, the strong model answers where the score is at
least the threshold (above it for the last), APGR is the trapezoid AUC over the strong-call
share normalised by the weak and strong AUC, CPT(x%) is ``np.interp`` of the target quality.
The reimplementations below follow that logic step by step and share no code with evalcore.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from evalcore.routing import (
    OutcomeMatrix,
    aiq_bootstrap,
    aiq_paper,
    aiq_routerbench,
    aiq_table,
    cpt,
    lambda_sweep,
    pgr,
    random_router_sweep,
    replay,
    routellm_apgr,
    threshold_curve,
)

FIXTURE = Path(__file__).parent / "fixtures" / "routerbench_metrics_wide.csv"


# ---------------------------------------------------------------- independent reimplementations
def rb_hull(points: np.ndarray) -> np.ndarray:
    """RouterBench's get_non_descreasing_convex_hull_of, step by step (needs >= 3 distinct x)."""
    pts = points[np.argsort(points[:, 0])]
    n = len(pts)
    value: dict[float, float] = {}
    order: list[float] = []
    for i in range(n):
        for j in range(i, n):
            x1, y1 = pts[i]
            x2, y2 = pts[j]
            for k in range(n):
                x, y = pts[k]
                if x1 < x < x2:
                    chord = float(np.interp(x, [x1, x2], [y1, y2]))
                    v = chord if y < chord else float(y)
                    if x not in value:
                        value[x] = v
                        order.append(x)
                    else:
                        value[x] = max(value[x], v)
    hull = [[x, value[x]] for x in order]
    if pts[-1][0] not in value and pts[-1][1] >= hull[-1][1]:
        hull.append(list(pts[-1]))
    if pts[0][0] not in value:
        hull = [list(pts[0])] + hull
    h = np.array(hull, dtype=float)
    h = h[np.argsort(h[:, 0])]
    drop = [i for i in range(1, len(h)) if h[i][1] < h[i - 1][1]]
    return np.delete(h, drop, axis=0)


def rb_calc_aiq(point_sets: list[np.ndarray]) -> list[float]:
    """RouterBench's calc_AIQ: hulls extended to the largest hull cost, area / that cost."""
    hulls = [rb_hull(p) for p in point_sets]
    max_x = max(float(h[:, 0].max()) for h in hulls)
    out = []
    for h in hulls:
        ext = np.vstack([h, [max_x, h[-1, 1]]])
        out.append(float(np.trapezoid(ext[:, 1], ext[:, 0])) / max_x)
    return out


def paper_aiq(points: np.ndarray, c_min: float, c_max: float) -> float:
    """The paper's AIQ: 1/(c_max − c_min) ∫ hull over [c_min, c_max] (0 below the hull's first
    point, flat after its last), integrated with scipy's adaptive quadrature."""
    h = rb_hull(points)

    def f(c: float) -> float:
        return 0.0 if c < h[0, 0] else float(np.interp(c, h[:, 0], h[:, 1]))

    inner = [float(x) for x in h[:, 0] if c_min < x < c_max]
    val, _ = integrate.quad(f, c_min, c_max, points=inner or None, limit=200, epsabs=1e-13, epsrel=1e-13)
    return val / (c_max - c_min)


def routellm_eval(scores: np.ndarray, strong: np.ndarray, weak: np.ndarray, n: int = 10) -> pd.DataFrame:
    """RouteLLM's Benchmark.evaluate loop."""
    _, thresholds = pd.qcut(scores, n, retbins=True)
    rows = []
    for i, t in enumerate(thresholds):
        sel = scores >= t if i != len(thresholds) - 1 else scores > t
        res = np.where(sel, strong, weak)
        rows.append({"strong_percentage": sel.sum() / len(sel) * 100, "accuracy": res.sum() / len(res) * 100})
    return pd.DataFrame(rows)


def routellm_metrics(curve: pd.DataFrame, weak_acc: float, strong_acc: float) -> dict[str, float]:
    """RouteLLM's generate_results: APGR and the 20/50/80% call thresholds (in %)."""
    d = curve.sort_values(by=["strong_percentage"])
    auc = np.trapezoid(d["accuracy"], d["strong_percentage"] / 100)
    weak_auc = np.trapezoid(np.full(len(d), weak_acc), d["strong_percentage"] / 100)
    strong_auc = np.trapezoid(np.full(len(d), strong_acc), d["strong_percentage"] / 100)
    out = {"apgr": (auc - weak_auc) / (strong_auc - weak_auc)}
    for pct in (0.2, 0.5, 0.8):
        out[f"cpt_{round(pct * 100)}"] = float(
            np.interp(pct * (strong_acc - weak_acc) + weak_acc, d["accuracy"], d["strong_percentage"])
        )
    return out


# ---------------------------------------------------------------- the fixture
def routerbench_matrix() -> OutcomeMatrix:
    """RouterBench's wide table (one row per prompt, per model a quality and a
    ``<model>|total_cost`` column) turned into an outcome matrix by hand."""
    wide = pd.read_csv(FIXTURE)
    models = [
        c
        for c in wide.columns
        if "|" not in c and c not in ("sample_id", "prompt", "eval_name", "oracle_model_to_route_to")
    ]
    q = wide[models].to_numpy(float)
    c = wide[[f"{m}|total_cost" for m in models]].to_numpy(float)
    return OutcomeMatrix(
        item_ids=list(wide["sample_id"]),
        arms=models,
        quality=q,
        cost=c,
        latency=np.zeros_like(q),
        tokens=np.zeros_like(q),
        error=np.zeros(q.shape, dtype=bool),
        queries=list(wide["prompt"]),
    )


def test_oracle_pays_for_the_cheapest_correct_arm():
    m = routerbench_matrix()
    res = replay(m, "oracle", orderings=5, seed=0, lam=0.0, progress=False)
    tr = res.traces["oracle"]
    best = m.quality.max(1, keepdims=True)
    cheapest_best = np.where(m.quality == best, m.cost, np.inf).min(1)
    # every ordering pays exactly the cheapest best (= correct, where any arm is) arm per query
    assert np.allclose(tr.cost.sum(1), cheapest_best.sum(), rtol=0, atol=1e-12)
    assert np.allclose(tr.quality.mean(1), best.mean())
    # RouterBench's own oracle column names a correct model where there is one
    wide = pd.read_csv(FIXTURE)
    assert (m.quality.max(1) == 1).sum() == (wide[m.arms].max(axis=1) == 1).sum()


def test_aiq_both_normalisations_and_zero_router_match_routerbench_code():
    rng = np.random.default_rng(3)
    sets = []
    for n in (5, 8, 12):
        pts = np.column_stack([rng.permutation(np.linspace(0.1, 3.0, n)) + rng.random(n) * 1e-3, rng.random(n)])
        sets.append(pts)
    want = rb_calc_aiq(sets)
    top = max(float(rb_hull(p)[:, 0].max()) for p in sets)
    for pts, w in zip(sets, want):
        assert aiq_routerbench(pts[:, 0], pts[:, 1], max_cost=top) == pytest.approx(w, abs=1e-9)
        lo, hi = float(pts[:, 0].min()) - 0.05, float(pts[:, 0].max()) + 0.2
        assert aiq_paper(pts[:, 0], pts[:, 1], cost_range=(lo, hi)) == pytest.approx(paper_aiq(pts, lo, hi), abs=1e-9)
        # a range starting after the cheapest point, too
        mid = float(np.median(pts[:, 0]))
        assert aiq_paper(pts[:, 0], pts[:, 1], cost_range=(mid, hi)) == pytest.approx(paper_aiq(pts, mid, hi), abs=1e-9)


def test_aiq_table_on_routerbench_fixture_matches_reimplementation():
    m = routerbench_matrix()
    sweep = lambda_sweep(
        m,
        "oracle,always_best,always_cheapest,ucb1,random",
        (0.0, 0.25, 1.0, 1.2, 1.5, 2.0, 4.0),
        orderings=4,
        seed=0,
        progress=False,
    )
    arms = m.arm_table()
    tab = aiq_table(sweep, arms).set_index("algorithm")
    arm_pts = arms[["mean_cost", "mean_quality"]].to_numpy(float)
    groups = {n: g[["mean_cost", "mean_quality"]].to_numpy(float) for n, g in sweep.groupby("algorithm", sort=False)}
    # RouterBench's code compares the routers together: c_max is the dearest hull point of all;
    # the hull code needs three distinct costs, so only such routers are checked against it
    names = [n for n, p in groups.items() if len(np.unique(p[:, 0])) >= 3]
    assert {"oracle", "random_swept", "ucb1"} <= set(names)
    # c_max: the dearest point on any hull, i.e. (as the code keeps ties at the top) the
    # dearest point of each router's highest quality; routers with one or two costs included
    sets = [*groups.values(), arm_pts]
    top = max(float(p[p[:, 1] == p[:, 1].max(), 0].max()) for p in sets)
    hulls = [rb_hull(groups[n]) for n in names] + [rb_hull(arm_pts)]
    want = [float(np.trapezoid(np.r_[h[:, 1], h[-1, 1]], np.r_[h[:, 0], top])) / top for h in hulls]
    for n, w in zip([*names, "zero_router"], want):
        assert tab.loc[n, "aiq_routerbench"] == pytest.approx(w, abs=1e-9), n
    lo, hi = float(arm_pts[:, 0].min()), float(arm_pts[:, 0].max())
    for n in names:
        assert tab.loc[n, "aiq_paper"] == pytest.approx(paper_aiq(groups[n], lo, hi), abs=1e-9), n
    zero = paper_aiq(arm_pts, lo, hi)
    assert tab.loc["zero_router", "aiq_paper"] == pytest.approx(zero, abs=1e-9)
    for n in names:
        assert tab.loc[n, "margin_paper"] == pytest.approx(paper_aiq(groups[n], lo, hi) - zero, abs=1e-9)
    # the oracle (cheapest correct arm) beats the Zero router; always_cheapest does not
    assert tab.loc["oracle", "margin_paper"] > 0.1 and tab.loc["always_cheapest", "margin_paper"] < 0
    # three arms: RouteLLM's two-model metrics are not defined, and the table says so
    assert tab["apgr_routellm"].isna().all() and tab["note"].str.contains("two-arm").all()


def test_apgr_and_cpt_match_routellm_evaluation():
    rng = np.random.default_rng(11)
    T = 400
    weak = rng.random(T) * 6 + 1  # MT-Bench-like scores: continuous quality
    gain = rng.random(T) * 3 + 0.01  # the strong model is better on every query: a rising curve
    strong = weak + gain
    for scores in (gain + rng.normal(0, 0.3, T), rng.random(T)):
        curve = threshold_curve(scores, strong, weak)
        ref = routellm_eval(scores, strong, weak)
        assert np.allclose(curve["strong_share"] * 100, ref["strong_percentage"], atol=1e-9)
        assert np.allclose(curve["mean_quality"] * 100, ref["accuracy"], atol=1e-9)
        w, s = float(weak.mean()), float(strong.mean())
        want = routellm_metrics(ref, w * 100, s * 100)
        got = routellm_apgr(curve["strong_share"], curve["mean_quality"], weak_quality=w, strong_quality=s)
        assert got == pytest.approx(want["apgr"], abs=1e-9)
        for level in (0.2, 0.5, 0.8):
            c = cpt(curve["strong_share"], curve["mean_quality"], weak_quality=w, strong_quality=s, level=level)
            assert c * 100 == pytest.approx(want[f"cpt_{round(level * 100)}"], abs=1e-9)
    # PGR at the two ends of the curve: 0 at no strong call, 1 at all
    assert pgr(curve["mean_quality"].iloc[-1], weak_quality=w, strong_quality=s) == pytest.approx(0.0)
    assert pgr(curve["mean_quality"].iloc[0], weak_quality=w, strong_quality=s) == pytest.approx(1.0)


def test_cpt_is_the_first_crossing_on_a_falling_curve():
    share = [0.0, 0.5, 1.0]
    quality = [0.2, 0.9, 0.6]  # rises past the strong model's quality, then falls back
    assert cpt(share, quality, weak_quality=0.2, strong_quality=0.6, level=0.5) == pytest.approx(0.5 * 0.2 / 0.7)
    assert np.isnan(cpt([0.0, 0.5], [0.2, 0.3], weak_quality=0.2, strong_quality=0.6, level=0.8))


def test_cost_swept_random_router_recovers_half_the_gap_on_two_arms():
    m = routerbench_matrix()
    two = m.subset(arms=["mistral-7b", "gpt-4"])
    sweep = lambda_sweep(two, "random,oracle,always_cheapest", (0.0, 0.5, 4.0), orderings=200, seed=0, progress=False)
    tab = aiq_table(sweep, two.arm_table()).set_index("algorithm")
    # RouteLLM: a random router scores about 0.5; its curve spans every strong-call share
    assert tab.loc["random_swept", "apgr_routellm"] == pytest.approx(0.5, abs=0.03)
    assert tab.loc["random_swept", ["strong_share_min", "strong_share_max"]].tolist() == [0.0, 1.0]
    # PGR of every point of the sweep: 0 at the weak model's quality, 1 at the strong's
    qw, qs = two.quality.mean(0)
    assert np.allclose(sweep["pgr"], (sweep["mean_quality"] - qw) / (qs - qw))
    ends = sweep[sweep.algorithm == "random_swept"].set_index("threshold")["pgr"]
    assert ends[0.0] == pytest.approx(1.0) and ends[1.0] == pytest.approx(0.0)
    # RouteLLM's evaluation of the same random scores gives the same APGR, draw by draw
    q, c = two.quality, two.cost
    swept = random_router_sweep(q, c, weak=0, strong=1, orderings=1, seed=5)
    u = np.random.default_rng([5, 0x5EED]).random(two.n_items)
    ref = routellm_metrics(routellm_eval(u, q[:, 1], q[:, 0]), q[:, 0].mean() * 100, q[:, 1].mean() * 100)
    got = routellm_apgr(
        swept["strong_share"], swept["mean_quality"], weak_quality=q[:, 0].mean(), strong_quality=q[:, 1].mean()
    )
    assert got == pytest.approx(ref["apgr"], abs=1e-9)
    # the one-point random router of the replay has no curve: no APGR, and the table says why
    assert np.isnan(tab.loc["random", "apgr_routellm"]) and "no curve" in tab.loc["random", "note"]
    # the Zero router of two arms is the chord: APGR 0.5 exactly, margin 0
    assert tab.loc["zero_router", "apgr_routellm"] == pytest.approx(0.5, abs=1e-12)
    assert tab.loc["zero_router", "margin_paper"] == 0.0


def test_margins_over_zero_router_carry_item_bootstrap_intervals():
    m = routerbench_matrix()
    boot = aiq_bootstrap(m, "oracle,always_cheapest", (0.0, 1.0, 4.0), n_boot=12, orderings=3, seed=0, progress=False)
    tab = boot.table().set_index("algorithm")
    again = aiq_bootstrap(m, "oracle,always_cheapest", (0.0, 1.0, 4.0), n_boot=12, orderings=3, seed=0, progress=False)
    pd.testing.assert_frame_equal(tab, again.table().set_index("algorithm"))  # seeded
    for col in ("margin_paper", "margin_routerbench", "aiq_paper"):
        assert (tab[f"{col}_ci_low"] <= tab[f"{col}_ci_high"]).all()
    assert tab.loc["zero_router", ["margin_paper_ci_low", "margin_paper_ci_high"]].tolist() == [0.0, 0.0]
    assert tab.loc["oracle", "margin_paper_ci_low"] > 0  # the oracle beats the Zero router on every resample
    # each replicate is the table of a resampled matrix: replicate 0 recomputed by hand
    from evalcore.routing._studies import _resample_items

    sub = _resample_items(m, boot.indices[0])
    sw = lambda_sweep(sub, "oracle,always_cheapest", (0.0, 1.0, 4.0), orderings=3, seed=1, progress=False,
                      price_range=(float(m.cost.min()), float(m.cost.max())))  # fmt: skip
    rep = aiq_table(sw, sub.arm_table()).set_index("algorithm")
    assert boot.values["oracle"]["margin_paper"][0] == pytest.approx(rep.loc["oracle", "margin_paper"], abs=1e-12)


def test_the_report_shows_the_margin_over_the_zero_router_with_its_interval():
    from evalcore.reporting import _headline

    row = {
        "routing_summary.oracle.mean_quality": 0.9,
        "routing_summary.oracle.total_cost": 2.0,
        "routing_aiq.oracle.aiq_paper": 0.81,
        "routing_aiq.oracle.aiq": 0.5,  # an older record's other definition: not shown when aiq_paper is
        "routing_aiq.oracle.margin_paper": 0.12,
        "routing_aiq.oracle.margin_paper_ci_low": 0.05,
        "routing_aiq.oracle.margin_paper_ci_high": 0.2,
    }
    (entry,) = _headline._routing_rows("routing", row)
    assert entry["aiq"] == 0.81 and entry["margin_paper_ci_high"] == 0.2
    shown = _headline._fmt_routing(pd.DataFrame([entry]))
    assert shown.loc[0, "AIQ"] == "0.810"
    assert shown.loc[0, "margin over Zero router"] == "0.120 [0.050, 0.200]"
    assert _headline._NOTES["routing"].count("margin over Zero router:") == 1
