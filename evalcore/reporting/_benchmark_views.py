"""Tables and figures of one benchmark run, for ``notebooks/benchmark.ipynb``.

Everything is computed from a run directory's ``samples.jsonl`` (one record per item and
epoch; see ``evalcore.runs``), so the notebook stays thin and the numbers are testable.
Samples whose model call failed (``error: true``) are never scored as wrong answers: they are
counted separately and left out of the accuracies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.reporting._code_views import pass_fail_figure, pass_fail_grid, pass_fail_table
from evalcore.reporting._latency_views import (
    _LATENCY_KEYS,
    answered_latency,
    latency_cost_figure,
    latency_cost_notes,
    usage_summary,
)

__all__ = [
    "accuracy_table",
    "audit_examples",
    "benchmark_records",
    "extraction_audit",
    "extraction_methods",
    "latency_cost_figure",
    "latency_cost_notes",
    "load_benchmark_run",
    "pass_at_k_frame",
    "pass_fail_figure",
    "pass_fail_grid",
    "pass_fail_table",
    "run_overview",
    "sample_table",
    "samples_frame",
    "subject_figure",
    "subject_table",
    "usage_summary",
]


# --- the run as a table: one row per sample, what every view below reads ---------------------


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


# --- the views -----------------------------------------------------------------------------------


def accuracy_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy (mean score) per scoring mode with its confidence interval.

    Rows: ``strict`` and ``flexible`` exact match (GSM8K/MMLU) or ``pass@1`` (HumanEval, whose
    samples carry ``passed``; column ``score``). Interval: Wilson for one epoch; with several epochs the samples of an
    item are correlated, so the mean's SE is clustered by item,
    SE = √(Σ_g (Σ_{i∈g}(x_i − x̄))²) / n; for 0/1 scores the interval is Wilson's on the effective
    sample size (:func:`evalcore.stats.clustered_wilson`, as in ``results.json``), otherwise
    x̄ ± z·SE.

    Args:
        frame: :func:`samples_frame` output.
        confidence: Confidence level.

    Returns:
        Columns ``mode, n, correct, mean, ci_low, ci_high, method``; error samples excluded.
    """
    from evalcore.stats import clustered_wilson, mean_ci

    scored = _scored(frame)
    is_code = "passed" in scored and scored["passed"].notna().any()
    modes = [] if is_code else [m for m in ("strict", "flexible") if m in scored and scored[m].notna().any()]
    if not modes:
        modes = ["score"]
    several_epochs = scored["epoch"].nunique() > 1 if len(scored) else False
    rows = []
    for mode in modes:
        values = scored[mode].dropna().astype(float)
        if values.empty:
            rows.append(
                {
                    "mode": "pass@1" if mode == "score" else mode,
                    "n": 0,
                    "correct": 0,
                    "mean": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "method": None,
                }
            )
            continue
        clusters = scored.loc[values.index, "item_id"].to_numpy() if several_epochs else None
        if clusters is not None and set(np.unique(values)) <= {0.0, 1.0}:
            # the same interval as results.json: Wilson on the effective sample size
            ci = clustered_wilson(values.to_numpy(), list(clusters), confidence=confidence)
        else:
            ci = mean_ci(values.to_numpy(), clusters=clusters, confidence=confidence)
        rows.append(
            {
                "mode": "pass@1" if mode == "score" else mode,
                "n": int(values.size),
                "correct": _count(values.sum()),
                "mean": ci["mean"],
                "ci_low": ci["ci_low"],
                "ci_high": ci["ci_high"],
                "method": ci["method"],
            }
        )
    return pd.DataFrame(rows)


def _runs_code(dataset: Any) -> bool:
    """Whether the benchmark named ``dataset`` is scored by running code (the registry says)."""
    from evalcore.benchmarks import find_benchmark

    benchmark = find_benchmark(dataset)
    return benchmark is not None and benchmark.scorer == "code_execution"


def _verdict(row: Mapping[str, Any], mode: str) -> str:
    if row.get("error"):
        return "error"
    if _runs_code(row.get("dataset")) or (row.get("passed") is not None and row.get(mode) is None):
        return "passed" if row.get("passed") else "failed"
    if row.get(f"parse_failure_{mode}"):
        return "parse failure"
    value = row.get(mode)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "unscored"
    return "correct" if value >= 1.0 else "wrong answer"


