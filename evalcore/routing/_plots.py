"""Figures of a routing replay (matplotlib; one figure per function).

Every figure colours a router with :func:`router_color` (one fixed colour per router name in
:data:`ROUTER_COLORS`), so the same router looks the same in every figure of a report, and
arms with :func:`arm_colors`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalcore.routing._result import ReplayResult
from evalcore.routing._studies import ItemBootstrap

ROUTER_COLORS: dict[str, str] = {
    "random": "#7f7f7f",
    "always_best": "#1f77b4",
    "always_cheapest": "#8c564b",
    "oracle": "#000000",
    "epsilon_greedy": "#ff7f0e",
    "ucb1": "#2ca02c",
    "thompson_sampling": "#d62728",
    "linucb": "#9467bd",
    "contextual_thompson": "#e377c2",
    "dueling_bandit": "#bcbd22",
    "hybrid": "#17becf",
    "random_swept": "#c7c7c7",
    "zero_router": "#4d4d4d",
}
"""The fixed colour of each router in every routing figure (``random_swept``: RouteLLM's random
router swept over thresholds; ``zero_router``: RouterBench's Zero router, the arms' hull)."""

_EXTRA = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363")
_ARM_PALETTE = ("#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3")
_ARM_MARKERS = ("s", "D", "^", "v", "P", "X", "p", "h")


def _scatter_arms(ax: Any, table: Any, name_column: str) -> None:
    """One hollow marker per arm at (mean cost, mean quality), labelled ``arm: NAME``."""
    for (_, row), marker in zip(table.iterrows(), _ARM_MARKERS * 4):
        ax.scatter(
            row.mean_cost,
            row.mean_quality,
            marker=marker,
            s=60,
            c="white",
            edgecolors="black",
            linewidths=1.2,
            zorder=3,
            label=f"arm: {row[name_column]}",
        )


def router_color(name: str) -> str:
    """The colour of router ``name``: :data:`ROUTER_COLORS`, or for another name a colour
    derived from the name (stable across figures and runs)."""
    if name in ROUTER_COLORS:
        return ROUTER_COLORS[name]
    return _EXTRA[zlib.crc32(name.encode("utf-8")) % len(_EXTRA)]


def arm_colors(arms: Sequence[str]) -> dict[str, str]:
    """A colour per arm, by position (the arms of one outcome matrix)."""
    return {a: _ARM_PALETTE[i % len(_ARM_PALETTE)] for i, a in enumerate(arms)}


def regret_figure(
    result: ReplayResult,
    *,
    against: str = "oracle",
    algorithms: Sequence[str] | None = None,
    confidence: float = 0.95,
    ncols: int = 4,
) -> Any:
    """Cumulative regret, one small panel per router: the median over orderings in the
    router's colour with its central ``confidence`` band, and the other routers' medians in
    light grey behind it for comparison (bands of eleven routers drawn on one axis merge into
    one block).

    Args:
        result: A replay.
        against: ``"oracle"`` or ``"best_fixed"``.
        algorithms: Subset to draw (default all but the oracle when ``against="oracle"``).
        confidence: Band width over orderings.
        ncols: Panels per row.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    names = list(algorithms or [a for a in result.algorithms if not (against == "oracle" and a == "oracle")])
    steps = np.arange(1, result.n_steps + 1)
    lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
    curves = {}
    for name in names:
        reg = result.regret_curves(name, against)
        curves[name] = (np.median(reg, 0), *np.quantile(reg, [lo_q, hi_q], axis=0))
    ncol = max(1, min(ncols, len(names)))
    nrow = int(np.ceil(len(names) / ncol))
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(2.9 * ncol, 2.3 * nrow + 0.6), sharex=True, sharey=True, squeeze=False
    )
    for ax, name in zip(axes.ravel(), names):
        for other in names:
            if other != name:
                ax.plot(steps, curves[other][0], color="0.8", lw=0.8, zorder=1)
        med, lo, hi = curves[name]
        color = router_color(name)
        ax.fill_between(steps, lo, hi, color=color, alpha=0.25, lw=0, zorder=2)
        ax.plot(steps, med, color=color, lw=2, zorder=3)
        ax.set_title(name, fontsize=9, color=color)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(names) :]:
        ax.axis("off")
    ref = "oracle" if against == "oracle" else "best fixed arm"
    fig.supxlabel("queries routed")
    fig.supylabel(f"cumulative regret vs {ref}")
    fig.suptitle(
        f"Cumulative regret: median over {result.n_orderings} orderings with "
        f"{int(confidence * 100)}% band (grey: the other routers' medians), "
        f"λ = {result.lam:g}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def selection_share_figure(
    result: ReplayResult, *, algorithms: Sequence[str] | None = None, window: int | None = None
) -> Any:
    """Share of each arm among the selections over time, one panel per algorithm (panel
    titles in the router's colour, arms in :func:`arm_colors`)."""
    import matplotlib.pyplot as plt

    names = list(algorithms or result.algorithms)
    share = result.selection_share(window=window)
    ncol = min(4, len(names))
    nrow = int(np.ceil(len(names) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.4 * nrow), sharex=True, sharey=True, squeeze=False)
    arms = result.outcomes.arms
    colors = arm_colors(arms)
    for ax, name in zip(axes.ravel(), names):
        sub = share[share.algorithm == name].pivot(index="step", columns="arm", values="share")
        sub = sub[arms]
        ax.stackplot(sub.index, sub.to_numpy().T, labels=arms, alpha=0.9, colors=[colors[a] for a in arms])
        ax.set_title(name, fontsize=9, color=router_color(name))
        ax.set_ylim(0, 1)
    for ax in axes.ravel()[len(names) :]:
        ax.axis("off")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(4, len(arms)), bbox_to_anchor=(0.5, 0.0))
    fig.supxlabel("queries routed", y=0.06)
    fig.supylabel("selection share")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def pareto_figure(result: ReplayResult) -> Any:
    """Mean cost vs mean quality of every router and arm, the Pareto frontier drawn.

    Points are named in a legend beside the axes (router colours of :data:`ROUTER_COLORS`,
    one marker per arm) rather than by labels next to them, which pile up where routers
    cluster; points on the frontier get a red ring.
    """
    import matplotlib.pyplot as plt

    pts = result.points()
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    arms = pts[pts.kind == "arm"]
    _scatter_arms(ax, arms, "name")
    routers = pts[pts.kind == "algorithm"]
    for _, row in routers.iterrows():
        ax.scatter(
            row.mean_cost,
            row.mean_quality,
            marker="o",
            s=45,
            c=router_color(row["name"]),
            edgecolors="white",
            linewidths=0.6,
            zorder=4,
            label=row["name"],
        )
    front = pts[pts.pareto].sort_values("mean_cost")
    ax.scatter(
        front.mean_cost,
        front.mean_quality,
        s=170,
        facecolors="none",
        edgecolors="C3",
        linewidths=1.2,
        zorder=2,
        label="on the Pareto frontier",
    )
    ax.plot(front.mean_cost, front.mean_quality, "C3--", lw=1, zorder=1)
    ax.set_xlabel("mean cost per query")
    ax.set_ylabel("mean quality")
    ax.set_title("Cost–quality of routers and fixed arms")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def sweep_figure(sweep: pd.DataFrame, arm_table: pd.DataFrame | None = None) -> Any:
    """Cost–quality curve of each algorithm as λ varies (λ sweep), in the router colours.

    seaborn's ``lineplot`` of the sweep's points (``estimator=None``: every λ's point as
    replayed), one line per algorithm joining its points in order of λ, algorithms in the
    sweep's order (``random_swept``, RouteLLM's random router, by threshold); the fixed arms
    as open markers and RouterBench's Zero router (their non-decreasing hull, flat to the
    dearest arm) as a dashed line.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    data = sweep.assign(algorithm=sweep["algorithm"].astype(str)).sort_values("lambda", kind="stable")
    data = data.dropna(subset=["mean_cost", "mean_quality"])
    names = [str(n) for n in pd.unique(data["algorithm"])]
    if names:
        sns.lineplot(
            data=data,
            x="mean_cost",
            y="mean_quality",
            hue="algorithm",
            hue_order=names,
            palette={n: router_color(n) for n in names},
            marker="o",
            markersize=4,
            linewidth=1.2,
            markeredgewidth=0,
            sort=False,
            estimator=None,
            legend=False,
            ax=ax,
        )
        # one line per algorithm, drawn in hue order: named, so the legend below lists them
        for line, name in zip(ax.get_lines(), names, strict=True):
            line.set_label(name)
    if arm_table is not None:
        from evalcore.routing._aiq import zero_router_points

        zc, zq = zero_router_points(arm_table["mean_cost"].to_numpy(float), arm_table["mean_quality"].to_numpy(float))
        right = max(float(zc[-1]), float(arm_table["mean_cost"].max()))
        ax.plot(
            np.r_[zc, right],
            np.r_[zq, zq[-1]],
            ls="--",
            lw=1.2,
            color=router_color("zero_router"),
            label="zero_router",
            zorder=1,
        )
        _scatter_arms(ax, arm_table, "arm")
    ax.set_xlabel("mean cost per query")
    ax.set_ylabel("mean quality")
    ax.set_title("λ sweep: cost–quality curve per router (dashed: the Zero router, the arms' hull)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def bootstrap_figure(boot: ItemBootstrap, *, reference: str = "always_best", metric: str = "mean_reward") -> Any:
    """Forest plot of each router's difference from ``reference`` with its item-bootstrap
    interval (items resampled, orderings nested), in the router colours."""
    import matplotlib.pyplot as plt

    cmp = boot.compare(metric=metric, reference=reference, correction="none")
    n = len(cmp)
    fig, ax = plt.subplots(figsize=(7.5, max(2.2, 0.42 * n + 1.3)))
    y = np.arange(n)[::-1]
    for yi, rec in zip(y, cmp.to_dict("records")):
        color = router_color(str(rec["a"]))
        ax.plot([rec["ci_low"], rec["ci_high"]], [yi, yi], color=color, lw=2.5)
        ax.scatter([rec["difference"]], [yi], color=color, s=40, zorder=3)
    ax.axvline(0, color="grey", ls="--", lw=1)
    ax.set_yticks(y, list(cmp["a"]), fontsize=8)
    ax.set_xlabel(
        f"{metric.replace('_', ' ')}: router − {reference} "
        f"({boot.confidence:.0%} interval, {boot.n_boot} item resamples × "
        f"{boot.orderings} orderings)"
    )
    ax.set_title(f"Difference from {reference} on resampled items (n = {boot.n_items} items)")
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig
