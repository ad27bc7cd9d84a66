"""RouterBench's metrics by their published definitions (Hu et al. 2024, "RouterBench: A
Benchmark for Multi-LLM Routing System", arXiv:2403.12031; code: withmartian/routerbench):
the non-decreasing convex hull of a router's (cost, quality) points, its AIQ under the two
normalisations in use (the paper's and the evaluation code's), and the Zero router."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore.errors import EvalcoreError


def nondecreasing_hull(
    cost: Sequence[float] | np.ndarray, quality: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the non-decreasing convex hull of (cost, quality) points (RouterBench §3.2).

    The upper concave envelope of the points, sorted by cost, cut at its highest point: from the
    cheapest point (with its own quality) up to the first point of the highest quality. Any cost
    between two vertices is reached by mixing the two operating points at random, so the hull is
    what a router can achieve at every budget. Of points with the same cost the best is kept.
    This is the curve ``get_non_descreasing_convex_hull_of`` in RouterBench's
    ``evaluation/AIQ.py`` builds (it evaluates the envelope at every point and drops the points
    lower than their predecessor), in O(n log n).

    Args:
        cost: Cost of each operating point (mean or total cost per query; any unit).
        quality: Quality of each operating point.

    Returns:
        ``(hull_cost, hull_quality)``, increasing in cost, non-decreasing in quality.

    Raises:
        EvalcoreError: no point, or a non-finite value.
    """
    c = np.asarray(cost, dtype=float).ravel()
    q = np.asarray(quality, dtype=float).ravel()
    if c.size == 0 or c.size != q.size:
        raise EvalcoreError("the hull needs at least one (cost, quality) point", field="cost")
    if not (np.isfinite(c).all() and np.isfinite(q).all()):
        raise EvalcoreError("costs and qualities must be finite", field="cost")
    return hull_vertices(c, q)


def hull_vertices(c: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of :func:`nondecreasing_hull` of at least one point, unchecked (a monotone
    chain over the points sorted by cost, the best of equal costs first)."""
    order = np.lexsort((-q, c))
    hull: list[tuple[float, float]] = []
    for i in order:
        p = (float(c[i]), float(q[i]))
        if hull and p[0] == hull[-1][0]:
            continue  # same cost: the first (highest quality) is kept
        if hull and p[1] <= hull[-1][1]:
            continue  # costs more, no better: never on a non-decreasing hull
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (y2 - y1) * (p[0] - x1) <= (p[1] - y1) * (x2 - x1):
                hull.pop()  # the middle vertex lies on or below the chord
            else:
                break
        hull.append(p)
    hc, hq = zip(*hull)
    return np.asarray(hc), np.asarray(hq)


def flat_end(cost: Sequence[float] | np.ndarray, quality: Sequence[float] | np.ndarray) -> float:
    """The dearest cost RouterBench's hull code keeps: the dearest point of the highest quality
    (its hull keeps points tied at the top, so ``max_x_value`` is the largest such cost over the
    routers compared)."""
    c = np.asarray(cost, dtype=float).ravel()
    q = np.asarray(quality, dtype=float).ravel()
    return float(c[q == q.max()].max())


def _hull_area(hc: np.ndarray, hq: np.ndarray, lo: float, hi: float) -> float:
    """∫_lo^hi H̃(c) dc, H̃ the hull: 0 below its cheapest vertex (no operating point costs
    less), linear between vertices, flat after its dearest (exact: the trapezoid rule over the
    vertices is exact for a piecewise-linear curve)."""
    start = max(lo, float(hc[0]))
    if hi <= start:
        return 0.0
    grid = np.unique(np.r_[start, hi, hc[(hc > start) & (hc < hi)]])
    return float(np.trapezoid(np.interp(grid, hc, hq), grid))


def aiq_routerbench(
    cost: Sequence[float] | np.ndarray,
    quality: Sequence[float] | np.ndarray,
    *,
    max_cost: float | None = None,
) -> float:
    """AIQ as RouterBench's evaluation code computes it (``calc_AIQ`` in ``evaluation/AIQ.py``).

    ``AIQ_code = (1 / c_max) ∫_{c_0}^{c_max} H̃(c) dc``: the trapezoid area under the
    non-decreasing convex hull H̃ (:func:`nondecreasing_hull`) from its cheapest vertex ``c_0``
    to ``c_max``, the hull held flat after its dearest vertex, divided by ``c_max``, the largest
    cost on the hulls of all the routers compared together (the code's ``max_x_value``). The
    x range is normalised to [0, 1] by dividing by ``c_max`` (not by a cost range), and the
    stretch ``[0, c_0)`` adds no area. Reproduces the AIQ values RouterBench's evaluation
    code prints per router (``python -m evaluation.AIQ``).

    Args:
        cost: Cost of each operating point of the router (e.g. a λ or willingness-to-pay sweep).
        quality: Quality of each operating point.
        max_cost: ``c_max``; default: :func:`flat_end` of this router's points.

    Returns:
        AIQ in quality units; NaN when ``c_max ≤ 0`` (nothing costs anything).
    """
    hc, hq = nondecreasing_hull(cost, quality)
    top = flat_end(cost, quality) if max_cost is None else float(max_cost)
    if not np.isfinite(top) or top <= 0:
        return float("nan")
    if top < hc[-1]:
        raise EvalcoreError(f"max_cost {top:g} is below the hull's dearest point {hc[-1]:g}", field="max_cost")
    return _hull_area(hc, hq, float(hc[0]), top) / top


def aiq_paper(
    cost: Sequence[float] | np.ndarray,
    quality: Sequence[float] | np.ndarray,
    *,
    cost_range: tuple[float, float],
) -> float:
    """AIQ as RouterBench's paper defines it (Hu et al. 2024, §3.2, Eq. for AIQ).

    ``AIQ_paper = 1/(c_max − c_min) ∫_{c_min}^{c_max} H̃(c) dc`` with H̃ the router's
    non-decreasing convex hull (:func:`nondecreasing_hull`) and ``[c_min, c_max]`` the cost range
    of the full model set (the cheapest and the dearest model's cost). H̃ is 0 below the
    router's cheapest operating point and flat after its dearest, the same curve
    :func:`aiq_routerbench` integrates; only the normalisation differs (on real matrices the two
    differ by about 0.01–0.02). Reproduces the AIQ columns of the paper's results tables
    (each router and the Zero router per dataset), which state this definition.

    Args:
        cost: Cost of each operating point of the router.
        quality: Quality of each operating point.
        cost_range: ``(c_min, c_max)`` of the model set.

    Returns:
        AIQ in quality units; when ``c_max ≤ c_min`` the hull's quality at ``c_min``.
    """
    hc, hq = nondecreasing_hull(cost, quality)
    lo, hi = map(float, cost_range)
    if hi <= lo:
        return float(0.0 if lo < hc[0] else np.interp(lo, hc, hq))
    return _hull_area(hc, hq, lo, hi) / (hi - lo)


def zero_router_points(
    arm_cost: Sequence[float] | np.ndarray, arm_quality: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """RouterBench's Zero router (Hu et al. 2024, §3.2): the router that looks at no query and
    mixes the single models at random along their non-decreasing convex hull. Its operating
    points are the hull's vertices; its AIQ (either normalisation) is the baseline a router's
    AIQ must beat, and ``AIQ(router) − AIQ(Zero router)`` is the margin reported per router
    (the Zero router rows of the paper's results tables).

    Returns:
        ``(cost, quality)`` of the hull's vertices.
    """
    return nondecreasing_hull(arm_cost, arm_quality)