def extraction_audit(frame: pd.DataFrame, mode: str = "flexible") -> pd.DataFrame:
    """Split the samples into correct, wrong answer (an answer was extracted but is wrong),
    parse failure (no answer could be extracted) and model error.

    Args:
        frame: :func:`samples_frame` output.
        mode: ``"strict"`` or ``"flexible"`` extraction.

    Returns:
        Columns ``outcome, count, share`` (share of all samples), one row per outcome, in the
        order correct, wrong answer, parse failure, error.
    """
    if mode not in ("strict", "flexible"):
        raise EvalcoreError(f"unknown extraction mode {mode!r}; use 'strict' or 'flexible'", field="extraction")
    verdicts = frame.apply(lambda r: _verdict(r, mode), axis=1) if len(frame) else pd.Series([], dtype=object)
    order = ["correct", "wrong answer", "parse failure", "error"]
    counts = verdicts.value_counts()
    total = max(len(frame), 1)
    return pd.DataFrame(
        [{"outcome": o, "count": int(counts.get(o, 0)), "share": counts.get(o, 0) / total} for o in order]
    )


def extraction_methods(frame: pd.DataFrame) -> pd.DataFrame:
    """How the answers were read: samples per extraction method, in both modes.

    A declared answer (a JSON/YAML ``answer`` field, ``#### 72``, ``\\boxed{}``, "The answer
    is C") is read the same way in both modes; looser methods (``last_number``,
    ``first_letter``...) only in flexible mode. Many answers read by a loose method mean the
    prompt's answer format was not followed.

    Args:
        frame: :func:`samples_frame` output (GSM8K or MMLU; samples with a model error and
            samples without a method, e.g. HumanEval, are left out).

    Returns:
        Columns ``method, declared, strict, flexible, share_flexible`` (counts; share of the
        scored samples), one row per method that occurs, in order of precedence.
    """
    from evalcore.evaluators import DECLARED_METHODS, EXTRACTION_METHODS, extraction_method_counts

    scored = _scored(frame)
    records = scored.to_dict("records") if len(scored) else []
    columns = ["method", "declared", "strict", "flexible", "share_flexible"]
    strict = extraction_method_counts(records, "strict")
    flexible = extraction_method_counts(records, "flexible")
    if not strict and not flexible:
        return pd.DataFrame(columns=columns)
    order = list(flexible) + [m for m in strict if m not in flexible]
    rank = {m: i for i, m in enumerate(EXTRACTION_METHODS)}
    order.sort(key=lambda m: (rank.get(m, len(rank)), m))
    n = max(sum(flexible.values()), 1)
    return pd.DataFrame(
        [
            {
                "method": m,
                "declared": m in DECLARED_METHODS,
                "strict": strict.get(m, 0),
                "flexible": flexible.get(m, 0),
                "share_flexible": flexible.get(m, 0) / n,
            }
            for m in order
        ],
        columns=columns,
    )


def audit_examples(frame: pd.DataFrame, mode: str = "flexible", n: int = 3, width: int = 300) -> pd.DataFrame:
    """Examples of parse failures and wrong answers, to see why the model lost points.

    Args:
        frame: :func:`samples_frame` output.
        mode: ``"strict"`` or ``"flexible"``.
        n: Examples per outcome.
        width: Characters of the response kept (its end, where the answer usually is).

    Returns:
        Columns ``outcome, item_id, extracted, reference, response_end``.
    """
    rows = []
    for outcome in ("parse failure", "wrong answer"):
        picked = frame[frame.apply(lambda r, o=outcome: _verdict(r, mode) == o, axis=1)] if len(frame) else frame
        for _, row in picked.head(n).iterrows():
            text = str(row["response"]).strip()
            rows.append(
                {
                    "outcome": outcome,
                    "item_id": row["item_id"],
                    "extracted": row.get(f"extracted_{mode}"),
                    "reference": row["reference"],
                    "response_end": ("…" + text[-width:]) if len(text) > width else text,
                }
            )
    return pd.DataFrame(rows, columns=["outcome", "item_id", "extracted", "reference", "response_end"])


