"""Outcome matrices from recorded runs: each run (or group of runs) is an arm.

:func:`outcomes_from_runs` reads run directories through the run store
(:func:`evalcore._runstore.read_samples`), aggregates each item's epochs (mean score, or a
majority vote over the extracted answers for self-consistency), sums cost, latency and tokens,
and keeps the items every arm answered; the result is cached as Parquet keyed on the runs'
samples. :func:`read_outcomes` takes what ``evalcore route --outcomes`` takes: one outcome table
(evalcore's long table or a published matrix, :mod:`evalcore.routing._published`), several
RouteLLM files, or run directories.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalcore._io import read_json
from evalcore._runstore import CONFIG_FILE, SAMPLES_FILE, SampleRecord, is_run_dir, latest_records, read_samples
from evalcore.benchmarks import benchmark_of_run, find_benchmark
from evalcore.datasets import prompt_question
from evalcore.errors import EvalcoreError
from evalcore.routing._matrix import OutcomeMatrix, warn_if_no_signal
from evalcore.routing._published import read_outcome_files


def find_run_dirs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Expand paths into run directories (a run directory, or a folder of them).

    Raises:
        EvalcoreError: a path that is neither.
    """
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if is_run_dir(p):
            out.append(p)
        elif p.is_dir():
            subs = sorted(d for d in p.iterdir() if d.is_dir() and is_run_dir(d))
            if not subs:
                raise EvalcoreError("not a run directory and holds none (no samples.jsonl)", path=p)
            out.extend(subs)
        else:
            raise EvalcoreError("not found: expected an outcome table (.csv or .parquet) or a run directory", path=p)
    return out


def _read_run(run_dir: Path) -> tuple[dict[str, Any], list[tuple[int, SampleRecord]]]:
    """A run's ``config.json`` ({} when absent) and its sample records with their line numbers.

    The samples are read by the run store (a torn last line, left by an interrupted append, is
    left out); as everywhere, the last record of an ``(item, epoch)`` stands (a retried error is
    superseded by its retry, not counted as another epoch).
    """
    cfg_path = run_dir / CONFIG_FILE
    config: dict[str, Any] = {}
    if cfg_path.is_file():
        config = read_json(cfg_path)
    path = run_dir / SAMPLES_FILE
    found = read_samples(path)
    if not found.records:
        raise EvalcoreError("run has no samples", path=path)
    line_of = {id(rec): line for line, rec in zip(found.lines, found.records)}
    return config, [(line_of[id(rec)], rec) for rec in latest_records(found.records)]


def default_arm_name(run_dir: Path, config: Mapping[str, Any]) -> str:
    """The arm a run stands for.

    ``config["arm"]`` if set; else ``<model>/<strategy>`` with the strategy taken from
    ``config["strategy"]`` or from the run id less its ``<dataset>-`` prefix (so the runs
    ``gsm8k-cot`` and ``mmlu-cot`` of one model form the arm ``<model>/cot``); else the
    directory name.
    """
    if config.get("arm"):
        return str(config["arm"])
    model = config.get("model")
    if isinstance(model, Mapping):
        model = model.get("spec") or model.get("name")
    strategy = config.get("strategy")
    if not strategy:
        run_id = str(config.get("run_id") or run_dir.name)
        dataset = str(config.get("dataset") or "")
        if dataset and run_id.startswith(dataset + "-") and len(run_id) > len(dataset) + 1:
            strategy = run_id[len(dataset) + 1 :]
    if model and strategy:
        return f"{model}/{strategy}"
    return run_dir.name


def _query_of(rec: Mapping[str, Any], template: str | None) -> str:
    """The query text of a sample: ``metadata["query"]``, else the item's question recovered
    from the prompt rendered with ``template`` (:func:`evalcore.datasets.prompt_question`)."""
    meta = rec.get("metadata") or {}
    if isinstance(meta.get("query"), str):
        return meta["query"]
    return prompt_question((rec.get("request") or {}).get("messages"), template)


def majority_vote(answers: Sequence[str | None]) -> str | None:
    """Most common non-empty answer; ties go to the answer seen first. None if all empty."""
    valid = [a for a in answers if a is not None and str(a).strip() != ""]
    if not valid:
        return None
    counts = Counter(valid)
    best = max(counts.values())
    return next(a for a in valid if counts[a] == best)


def _answers_match(answer: str | None, reference: Any, benchmark: Any) -> float:
    """1.0 when a voted answer equals the reference by the benchmark's own rule
    (:meth:`evalcore.benchmarks.Benchmark.answers_equal`: GSM8K numerically, MMLU the same
    letter ...); a run of no evalcore benchmark (an imported one) compares the texts."""
    if answer is None:
        return 0.0
    if benchmark is not None:
        return float(benchmark.answers_equal(answer, reference))
    return float(str(answer).strip() == str(reference).strip())


