"""Compare runs from any harness: align items by content, then paired tests across all pairs."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError
from evalcore.imports._common import import_batch
from evalcore.imports._sources import DEFAULT_IMPORT_DIR, RunScores, resolve, run_scores

#: Columns of the comparison table, in print order.
TABLE_COLUMNS = [
    "name_a",
    "name_b",
    "n",
    "mean_a",
    "mean_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "test",
    "significant",
    "mdd_80",
    "n_10",
    "n_01",
    "ci_method",
]


@dataclass
class Alignment:
    """How the runs' items were matched.

    Attributes:
        key: ``"item_id"`` (all runs share an id scheme) or ``"content"`` (normalised question
            hash).
        series: Label → per-item scores keyed by the alignment key.
        shared: Keys present in every run.
        unmatched: Label → ``{"count": n, "examples": [...]}`` for items missing from some
            other run (or without a question to hash, or with a question repeated in the run).
        clusters: Alignment key → cluster label (from the first run that has one), when the
            runs were read with a cluster field.
    """

    key: str
    series: dict[str, Any]
    shared: list[str]
    unmatched: dict[str, dict[str, Any]] = field(default_factory=dict)
    clusters: dict[str, Any] = field(default_factory=dict)


def align_runs(runs: Sequence[RunScores]) -> Alignment:
    """Match the runs' items by id where they share an id scheme, else by question content.

    Args:
        runs: Two or more runs.

    Returns:
        The alignment.

    Raises:
        EvalcoreError: Runs of the same harness scoring different tasks, or two runs that share
            no item.
    """
    import pandas as pd

    _check_one_task_per_harness(runs)
    schemes = {r.id_scheme for r in runs}
    key = "item_id" if len(schemes) == 1 else "content"
    series: dict[str, pd.Series] = {}
    unmatched: dict[str, dict[str, Any]] = {}
    clusters: dict[str, Any] = {}
    for r in runs:
        keyed, unkeyed = _keyed_scores(r, key)
        series[r.label] = pd.Series(keyed, dtype=float).sort_index()
        unmatched[r.label] = {"unkeyed": unkeyed}
        for item_id, c in r.clusters.items():
            k = item_id if key == "item_id" else r.content.get(item_id)
            if k is not None:
                clusters.setdefault(k, c)
    shared = sorted(set.intersection(*(set(s.index) for s in series.values())))
    labels = [r.label for r in runs]
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            if not set(series[a].index) & set(series[b].index):
                how = "by item id" if key == "item_id" else "by question content (normalised question hash)"
                raise EvalcoreError(
                    f"runs {a!r} and {b!r} share no items (matched {how}); are they runs of the same benchmark items?",
                    field="runs",
                )
    shared_set = set(shared)
    for r in runs:
        s = series[r.label]
        if key == "item_id":
            back = {k: k for k in s.index}
        else:
            back = {r.content[i]: i for i in r.by_id if r.content.get(i) is not None}
        missing = [k for k in s.index if k not in shared_set]
        unkeyed = unmatched[r.label]["unkeyed"]
        examples = [f"{back.get(k, k)} ({r.questions.get(back.get(k, k), '')!r})" for k in missing[:3]]
        examples += [f"{i} (no question to match, or repeated)" for i in unkeyed[:3]]
        unmatched[r.label] = {"count": len(missing) + len(unkeyed), "examples": examples[:3]}
    return Alignment(key=key, series=series, shared=shared, unmatched=unmatched, clusters=clusters)


def _check_one_task_per_harness(runs: Sequence[RunScores]) -> None:
    """Refuse runs of one harness that score different tasks."""
    by_harness: dict[str, dict[str, list[str]]] = {}
    for r in runs:
        by_harness.setdefault(r.harness, {}).setdefault(r.task, []).append(r.label)
    for harness, tasks in by_harness.items():
        if len(tasks) > 1:
            shown = "; ".join(f"{t}: {', '.join(labels)}" for t, labels in tasks.items())
            raise EvalcoreError(
                f"these {harness} runs score different tasks ({shown}); compare runs of one task", field="runs"
            )


def _keyed_scores(r: RunScores, key: str) -> tuple[dict[str, Any], list[str]]:
    """A run's scores by alignment key, and its items that have no key (no question, or a repeated one)."""
    if key == "item_id":
        return dict(r.by_id), []
    counts: dict[str, int] = {}
    for item_id in r.by_id:
        k = r.content.get(item_id)
        if k is not None:
            counts[k] = counts.get(k, 0) + 1
    keyed: dict[str, Any] = {}
    unkeyed: list[str] = []
    for item_id, v in r.by_id.items():
        k = r.content.get(item_id)
        if k is None or counts[k] > 1:
            unkeyed.append(item_id)
        else:
            keyed[k] = v
    return keyed, unkeyed