def subject_table(
    frame: pd.DataFrame, mode: str = "flexible", confidence: float = 0.95
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-subject accuracy (MMLU) and the overall accuracy with SE clustered by subject.

    Questions of one subject share difficulty, so treating them as independent understates
    the uncertainty; the overall SE is clustered by subject:
    SE = √(Σ_s (Σ_{i∈s}(x_i − x̄))²) / n. Per subject, the interval is Wilson (one epoch) or
    clustered by item (several epochs).

    Args:
        frame: :func:`samples_frame` output with a ``subject`` column.
        mode: Score column.
        confidence: Confidence level.

    Returns:
        ``(table, overall)``: the table has ``subject, n, accuracy, se, ci_low, ci_high``
        sorted by accuracy; ``overall`` is :func:`evalcore.stats.mean_ci` with subject clusters
        plus ``naive_se`` (the SE ignoring clusters) for contrast.
    """
    from evalcore.stats import mean_ci

    scored = _scored(frame).dropna(subset=[mode])
    scored = scored[scored["subject"].notna()]
    if scored.empty:
        raise EvalcoreError("no scored samples with a subject (per-subject accuracy is for MMLU)", field="subject")
    several_epochs = scored["epoch"].nunique() > 1
    rows = []
    for subject, group in scored.groupby("subject", sort=True):
        values = group[mode].astype(float).to_numpy()
        ci = mean_ci(values, clusters=group["item_id"].to_numpy() if several_epochs else None, confidence=confidence)
        rows.append(
            {
                "subject": subject,
                "n": int(values.size),
                "accuracy": ci["mean"],
                "se": ci["se"],
                "ci_low": ci["ci_low"],
                "ci_high": ci["ci_high"],
            }
        )
    table = pd.DataFrame(rows).sort_values(["accuracy", "subject"], ascending=[False, True]).reset_index(drop=True)
    values = scored[mode].astype(float).to_numpy()
    overall = mean_ci(values, clusters=scored["subject"].to_numpy(), confidence=confidence)
    overall["naive_se"] = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")
    overall["n_subjects"] = int(scored["subject"].nunique())
    return table, overall


def subject_figure(table: pd.DataFrame) -> Any:
    """Horizontal bars of per-subject accuracy with their intervals.

    Drawn with seaborn's ``barplot`` on the table's accuracies (``errorbar=None``: seaborn
    estimates nothing) and the table's own intervals as error bars, subjects top to bottom in
    the table's order.

    Args:
        table: The first element of :func:`subject_table`.

    Returns:
        A matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    height = max(2.0, 0.35 * len(table) + 1.0)
    fig, ax = plt.subplots(figsize=(7, height))
    y = np.arange(len(table))  # seaborn's categorical axis: first row at the top
    acc = table["accuracy"].to_numpy(dtype=float)
    low = np.clip(acc - table["ci_low"].to_numpy(dtype=float), 0, None)
    high = np.clip(table["ci_high"].to_numpy(dtype=float) - acc, 0, None)
    sns.barplot(
        x=acc, y=y, orient="h", order=list(y), color="tab:blue", alpha=0.7, saturation=1.0, errorbar=None, ax=ax
    )
    ax.errorbar(acc, y, xerr=[np.nan_to_num(low), np.nan_to_num(high)], fmt="none", ecolor="black", capsize=3)
    # labels are data (a subject from a user's file): "$...$" is text, never mathtext
    ax.set_yticks(y, [f"{s} (n={n})" for s, n in zip(table["subject"], table["n"])], parse_math=False)
    ax.set_ylabel("")
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy (95% interval)")
    ax.set_title("Accuracy per subject")
    fig.tight_layout()
    return fig


def pass_at_k_frame(frame: pd.DataFrame, ks: Sequence[int] = (1, 5, 10)) -> pd.DataFrame:
    """Unbiased pass@k over items (HumanEval), for each k ≤ samples per item, as a table.

    The numbers are the run summary's (:func:`evalcore.runs.pass_at_k_table`, as in
    ``results.json``) on the frame's samples without a model error: pass@k = mean over items of
    1 − C(n − c, k) / C(n, k), with n samples and c passing samples of the item (Chen et al., 2021).

    Args:
        frame: :func:`samples_frame` output with a ``passed`` column.
        ks: The k values; those larger than the smallest per-item sample count are skipped.

    Returns:
        Columns ``k, pass_at_k, n_items, samples_per_item``.
    """
    from evalcore.runs import pass_at_k_table as records_pass_at_k

    scored = _scored(frame)
    if scored.empty or scored["passed"].isna().all():
        raise EvalcoreError("no HumanEval samples with a 'passed' score", field="passed")
    records = [
        {"item_id": item, "scores": {"passed": passed}} for item, passed in zip(scored["item_id"], scored["passed"])
    ]
    values = records_pass_at_k(records, ks)
    per_item = scored.groupby("item_id").size()
    rows = [
        {
            "k": int(k),
            "pass_at_k": values[f"pass@{int(k)}"],
            "n_items": len(per_item),
            "samples_per_item": int(per_item.min()),
        }
        for k in ks
        if f"pass@{int(k)}" in values
    ]
    return pd.DataFrame(rows, columns=["k", "pass_at_k", "n_items", "samples_per_item"])


CODE_COLUMNS = ("question", "response", "reference")
"""The columns of :func:`sample_table` that hold code for HumanEval (shown monospace, line breaks kept)."""


def sample_table(frame: pd.DataFrame, mode: str = "flexible", n: int = 10, width: int = 160) -> pd.DataFrame:
    """A few samples with question, response, extracted answer, reference and verdict.

    Args:
        frame: :func:`samples_frame` output.
        mode: Extraction mode shown.
        n: Number of samples (the first ``n`` in run order).
        width: Characters kept of the question and the response (HumanEval: the code, the
            reference solution included, keeps its line breaks and up to ``8 × width``
            characters; show it with ``format_table(..., code=CODE_COLUMNS)``).

    Returns:
        Columns ``item_id, epoch, question, response, extracted, reference, verdict``.
    """

    def cut(text: Any, keep_end: bool = False, code: bool = False) -> str:
        text = str(text or "")
        limit = 8 * width if code else width
        if not code:
            text = " ".join(text.split())
        else:
            text = text.strip("\n")
        if len(text) <= limit:
            return text
        return "…" + text[-limit:] if keep_end else text[:limit] + "…"

    rows = []
    for _, row in frame.head(n).iterrows():
        verdict = _verdict({str(k): v for k, v in row.items()}, mode)
        extracted = row.get(f"extracted_{mode}")
        code = _runs_code(row.get("dataset"))
        if row.get("result") is not None and code:
            extracted = row["result"]
        rows.append(
            {
                "item_id": row["item_id"],
                "epoch": row["epoch"],
                "question": cut(row["question"], code=code),
                "response": cut(row["response"], keep_end=True, code=code),
                "extracted": extracted,
                "reference": cut(row["reference"], code=code),
                "verdict": verdict,
            }
        )
    return pd.DataFrame(rows, columns=["item_id", "epoch", "question", "response", "extracted", "reference", "verdict"])


def run_overview(run: Any) -> pd.DataFrame:
    """The facts of a run worth printing above its numbers (model, dataset, prompt, seed...).

    Args:
        run: A ``Run`` with ``.config`` and ``.results``.

    Returns:
        Two columns, ``field`` and ``value`` (text: numbers formatted, paths relative to the
        working directory when below it).
    """
    config = getattr(run, "config", {}) or {}
    results = getattr(run, "results", {}) or {}
    params = config.get("params") or {}
    prompt = config.get("prompt") or {}
    wall = results.get("wall_s")
    facts = [
        ("run id", config.get("run_id")),
        ("run directory", _shown_path(getattr(run, "path", ""))),
        (
            "dataset",
            f"{config.get('dataset')} ({config.get('split')}, "
            f"source: {', '.join(map(str, config.get('source') or []))})",
        ),
        ("model", f"{config.get('model')} ({config.get('model_name')})"),
        ("items × epochs", f"{config.get('n_items')} × {config.get('epochs')}"),
        ("prompt template", prompt.get("name")),
        ("few-shot examples", config.get("few_shot")),
        ("generation", ", ".join(f"{k}={params[k]}" for k in ("temperature", "max_tokens", "seed") if k in params)),
        ("samples scored / errors", f"{results.get('n_scored', '?')} / {results.get('errors', '?')}"),
        ("wall time (s)", f"{float(wall):.1f}" if isinstance(wall, (int, float)) else wall),
        ("git revision", config.get("git_revision")),
        ("created (UTC)", config.get("created_utc")),
    ]
    return pd.DataFrame([(k, "—" if v is None else str(v)) for k, v in facts], columns=["field", "value"])


def _shown_path(path: Any) -> str:
    """A path as a report prints it: relative to the working directory (the repository root
    in the suite) when it lies below it, else as given."""
    if not path:
        return ""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(p)


def benchmark_records(run: Any, frame: pd.DataFrame, extraction: str = "flexible") -> dict[str, Any]:
    """The key numbers of a benchmark run, as published with ``evalcore.record``.

    Keys: ``dataset, model, run_id, n_items, n_samples, errors``, ``accuracy`` (the primary
    score: flexible exact match, or pass@1 for HumanEval) and, for GSM8K/MMLU,
    ``accuracy_strict``, ``accuracy_flexible`` (each ``{mean, ci_low, ci_high, n}``) and
    ``parse_failure_rate`` (of the ``extraction`` mode); for HumanEval ``pass_at_k``
    (``{"1": ..., ...}``); plus ``latency_p50_s``, ``latency_p95_s`` and ``latency_n`` (over
    the answered model calls, as in ``results.json``: read from ``run.results`` when it has
    them for these samples, else computed the same way by :func:`answered_latency`),
    ``completion_tokens`` and ``cost_usd``.

    Args:
        run: A ``Run``.
        frame: :func:`samples_frame` of the run.
        extraction: Extraction mode of the parse-failure rate.

    Returns:
        Record name → JSON-native value.
    """
    config = getattr(run, "config", {}) or {}
    acc = accuracy_table(frame).set_index("mode")

    def ci(mode: str) -> dict[str, Any]:
        row = acc.loc[mode].to_dict()
        return {
            "mean": _num(row["mean"]),
            "ci_low": _num(row["ci_low"]),
            "ci_high": _num(row["ci_high"]),
            "n": int(row["n"]),
        }

    scored = _scored(frame)
    out: dict[str, Any] = {
        "dataset": config.get("dataset") or (frame["dataset"].iloc[0] if len(frame) else None),
        "model": config.get("model"),
        "run_id": config.get("run_id"),
        "n_items": int(frame["item_id"].nunique()),
        "n_samples": len(frame),
        "errors": int(frame["error"].sum()),
    }
    if "pass@1" in acc.index:
        out["accuracy"] = ci("pass@1")
        table = pass_at_k_frame(frame)
        out["pass_at_k"] = {str(int(k)): float(v) for k, v in zip(table["k"], table["pass_at_k"])}
    else:
        out["accuracy"] = ci("flexible")
        out["accuracy_strict"] = ci("strict")
        out["accuracy_flexible"] = ci("flexible")
        column = scored[f"parse_failure_{extraction}"].astype(bool) if len(scored) else pd.Series(dtype=bool)
        out["parse_failure_rate"] = float(column.mean()) if len(column) else None
    results = getattr(run, "results", None) or {}
    if all(k in results for k in _LATENCY_KEYS) and results.get("n_samples") == len(frame):
        latency = {k: results[k] for k in _LATENCY_KEYS}
    else:  # no results.json, or one from before latency_n (over every sample), or other samples
        latency = answered_latency(frame)
    out["latency_p50_s"] = _num(latency["latency_p50_s"]) if latency["latency_p50_s"] is not None else None
    out["latency_p95_s"] = _num(latency["latency_p95_s"]) if latency["latency_p95_s"] is not None else None
    out["latency_n"] = int(latency["latency_n"])
    out["completion_tokens"] = int(pd.to_numeric(frame["completion_tokens"], errors="coerce").fillna(0).sum())
    out["cost_usd"] = float(pd.to_numeric(frame["cost_usd"], errors="coerce").fillna(0).sum())
    return out


def _count(value: Any) -> int | float:
    """A sum of scores: an int when it is whole (a count of correct answers), else a float."""
    value = float(value)
    return int(value) if value.is_integer() else value


def _num(value: Any) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
