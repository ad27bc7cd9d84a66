"""RouteLLM's metrics by their published definitions (Ong et al. 2024, "RouteLLM: Learning to
Route LLMs with Preference Data", arXiv:2406.18665; code: lm-sys/RouteLLM,
``routellm/evals/benchmarks.py`` and ``evaluate.py``): the raw quality vs strong-call-share
curve of a two-arm router swept over thresholds, PGR, APGR, CPT(x%), and the random router
swept the same way (RouteLLM's ``random`` router: a uniform random score per query)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError

CPT_LEVELS = (0.2, 0.5, 0.8)


def pgr(quality: float | np.ndarray, *, weak_quality: float, strong_quality: float) -> float | np.ndarray:
    """Performance Gap Recovered (RouteLLM §4): ``PGR = (q − q_weak) / (q_strong − q_weak)``,
    the share of the quality gap between the weak and the strong model a router closes at one
    operating point (0 = the weak model's quality, 1 = the strong model's). NaN when the two
    models' qualities are equal. The per-point quantity APGR averages (RouteLLM's tables report
    APGR and CPT, both built on it)."""
    gap = float(strong_quality) - float(weak_quality)
    q = np.asarray(quality, dtype=float)
    out = np.full(q.shape, np.nan) if abs(gap) < 1e-12 else (q - float(weak_quality)) / gap
    return float(out) if out.ndim == 0 else out


def quantile_thresholds(scores: Sequence[float] | np.ndarray, num_results: int = 10) -> np.ndarray:
    """The thresholds RouteLLM sweeps: the edges of ``num_results`` equally filled quantile bins
    of the router's strong-win-rate scores (``pd.qcut(scores, num_results, retbins=True)``:
    quantiles at ``0, 1/n, …, 1`` with linear interpolation), duplicates kept."""
    s = np.asarray(scores, dtype=float)
    if isinstance(num_results, bool) or not isinstance(num_results, (int, np.integer)) or num_results < 1:
        raise EvalcoreError(f"num_results must be an integer >= 1, got {num_results!r}", field="num_results")
    if s.size == 0 or not np.isfinite(s).all():
        raise EvalcoreError("scores must be finite, one per query", field="scores")
    return np.asarray(pd.Series(s).quantile(np.linspace(0, 1, num_results + 1)).to_numpy(), dtype=float)


def threshold_curve(
    scores: Sequence[float] | np.ndarray,
    strong: Sequence[float] | np.ndarray,
    weak: Sequence[float] | np.ndarray,
    *,
    strong_cost: Sequence[float] | np.ndarray | None = None,
    weak_cost: Sequence[float] | np.ndarray | None = None,
    num_results: int = 10,
) -> pd.DataFrame:
    """A score router's raw curve as RouteLLM's ``Benchmark.evaluate`` sweeps it.

    For each threshold ``t_i`` of :func:`quantile_thresholds` a query goes to the strong model
    when its score is ``≥ t_i`` (``> t_i`` for the last, highest threshold, so the sweep ends at
    0 strong calls); the point is (share of strong calls, mean quality) over the queries.

    Args:
        scores: Strong-win-rate score per query (higher = more likely routed to the strong model).
        strong: The strong model's quality per query.
        weak: The weak model's quality per query.
        strong_cost: The strong model's cost per query (optional: adds ``mean_cost``).
        weak_cost: The weak model's cost per query.
        num_results: Bins (RouteLLM's ``--num-results``, default 10: 11 thresholds).

    Returns:
        One row per threshold: ``threshold, strong_share`` (0–1; RouteLLM prints it in %),
        ``mean_quality`` and, with costs, ``mean_cost``.
    """
    s = np.asarray(scores, dtype=float)
    qs, qw = np.asarray(strong, dtype=float), np.asarray(weak, dtype=float)
    if not (s.shape == qs.shape == qw.shape) or s.ndim != 1:
        raise EvalcoreError("scores, strong and weak need one value per query", field="scores")
    thresholds = quantile_thresholds(s, num_results)
    rows = []
    for i, t in enumerate(thresholds):
        sel = s >= t if i != len(thresholds) - 1 else s > t
        row = {
            "threshold": float(t),
            "strong_share": float(sel.mean()),
            "mean_quality": float(np.where(sel, qs, qw).mean()),
        }
        if strong_cost is not None and weak_cost is not None:
            row["mean_cost"] = float(np.where(sel, np.asarray(strong_cost, float), np.asarray(weak_cost, float)).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _by_share(
    share: Sequence[float] | np.ndarray, quality: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(share, dtype=float).ravel(), np.asarray(quality, dtype=float).ravel()
    if x.size != y.size or x.size == 0:
        raise EvalcoreError("share and quality need one value per point", field="strong_share")
    order = np.argsort(x, kind="stable")
    return x[order], y[order]


def routellm_apgr(
    share: Sequence[float] | np.ndarray,
    quality: Sequence[float] | np.ndarray,
    *,
    weak_quality: float,
    strong_quality: float,
) -> float:
    """Average Performance Gap Recovered exactly as RouteLLM's ``evaluate.py`` computes it.

    The points (strong-call share ``s``, quality ``q``) are sorted by share (the raw curve, no
    hull) and ``APGR = (AUC − AUC_weak) / (AUC_strong − AUC_weak)`` with ``AUC = ∫ q ds`` by the
    trapezoid rule and ``AUC_weak``, ``AUC_strong`` the same integral of the constant weak and
    strong model's quality over the same shares. Over shares 0…1 (a threshold sweep always
    spans them) it is the mean PGR over the strong-call share; a random router scores ≈ 0.5.
    Reproduces the APGR column of RouteLLM's results tables (MT Bench, MMLU, GSM8K) and of
    the metrics ``evaluate.py`` prints.

    Returns:
        APGR; NaN when the shares span nothing or the two models' qualities are equal.
    """
    x, y = _by_share(share, quality)
    width = float(x[-1] - x[0])
    gap = float(strong_quality) - float(weak_quality)
    if width <= 0 or abs(gap) < 1e-12:
        return float("nan")
    auc = float(np.trapezoid(y, x))
    return (auc - float(weak_quality) * width) / (gap * width)


def cpt(
    share: Sequence[float] | np.ndarray,
    quality: Sequence[float] | np.ndarray,
    *,
    weak_quality: float,
    strong_quality: float,
    level: float,
) -> float:
    """Call-Performance Threshold CPT(x%) (RouteLLM §4): the smallest strong-call share at
    which the router's raw curve reaches PGR = ``level``.

    Target quality ``q* = q_weak + level · (q_strong − q_weak)``; along the curve sorted by
    share, the first point with ``q ≥ q*`` and linear interpolation from the point before it.
    Where the quality rises with the share this is RouteLLM's
    ``np.interp(q*, quality, strong_share)`` (its ``20% / 50% / 80% qual`` columns);
    np.interp is undefined on a curve that falls somewhere, the first crossing is not.
    Reproduces the CPT(50%) and CPT(80%) columns of RouteLLM's results tables.

    Args:
        share: Strong-call share of each point (0–1).
        quality: Quality of each point.
        weak_quality: The weak model's quality.
        strong_quality: The strong model's quality.
        level: x as a fraction (0.2 for CPT(20%)).

    Returns:
        The share (0–1); NaN when the curve never reaches ``q*`` or the qualities are equal.
    """
    x, y = _by_share(share, quality)
    gap = float(strong_quality) - float(weak_quality)
    if abs(gap) < 1e-12:
        return float("nan")
    target = float(weak_quality) + float(level) * gap
    hit = np.flatnonzero(y >= target - 1e-12)
    if hit.size == 0:
        return float("nan")
    j = int(hit[0])
    if j == 0 or y[j] == y[j - 1]:
        return float(x[j])
    return float(x[j - 1] + (target - y[j - 1]) * (x[j] - x[j - 1]) / (y[j] - y[j - 1]))


def routellm_pair(arm_quality: Sequence[float] | np.ndarray, arm_cost: Sequence[float] | np.ndarray) -> tuple[int, int]:
    """(weak, strong) arm indices: the cheapest arm (ties: the better) and the best-quality arm
    (ties: the cheaper)."""
    q, c = np.asarray(arm_quality, dtype=float), np.asarray(arm_cost, dtype=float)
    weak = int(np.lexsort((-q, c))[0])
    strong = int(np.lexsort((c, -q))[0])
    return weak, strong


def random_router_sweep(
    quality: np.ndarray,
    cost: np.ndarray,
    *,
    weak: int,
    strong: int,
    orderings: int = 20,
    seed: int = 0,
    num_results: int = 10,
) -> pd.DataFrame:
    """RouteLLM's random router swept over its thresholds: each query gets a uniform random
    score, and the thresholds are the score quantiles (:func:`threshold_curve`), so the strong
    share runs from 1 to 0 in ``num_results`` steps; the means are over ``orderings`` draws of
    the scores. Unlike the one-point ``random`` router of the replay (which ignores λ), this
    router pays for every budget, so its AIQ and APGR are the chance level (APGR ≈ 0.5).

    Args:
        quality: Quality (T, K).
        cost: Cost (T, K).
        weak: Column of the weak (cheap) arm.
        strong: Column of the strong arm.
        orderings: Draws of the random scores.
        seed: Seed (``default_rng([seed, 0x5EED])``).
        num_results: Bins of the threshold sweep.

    Returns:
        One row per threshold ``t_i``: ``threshold`` (its quantile level ``i/n``; the strong
        share falls from 1 to 0),
        ``strong_share, mean_quality, mean_cost`` and their ``_ci_low``/``_ci_high`` over draws.
    """
    q, c = np.asarray(quality, dtype=float), np.asarray(cost, dtype=float)
    rng = np.random.default_rng([seed, 0x5EED])
    curves = []
    for _ in range(max(1, int(orderings))):
        u = np.asarray(rng.random(q.shape[0]), dtype=float)
        curves.append(
            threshold_curve(
                u, q[:, strong], q[:, weak], strong_cost=c[:, strong], weak_cost=c[:, weak], num_results=num_results
            )
        )
    stack = np.stack([cv[["strong_share", "mean_quality", "mean_cost"]].to_numpy() for cv in curves])
    out = pd.DataFrame(stack.mean(0), columns=["strong_share", "mean_quality", "mean_cost"])
    out.insert(0, "threshold", np.linspace(0, 1, num_results + 1))
    for k, col in enumerate(("strong_share", "mean_quality", "mean_cost")):
        lo, hi = np.quantile(stack[:, :, k], [0.025, 0.975], axis=0)
        out[f"{col}_ci_low"], out[f"{col}_ci_high"] = lo, hi
    return out
