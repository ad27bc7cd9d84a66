"""One benchmark run as a table: :func:`load_benchmark_run` and :func:`samples_frame` (one row per
sample, what every benchmark view reads), and the rows a view scores (model errors left out).
Re-exported by :mod:`evalcore.reporting._benchmark_views`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["load_benchmark_run", "samples_frame"]


def load_benchmark_run(path: str | os.PathLike[str]) -> Any:
    """Load a run directory with ``evalcore.runs.load_run``.

    Args:
        path: ``<run_dir>/<run_id>``.

    Returns:
        The ``Run`` (``.config``, ``.results``, ``.samples``).
    """
    from evalcore._runstore import load_run

    return load_run(Path(path))


def _samples(run: Any) -> list[Mapping[str, Any]]:
    samples = run.samples if hasattr(run, "samples") else run
    return list(samples)


def samples_frame(run: Any) -> pd.DataFrame:
    """One row per sample with the fields the views need.

    ``question`` is the item's question read back from the last user turn with the run's
    prompt template (:func:`evalcore.datasets.prompt_question`: the ``{question}`` or
    ``{prompt}`` field and MMLU's options, so it shows the item, not the instructions),
    without surrounding whitespace.

    Columns: ``item_id, epoch, dataset, question, response, reference, score, strict,
    flexible, extracted_strict, extracted_flexible, method_strict, method_flexible,
    parse_failure_strict, parse_failure_flexible, passed, result, subject, latency_s,
    cost_usd, prompt_tokens, completion_tokens, cached, error, error_message`` (missing fields
    are NaN/None, e.g. ``passed`` for GSM8K; ``cached``: answered from the response cache).

    Args:
        run: A ``Run`` (anything with ``.samples``) or a list of sample records.

    Returns:
        The frame, in sample order.
    """
    from evalcore.datasets import prompt_question
    from evalcore.reporting._tables import printable_text

    config = getattr(run, "config", None) or {}
    if config:  # a benchmark file's run: its benchmark known by name to the views below
        from evalcore.benchmarks import benchmark_of_run

        benchmark_of_run(config)
    template = (config.get("prompt") or {}).get("user")
    rows = []
    for s in _samples(run):
        completion = s.get("completion") or {}
        usage = completion.get("usage") or {}
        scores = s.get("scores") or {}
        metadata = s.get("metadata") or {}
        err = completion.get("error")
        rows.append(
            {
                "item_id": str(s.get("item_id")),
                "epoch": int(s.get("epoch", 0) or 0),
                "dataset": s.get("dataset"),
                "question": prompt_question((s.get("request") or {}).get("messages"), template).strip(),
                "response": completion.get("text") or "",
                "reference": s.get("reference", scores.get("reference")),
                "score": scores.get("score"),
                "strict": scores.get("strict"),
                "flexible": scores.get("flexible"),
                "extracted_strict": scores.get("extracted_strict"),
                "extracted_flexible": scores.get("extracted_flexible"),
                "method_strict": scores.get("method_strict"),
                "method_flexible": scores.get("method_flexible"),
                "parse_failure_strict": scores.get("parse_failure_strict"),
                "parse_failure_flexible": scores.get("parse_failure_flexible"),
                "passed": scores.get("passed"),
                "result": scores.get("result"),
                "subject": metadata.get("subject"),
                "latency_s": completion.get("latency_s"),
                "cost_usd": completion.get("cost_usd"),
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
                "cached": bool(s.get("cached")),
                "error": bool(s.get("error") or err),
                "error_message": (err.get("message") if isinstance(err, Mapping) else err) or None,
            }
        )
        # a model's reply, an item id or a subject may hold a lone surrogate (JSON "\\ud800"):
        # pandas' pyarrow strings and the notebook's UTF-8 refuse it, so it is shown as its escape
        rows[-1] = {k: printable_text(v) if isinstance(v, str) else v for k, v in rows[-1].items()}
    frame = pd.DataFrame(rows)
    for column in ("score", "strict", "flexible", "latency_s", "cost_usd", "prompt_tokens", "completion_tokens"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[~frame["error"]] if "error" in frame else frame
