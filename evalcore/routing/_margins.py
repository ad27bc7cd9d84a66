"""The published routing metrics of a λ sweep in one table (:func:`aiq_table`: RouterBench's
AIQ under both normalisations, the Zero router and each router's margin over it, RouteLLM's
APGR and CPT on two-arm matrices) and their item-bootstrap intervals (:func:`aiq_bootstrap`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._aiq import aiq_paper, aiq_routerbench, flat_end, nondecreasing_hull
from evalcore.routing._apgr import CPT_LEVELS, cpt, routellm_apgr, routellm_pair
from evalcore.routing._matrix import OutcomeMatrix

ZERO_ROUTER = "zero_router"
_CPT_COLUMNS = tuple(f"cpt_{round(level * 100)}" for level in CPT_LEVELS)
# the values an item bootstrap gives an interval
BOOTSTRAPPED = ("aiq_paper", "aiq_routerbench", "margin_paper", "margin_routerbench", "apgr_routellm")


def _cost_at(hc: np.ndarray, hq: np.ndarray, target: float) -> float:
    """Least cost at which the hull reaches ``target`` quality (NaN if never)."""
    reach = np.flatnonzero(hq >= target - 1e-12)
    if reach.size == 0:
        return float("nan")
    j = int(reach[0])
    if j == 0 or hq[j] == hq[j - 1]:
        return float(hc[j])
    return float(hc[j - 1] + (target - hq[j - 1]) * (hc[j] - hc[j - 1]) / (hq[j] - hq[j - 1]))


def aiq_table(sweep: pd.DataFrame, arm_means: pd.DataFrame, *, max_cost: float | None = None) -> pd.DataFrame:
    """RouterBench's and RouteLLM's metrics of every router in a λ sweep, and the Zero router.

    Per router (its operating points: the λ sweep's rows; ``random_swept``: RouteLLM's
    threshold sweep of the random router):

    - ``aiq_paper``: :func:`aiq_paper` over the arms' cost range (RouterBench paper, Table 2 on).
    - ``aiq_routerbench``: :func:`aiq_routerbench` with ``c_max`` the largest
      :func:`flat_end` of all the routers in the table, the Zero router's included (as
      RouterBench's ``calc_AIQ`` takes the dearest point of all the hulls it compares).
    - ``margin_paper``, ``margin_routerbench``: AIQ − the Zero router's AIQ under the same
      normalisation (RouterBench compares every router with the Zero router).
    - ``apgr_routellm`` and ``cpt_20``, ``cpt_50``, ``cpt_80``: :func:`routellm_apgr` and
      :func:`cpt` of the raw (strong-call share, quality) curve of the router's points, the
      strong model being the best-quality arm and the weak the cheapest; defined for two-arm
      matrices only (RouteLLM routes between two models), NaN with a note otherwise.
      ``strong_share_min``/``_max``: the shares the curve spans (APGR averages the PGR over
      them; a threshold sweep spans 0–1, a λ sweep may not).
    - ``best_arm_quality``, ``cost_at_best_arm_quality`` (least mean cost at which the hull
      reaches it, NaN if never), ``savings_at_best_arm_quality`` (1 − that / the best arm's
      mean cost) and ``note`` (why a value is missing).

    The Zero router's row (``zero_router``: the arms' non-decreasing hull,
    :func:`zero_router_points`; its operating points are the arms) comes last; its margins
    are 0.

    Args:
        sweep: :func:`lambda_sweep` output (``algorithm, mean_quality, mean_cost`` and, for
            APGR/CPT, ``strong_share``).
        arm_means: ``OutcomeMatrix.arm_table()`` (``arm, mean_quality, mean_cost``).
        max_cost: ``c_max`` of ``aiq_routerbench`` (default: as above).

    Returns:
        One row per router, then the Zero router.
    """
    costs = arm_means["mean_cost"].to_numpy(float)
    quals = arm_means["mean_quality"].to_numpy(float)
    if costs.size == 0:
        raise EvalcoreError("no arms to compare the routers with", field="arm")
    weak, strong = routellm_pair(quals, costs)
    cost_range = (float(costs.min()), float(costs.max()))
    points = _operating_points(sweep, costs, quals, strong)
    top = max(flat_end(c, q) for c, q, _ in points.values()) if max_cost is None else float(max_cost)
    rows = []
    for name, (c, q, share) in points.items():
        notes: list[str] = []
        row: dict[str, Any] = {
            "algorithm": name,
            "aiq_paper": aiq_paper(c, q, cost_range=cost_range),
            "aiq_routerbench": aiq_routerbench(c, q, max_cost=top),
        }
        if math.isnan(row["aiq_routerbench"]):
            notes.append("no RouterBench-code AIQ: nothing costs anything")
        row.update(_routellm_columns(share, q, quals[weak], quals[strong], two_arms=costs.size == 2, notes=notes))
        row.update(_best_arm_columns(c, q, float(quals[strong]), float(costs[strong]), notes))
        row["note"] = "; ".join(notes)
        rows.append(row)
    tab = pd.DataFrame(rows)
    zero = rows[-1]  # the Zero router's row
    tab.insert(3, "margin_paper", tab["aiq_paper"] - float(zero["aiq_paper"]))
    tab.insert(4, "margin_routerbench", tab["aiq_routerbench"] - float(zero["aiq_routerbench"]))
    return tab


_Points = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


def _operating_points(sweep: pd.DataFrame, costs: np.ndarray, quals: np.ndarray, strong: int) -> dict[str, _Points]:
    """Router → (mean costs, mean qualities, strong-call shares or None) of its points in the
    sweep, then the Zero router's: the arms (its hull is theirs; all calls on one arm)."""
    points: dict[str, _Points] = {}
    for name, g in sweep.groupby("algorithm", sort=False):
        share = g["strong_share"].to_numpy(float) if "strong_share" in g else None
        points[str(name)] = (g["mean_cost"].to_numpy(float), g["mean_quality"].to_numpy(float), share)
    zshare = (np.arange(costs.size) == strong).astype(float) if costs.size == 2 else None
    points[ZERO_ROUTER] = (costs, quals, zshare)
    return points


