"""The two objective scorers every benchmark is built from: exact match and code execution.

A benchmark module picks one and adds what is its own (the answer kind, the few-shot split,
per-subject summaries). No LLM judge scores a benchmark.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

ERROR_SCORES: dict[str, Any] = {"score": None}
"""Scores of a sample whose call failed: no score (an error, never a wrong answer)."""


def error_scores() -> dict[str, Any]:
    """A fresh copy of :data:`ERROR_SCORES`."""
    return dict(ERROR_SCORES)


def exact_scores(kind: str, text: str, reference: Any, choices: Sequence[str] | None) -> dict[str, Any]:
    """Exact-match scores of one reply, ``score = flexible``.

    Args:
        kind: The answer kind of :class:`~evalcore.evaluators.ExactMatchEvaluator`
            (``"number"`` or ``"letter"``).
        text: The reply.
        reference: Ground truth.
        choices: Option texts (letter answers: option-text matching).

    Returns:
        ``ExactMatchEvaluator.score`` keys plus ``score``.
    """
    from evalcore.evaluators import ExactMatchEvaluator

    # `kind` may come from a user's YAML: the evaluator checks it at run time and names the field
    scores = dict(ExactMatchEvaluator(cast(Any, kind)).score(text, reference, choices=choices))
    scores["score"] = float(scores["flexible"])
    return scores


def parse_failure_extras(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``parse_failure_rate`` (flexible) and ``parse_failure_rate_strict`` of scored records."""
    if not records:
        return {}
    import numpy as np

    return {
        "parse_failure_rate": float(np.mean([bool(r["scores"].get("parse_failure_flexible")) for r in records])),
        "parse_failure_rate_strict": float(np.mean([bool(r["scores"].get("parse_failure_strict")) for r in records])),
    }


