"""Routing metrics: intervals over orderings, convergence point, Pareto frontier, the area
under a cost–quality hull (:func:`aiq`, with an anchor), pairwise comparisons with corrected
p-values. The published definitions (RouterBench's AIQ, the Zero router, RouteLLM's APGR and
CPT) are in :mod:`evalcore.routing._aiq`, :mod:`evalcore.routing._apgr` and
:mod:`evalcore.routing._margins`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._aiq import hull_vertices


def interval(values: np.ndarray | Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Central ``confidence`` range of per-ordering values (percentiles
    ``(1 − c)/2`` and ``(1 + c)/2``): the spread of a result over arrival orders and seeds."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(v, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)


def convergence_point(choices: np.ndarray, *, threshold: float = 0.9, window: int | None = None) -> np.ndarray:
    """Step after which a router keeps selecting its eventually dominant arm.

    Definition, per ordering: the *dominant arm* a* is the arm chosen most often in the last
    ``W`` steps (``W = window``, default ``max(10, T // 20)``). The rolling share
    ``s_j = (1/W) Σ_{u=j}^{j+W−1} 1[choice_u = a*]`` is computed for every window start j. The
    convergence point is the smallest ``j`` such that ``s_i ≥ threshold`` for every ``i ≥ j``:
    the number of queries routed before the router settled (0 = settled from the first
    query). If the last window's share is below ``threshold`` the router did not converge
    (NaN), e.g. a contextual router that keeps switching arms by query.

    Args:
        choices: Chosen arm per ordering and step, (R, T) (or (T,)).
        threshold: Required share of the dominant arm.
        window: W (clipped to T).

    Returns:
        Float array (R,) of 0-based steps, NaN where not converged.
    """
    c = np.asarray(choices)
    if c.ndim == 1:
        c = c[None, :]
    R, T = c.shape
    if not 0 < threshold <= 1:
        raise EvalcoreError("threshold must be in (0, 1]", field="threshold")
    w = int(min(window or max(10, T // 20), T))
    if w < 1:
        raise EvalcoreError("window must be >= 1", field="window")
    tail = c[:, T - w :].astype(np.int64)
    k = int(c.max()) + 1
    counts = np.zeros((R, k))
    np.add.at(counts, (np.repeat(np.arange(R), w), tail.ravel()), 1.0)
    dominant = counts.argmax(1)
    ind = (c == dominant[:, None]).astype(float)
    cs = np.concatenate([np.zeros((R, 1)), np.cumsum(ind, axis=1)], axis=1)
    share = (cs[:, w:] - cs[:, :-w]) / w  # (R, T − w + 1), index = window start
    ok = share >= threshold - 1e-12
    out = np.full(R, np.nan)
    conv = ok[:, -1]
    bad = ~ok
    # last failing window start; converged from the next one
    last_bad = np.where(bad.any(1), bad.shape[1] - 1 - np.argmax(bad[:, ::-1], axis=1), -1)
    out[conv] = (last_bad[conv] + 1).astype(float)
    return out


def pareto_frontier(cost: Sequence[float] | np.ndarray, quality: Sequence[float] | np.ndarray) -> np.ndarray:
    """Non-dominated points: no other point has cost ≤ and quality ≥ with one strict.

    Returns:
        Boolean mask, True on the frontier.
    """
    c, q = np.asarray(cost, dtype=float), np.asarray(quality, dtype=float)
    le_c = c[None, :] <= c[:, None]
    ge_q = q[None, :] >= q[:, None]
    strict = (c[None, :] < c[:, None]) | (q[None, :] > q[:, None])
    dominated = (le_c & ge_q & strict).any(axis=1)
    return np.asarray(~dominated, dtype=bool)


def aiq(
    cost: Sequence[float] | np.ndarray,
    quality: Sequence[float] | np.ndarray,
    *,
    cost_range: tuple[float, float],
    anchor: tuple[float, float] | None = None,
) -> float:
    """Mean quality of a non-decreasing cost–quality hull over a cost range, with an optional
    anchor point (an evalcore variant of RouterBench's AIQ; the published definitions are
    :func:`evalcore.routing.aiq_paper` and :func:`evalcore.routing.aiq_routerbench`, which
    hold the hull at 0 below its cheapest point instead of flat or anchored).

    ``AIQ = 1/(c_max − c_min) ∫_{c_min}^{c_max} Q̃(c) dc`` where ``Q̃`` is the upper concave,
    non-decreasing hull of the router's (cost, quality) points (e.g. from a λ sweep; mixing two
    operating points at random reaches the chord between them), extended flat to the right of
    its last vertex and, to the left of its first vertex, joined to ``anchor`` (the cheapest
    arm's point, always reachable) or held flat when no anchor is given.

    Args:
        cost: Mean cost per query of each operating point.
        quality: Mean quality of each operating point.
        cost_range: ``(c_min, c_max)``: usually the cheapest and the dearest arm's mean cost.
        anchor: Optional (cost, quality) point every router can reach.

    Returns:
        AIQ in quality units (the hull's mean quality over the cost range).
    """
    c = np.asarray(cost, dtype=float)
    q = np.asarray(quality, dtype=float)
    if anchor is not None:
        c, q = np.r_[c, anchor[0]], np.r_[q, anchor[1]]
    lo, hi = map(float, cost_range)
    if c.size == 0:
        raise EvalcoreError("aiq needs at least one point", field="cost")
    hc, hq = hull_vertices(c, q)
    if hi <= lo:
        return float(np.interp(lo, hc, hq))
    # the hull is piecewise linear: the trapezoid rule over its vertices in the range is exact
    grid = np.unique(np.r_[lo, hi, hc[(hc > lo) & (hc < hi)]])
    vals = np.interp(grid, hc, hq)  # flat beyond the first/last vertex
    return float(np.trapezoid(vals, grid) / (hi - lo))


def pairwise_comparisons(
    values: Mapping[str, np.ndarray | Sequence[float]],
    *,
    test: str = "paired_t",
    correction: str = "holm",
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Compare every pair of algorithms on paired per-ordering values: an **order-variability
    check**, not a test that generalizes to other items.

    Each algorithm's values are aligned by ordering (the same R arrival orders of the *same*
    items), so the tests are paired (:mod:`evalcore.stats`: ``paired_t``, ``wilcoxon`` or
    ``permutation``), and the p-values of all ``K(K−1)/2`` pairs are corrected together
    (``holm``, ``bh`` or ``none``). R can be made as large as one likes, so tiny p-values
    only say that the difference is stable across arrival orders of these items; for a
    comparison that generalizes to other items use :func:`evalcore.routing.item_bootstrap`.
    A pair whose difference is the same in every ordering (two order-independent routers)
    has no spread to test: its ``statistic`` and p-values are NaN and ``note`` says why.

    Returns:
        One row per pair: ``a, b, difference`` (mean of a − b), ``ci_low, ci_high``,
        ``statistic, p_value, p_adjusted, significant, note`` and ``varies_over``
        (``"arrival order (same items)"``).
    """
    from evalcore import stats

    tests: dict[str, Callable[[np.ndarray, np.ndarray], stats.TestResult]] = {
        "paired_t": stats.paired_t,
        "wilcoxon": stats.wilcoxon,
        "permutation": stats.permutation_test,
    }
    if test not in tests:
        raise EvalcoreError(f"unknown test {test!r}; use {', '.join(tests)}", field="test")
    names = list(values)
    rows = []
    for a, b in combinations(names, 2):
        xa, xb = np.asarray(values[a], float), np.asarray(values[b], float)
        d = xa - xb
        if d.size and np.ptp(d) <= 1e-12 * max(1.0, float(np.abs(d).max())):
            diff = float(d.mean())
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "difference": diff,
                    "ci_low": diff,
                    "ci_high": diff,
                    "statistic": float("nan"),
                    "p_value": float("nan"),
                    "note": "same difference in every ordering: nothing to test",
                }
            )
            continue
        res = tests[test](xa, xb)
        rows.append(
            {
                "a": a,
                "b": b,
                "difference": res.difference,
                "ci_low": res.ci_low,
                "ci_high": res.ci_high,
                "statistic": res.statistic,
                "p_value": res.p_value,
                "note": "",
            }
        )
    df = pd.DataFrame(rows, columns=["a", "b", "difference", "ci_low", "ci_high", "statistic", "p_value", "note"])
    df["p_adjusted"] = np.nan
    if len(df):
        ok = df["p_value"].notna().to_numpy()
        if ok.any():
            df.loc[ok, "p_adjusted"] = stats.adjust_p_values(df.loc[ok, "p_value"].to_numpy(), correction)
    df["significant"] = df["p_adjusted"] <= alpha  # as stats.compare: p ≤ α rejects
    df["test"], df["correction"] = test, correction
    df["varies_over"] = "arrival order (same items)"
    return df