def _routellm_columns(
    share: np.ndarray | None,
    q: np.ndarray,
    weak_quality: float,
    strong_quality: float,
    *,
    two_arms: bool,
    notes: list[str],
) -> dict[str, float]:
    """``apgr_routellm``, the CPT columns and ``strong_share_min``/``_max`` of one router's
    (strong-call share, quality) curve; NaN with a note in ``notes`` where undefined."""
    ap = float("nan")
    cpts = dict.fromkeys(_CPT_COLUMNS, float("nan"))
    smin = smax = float("nan")
    if not two_arms:
        notes.append("no APGR/CPT: RouteLLM's curve needs a two-arm matrix")
    elif share is None or not np.isfinite(share).all():
        notes.append("no APGR/CPT: the sweep has no strong_share")
    else:
        smin, smax = float(share.min()), float(share.max())
        ap = routellm_apgr(share, q, weak_quality=weak_quality, strong_quality=strong_quality)
        if abs(strong_quality - weak_quality) < 1e-12:
            notes.append("no APGR/CPT: the cheapest and the best arm have the same quality")
        elif smax <= smin:
            notes.append("no APGR/CPT: every point has the same strong-call share (no curve)")
        else:
            for col, level in zip(_CPT_COLUMNS, CPT_LEVELS):
                cpts[col] = cpt(share, q, weak_quality=weak_quality, strong_quality=strong_quality, level=level)
            if any(math.isnan(v) for v in cpts.values()):
                notes.append("a CPT is missing: the curve never reaches that PGR")
    return {"apgr_routellm": ap, **cpts, "strong_share_min": smin, "strong_share_max": smax}


def _best_arm_columns(
    c: np.ndarray, q: np.ndarray, target: float, best_cost: float, notes: list[str]
) -> dict[str, float]:
    """``best_arm_quality``, the least cost at which the router's hull reaches it and the
    savings that gives against the best arm's cost (NaN with a note where undefined)."""
    hc, hq = nondecreasing_hull(c, q)
    c_at = _cost_at(hc, hq, target)
    sav = 1.0 - c_at / best_cost if best_cost > 0 else float("nan")
    if math.isnan(c_at):
        notes.append("never reaches the best arm's quality at the λ values swept")
    elif best_cost <= 0:
        notes.append("no savings: the best arm costs nothing")
    return {"best_arm_quality": target, "cost_at_best_arm_quality": c_at, "savings_at_best_arm_quality": sav}


@dataclass
class AIQBootstrap:
    """:func:`aiq_table` on the items at hand, with item-bootstrap intervals.

    Attributes:
        estimate: :func:`aiq_table` of the sweep on the original items.
        values: Router → column (:data:`BOOTSTRAPPED`) → (B,) replicate values.
        indices: The resampled item indices, (B, T).
        confidence: Interval level.
    """

    estimate: pd.DataFrame
    values: dict[str, dict[str, np.ndarray]]
    indices: np.ndarray
    confidence: float = 0.95

    @property
    def n_boot(self) -> int:
        return int(self.indices.shape[0])

    def table(self) -> pd.DataFrame:
        """The estimate with ``<column>_ci_low``/``_ci_high`` beside each bootstrapped column:
        the central ``confidence`` range of its replicate values (finite ones; NaN if none)."""
        a = (1 - self.confidence) / 2
        tab = self.estimate.copy()
        for col in BOOTSTRAPPED:
            lo, hi = [], []
            for name in tab["algorithm"]:
                v = self.values.get(str(name), {}).get(col, np.array([]))
                v = v[np.isfinite(v)]
                qs = np.quantile(v, [a, 1 - a]) if v.size else (float("nan"), float("nan"))
                lo.append(float(qs[0]))
                hi.append(float(qs[1]))
            at = list(tab.columns).index(col) + 1
            tab.insert(at, f"{col}_ci_low", lo)
            tab.insert(at + 1, f"{col}_ci_high", hi)
        tab["n_boot"] = self.n_boot
        return tab


