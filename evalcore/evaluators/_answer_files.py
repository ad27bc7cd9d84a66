"""Score a JSONL file of GSM8K or MMLU answers (``evalcore score gsm8k|mmlu FILE.jsonl``).

Input rows: ``response`` (the model's text) and ``answer`` (the reference as the dataset gives
it: a GSM8K worked solution or number; an MMLU letter or index); MMLU rows may add ``choices``
(the four option texts). Any other fields (``id``...) are kept in the output.
Output: ``<stem>_results.jsonl`` beside the input, one row per input row with the extracted
value, method and correctness in both modes, written atomically (nothing on error); the summary
counts how many answers each extraction method read (``methods_strict``, ``methods_flexible``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalcore._io import check_output_file, read_jsonl, write_jsonl_atomic
from evalcore.errors import EvalcoreError
from evalcore.evaluators._exact_match import ANSWER_KINDS, ExactMatchEvaluator, summarize_exact_match

__all__ = ["results_path", "score_answers_file", "write_jsonl_atomic"]


def results_path(path: str | os.PathLike[str]) -> Path:
    """``answers.jsonl`` -> ``answers_results.jsonl`` in the same directory."""
    p = Path(path)
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
    return p.with_name(f"{stem}_results.jsonl")


def _read_rows(path: Path, dataset_type: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for line_no, row in read_jsonl(path):
        for field in ("response", "answer"):
            if field not in row:
                raise EvalcoreError("missing field", path=path, line=line_no, field=field)
        if row["response"] is not None and not isinstance(row["response"], str):
            raise EvalcoreError(
                f"expected a string, got {type(row['response']).__name__}", path=path, line=line_no, field="response"
            )
        if ANSWER_KINDS.get(dataset_type) == "letter" and row.get("choices") is not None:
            choices = row["choices"]
            if not isinstance(choices, list) or len(choices) != 4 or not all(isinstance(c, str) for c in choices):
                raise EvalcoreError("expected a list of four strings", path=path, line=line_no, field="choices")
        rows.append((line_no, row))
    if not rows:
        raise EvalcoreError("no rows to score (the file is empty)", path=path)
    return rows


def score_answers_file(path: str | os.PathLike[str], dataset_type: str) -> dict[str, Any]:
    """Score every row of a JSONL answers file and write ``<stem>_results.jsonl``.

    Each output row is the input row plus ``reference``, ``extracted_strict``,
    ``method_strict``, ``correct_strict``, ``parse_failure_strict`` and the same four for
    ``flexible`` (see :meth:`ExactMatchEvaluator.score`).

    Args:
        path: The answers file.
        dataset_type: The answer kind, ``"number"`` or ``"letter"`` (``"gsm8k"``, ``"mmlu"``: the same two).

    Returns:
        ``{"accuracy_strict", "accuracy_flexible", "parse_failure_rate",
        "parse_failure_rate_strict", "n", "methods_strict", "methods_flexible", "results"}``
        (``methods_*``: answers read per extraction method, in order of precedence;
        ``results``: the output path).

    Raises:
        EvalcoreError: Naming file, line and field for bad JSON, a missing field or an
            unusable reference; no results file is written then.
    """
    p = Path(path)
    evaluator = ExactMatchEvaluator(dataset_type)  # type: ignore[arg-type]
    rows = _read_rows(p, dataset_type)
    check_output_file(results_path(p), field="results file")  # before the scoring, not after
    scores, out_rows = [], []
    for line_no, row in rows:
        try:
            s = evaluator.score(row["response"], row["answer"], choices=row.get("choices"))
        except EvalcoreError as exc:
            raise EvalcoreError(exc.reason, path=p, line=line_no, field=exc.field or "answer") from None
        scores.append(s)
        out = dict(row)
        out["reference"] = s["reference"]
        for mode in ("strict", "flexible"):
            out[f"extracted_{mode}"] = s[f"extracted_{mode}"]
            out[f"method_{mode}"] = s[f"method_{mode}"]
            out[f"correct_{mode}"] = s[mode] == 1.0
            out[f"parse_failure_{mode}"] = s[f"parse_failure_{mode}"]
        out_rows.append(out)
    target = results_path(p)
    write_jsonl_atomic(target, out_rows)
    summary = summarize_exact_match(scores)
    summary["results"] = str(target)
    return summary
