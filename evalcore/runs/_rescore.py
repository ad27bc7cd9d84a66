"""Re-scoring a recorded run from its samples, without calling any model."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from evalcore._io import to_json_native, write_jsonl_atomic
from evalcore._runstore import RESULTS_FILE, SAMPLES_FILE, load_run, write_run_json
from evalcore.benchmarks import benchmark_of_run, error_scores
from evalcore.errors import EvalcoreError
from evalcore.runs._results import summarize

_TIMING_KEYS = ("wall_s", "qps")
_COMPARED = (
    "accuracy_strict",
    "accuracy_flexible",
    "parse_failure_rate",
    "parse_failure_rate_strict",
    "n_scored",
    "errors",
)


def _metric_values(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _COMPARED:
        value = results.get(key)
        out[key] = value.get("mean") if isinstance(value, dict) else value
    for key, value in (results.get("pass_at_k") or {}).items():
        out[key] = value
    return out


def verdict(sample: Mapping[str, Any]) -> str:
    """A sample's verdict as a word: ``error``, ``unscored``, or ``right``/``wrong`` (exact
    match) and ``passed``/``failed`` (code execution)."""
    if sample.get("error"):
        return "error"
    scores = sample.get("scores") or {}
    if "passed" in scores:
        return "passed" if scores.get("passed") else "failed"
    score = scores.get("score")
    if score is None:
        return "unscored"
    return "right" if float(score) >= 1.0 else "wrong"


def score_changes(
    old_results: dict[str, Any],
    old_samples: Sequence[Mapping[str, Any]],
    new_results: dict[str, Any],
    new_samples: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """What a re-scoring changed: each metric's old and new value, and the samples whose verdict
    changed.

    Args:
        old_results: ``results.json`` before (``{}`` when the run never finished).
        old_samples: Sample records before.
        new_results: The new results.
        new_samples: The re-scored sample records.

    Returns:
        ``{"metrics": {name: [old, new]}, "verdicts": [{"item_id", "epoch", "old", "new",
        "extracted_old", "extracted_new"}]}`` holding only what differs (metrics compared to
        1e-12; ``pass@k`` values included).
    """
    before, after = _metric_values(old_results), _metric_values(new_results)
    metrics: dict[str, list[Any]] = {}
    for key in list(before) + [k for k in after if k not in before]:
        a, b = before.get(key), after.get(key)
        same = (a == b) or (
            isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(float(a) - float(b)) <= 1e-12
        )
        if not same:
            metrics[key] = [a, b]
    old_by = {(str(s["item_id"]), int(s["epoch"])): s for s in old_samples}
    verdicts = []
    for s in new_samples:
        old = old_by.get((str(s["item_id"]), int(s["epoch"])))
        if old is None:
            continue
        v_old, v_new = verdict(old), verdict(s)
        if v_old != v_new:
            verdicts.append(
                {
                    "item_id": s["item_id"],
                    "epoch": int(s["epoch"]),
                    "old": v_old,
                    "new": v_new,
                    "extracted_old": (old.get("scores") or {}).get("extracted_flexible"),
                    "extracted_new": (s.get("scores") or {}).get("extracted_flexible"),
                }
            )
    return {"metrics": metrics, "verdicts": verdicts}


def rescore(
    path: str | os.PathLike[str],
    *,
    code_timeout_s: float | None = None,
    workers: int | None = None,
    benchmark_file: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Recompute every sample's scores and ``results.json`` from the recorded completions.

    ``samples.jsonl`` is rewritten atomically (temporary file + ``os.replace``) with one record
    per (item, epoch) and the new scores; timing figures of the last invocation are kept.

    Args:
        path: The run directory.
        code_timeout_s: Seconds per HumanEval sample (default: the run's setting).
        workers: Parallel code-execution workers.
        benchmark_file: A benchmark YAML whose scoring settings replace the recorded ones
            (the rest must match the run: see :func:`evalcore.runs._config.rescoring_spec`);
            ``config.json`` then records the new spec.

    Returns:
        The new results.

    Raises:
        EvalcoreError: Not a run directory, or a run that another process is writing.
    """
    from evalcore._io import check_output_dir, check_output_file
    from evalcore._runstore import lock_run

    run_path = Path(path)
    run = load_run(run_path)  # a clear error for a path that is not a run, before any lock file
    if not run.samples:  # nothing to score: results.json would be overwritten with n/a
        raise EvalcoreError(
            "the run has no recorded samples to re-score (empty samples.jsonl); results.json is kept as it is",
            path=run_path / SAMPLES_FILE,
        )
    check_output_dir(run_path, field="run directory")  # read-only: refused before the work
    check_output_file(run_path / RESULTS_FILE, field="run directory")
    # rewriting samples.jsonl under a run still appending to it would lose its new records
    lock = lock_run(run_path)
    try:
        if benchmark_file is not None:  # new scoring settings for the recorded completions
            from evalcore._runstore import CONFIG_FILE
            from evalcore.runs._config import rescoring_spec

            config: dict[str, Any] = dict(run.config)
            config["benchmark"] = rescoring_spec(run.config, benchmark_file, run_path)
            config["scorer"] = "code_execution" if config["benchmark"]["scorer"]["type"] == "code" else "exact_match"
            write_run_json(run_path / CONFIG_FILE, config)
        return _rescore(run_path, code_timeout_s, workers)
    finally:
        lock.close()


def _rescore(run_path: Path, code_timeout_s: float | None, workers: int | None) -> dict[str, Any]:
    run = load_run(run_path)
    dataset = run.config.get("dataset")
    benchmark = benchmark_of_run(run.config)
    if benchmark is None:
        raise EvalcoreError(
            f"the run was not scored by an evalcore benchmark (dataset {dataset!r}); there is nothing to re-score",
            path=run_path / "config.json",
            field="dataset",
        )
    timeout = code_timeout_s or float(run.config.get("code_timeout_s") or 10.0)
    samples = run.samples
    ok = [s for s in samples if not s.get("error")]
    for s in samples:
        if s.get("error"):
            s["scores"] = error_scores()
    records = cast("list[dict[str, Any]]", ok)  # a SampleRecord is the plain dict the scorer reads
    for s, sc in zip(ok, benchmark.score_records(records, timeout_s=timeout, workers=workers)):
        s["scores"] = sc
    samples_path = run_path / SAMPLES_FILE
    write_jsonl_atomic(samples_path, (to_json_native(s) for s in samples), fsync=True, mkdir=False, allow_nan=False)
    epochs = int(run.config.get("epochs", 1))
    results = summarize(
        samples, dataset if isinstance(dataset, str) else benchmark.name, epochs=epochs, benchmark=benchmark
    )
    for key in _TIMING_KEYS:
        if key in run.results:
            results[key] = run.results[key]
    results["run_id"] = run.run_id
    wanted = len(run.config.get("item_ids") or []) * epochs
    results["complete"] = len(samples) == wanted if wanted else True
    results["rescored"] = True
    write_run_json(run_path / RESULTS_FILE, results)
    return results