def aiq_bootstrap(
    outcomes: OutcomeMatrix,
    algorithms: str | Sequence[str] = "all",
    lambdas: Sequence[float] = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0),
    *,
    n_boot: int = 50,
    orderings: int = 20,
    seed: int = 0,
    sweep: pd.DataFrame | None = None,
    features: np.ndarray | None = None,
    feature_dims: int = 64,
    embedder: str = "auto",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    confidence: float = 0.95,
    progress: bool | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
) -> AIQBootstrap:
    """Item-bootstrap intervals of :func:`aiq_table`: the AIQs, each router's margin over the
    Zero router and RouteLLM's APGR.

    Replicate ``b`` draws T item indices with replacement (``default_rng([seed, 0xA1C])``),
    replays the λ sweep on that sample (``orderings`` orderings seeded ``seed + 1 + b``, the
    reward's cost scale kept at the original matrix's price range) and recomputes the table on
    it: the arms' means, cost range and Zero router are the resample's, as they would be for a
    matrix drawn like this one. The interval of a margin therefore covers the choice of items,
    the arrival orders and the routers' own randomness.

    Args:
        outcomes: The outcome matrix.
        algorithms: ``"all"`` or names.
        lambdas: The λ values of the sweep.
        n_boot: Replicates B (>= 2).
        orderings: Orderings per λ in each replicate.
        seed: Seed.
        sweep: The sweep on the original items (:func:`lambda_sweep` with these routers and
            λ values); default: swept here with ``orderings`` orderings.
        features: Context features (T, d) (default: computed when a contextual router runs).
        feature_dims: As for :func:`replay`.
        embedder: As for :func:`replay`.
        params: Router hyper-parameters.
        confidence: Interval level.
        progress: Progress over the replicates (as :func:`item_bootstrap`).
        cluster: Each replay's units on a Dask cluster (as :func:`replay`).
        cluster_wait_s: Seconds to wait for the cluster's first worker.

    Returns:
        The :class:`AIQBootstrap`; ``.table()`` is ``aiq.csv``.
    """
    from evalcore.routing._replay import cluster_session
    from evalcore.routing._studies import bootstrap_inputs, lambda_sweep, resampled

    names, feats = bootstrap_inputs(
        outcomes, algorithms, n_boot, features, params=params, feature_dims=feature_dims, embedder=embedder, seed=seed
    )
    prices = (float(outcomes.cost.min()), float(outcomes.cost.max()))
    idx = np.random.default_rng([seed, 0xA1C]).integers(0, outcomes.n_items, size=(n_boot, outcomes.n_items))
    values: dict[str, dict[str, np.ndarray]] = {}
    with cluster_session(cluster, cluster_wait_s) as session:
        opts: dict[str, Any] = dict(orderings=orderings, params=params, progress=False, cluster=session)
        if sweep is None:
            sweep = lambda_sweep(outcomes, names, lambdas, seed=seed, features=feats, price_range=prices, **opts)
        estimate = aiq_table(sweep, outcomes.arm_table(0.0))
        label = f"AIQ item bootstrap ({len(lambdas)} λ values each)"
        for b, sub, sub_feats in resampled(outcomes, idx, feats, label=label, progress=progress):
            sw = lambda_sweep(sub, names, lambdas, seed=seed + 1 + b, features=sub_feats, price_range=prices, **opts)
            for rec in aiq_table(sw, sub.arm_table(0.0)).to_dict("records"):
                store = values.setdefault(str(rec["algorithm"]), {c: np.full(n_boot, np.nan) for c in BOOTSTRAPPED})
                for col in BOOTSTRAPPED:
                    store[col][b] = float(rec[col])
    return AIQBootstrap(estimate=estimate, values=values, indices=idx, confidence=confidence)


def published_lines(table: pd.DataFrame) -> list[str]:
    """Plain-text lines of :func:`aiq_table` (or :meth:`AIQBootstrap.table`) for a terminal:
    per router both AIQs, the margin over the Zero router (with its item-bootstrap interval
    when present) and, on two-arm matrices, RouteLLM's APGR and CPT(50%)."""

    def f(v: Any, fmt: str = ".3f") -> str:
        return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(float(v), fmt)

    boot = "margin_paper_ci_low" in table.columns
    lines = [
        "published metrics of the λ sweep (aiq.csv): AIQ by RouterBench's paper / code normalisation, "
        "margin = AIQ − the Zero router's (paper)"
        + (f", 95% item-bootstrap interval over {int(table['n_boot'].iloc[0])} resamples" if boot else "")
        + "; APGR and CPT(50%) by RouteLLM (two-arm matrices)"
    ]
    for rec in table.to_dict("records"):
        margin = f(rec["margin_paper"], "+.3f")
        if boot:
            margin += f" [{f(rec['margin_paper_ci_low'], '+.3f')}, {f(rec['margin_paper_ci_high'], '+.3f')}]"
        lines.append(
            f"  {rec['algorithm']:<20} AIQ {f(rec['aiq_paper'])} / {f(rec['aiq_routerbench'])}  margin {margin}"
            f"  APGR {f(rec['apgr_routellm'])}  CPT(50%) {f(rec['cpt_50'], '.2f')}"
        )
    return lines