def _aggregate_item(
    recs: list[tuple[int, SampleRecord]], aggregate: str, path: Path, benchmark: Any = None
) -> dict[str, Any]:
    """One item's outcome on one arm from its ``(line, record)`` pairs (one per epoch)."""
    comps = [r["completion"] or {} for _, r in recs]
    usage = [c.get("usage") or {} for c in comps]
    tokens = float(sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in usage))
    cost = float(sum(float(c.get("cost_usd", 0.0) or 0.0) for c in comps))
    latency = float(sum(float(c.get("latency_s", 0.0) or 0.0) for c in comps))
    errors = [bool(r.get("error")) or bool(c.get("error")) for (_, r), c in zip(recs, comps)]
    ok = [(line, r.get("scores") or {}) for (line, r), e in zip(recs, errors) if not e]
    error = all(errors)
    first = recs[0][1]
    if error:
        quality = 0.0
    elif aggregate == "majority" and len(recs) > 1:
        votes = [s.get("extracted_flexible") for _, s in ok]
        quality = _answers_match(majority_vote(votes), first.get("reference"), benchmark)
    elif aggregate in ("mean", "majority"):
        vals = []
        for line, s in ok:
            if "score" not in s:
                raise EvalcoreError("scores lack the primary 'score'", path=path, line=line, field="scores.score")
            vals.append(float(s["score"]))
        quality = float(np.mean(vals))
    else:
        raise EvalcoreError(f"unknown aggregate {aggregate!r} (use 'mean' or 'majority')", field="aggregate")
    return {"quality": quality, "cost": cost, "latency": latency, "tokens": tokens, "error": error}


def _fingerprint(run_dirs: Sequence[Path], extra: Mapping[str, Any]) -> str:
    h = hashlib.sha256(json.dumps(extra, sort_keys=True, default=str).encode())
    for d in run_dirs:
        h.update(str(d.name).encode())
        with (d / SAMPLES_FILE).open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:24]


