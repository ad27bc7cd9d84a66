"""HumanEval views of one benchmark run: which items passed in which epoch, as a grid, a
table and a figure (re-exported by :mod:`evalcore.reporting._benchmark_views`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["pass_fail_figure", "pass_fail_grid", "pass_fail_table"]


def pass_fail_grid(frame: pd.DataFrame) -> pd.DataFrame:
    """Items × epochs matrix of 1 (passed), 0 (failed) and NaN (model error / missing).

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        A DataFrame indexed by item id with one column per epoch.
    """
    data = frame.assign(value=np.where(frame["error"], np.nan, frame["passed"].astype(float)))
    return data.pivot_table(index="item_id", columns="epoch", values="value", aggfunc="mean", dropna=False)


def pass_fail_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per HumanEval item: samples, passed, and the distinct results (the failure
    reason in full: an assertion, a timeout, an exception), a table rather than a grid of one
    column when there is a single epoch.

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        Columns ``item_id, samples, passed, result`` in item order.
    """
    rows = []
    for item, group in frame.groupby("item_id", sort=False):
        ok = group["passed"].fillna(False).astype(bool) & ~group["error"].astype(bool)
        results = [
            str(r)
            for r in dict.fromkeys(
                group.apply(lambda r: f"error: {r['error_message']}" if r["error"] else r["result"], axis=1)
            )
            if r is not None
        ]
        rows.append({"item_id": item, "samples": len(group), "passed": int(ok.sum()), "result": "; ".join(results)})
    return pd.DataFrame(rows, columns=["item_id", "samples", "passed", "result"])


def pass_fail_figure(grid: pd.DataFrame, results: pd.Series | None = None) -> Any:
    """Draw :func:`pass_fail_grid` as coloured cells (green passed, red failed, grey error).

    Meant for several epochs; with one epoch :func:`pass_fail_table` says more. Failure
    reasons belong in that table: ``results`` is accepted for compatibility and ignored (cut
    to fit a row label they were unreadable). Drawn with seaborn's ``heatmap`` on the grid's
    values (rows in the grid's order, top to bottom; NaN cells grey).

    Args:
        grid: The items × epochs matrix.
        results: Ignored.

    Returns:
        A matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.colors import ListedColormap

    values = grid.to_numpy(dtype=float)
    height = max(2.0, 0.3 * len(grid) + 1.2)
    width = max(3.5, 0.6 * grid.shape[1] + 3.5)
    fig, ax = plt.subplots(figsize=(width, height))
    cmap = ListedColormap(["#d9534f", "#5cb85c"]).with_extremes(bad="#bbbbbb")
    sns.heatmap(
        values,
        cmap=cmap,
        vmin=0,
        vmax=1,
        cbar=False,
        linewidths=2,
        linecolor="white",
        xticklabels=False,
        yticklabels=False,
        ax=ax,
    )
    labels = [str(i) for i in grid.index]
    ax.set_yticks(np.arange(len(grid)) + 0.5, labels, fontsize=8, parse_math=False)  # item ids are text
    ax.set_xticks(np.arange(grid.shape[1]) + 0.5, [f"epoch {c}" for c in grid.columns])
    ax.set_title("HumanEval: passed (green) / failed (red) / error (grey)")
    fig.tight_layout()
    return fig
