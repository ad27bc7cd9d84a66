"""Figures of a routing replay (matplotlib; one figure per function)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalcore.routing._replay import ReplayResult


def _colors(n: int) -> list[Any]:
    """Distinct colours for up to 20 lines (tab10, then tab20 when there are more)."""
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def regret_figure(result: ReplayResult, *, against: str = "oracle",
                  algorithms: Sequence[str] | None = None, confidence: float = 0.95) -> Any:
    """Cumulative regret curves (mean over orderings) with ``confidence`` bands.

    Args:
        result: A replay.
        against: ``"oracle"`` or ``"best_fixed"``.
        algorithms: Subset to draw (default all but the oracle when ``against="oracle"``).
        confidence: Band width over orderings.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    names = list(algorithms or [a for a in result.algorithms
                                if not (against == "oracle" and a == "oracle")])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    steps = np.arange(1, result.n_steps + 1)
    lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
    for name, color in zip(names, _colors(len(names))):
        reg = result.regret_curves(name, against)
        mean = reg.mean(0)
        lo, hi = np.quantile(reg, [lo_q, hi_q], axis=0)
        (line,) = ax.plot(steps, mean, label=name, lw=1.5, color=color)
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
    ax.set_xlabel("queries routed")
    ax.set_ylabel(f"cumulative regret vs {'oracle' if against == 'oracle' else 'best fixed arm'}")
    ax.set_title(f"Cumulative regret ({result.n_orderings} orderings, "
                 f"{int(confidence * 100)}% bands, λ = {result.lam:g})")
    ax.legend(fontsize=8, ncol=2, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def selection_share_figure(result: ReplayResult, *, algorithms: Sequence[str] | None = None,
                           window: int | None = None) -> Any:
    """Share of each arm among the selections over time, one panel per algorithm."""
    import matplotlib.pyplot as plt

    names = list(algorithms or result.algorithms)
    share = result.selection_share(window=window)
    ncol = min(4, len(names))
    nrow = int(np.ceil(len(names) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.4 * nrow), sharex=True,
                             sharey=True, squeeze=False)
    arms = result.outcomes.arms
    for ax, name in zip(axes.ravel(), names):
        sub = share[share.algorithm == name].pivot(index="step", columns="arm", values="share")
        sub = sub[arms]
        ax.stackplot(sub.index, sub.to_numpy().T, labels=arms, alpha=0.85)
        ax.set_title(name, fontsize=9)
        ax.set_ylim(0, 1)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.supxlabel("queries routed")
    fig.supylabel("selection share")
    fig.tight_layout()
    return fig


def pareto_figure(result: ReplayResult) -> Any:
    """Mean cost vs mean quality of every algorithm and arm, Pareto frontier drawn."""
    import matplotlib.pyplot as plt

    pts = result.points()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, marker in (("arm", "s"), ("algorithm", "o")):
        sub = pts[pts.kind == kind]
        ax.scatter(sub.mean_cost, sub.mean_quality, marker=marker, s=40,
                   label="fixed arms" if kind == "arm" else "routers",
                   c=np.where(sub.pareto, "C3", "C0"))
        for _, row in sub.iterrows():
            ax.annotate(row["name"], (row.mean_cost, row.mean_quality), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
    front = pts[pts.pareto].sort_values("mean_cost")
    ax.plot(front.mean_cost, front.mean_quality, "C3--", lw=1, label="Pareto frontier")
    ax.set_xlabel("mean cost per query")
    ax.set_ylabel("mean quality")
    ax.set_title("Cost–quality of routers and fixed arms")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def sweep_figure(sweep: pd.DataFrame, arm_table: pd.DataFrame | None = None) -> Any:
    """Cost–quality curve of each algorithm as λ varies (λ sweep)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = list(sweep.groupby("algorithm", sort=False))
    for (name, g), color in zip(groups, _colors(len(groups))):
        g = g.sort_values("lambda")
        ax.plot(g.mean_cost, g.mean_quality, marker="o", ms=3, lw=1.2, label=name, color=color)
    if arm_table is not None:
        ax.scatter(arm_table.mean_cost, arm_table.mean_quality, marker="s", c="k", s=30,
                   label="fixed arms", zorder=3)
    ax.set_xlabel("mean cost per query")
    ax.set_ylabel("mean quality")
    ax.set_title("λ sweep: cost–quality curve per router")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