def by_subject(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"by_subject": {subject: {"mean", "n"}}}`` of the flexible scores (metadata subject)."""
    if not records:
        return {}
    import numpy as np

    by: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by[str((r.get("metadata") or {}).get("subject", "?"))].append(float(r["scores"].get("flexible", 0.0)))
    return {"by_subject": {s: {"mean": float(np.mean(v)), "n": len(v)} for s, v in sorted(by.items())}}


def code_scores(
    records: Sequence[Mapping[str, Any]],
    fields_of: Callable[[Mapping[str, Any]], Mapping[str, Any]],
    timeout_s: float = 10.0,
    workers: int | None = None,
) -> list[dict[str, Any]]:
    """Code-execution scores of samples (run in the sandbox, in parallel).

    ``score = 1.0`` when the completed function passes the item's tests, else ``0.0``.

    Args:
        records: Sample records (``item_id``, ``epoch``, ``completion.text``).
        fields_of: A record -> its item's ``prompt``, ``test`` and ``entry_point``.
        timeout_s: Seconds per sample.
        workers: Parallel workers (None: the sandbox's default).

    Returns:
        One scores dict per record: ``score``, ``strict``, ``flexible``, ``passed``, ``result``,
        ``duration_s``.
    """
    from evalcore.evaluators import CodeSample, evaluate_code_batch

    samples = []
    for i, rec in enumerate(records):
        f = fields_of(rec)
        samples.append(
            CodeSample(
                id=f"{rec['item_id']}#{rec['epoch']}#{i}",
                prompt=f["prompt"],
                completion=(rec.get("completion") or {}).get("text", ""),
                test=f["test"],
                entry_point=f["entry_point"],
            )
        )
    results = evaluate_code_batch(samples, workers=workers, timeout_s=timeout_s) if samples else []
    out = []
    for res in results:
        v = 1.0 if res.passed else 0.0
        out.append(
            {
                "score": v,
                "strict": v,
                "flexible": v,
                "passed": bool(res.passed),
                "result": res.result,
                "duration_s": float(res.duration_s),
            }
        )
    return out


def pass_at_k_table(
    records: Sequence[Mapping[str, Any]], ks: Sequence[int] = (1, 2, 5, 10, 20, 50, 100)
) -> dict[str, float]:
    """Mean unbiased pass@k over tasks, for every k in ``ks`` up to the fewest samples of a task.

    ``pass@k = mean over tasks of 1 - C(n - c, k) / C(n, k)`` (Chen et al., 2021), with n
    samples and c passing samples of the task (``scores["passed"]``; a sample without it
    failed), tasks in order of first appearance. The one pass@k table: ``results.json`` and
    the benchmark views (:func:`evalcore.reporting.pass_at_k_frame`) both come from it
    (re-exported as :func:`evalcore.runs.pass_at_k_table`).

    Args:
        records: Scored code-execution sample records (errors excluded).
        ks: The k values; those above the fewest samples of a task are left out.

    Returns:
        ``{"pass@1": ..., "pass@5": ...}`` in the order of ``ks``.
    """
    import numpy as np

    from evalcore.evaluators import pass_at_k

    per_task: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        per_task[r["item_id"]].append(bool(r["scores"].get("passed")))
    if not per_task:
        return {}
    n_min = min(len(v) for v in per_task.values())
    out = {}
    for k in map(int, ks):
        if k <= n_min:
            out[f"pass@{k}"] = float(np.mean([pass_at_k(len(v), sum(v), k) for v in per_task.values()]))
    return out


class ExactMatchScoring:
    """Exact-match scoring of a benchmark whose answers are numbers or letters.

    Subclasses set :attr:`answer_kind` and may override :meth:`summary_extras`.
    """

    scorer = "exact_match"
    answer_kind = "number"

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Scores of one reply (both extraction modes; ``score`` is the flexible one)."""
        return exact_scores(self.answer_kind, text, reference, fields.get("choices"))

    def score_records(
        self, records: Sequence[dict[str, Any]], *, timeout_s: float = 10.0, workers: int | None = None
    ) -> list[dict[str, Any]]:
        """Scores of recorded samples from their completion text."""
        return [
            self.score((r.get("completion") or {}).get("text", ""), r.get("reference"), r.get("item") or {})
            for r in records
        ]

    def answers_equal(self, answer: Any, reference: Any) -> bool:
        """Numbers compare numerically (strings equal when either is no number); letters
        ignore case."""
        if answer is None:
            return False
        a, r = str(answer).strip(), str(reference).strip()
        if self.answer_kind == "letter":
            return a.upper() == r.upper()
        from evalcore.datasets import numbers_equal, parse_number

        va, vr = parse_number(a), parse_number(r)
        if va is None or vr is None:
            return a == r
        return bool(numbers_equal(va, vr))

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The parse-failure rates."""
        return parse_failure_extras(records)


class CodeExecutionScoring:
    """Code-execution scoring: the reply completes ``prompt``; ``test`` checks ``entry_point``."""

    scorer = "code_execution"
    supports_likelihood = False
    code_fields = ("prompt", "test", "entry_point")

    def _code_fields(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        item = record.get("item") or {}
        p, t, e = self.code_fields
        return {"prompt": item.get(p, ""), "test": item.get(t, ""), "entry_point": item.get(e, "")}

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Run one reply against the item's tests."""
        record = {"item_id": "sample", "epoch": 0, "completion": {"text": text}, "item": dict(fields)}
        return self.score_records([record], workers=1)[0]

    def score_records(
        self, records: Sequence[dict[str, Any]], *, timeout_s: float = 10.0, workers: int | None = None
    ) -> list[dict[str, Any]]:
        """Run every recorded reply in the sandbox."""
        return code_scores(records, self._code_fields, timeout_s=timeout_s, workers=workers)

    def answers_equal(self, answer: Any, reference: Any) -> bool:
        """Code answers are not voted on: equal only when identical text."""
        return answer is not None and str(answer) == str(reference)

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The pass@k table (:func:`pass_at_k_table`)."""
        return {"pass_at_k": pass_at_k_table(records)}
