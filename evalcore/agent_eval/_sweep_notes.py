"""Sentences a threshold sweep's numbers need (issue 39): the grid's edge, the split, the figure.

A best threshold at the edge of the grid is flagged with the advice to widen the grid (the
utility may still rise beyond it); every table says which split it shows; the figure's caption
explains why precision can fall as the threshold rises (a case whose search returns nothing has
precision 0, not 1: ``metrics.precision_recall_f1`` of an empty answer), with the held-out
numbers where it happens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

SPLIT_NAMES = {"dev": "development", "test": "held-out", "all": "both splits"}
"""The words every sweep table uses for the split it shows."""


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != 0 else "0"


def grid_edge(thresholds: Sequence[float], best: float) -> str | None:
    """Which edge of the grid the best threshold lies on.

    Args:
        thresholds: The thresholds swept.
        best: The best development threshold.

    Returns:
        ``"lower"``, ``"upper"``, or None for an interior best (or a grid of one threshold).

    Examples:
        >>> grid_edge([0.3, 0.45, 0.6], 0.6), grid_edge([0.3, 0.45, 0.6], 0.45)
        ('upper', None)
    """
    grid = sorted(float(t) for t in thresholds)
    if len(grid) < 2:
        return None
    if best == grid[0]:
        return "lower"
    if best == grid[-1]:
        return "upper"
    return None


def edge_note(thresholds: Sequence[float], best: float) -> str | None:
    """The advice shown when the best threshold is the lowest or highest of the grid.

    The development utility may keep rising past the grid's edge, so the best of the grid
    need not be the best threshold: the note proposes a grid widened by two steps (the
    grid's smallest step) on that side, within [-1, 1]. An interior best gets no note.

    Args:
        thresholds: The thresholds swept.
        best: The best development threshold.

    Returns:
        One sentence (plain text, no markup), or None.

    Examples:
        >>> print(edge_note([0.3, 0.45, 0.6], 0.6))  # doctest: +NORMALIZE_WHITESPACE
        The best threshold on the development split, 0.6, is the highest of the grid (0.3 to 0.6):
        the best may lie above it; widen the grid and run again, e.g. thresholds 0.3:0.9:0.15.
        >>> edge_note([0.3, 0.45, 0.6], 0.45) is None
        True
    """
    edge = grid_edge(thresholds, best)
    if edge is None:
        return None
    grid = sorted(float(t) for t in thresholds)
    step = float(np.min(np.diff(grid)))
    lo, hi = grid[0], grid[-1]
    if edge == "lower":
        if lo <= -1.0:
            return (
                f"The best threshold on the development split, {_fmt(best)}, is the lowest of the grid and the "
                "lowest a threshold can be (-1)."
            )
        new_lo, new_hi, where = max(-1.0, round(lo - 2 * step, 10)), hi, "below"
    else:
        if hi >= 1.0:
            return (
                f"The best threshold on the development split, {_fmt(best)}, is the highest of the grid and the "
                "highest a threshold can be (1)."
            )
        new_lo, new_hi, where = lo, min(1.0, round(hi + 2 * step, 10)), "above"
    side = "lowest" if edge == "lower" else "highest"
    return (
        f"The best threshold on the development split, {_fmt(best)}, is the {side} of the grid "
        f"({_fmt(lo)} to {_fmt(hi)}): the best may lie {where} it; widen the grid and run again, "
        f"e.g. thresholds {_fmt(new_lo)}:{_fmt(new_hi)}:{_fmt(step)}."
    )


def split_title(metrics: pd.DataFrame, split: str, what: str) -> str:
    """A table's title naming its split and its items.

    Args:
        metrics: :attr:`SweepResult.metrics`.
        split: ``"dev"``, ``"test"`` or ``"all"``.
        what: What the table shows, e.g. ``"every threshold"``.

    Returns:
        E.g. ``"held-out split (8 items: 4 cases, 4 unrelated queries), every threshold"``.
    """
    rows = metrics[metrics.split == split]
    name = SPLIT_NAMES.get(split, split)
    if not len(rows):
        return f"{name} split, {what}"
    r = rows.iloc[0]
    counts = (
        f"{_n(int(r.n_items), 'item')}: {_n(int(r.n_cases), 'case')}, "
        f"{_n(int(r.n_unrelated), 'unrelated query', 'unrelated queries')}"
    )
    return f"{name} split ({counts}), {what}"


def held_out_table(result: Any, columns: Sequence[str]) -> pd.DataFrame:
    """The best threshold's held-out numbers as a one-row table (not a JSON object).

    Args:
        result: A :class:`SweepResult`.
        columns: The columns to show, in order (those the result has).

    Returns:
        One row with the ``split`` named, or no rows when the held-out split is empty.
    """
    m = result.metrics
    rows = m[(m.threshold == result.best_threshold) & (m.split == "test")]
    table = rows[[c for c in columns if c in rows]].reset_index(drop=True)  # missing values stay NaN, not None
    table.insert(0, "split", "held-out")
    return table


def empty_searches(items: pd.DataFrame, split: str = "test") -> pd.Series:
    """Per threshold, how many labelled cases of a split had a search that returned nothing.

    A labelled case has a relevant tool (a precision); its search returned nothing when
    ``n_matches`` is 0 (precision 0 and recall 0 by :func:`evalcore.metrics.precision_recall_f1`).

    Args:
        items: :attr:`SweepResult.items`.
        split: The split.

    Returns:
        Counts indexed by threshold (empty when ``items`` has no ``n_matches``).
    """
    if "n_matches" not in items:
        return pd.Series(dtype=int)
    lab = items[(items.split == split) & (items.type == "case") & items.precision.notna()]
    return (lab.n_matches == 0).groupby(lab.threshold).sum().astype(int)


def figure_caption(result: Any) -> str:
    """The threshold-sweep figure's caption: what it shows and why precision can fall.

    Precision and recall are means over the held-out cases with a relevant tool. A higher
    threshold keeps fewer matches: recall cannot rise, and precision rises only as long as the
    matches dropped are wrong ones; a case whose search then returns nothing scores precision 0
    (not 1), so precision falls with recall once the relevant tool's own score is below the
    threshold. Every step where held-out precision falls is named with the number of empty
    searches before and after.

    Args:
        result: A :class:`SweepResult`.

    Returns:
        Plain text.
    """
    m = result.metrics[result.metrics.split == "test"].sort_values("threshold")
    n_lab = int(m.n_labelled.iloc[0]) if len(m) else 0
    text = [
        f"Held-out split: each metric at each threshold; the dotted line is the best threshold on the development "
        f"split ({_fmt(result.best_threshold)}). Precision and recall are means over the held-out cases with a "
        f"relevant tool ({n_lab}). A higher threshold keeps fewer matches: recall cannot rise, and precision rises "
        "only while the matches dropped are wrong ones; a case whose search returns nothing has precision 0 "
        "(not 1), so precision falls with recall once relevant tools score below the threshold."
    ]
    empty = empty_searches(result.items, "test")
    thr, prec = m.threshold.to_numpy(dtype=float), m.precision.to_numpy(dtype=float)
    falls = []
    for i in range(1, len(thr)):
        if np.isfinite(prec[i - 1]) and np.isfinite(prec[i]) and prec[i] < prec[i - 1] - 1e-12:
            step = f"from {_fmt(thr[i - 1])} to {_fmt(thr[i])} precision falls {prec[i - 1]:.2f} → {prec[i]:.2f}"
            if thr[i - 1] in empty.index and thr[i] in empty.index:
                step += f" (searches with no match: {int(empty[thr[i - 1]])} → {int(empty[thr[i]])} of {n_lab} cases)"
            falls.append(step)
    if falls:
        text.append("Here " + "; ".join(falls) + ".")
    return " ".join(text)