@dataclass
class Comparison:
    """What ``evalcore compare`` reports.

    Attributes:
        runs: One dict per run (label, path, harness, task, metric, items, mean, reported).
        alignment: How items were matched.
        table: One row per pair (columns :data:`TABLE_COLUMNS` and the rest of
            :meth:`evalcore.stats.ComparisonResult.to_dict`).
        correction: The multiple-comparison correction.
        alpha: Significance level.
        cluster: The metadata field that clustered items, or None.
    """

    runs: list[dict[str, Any]]
    alignment: Alignment
    table: Any
    correction: str
    alpha: float
    cluster: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-native summary: runs, alignment (key, shared, unmatched) and the pair rows."""
        return to_json_native(
            {
                "runs": self.runs,
                "alignment": {
                    "key": self.alignment.key,
                    "n_shared": len(self.alignment.shared),
                    "unmatched": self.alignment.unmatched,
                },
                "correction": self.correction,
                "alpha": self.alpha,
                "cluster": self.cluster,
                "n_clusters": (
                    len(set(self.alignment.clusters.values())) if self.cluster and self.alignment.clusters else None
                ),
                "comparisons": self.table.to_dict(orient="records"),
            }
        )


def load_runs(
    paths: Sequence[str | os.PathLike[str]],
    *,
    metric: Sequence[str] = (),
    task: str | None = None,
    labels: Sequence[str] | None = None,
    import_dir: str | os.PathLike[str] = DEFAULT_IMPORT_DIR,
    cluster: str | None = None,
) -> tuple[list[Path], list[RunScores]]:
    """Resolve runs and logs to run directories (importing logs) and read their scores.

    Args:
        paths: Two or more run directories or logs.
        metric: Metric names to try in order for each source.
        task: For lm-eval output with several tasks, the task to take.
        labels: Display names, one per path (default: run ids, made unique).
        import_dir: Where imported runs are written.
        cluster: A metadata field whose value clusters items (``subject``).

    Returns:
        The run directories and their scores, in the order given.

    Raises:
        EvalcoreError: Fewer than two sources, a label count that does not match, a malformed log.
    """
    if isinstance(paths, (str, os.PathLike)) or len(paths) < 2:
        raise EvalcoreError("compare needs at least two runs or logs", field="runs")
    if labels is not None and len(labels) not in (0, len(paths)):
        raise EvalcoreError(f"{len(labels)} labels for {len(paths)} runs", field="labels")
    with import_batch() as batch:  # all the logs imported, or none (a later one malformed)
        dirs = [resolve(p, import_dir=import_dir, metric=metric, task=task) for p in paths]
        runs: list[RunScores] = []
        seen: set[str] = set()
        for i, d in enumerate(dirs):
            r = run_scores(d, metric=metric, label=str(labels[i]) if labels else None, cluster=cluster)
            base, k = r.label, 2
            while r.label in seen:
                r.label, k = f"{base}#{k}", k + 1
            seen.add(r.label)
            runs.append(r)
    if batch.committed:  # called on its own: the runs are in place now
        return _placed(batch, dirs, runs)
    return dirs, runs


def _placed(batch: Any, dirs: list[Path], runs: list[RunScores]) -> tuple[list[Path], list[RunScores]]:
    """Run directories and scores with staged paths replaced by where the runs now are."""
    for r in runs:
        r.path = batch.final_path(r.path)
    return [batch.final_path(d) for d in dirs], runs


def aligned_scores(
    paths: Sequence[str | os.PathLike[str]],
    *,
    metric: Sequence[str] = (),
    task: str | None = None,
    labels: Sequence[str] | None = None,
    import_dir: str | os.PathLike[str] = DEFAULT_IMPORT_DIR,
) -> dict[str, Any]:
    """Label → per-item scores keyed so that the same item has the same key in every run.

    The alignment of :func:`compare_sources` without the tests: the keys are item ids when all
    runs share an id scheme, else normalised question hashes (:func:`align_runs`); the series
    feed :func:`evalcore.reporting.compare_runs` and friends unchanged.

    Args:
        paths: Two or more run directories or logs.
        metric: Metric names to try in order for each source.
        task: For lm-eval output with several tasks, the task to take.
        labels: Display names (default: run ids).
        import_dir: Where imported runs are written.

    Returns:
        Label → float Series.
    """
    with import_batch():  # nothing imported when the runs cannot be aligned
        _, runs = load_runs(paths, metric=metric, task=task, labels=labels, import_dir=import_dir)
        return align_runs(runs).series


def compare_sources(
    paths: Sequence[str | os.PathLike[str]],
    *,
    metric: Sequence[str] = (),
    correction: str = "holm",
    alpha: float = 0.05,
    task: str | None = None,
    labels: Sequence[str] | None = None,
    import_dir: str | os.PathLike[str] = DEFAULT_IMPORT_DIR,
    n_resamples: int = 10_000,
    seed: int = 0,
    cluster: str | None = None,
) -> Comparison:
    """Compare any mix of evalcore runs, lm-eval logs and inspect logs, paired on shared items.

    Logs are imported first (:func:`evalcore.imports.import_log`, into ``import_dir``, all of
    them or none: their runs are put in place only when the whole comparison succeeds); items
    are aligned by :func:`align_runs`; every pair goes through
    :func:`evalcore.stats.compare_many` (McNemar with a paired-bootstrap interval for 0/1 scores,
    the paired t-test otherwise), p-values corrected across pairs, with the minimum detectable
    difference at 80 % power for the items shared (no post-hoc power of the observed
    difference: it only restates the p-value).

    Args:
        paths: Two or more run directories or logs.
        metric: Metric names to try in order for each source (see :func:`run_scores`).
        correction: ``holm``, ``bh`` or ``none``.
        alpha: Significance level.
        task: For lm-eval output holding several tasks, the task to compare.
        labels: Display names, one per path (default: run ids).
        import_dir: Where imported runs are written.
        n_resamples: Bootstrap resamples.
        seed: Resampling seed.
        cluster: A metadata field whose value clusters items (``subject`` for MMLU): the
            clustered paired test and interval (Miller 2024) replace McNemar / paired t, whose
            p-value stays in the row (``mcnemar_p`` / ``paired_t_p``).

    Returns:
        The comparison.

    Raises:
        EvalcoreError: Fewer than two sources, runs of different tasks or sharing no items, a
            malformed log.
    """
    import numpy as np

    # the logs' runs are put in place only when the comparison succeeds: a malformed later log,
    # runs sharing no items or scoring different tasks leave nothing in import_dir
    with import_batch() as batch:
        dirs, runs = load_runs(paths, metric=metric, task=task, labels=labels, import_dir=import_dir, cluster=cluster)
        alignment = align_runs(runs)
        extra: dict[str, Any] = {}
        if cluster is not None:
            if not alignment.clusters:
                raise EvalcoreError(f"no run records the metadata field {cluster!r} for its items", field="cluster")
            extra["clusters"] = alignment.clusters
        table = compare_series(
            alignment.series, correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed, **extra
        )
    if batch.committed:
        dirs, runs = _placed(batch, dirs, runs)
    infos = []
    for r, d in zip(runs, dirs):
        s = alignment.series[r.label]
        infos.append(
            {
                "label": r.label,
                "path": str(d),
                "harness": r.harness,
                "task": r.task,
                "metric": r.metric,
                "items": len(r.by_id),
                "mean": float(np.mean(list(r.by_id.values()))),
                "mean_on_shared": float(s.loc[alignment.shared].mean()) if alignment.shared else None,
                "reported_by_harness": r.reported,
            }
        )
    return Comparison(runs=infos, alignment=alignment, table=table, correction=correction, alpha=alpha, cluster=cluster)


def compare_series(
    series: Mapping[str, Any],
    *,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    clusters: Mapping[Any, Any] | None = None,
) -> Any:
    """Every pair of aligned per-item scores compared: the one comparison table.

    ``evalcore compare`` (:func:`compare_sources`), ``notebooks/compare.ipynb`` and
    :func:`evalcore.reporting.compare_runs` all get their rows here: every pair through
    :func:`evalcore.stats.compare_many` on the items the pair shares, p-values corrected
    across pairs, columns :data:`TABLE_COLUMNS` first (``NaN`` where a test has none).

    Args:
        series: Label → per-item scores (pandas Series keyed by the alignment key).
        correction: ``holm``, ``bh`` or ``none``.
        alpha: Significance level.
        n_resamples: Bootstrap resamples.
        seed: Resampling seed.
        clusters: Alignment key → cluster label, for the clustered test and interval.

    Returns:
        A DataFrame, one row per pair.
    """
    import numpy as np
    import pandas as pd

    from evalcore.stats import compare_many

    extra = {"clusters": dict(clusters)} if clusters is not None else {}
    table = pd.DataFrame(
        compare_many(
            dict(series),
            correction=correction,
            alpha=alpha,
            align="intersection",
            n_resamples=n_resamples,
            seed=seed,
            **extra,
        )
    )
    for col in TABLE_COLUMNS:
        if col not in table:
            table[col] = np.nan
    return table[TABLE_COLUMNS + [c for c in table.columns if c not in TABLE_COLUMNS]]


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, (bool,)):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) >= 10**-digits or v == 0 else f"{v:.2g}"
    return str(v)


def format_comparison(cmp: Comparison) -> str:
    """The comparison as plain text: runs, alignment, one line per pair."""
    lines = ["runs:"]
    for r in cmp.runs:
        rep = ""
        if r["reported_by_harness"]:
            v = r["reported_by_harness"].get(r["metric"])
            if v is not None:
                rep = f"  (harness reported {_fmt(v, 4)})"
        lines.append(
            f"  {r['label']}: {r['harness']} {r['task']}, metric {r['metric']}, "
            f"{r['items']} items, mean {_fmt(r['mean'], 4)}{rep}"
        )
    al = cmp.alignment
    how = "item id" if al.key == "item_id" else "question content (normalised question hash)"
    lines.append(
        f"aligned by {how}: {len(al.shared)} items shared by all runs"
        + (f"; clustered by {cmp.cluster}" if cmp.cluster else "")
    )
    if cmp.cluster:
        lines.extend(_cluster_lines(cmp))
    for label, info in al.unmatched.items():
        if info["count"]:
            lines.append(
                f"  {label}: {info['count']} items not matched in every other run, e.g. {'; '.join(info['examples'])}"
            )
    head = ["A", "B", "n", "mean A", "mean B", "A-B", "interval", "p", "p adj", "test", "MDD80"]
    rows = []
    level = f"{1 - cmp.alpha:.0%}"
    for _, r in cmp.table.iterrows():
        rows.append(
            [
                str(r["name_a"]),
                str(r["name_b"]),
                str(int(r["n"])),
                _fmt(r["mean_a"]),
                _fmt(r["mean_b"]),
                _fmt(r["difference"]),
                f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]",
                _fmt(r["p_value"], 4),
                _fmt(r["p_adjusted"], 4),
                str(r["test"]),
                (">=" if _flag(r, "mdd_capped") else "") + _fmt(r["mdd_80"]),
            ]
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines.append(
        f"paired comparisons ({level} interval of A-B; p adjusted: {cmp.correction}; "
        "MDD80: smallest difference these items detect with 80% power):"
    )
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for row in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)))
    lines.extend(_row_notes(cmp))
    return "\n".join(lines)


def _flag(row: Any, name: str) -> bool:
    v = row.get(name) if hasattr(row, "get") else None
    return bool(v) if v is not None and v == v else False


def _cluster_lines(cmp: Comparison) -> list[str]:
    """How the clusters were used, one line per kind of test in the table."""
    g = sorted({int(v) for v in cmp.table.get("n_clusters", []) if v == v})
    shown = "/".join(map(str, g)) or "?"
    tests = set(cmp.table["test"]) if "test" in cmp.table else set()
    lines = []
    if "wild_cluster" in tests:
        wild = cmp.table[cmp.table["test"] == "wild_cluster"].iloc[0]
        weights = str(wild.get("wild_weights", "webb"))
        draws = wild.get("wild_draws")
        how = "all weight vectors enumerated" if _flag(wild, "wild_enumerated") else f"{int(draws)} draws"
        lines.append(
            f"  {shown} clusters ({cmp.cluster}): few clusters, so a wild cluster bootstrap (WCR, null imposed, "
            f"{weights} weights, {how}; Roodman et al. 2019), its interval by inverting the test; "
            "CR1 t-test p in the JSON (clustered_p); MDD80 from the CR1 variance, t with G-1 df"
        )
        floor = wild.get("wild_p_floor")
        if floor is not None and floor == floor and floor > cmp.alpha:
            lines.append(
                f"  with {shown} clusters no p-value below {_fmt(float(floor), 4)} is possible: no difference "
                f"can be significant at {cmp.alpha:g}; the interval spans the scores' whole range"
            )
    if "clustered" in tests:
        lines.append(
            f"  {shown} clusters ({cmp.cluster}): clustered paired t-test, CR1 "
            "cluster-robust SE (factor G/(G-1)), t with G-1 degrees of freedom; "
            "MDD80 from the same variance"
        )
    return lines


def _row_notes(cmp: Comparison) -> list[str]:
    """Notes under the table: intervals that collapse to a point, capped MDDs and intervals."""
    notes = []
    for _, r in cmp.table.iterrows():
        pair = f"{r['name_a']} vs {r['name_b']}"
        lo, hi = r.get("ci_low"), r.get("ci_high")
        finite = lo is not None and hi is not None and math.isfinite(float(lo)) and math.isfinite(float(hi))
        if _flag(r, "ci_collapsed") or (finite and float(hi) - float(lo) <= 1e-12):
            notes.append(
                f"  note: {pair}: the interval collapsed to the point {_fmt(float(lo))}: every shared item's "
                "difference is the same (within each cluster, when clustered), so these items give no "
                "estimate of the uncertainty; it is not a certainty that the difference is exactly that"
            )
        if _flag(r, "ci_capped"):
            notes.append(
                f"  note: {pair}: the interval reaches the scores' range (+/-{_fmt(r.get('score_range'))}): "
                "the wild bootstrap rejects no difference up to it on that side"
            )
        if _flag(r, "mdd_capped"):
            notes.append(
                f"  note: {pair}: MDD80 is capped at the scores' range ({_fmt(r.get('score_range'))}): "
                "not even the largest difference the scores allow is detected with 80% power by these items"
            )
    return notes


def write_comparison(cmp: Comparison, output: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``compare.csv`` (the pair table) and ``compare.json`` (runs, alignment, pairs).

    Args:
        cmp: The comparison.
        output: Folder (created).

    Returns:
        The two paths.
    """
    from evalcore import _io

    out = Path(output)
    csv_path, json_path = out / "compare.csv", out / "compare.json"
    _io.write_text_atomic(csv_path, cmp.table.to_csv(index=False))
    _io.write_json_atomic(json_path, cmp.to_dict(), indent=2, allow_nan=False)
    return csv_path, json_path
