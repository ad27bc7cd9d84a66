"""Latency and usage views of one benchmark run: the answered latencies the run summary
reports, the usage table and the latency / token / cost panels (re-exported by
:mod:`evalcore.reporting._benchmark_views`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from evalcore._runstore import SampleRecord

__all__ = ["answered_latency", "latency_cost_figure", "latency_cost_notes", "usage_summary"]


_LATENCY_KEYS = ("latency_p50_s", "latency_p95_s", "latency_n", "latency_from_cache")


def _latency_records(frame: pd.DataFrame) -> list[SampleRecord]:
    """The frame's samples as the minimal records :func:`evalcore.runs.summarize` reads for
    latency (error, cached, the completion's latency; a missing latency left out as there)."""
    n = len(frame)
    errors = frame["error"].astype(bool).tolist() if "error" in frame else [False] * n
    cached = frame["cached"].fillna(False).astype(bool).tolist() if "cached" in frame else [False] * n
    latency = pd.to_numeric(frame["latency_s"], errors="coerce").tolist() if "latency_s" in frame else [np.nan] * n
    return [
        {
            "item_id": str(i),
            "epoch": 0,
            "dataset": "",
            "request": {},
            "request_hash": "",
            "error": e,
            "cached": c,
            "scores": {},
            "completion": {} if pd.isna(x) else {"latency_s": float(x)},
        }
        for i, (e, c, x) in enumerate(zip(errors, cached, latency))
    ]


def answered_latency(frame: pd.DataFrame) -> dict[str, Any]:
    """Latency p50/p95 of a run's answered model calls, as ``results.json`` has them.

    Computed by :func:`evalcore.runs.summarize` itself (the one definition): failed calls are
    left out, and cache hits too unless every answer came from the cache
    (``latency_from_cache``); ``latency_n`` says how many calls it covers.

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        ``{"latency_p50_s", "latency_p95_s", "latency_n", "latency_from_cache"}``.
    """
    from evalcore.runs import summarize

    summary = summarize(_latency_records(frame), "", epochs=1)
    return {key: summary[key] for key in _LATENCY_KEYS}


def _latency_values(frame: pd.DataFrame) -> pd.Series:
    """The latencies :func:`answered_latency` covers, for the table's mean, max and total
    (the rule is :func:`evalcore.runs.answered_latencies`)."""
    from evalcore.runs import answered_latencies

    return pd.Series(answered_latencies(_latency_records(frame))[0], dtype=float)


def _latency_covers(frame: pd.DataFrame, summary: Mapping[str, Any]) -> str:
    n = len(frame)
    failed = int(frame["error"].astype(bool).sum()) if "error" in frame else 0
    cached = (
        int((frame["cached"].fillna(False).astype(bool) & ~frame["error"].astype(bool)).sum())
        if "cached" in frame and "error" in frame
        else 0
    )
    if summary["latency_from_cache"]:
        text = f"{summary['latency_n']} of {n} calls, every answer from the cache (their first call's latency)"
    else:
        text = f"{summary['latency_n']} of {n} calls answered by the model"
    left = [f"{failed} failed"] if failed else []
    if cached and not summary["latency_from_cache"]:
        left.append(f"{cached} cache hits")
    return text + (f" ({' and '.join(left)} left out)" if left else "")


def usage_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Latency, tokens and cost distribution summary (n, mean, p50, p95, max, total).

    Latency covers the answered model calls, as ``latency_p50_s``/``latency_p95_s`` in
    ``results.json`` (:func:`answered_latency`): failed calls are left out, and cache hits
    too unless every answer came from the cache. Tokens and cost cover every sample. The
    ``covers`` column says which calls each row is over.

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        One row per measure: ``latency_s``, ``prompt_tokens``, ``completion_tokens``,
        ``cost_usd``.
    """
    rows: list[dict[str, Any]] = []
    for column in ("latency_s", "prompt_tokens", "completion_tokens", "cost_usd"):
        covers = f"all {len(frame)} samples"
        if column == "latency_s" and column in frame:
            summary = answered_latency(frame)
            values = _latency_values(frame)
            covers = _latency_covers(frame, summary)
            if values.empty:
                rows.append({"measure": column, "n": 0, "covers": covers})
                continue
            rows.append(
                {
                    "measure": column,
                    "n": int(summary["latency_n"]),
                    "mean": float(values.mean()),
                    "p50": summary["latency_p50_s"],
                    "p95": summary["latency_p95_s"],
                    "max": float(values.max()),
                    "total": float(values.sum()),
                    "covers": covers,
                }
            )
            continue
        values = pd.to_numeric(frame[column], errors="coerce").dropna() if column in frame else pd.Series(dtype=float)
        if values.empty:
            rows.append({"measure": column, "n": 0, "covers": covers})
            continue
        rows.append(
            {
                "measure": column,
                "n": int(values.size),
                "mean": float(values.mean()),
                "p50": float(values.quantile(0.5)),
                "p95": float(values.quantile(0.95)),
                "max": float(values.max()),
                "total": float(values.sum()),
                "covers": covers,
            }
        )
    return pd.DataFrame(rows, columns=["measure", "n", "mean", "p50", "p95", "max", "total", "covers"])


_USAGE_PANELS = (
    ("latency_s", "latency per sample (s)"),
    ("completion_tokens", "completion tokens"),
    ("cost_usd", "cost per sample (USD)"),
)


def _usage_values(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column], errors="coerce").dropna() if column in frame else pd.Series(dtype=float)


def latency_cost_notes(frame: pd.DataFrame) -> list[str]:
    """Why a panel of :func:`latency_cost_figure` is left out, one sentence each (a local
    model costs nothing, so its cost histogram would be one bar at $0).

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        The sentences (empty when every panel is drawn).
    """
    notes = []
    for column, label in _USAGE_PANELS:
        values = _usage_values(frame, column)
        if values.empty:
            notes.append(f"no {label.split(' (')[0]} histogram: no sample recorded it")
        elif column == "cost_usd" and float(values.abs().sum()) == 0.0:
            notes.append(f"no cost histogram: every one of the {values.size} calls cost $0 (a local model)")
    return notes


def latency_cost_figure(frame: pd.DataFrame) -> Any:
    """Histograms of latency, completion tokens and cost per sample, one panel each.

    A panel with nothing to show (no values, or every cost $0 as for a local model) is left
    out; :func:`latency_cost_notes` says why. With no panel left the result is ``None``.

    Each panel is seaborn's ``histplot`` of the values (counts, the same bins as before:
    ``min(20, max(5, n // 2))`` equal-width bins over the values' range) with the median
    dashed.

    Args:
        frame: :func:`samples_frame` output.

    Returns:
        A matplotlib ``Figure``, or ``None``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    panels = []
    for column, label in _USAGE_PANELS:
        values = _usage_values(frame, column)
        if values.empty or (column == "cost_usd" and float(values.abs().sum()) == 0.0):
            continue
        panels.append((values, label))
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(3.7 * len(panels), 3.2), squeeze=False)
    for ax, (values, label) in zip(axes[0], panels):
        sns.histplot(
            x=values.to_numpy(dtype=float), bins=min(20, max(5, values.size // 2)), color="tab:blue", alpha=0.75, ax=ax
        )
        ax.axvline(values.median(), color="black", linestyle="--", linewidth=1, label="median")
        ax.legend(fontsize=8)
        ax.set_ylabel("samples")
        ax.set_xlabel(label)
    fig.tight_layout()
    return fig
