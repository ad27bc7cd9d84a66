"""Objective scoring of sample records: exact match (gsm8k, mmlu) and code execution (humaneval)."""

from __future__ import annotations

from typing import Any, Sequence

from evalcore.errors import EvalcoreError

SCORERS = {"gsm8k": "exact_match", "mmlu": "exact_match", "humaneval": "code_execution"}


def refuse_judge(scorer: Any) -> None:
    """Refuse anything but the objective scorers in a benchmark run.

    Args:
        scorer: What the caller asked to score with (``"exact"``/``"auto"`` are accepted).

    Raises:
        EvalcoreError: An LLM judge (by name or object) or an unknown scorer was asked for.
    """
    if scorer in (None, "auto", "exact", "exact_match", "code_execution"):
        return
    from evalcore.evaluators.judge import LLMJudge

    is_judge = isinstance(scorer, LLMJudge) or (isinstance(scorer, str) and "judge" in scorer.lower())
    if is_judge:
        raise EvalcoreError("an LLM judge cannot score a benchmark run: benchmark scores come "
                            "from exact match or code execution only (judges are for production "
                            "monitoring, evalcore.evaluators.judge)", field="scorer")
    raise EvalcoreError(f"unknown scorer {scorer!r}; benchmark runs use 'exact' "
                        "(exact match for gsm8k/mmlu, code execution for humaneval)",
                        field="scorer")


def error_scores() -> dict[str, Any]:
    """Scores of a sample whose call failed: no score (it is an error, not a wrong answer)."""
    return {"score": None}


def score_exact(dataset: str, text: str, reference: Any, choices: Sequence[str] | None) -> dict[str, Any]:
    """Exact-match scores of one answer.

    ``score = flexible`` (1.0 when the flexibly extracted answer equals the reference).

    Args:
        dataset: ``gsm8k`` or ``mmlu``.
        text: The model's answer.
        reference: Ground truth.
        choices: MMLU options (for option-text matching).

    Returns:
        ``ExactMatchEvaluator.score`` keys plus ``score``.
    """
    from evalcore.evaluators import ExactMatchEvaluator

    scores = dict(ExactMatchEvaluator(dataset).score(text, reference, choices=choices))
    scores["score"] = float(scores["flexible"])
    return scores


def score_code(records: Sequence[dict[str, Any]], items: dict[str, dict[str, Any]],
               timeout_s: float = 10.0, workers: int | None = None) -> list[dict[str, Any]]:
    """Code-execution scores of HumanEval samples (run in the sandbox, in parallel).

    ``score = 1.0`` when the completed function passes the item's tests, else ``0.0``.

    Args:
        records: Sample records (``item_id``, ``completion.text``).
        items: Item id -> item fields (``prompt``, ``test``, ``entry_point``).
        timeout_s: Seconds per sample.
        workers: Parallel workers (None: the sandbox's default).

    Returns:
        One scores dict per record: ``score``, ``strict``, ``flexible``, ``passed``, ``result``,
        ``duration_s``.
    """
    from evalcore.evaluators import CodeSample, evaluate_code_batch

    samples = []
    for i, rec in enumerate(records):
        f = items[rec["item_id"]]
        samples.append(CodeSample(id=f"{rec['item_id']}#{rec['epoch']}#{i}", prompt=f["prompt"],
                                  completion=rec["completion"].get("text", ""), test=f["test"],
                                  entry_point=f["entry_point"]))
    results = evaluate_code_batch(samples, workers=workers, timeout_s=timeout_s) if samples else []
    out = []
    for res in results:
        v = 1.0 if res.passed else 0.0
        out.append({"score": v, "strict": v, "flexible": v, "passed": bool(res.passed),
                    "result": res.result, "duration_s": float(res.duration_s)})
    return out


def score_record(record: dict[str, Any], item_fields: dict[str, Any] | None = None,
                 timeout_s: float = 10.0) -> dict[str, Any]:
    """Score one sample record from its completion text (no model is called).

    Args:
        record: A sample record.
        item_fields: The item's fields (humaneval needs prompt/test/entry_point; mmlu choices);
            None uses ``record["item"]``.
        timeout_s: Code execution timeout.

    Returns:
        The scores dict.
    """
    if record.get("error") or (record.get("completion") or {}).get("error"):
        return error_scores()
    dataset = record["dataset"]
    fields = item_fields if item_fields is not None else (record.get("item") or {})
    text = (record.get("completion") or {}).get("text", "")
    if dataset in ("gsm8k", "mmlu"):
        return score_exact(dataset, text, record.get("reference"), fields.get("choices"))
    if dataset == "humaneval":
        return score_code([record], {record["item_id"]: fields}, timeout_s=timeout_s, workers=1)[0]
    raise EvalcoreError(f"unknown dataset {dataset!r}", field="dataset")