def outcomes_from_runs(
    runs: Sequence[str | os.PathLike[str]] | Mapping[str, Sequence[str | os.PathLike[str]]],
    *,
    aggregate: str | Mapping[str, str] = "auto",
    token_price: float | None = None,
    queries: Mapping[str, str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> OutcomeMatrix:
    """Build the outcome matrix from recorded run directories (no model is called).

    Each run (or list of runs, e.g. one per dataset) is one arm. Per item, epochs are
    aggregated: ``"majority"`` = majority vote over the extracted answers, scored against the
    reference (self-consistency), ``"mean"`` = mean primary score; ``"auto"`` picks majority
    for runs with more than one epoch. Costs, latencies and tokens are summed over epochs.
    Only items every arm answered are kept.

    Args:
        runs: Run directories (arm = ``config["arm"]``, ``model/strategy`` or the directory
            name), folders of run directories, or a mapping arm → run directories.
        aggregate: ``"auto"``, ``"mean"`` or ``"majority"``, or a mapping arm → one of them.
        token_price: If set, cost = tokens × this price; if None, the recorded ``cost_usd``
            is used, and when every recorded cost is 0 (a local model) the token count is
            the cost (price 1 per token).
        queries: Optional item id → query text (else the last user message of the request,
            or ``metadata["query"]``).
        cache_dir: If set, the matrix is cached there as Parquet, keyed on a fingerprint of
            the runs' samples and these arguments.

    Returns:
        The matrix (items sorted by id).
    """
    groups, named = _arm_groups(runs)
    all_dirs = [d for ds in groups.values() for d in ds]
    key_extra = {
        "aggregate": aggregate,
        "token_price": token_price,
        "named": named,
        "arms": list(groups),
        "queries": sorted((queries or {}).items()),
    }
    cache_file = None
    if cache_dir is not None:
        cache_file = Path(cache_dir) / f"outcomes-{_fingerprint(all_dirs, key_extra)}.parquet"
        if cache_file.is_file():
            df = pd.read_parquet(cache_file)
            return OutcomeMatrix.from_frame(df, source=str(cache_file), line_offset=None)
    seen = _RunItems()
    for key, dirs in groups.items():
        for d in dirs:
            seen.add_run(d, key if named else None, aggregate)
    df = pd.DataFrame(seen.long_rows(token_price, queries, run_dirs=all_dirs))
    matrix = OutcomeMatrix.from_frame(df, source=", ".join(map(str, all_dirs[:3])), line_offset=None)
    if cache_file is not None:
        matrix.save(cache_file)
    return matrix


def _arm_groups(
    runs: Sequence[str | os.PathLike[str]] | Mapping[str, Sequence[str | os.PathLike[str]]],
) -> tuple[dict[str, list[Path]], bool]:
    """Arm key → its run directories, and whether the keys are the arms' names (a mapping was
    given) rather than one key per run directory (the arm is then named from its config)."""
    if isinstance(runs, Mapping):
        groups = {
            str(arm): find_run_dirs(dirs if not isinstance(dirs, (str, os.PathLike)) else [dirs])
            for arm, dirs in runs.items()
        }
        return groups, True
    groups = {}
    for d in find_run_dirs(runs):
        groups.setdefault(str(d), []).append(d)
    return groups, False


@dataclass
class _RunItems:
    """The items of the runs read so far: arm → item → aggregated outcome, and each item's
    query and dataset (from the first run that answered it)."""

    per_arm: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    item_query: dict[str, str] = field(default_factory=dict)
    item_dataset: dict[str, str] = field(default_factory=dict)
    any_cost: bool = False

    def add_run(self, d: Path, arm: str | None, aggregate: str | Mapping[str, str]) -> None:
        """Aggregate each item of run ``d`` into its arm (``arm``, or named from its config)."""
        config, samples = _read_run(d)
        arm_name = arm if arm is not None else default_arm_name(d, config)
        arm_rows = self.per_arm.setdefault(arm_name, {})
        benchmark = benchmark_of_run(config)  # None: the records' dataset is asked below
        prompt = config.get("prompt")
        template = str(prompt.get("user") or "") if isinstance(prompt, Mapping) else None
        by_item: dict[str, list[tuple[int, SampleRecord]]] = {}
        for line, rec in samples:
            by_item.setdefault(str(rec["item_id"]), []).append((line, rec))
        epochs = max(len(v) for v in by_item.values())
        arm_agg = aggregate.get(arm_name, "auto") if isinstance(aggregate, Mapping) else aggregate
        mode = ("majority" if epochs > 1 else "mean") if arm_agg == "auto" else arm_agg
        for item_id, recs in by_item.items():
            first_line, first = recs[0]
            if item_id in arm_rows:
                raise EvalcoreError(
                    f"item {item_id!r} is answered by two runs of arm "
                    f"{arm_name!r}; pass a mapping arm -> run directories",
                    path=d / SAMPLES_FILE,
                    line=first_line,
                    field="item_id",
                )
            row = _aggregate_item(recs, mode, d / SAMPLES_FILE, benchmark or find_benchmark(first.get("dataset")))
            self.any_cost = self.any_cost or row["cost"] > 0
            arm_rows[item_id] = row
            self.item_query.setdefault(item_id, _query_of(first, template))
            self.item_dataset.setdefault(item_id, str(first.get("dataset", "")))

    def long_rows(
        self, token_price: float | None, queries: Mapping[str, str] | None, *, run_dirs: Sequence[Path]
    ) -> list[dict[str, Any]]:
        """The long table's rows of the items every arm answered (sorted by id); cost = tokens ×
        ``token_price`` when given, the tokens when no run recorded a cost."""
        arms = list(self.per_arm)
        common = sorted(set.intersection(*(set(v) for v in self.per_arm.values())))
        if not common:
            raise EvalcoreError("the runs share no item: every arm must answer the same items", path=str(run_dirs[0]))
        rows = []
        for item in common:
            for arm in arms:
                r = dict(self.per_arm[arm][item])
                if token_price is not None:
                    r["cost"] = r["tokens"] * token_price
                elif not self.any_cost:
                    r["cost"] = r["tokens"]
                rows.append(
                    {
                        "item_id": item,
                        "arm": arm,
                        "dataset": self.item_dataset[item],
                        "query": (queries or {}).get(item, self.item_query[item]),
                        **r,
                    }
                )
        return rows


def _is_runs_path(path: Path) -> bool:
    """A run directory, or a folder holding run directories."""
    if is_run_dir(path):
        return True
    return path.is_dir() and any(d.is_dir() and is_run_dir(d) for d in path.iterdir())


def read_outcomes(
    paths: Sequence[str | os.PathLike[str]],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    format: str = "auto",
    costs: Mapping[str, float] | None = None,
) -> OutcomeMatrix:
    """Load outcomes the way ``evalcore route --outcomes`` does.

    Run directories (or folders of them) are built into a matrix by
    :func:`outcomes_from_runs`; files (and folders of RouteLLM CSVs) are read by
    :func:`evalcore.routing.load_outcomes` in ``format`` (``"auto"``: told apart by suffix and
    header). Either way a :class:`~evalcore.routing.NoSignalWarning` is issued when the
    matrix has no signal (:func:`~evalcore.routing.no_signal_reason`).

    Args:
        paths: One table, several RouteLLM files, or run directories.
        cache_dir: Where the matrix of run directories is cached (Parquet).
        format: ``"auto"``, ``"long"``, ``"routerbench"`` or ``"routellm"``.
        costs: RouteLLM only: model → price of one call.

    Raises:
        EvalcoreError: a path that is none of these, or what the loaders raise.
    """
    ps = [Path(p) for p in paths]
    for p in ps:
        if not p.exists():
            raise EvalcoreError(
                "not found: expected an outcome table (.csv, .parquet, RouterBench .pkl) or a run directory", path=p
            )
    if format == "auto" and any(_is_runs_path(p) for p in ps):
        if costs:
            raise EvalcoreError("costs are for RouteLLM tables, not run directories", field="costs")
        matrix = outcomes_from_runs(list(paths), cache_dir=cache_dir)
    else:
        matrix = read_outcome_files(list(paths), format=format, costs=costs)
    warn_if_no_signal(matrix)
    return matrix
