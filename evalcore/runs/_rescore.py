"""Re-scoring a recorded run from its samples, without calling any model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalcore._io import write_jsonl_atomic
from evalcore.runs._results import summarize
from evalcore.runs._scoring import error_scores, score_code, score_exact
from evalcore.runs._store import RESULTS_FILE, SAMPLES_FILE, _jsonable, load_run, write_json_atomic

_TIMING_KEYS = ("wall_s", "qps")


def rescore(path: str | os.PathLike[str], *, code_timeout_s: float | None = None,
            workers: int | None = None) -> dict[str, Any]:
    """Recompute every sample's scores and ``results.json`` from the recorded completions.

    ``samples.jsonl`` is rewritten atomically (temporary file + ``os.replace``) with one record
    per (item, epoch) and the new scores; timing figures of the last invocation are kept.

    Args:
        path: The run directory.
        code_timeout_s: Seconds per HumanEval sample (default: the run's setting).
        workers: Parallel code-execution workers.

    Returns:
        The new results.

    Raises:
        EvalcoreError: Not a run directory, or a run that another process is writing.
    """
    from evalcore.runs._runner import _lock_run

    run_path = Path(path)
    load_run(run_path)  # a clear error for a path that is not a run, before any lock file
    # rewriting samples.jsonl under a run still appending to it would lose its new records
    lock = _lock_run(run_path)
    try:
        return _rescore(run_path, code_timeout_s, workers)
    finally:
        lock.close()


def _rescore(run_path: Path, code_timeout_s: float | None, workers: int | None) -> dict[str, Any]:
    run = load_run(run_path)
    dataset = run.config.get("dataset")
    timeout = code_timeout_s or float(run.config.get("code_timeout_s") or 10.0)
    samples = run.samples
    ok = [s for s in samples if not s.get("error")]
    for s in samples:
        if s.get("error"):
            s["scores"] = error_scores()
    if dataset == "humaneval":
        items = {s["item_id"]: s.get("item") or {} for s in ok}
        for s, sc in zip(ok, score_code(ok, items, timeout_s=timeout, workers=workers)):
            s["scores"] = sc
    else:
        for s in ok:
            s["scores"] = score_exact(dataset, s["completion"].get("text", ""), s.get("reference"),
                                      (s.get("item") or {}).get("choices"))
    samples_path = run_path / SAMPLES_FILE
    write_jsonl_atomic(samples_path, (_jsonable(s) for s in samples), fsync=True, mkdir=False,
                       allow_nan=False)
    epochs = int(run.config.get("epochs", 1))
    results = summarize(samples, dataset, epochs=epochs)
    for key in _TIMING_KEYS:
        if key in run.results:
            results[key] = run.results[key]
    results["run_id"] = run.run_id
    wanted = len(run.config.get("item_ids") or []) * epochs
    results["complete"] = len(samples) == wanted if wanted else True
    results["rescored"] = True
    write_json_atomic(run_path / RESULTS_FILE, results)
    return results
