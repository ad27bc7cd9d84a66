"""Paired comparison of two or more runs, for ``notebooks/compare.ipynb``.

Runs are compared on the items they share; an item's score is the mean of its epochs'
primary scores (``scores.score``). Samples whose model call failed are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError

__all__ = [
    "compare_records",
    "compare_runs",
    "difference_figure",
    "item_scores",
    "power_notes",
    "power_table",
    "shared_items",
]


def item_scores(run: Any) -> pd.Series:
    """Per-item primary score, averaged over epochs, error samples left out.

    Args:
        run: A ``Run`` (anything with ``.samples``) or a list of sample records.

    Returns:
        A float Series indexed by item id (sorted).
    """
    samples = run.samples if hasattr(run, "samples") else run
    from evalcore.reporting._tables import printable_text

    rows = [
        (printable_text(str(s["item_id"])), float((s.get("scores") or {})["score"]))
        for s in samples
        if not s.get("error") and (s.get("scores") or {}).get("score") is not None
    ]
    if not rows:
        raise EvalcoreError("the run has no scored samples", field="samples")
    frame = pd.DataFrame(rows, columns=["item_id", "score"])
    return frame.groupby("item_id")["score"].mean().sort_index()


def shared_items(series: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Item coverage of each run and of all runs together.

    Args:
        series: Label → per-item scores.

    Returns:
        Columns ``run, items, shared_with_all, mean_on_shared``.
    """
    common = set.intersection(*(set(s.index) for s in series.values())) if series else set()
    rows = []
    for label, s in series.items():
        on_shared = s[s.index.isin(common)]
        rows.append(
            {
                "run": label,
                "items": int(s.size),
                "shared_with_all": len(common),
                "mean_on_shared": float(on_shared.mean()) if len(on_shared) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def compare_runs(
    runs: Any,
    *,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of runs compared on their shared items, p-values corrected across pairs.

    The rows are ``evalcore compare``'s: a :class:`evalcore.imports.Comparison` (what
    :func:`evalcore.imports.compare_sources` returns, as ``notebooks/compare.ipynb`` and the CLI
    call it) gives its table as it is, the other keyword arguments unused; label → per-item
    scores go through the same :func:`evalcore.imports.compare_series` (McNemar and a
    paired-bootstrap interval for binary scores; paired t with Wilcoxon and bootstrap alongside
    for continuous scores).

    Args:
        runs: A :class:`evalcore.imports.Comparison`, or label → per-item scores.
        correction: ``"holm"``, ``"bh"`` or ``"none"``.
        alpha: Significance level.
        n_resamples: Bootstrap resamples.
        seed: Resampling seed.

    Returns:
        One row per pair (columns of ``evalcore compare``'s table) and ``note``: when every
        shared item has the same score in both runs the paired interval collapses to a point
        (``0.0 – 0.0``); the note says so and that it does not show the runs are equal (the
        minimum detectable difference of :func:`power_table` says what these items can see).
        When every item differs by the same non-zero amount the interval collapses there, and
        the note says that no spread is not certainty.
    """
    from evalcore.imports import Comparison, compare_series

    if isinstance(runs, Comparison):
        table = runs.table.copy()
    else:
        table = compare_series(runs, correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed)
    notes = []
    for _, row in table.iterrows():
        lo, hi = row.get("ci_low"), row.get("ci_high")
        if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi) and hi - lo < 1e-12:
            if abs(lo) < 1e-12:
                notes.append(
                    f"every one of the {int(row['n'])} shared items scored the same in both runs, so the "
                    "paired interval collapses to a point; this does not show the runs are equal, only "
                    "that these items cannot tell them apart"
                )
            else:
                notes.append(
                    f"every one of the {int(row['n'])} shared items differs by the same amount ({lo:+.3f}), so "
                    "the paired interval collapses to that point; resampling these items shows no spread, "
                    "which is not certainty: more items are needed to say how large the difference is"
                )
        else:
            notes.append("")
    table["note"] = notes
    return table


def power_table(
    series: Mapping[str, pd.Series], comparisons: pd.DataFrame, *, alpha: float = 0.05, power: float = 0.8
) -> pd.DataFrame:
    """The minimum detectable difference (MDD) of each pairwise comparison.

    For n shared items with per-item SDs σ_a, σ_b and correlation ρ, the SD of the paired
    difference is σ_d = √(σ_a² + σ_b² − 2ρσ_aσ_b); MDD ≈ (z_{1−α/2} + z_{power}) σ_d / √n
    (solved exactly by :func:`evalcore.stats.min_detectable_difference`): the smallest true
    difference these items detect with the target power. Post-hoc "observed power" is not
    reported: it is a function of the p-value and adds nothing to it. ``items_needed`` is the
    sample size that would detect a true difference as large as the observed one
    (:func:`evalcore.stats.sample_size_paired`), a planning number for the next run.

    Args:
        series: Label → per-item scores.
        comparisons: :func:`compare_runs` output.
        alpha: Significance level.
        power: Target power for the MDD and the sample size.

    Returns:
        Columns ``pair, n, sd_a, sd_b, correlation, observed_difference,
        min_detectable_difference, items_needed``.
    """
    from evalcore.stats import min_detectable_difference, sample_size_paired

    rows = []
    for _, row in comparisons.iterrows():
        a, b = series[row["name_a"]], series[row["name_b"]]
        common = a.index.intersection(b.index)
        xa, xb = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
        n = int(common.size)
        sd_a = float(xa.std(ddof=1)) if n > 1 else float("nan")
        sd_b = float(xb.std(ddof=1)) if n > 1 else float("nan")
        rho = row.get("correlation")
        rho = 0.0 if rho is None or not np.isfinite(rho) else float(rho)
        diff = float(row["difference"])
        sd_ok = n > 1 and np.isfinite(sd_a) and np.isfinite(sd_b) and (sd_a > 0 or sd_b > 0)
        if sd_ok:
            sd_d2 = sd_a**2 + sd_b**2 - 2 * rho * sd_a * sd_b
            sd_ok = sd_d2 > 1e-12
        if sd_ok:
            mdd = min_detectable_difference(n, sd_a, sd_b, rho, alpha=alpha, power=power)
            needed = sample_size_paired(diff, sd_a, sd_b, rho, alpha=alpha, power=power) if diff != 0 else None
        else:
            mdd, needed = float("nan"), None
        rows.append(
            {
                "pair": f"{row['name_a']} − {row['name_b']}",
                "n": n,
                "sd_a": sd_a,
                "sd_b": sd_b,
                "correlation": rho,
                "observed_difference": diff,
                "min_detectable_difference": mdd,
                "items_needed": needed,
            }
        )
    return pd.DataFrame(rows)


def power_notes(power: pd.DataFrame, target: float = 0.8) -> str:
    """Plain-language reading of :func:`power_table`, one Markdown paragraph per pair.

    Args:
        power: :func:`power_table` output.
        target: The target power it was computed for.

    Returns:
        Markdown text.
    """
    from evalcore.reporting._tables import markdown_escape

    lines = []
    for row in power.to_dict("records"):
        # the pair's run labels come from config.json: text in the Markdown, never markup
        # (backslash escapes: HTML entities would be escaped again by the report exporter)
        pair = markdown_escape(row["pair"])
        mdd = row["min_detectable_difference"]
        if mdd is None or not np.isfinite(mdd):
            lines.append(
                f"**{pair}**: the {row['n']} shared items have identical scores in both runs, so the "
                "spread of the differences, and with it the detectable difference, cannot be estimated; "
                "run more items."
            )
            continue
        text = (
            f"**{pair}**: with n = {row['n']} items the minimum detectable difference at {target:.0%} power "
            f"is {mdd:.3f}"
        )
        if row["items_needed"]:
            smaller = abs(row["observed_difference"]) < mdd
            verdict = (
                "smaller than that, so these items could easily miss a true difference of this size"
                if smaller
                else "at least that large"
            )
            text += (
                f"; the observed difference {row['observed_difference']:+.3f} is {verdict}"
                f"; about {int(row['items_needed'])} items would detect a true difference of "
                f"{abs(row['observed_difference']):.3f} with {target:.0%} power."
            )
        else:
            text += "; the observed difference is zero."
        lines.append(text)
    return "\n\n".join(lines)


def difference_figure(comparisons: pd.DataFrame, mdd: pd.Series | None = None) -> Any:
    """Forest plot: each pair's difference (A − B) with its interval, and the ±MDD band.

    Args:
        comparisons: :func:`compare_runs` output.
        mdd: Optional minimum detectable difference per row (drawn as grey ticks).

    Returns:
        A matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt

    n = len(comparisons)
    fig, ax = plt.subplots(figsize=(7, max(2.2, 0.6 * n + 1.4)))
    y = np.arange(n)[::-1]
    diff = comparisons["difference"].to_numpy(float)
    low = comparisons["ci_low"].to_numpy(float)
    high = comparisons["ci_high"].to_numpy(float)
    p_col = "p_adjusted" if "p_adjusted" in comparisons and comparisons["p_adjusted"].notna().any() else "p_value"
    colors = ["tab:red" if bool(s) else "tab:blue" for s in comparisons["significant"]]
    ax.errorbar(
        diff, y, xerr=[np.nan_to_num(diff - low), np.nan_to_num(high - diff)], fmt="none", ecolor="black", capsize=4
    )
    ax.scatter(diff, y, c=colors, zorder=3, s=40)
    if mdd is not None:
        for yi, m in zip(y, np.asarray(mdd, dtype=float)):
            if np.isfinite(m):
                ax.plot([-m, m], [yi, yi], color="grey", alpha=0.35, linewidth=8, solid_capstyle="butt")
    ax.axvline(0, color="grey", linestyle="--", linewidth=1)
    labels = [
        f"{a} − {b}\n{p_col.replace('_', ' ')} = {p:.3g}, n = {k}"
        for a, b, p, k in zip(comparisons["name_a"], comparisons["name_b"], comparisons[p_col], comparisons["n"])
    ]
    ax.set_yticks(y, labels, fontsize=8, parse_math=False)  # run labels are text, not mathtext
    level = float(comparisons["confidence"].iloc[0]) if "confidence" in comparisons and n else 0.95
    band = "; grey band: ±MDD at 80% power" if mdd is not None else ""
    ax.set_xlabel(f"difference in mean score (A − B) with {level:.0%} interval{band}")
    ax.set_title("Paired differences on shared items")
    fig.tight_layout()
    return fig


def compare_records(series: Mapping[str, pd.Series], comparisons: pd.DataFrame, power: pd.DataFrame) -> dict[str, Any]:
    """The key numbers of a comparison, as published with ``evalcore.record``.

    Keys: ``runs`` (labels), ``n_shared`` (items shared by all runs), ``comparisons`` (one
    dict per pair: ``name_a, name_b, n, mean_a, mean_b, difference, ci_low, ci_high, test,
    p_value, p_adjusted, significant, min_detectable_difference``) and, for the
    first pair, ``difference`` ``{mean, ci_low, ci_high}`` and ``p_adjusted`` for the summary.

    Args:
        series: Label → per-item scores.
        comparisons: :func:`compare_runs` output.
        power: :func:`power_table` output (same row order).

    Returns:
        Record name → JSON-native value.
    """
    keep = [
        "name_a",
        "name_b",
        "n",
        "mean_a",
        "mean_b",
        "difference",
        "ci_low",
        "ci_high",
        "test",
        "p_value",
        "p_adjusted",
        "significant",
    ]
    rows = []
    for (_, comp), (_, pw) in zip(comparisons.iterrows(), power.iterrows()):
        row = {k: comp.get(k) for k in keep}
        row["min_detectable_difference"] = pw["min_detectable_difference"]
        rows.append(row)
    shared = set.intersection(*(set(s.index) for s in series.values()))
    out: dict[str, Any] = {"runs": list(series), "n_shared": len(shared), "comparisons": rows}
    if rows:
        first = rows[0]
        out["difference"] = {"mean": first["difference"], "ci_low": first["ci_low"], "ci_high": first["ci_high"]}
        out["p_adjusted"] = first["p_adjusted"] if first["p_adjusted"] is not None else first["p_value"]
        out["min_detectable_difference"] = first["min_detectable_difference"]
    return to_json_native(out, strict=True)
