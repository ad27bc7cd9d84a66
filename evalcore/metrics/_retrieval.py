"""Retrieval metrics over a ranked list of document ids and labelled relevance.

Conventions (shared by every function here):

- ``retrieved`` is the ranked list, best first; ids must be unique.
- ``relevant`` is either a set (or other collection) of relevant ids — binary relevance,
  grade 1 — or a mapping id → grade (graded relevance). A document is relevant when its grade
  is > 0; grades ≤ 0 count as not relevant (gain 0). Unjudged documents are not relevant.
- ``k`` cuts the ranking to its first k entries; ``None`` means the whole list.
- ``zero_division`` answers a metric whose denominator is 0 (e.g. recall of a query with no
  relevant document): a number (default 0.0, or ``float("nan")`` to exclude such queries from
  a nan-aware mean) or ``"error"`` to raise :class:`~evalcore.errors.EvalcoreError`.

:func:`mean_over_queries` applies any of these per query and returns the mean together with the
per-query scores (paired tests need them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalcore._validate import ZeroDivision, check_zero_division, safe_ratio
from evalcore.errors import EvalcoreError

Relevance = Mapping[str, float] | Collection[str]


def _grades(relevant: Relevance) -> dict[Hashable, float]:
    """Relevance as id → grade (> 0 only)."""
    if isinstance(relevant, Mapping):
        out: dict[Hashable, float] = {}
        for doc, grade in relevant.items():
            try:
                g = float(grade)
            except (TypeError, ValueError):
                raise EvalcoreError(f"grade of {doc!r} is not a number: {grade!r}", field="relevant") from None
            if not math.isfinite(g):
                raise EvalcoreError(f"grade of {doc!r} is not finite: {grade!r}", field="relevant")
            if g > 0:
                out[doc] = g
        return out
    if isinstance(relevant, (str, bytes)):
        raise EvalcoreError(
            "expected a collection of relevant ids or a mapping id → grade, got a single string", field="relevant"
        )
    if isinstance(relevant, Collection):
        return {doc: 1.0 for doc in relevant}
    raise EvalcoreError(
        f"expected a set of ids or a mapping id → grade, got {type(relevant).__name__}", field="relevant"
    )


def _ranking(retrieved: Sequence[Hashable], k: int | None) -> list[Hashable]:
    if isinstance(retrieved, (str, bytes)):
        raise EvalcoreError("expected a ranked list of ids, got a single string", field="retrieved")
    ranked = list(retrieved)
    seen: set[Hashable] = set()
    for doc in ranked:
        if doc in seen:
            raise EvalcoreError(f"duplicated id {doc!r} in the ranking", field="retrieved")
        seen.add(doc)
    if k is None:
        return ranked
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise EvalcoreError(f"k must be a positive integer or None, got {k!r}", field="k")
    return ranked[: int(k)]


class PrecisionRecallF1(NamedTuple):
    """Precision, recall and F1 of one ranking (or one set of retrieved ids)."""

    precision: float
    recall: float
    f1: float


def precision_recall_f1(
    retrieved: Sequence[str],
    relevant: Relevance,
    *,
    k: int | None = None,
    zero_division: ZeroDivision = 0.0,
) -> PrecisionRecallF1:
    """Set-based precision, recall and F1 of the (top-k) retrieved ids.

    With R the retrieved set (first k) and Rel the relevant set, TP = |R ∩ Rel|,
    FP = |R \\ Rel|, FN = |Rel \\ R|:
    precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2TP / (2TP + FP + FN)
    (the harmonic mean of precision and recall). Each 0/0 answers ``zero_division``, as in
    scikit-learn's ``precision_recall_fscore_support``.

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids (set) or id → grade (grade > 0 is relevant).
        k: Cut-off; None uses every retrieved id.
        zero_division: Value for 0/0 (number or "error").

    Returns:
        ``PrecisionRecallF1(precision, recall, f1)``.

    Examples:
        >>> from evalcore.metrics import precision_recall_f1
        >>> p, r, f1 = precision_recall_f1(['d1', 'd2', 'd3'], {'d1', 'd4'})
        >>> round(p, 4), r, round(f1, 4)
        (0.3333, 0.5, 0.4)
    """
    check_zero_division(zero_division)
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    tp = sum(1 for d in ranked if d in rel)
    fp = len(ranked) - tp
    fn = len(rel) - tp
    return PrecisionRecallF1(
        safe_ratio(tp, tp + fp, zero_division, "precision"),
        safe_ratio(tp, tp + fn, zero_division, "recall"),
        safe_ratio(2 * tp, 2 * tp + fp + fn, zero_division, "F1"),
    )


def precision_at_k(retrieved: Sequence[str], relevant: Relevance, k: int | None = 10) -> float:
    """Precision at k: P@k = |{relevant ids among the first k}| / k.

    The denominator is k even when fewer than k ids were retrieved (missing ranks count as
    non-relevant, as in trec_eval's P_k). With ``k=None`` the cut-off is the whole list
    (k = its length; an empty list scores 0).

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off (≥ 1), or None for the whole list.

    Returns:
        P@k in [0, 1].

    Examples:
        >>> from evalcore.metrics import precision_at_k
        >>> precision_at_k(['d1', 'd2', 'd3', 'd4'], {'d1', 'd3'}, k=4)
        0.5
    """
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    denominator = len(ranked) if k is None else int(k)
    return sum(1 for d in ranked if d in rel) / denominator if denominator else 0.0


def recall_at_k(
    retrieved: Sequence[str],
    relevant: Relevance,
    k: int | None = 10,
    *,
    zero_division: ZeroDivision = 0.0,
) -> float:
    """Recall at k: R@k = |{relevant ids among the first k}| / |relevant ids|.

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off (≥ 1), or None for the whole list.
        zero_division: Value when there is no relevant id (number or "error").

    Returns:
        R@k in [0, 1].

    Examples:
        >>> from evalcore.metrics import recall_at_k
        >>> recall_at_k(['d1', 'd2', 'd3'], {'d1', 'd4'}, k=3)
        0.5
    """
    check_zero_division(zero_division)
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    return safe_ratio(sum(1 for d in ranked if d in rel), len(rel), zero_division, "recall@k")


def hit_rate(retrieved: Sequence[str], relevant: Relevance, k: int | None = None) -> float:
    """Hit rate (success) at k: 1 if any relevant id is among the first k, else 0.

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off; None uses the whole ranking.

    Returns:
        1.0 or 0.0 (0.0 also when nothing is relevant).

    Examples:
        >>> from evalcore.metrics import hit_rate
        >>> hit_rate(['d1', 'd2', 'd3'], {'d3'}, k=2)
        0.0
        >>> hit_rate(['d1', 'd2', 'd3'], {'d3'})
        1.0
    """
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    return 1.0 if any(d in rel for d in ranked) else 0.0


def mrr(retrieved: Sequence[str], relevant: Relevance, k: int | None = None) -> float:
    """Reciprocal rank: RR = 1 / rank of the first relevant id (ranks from 1); 0 if none.

    Averaged over queries with :func:`mean_over_queries` this is the mean reciprocal rank.

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off; None uses the whole ranking.

    Returns:
        RR in [0, 1].

    Examples:
        >>> from evalcore.metrics import mrr
        >>> mrr(['d1', 'd2', 'd3'], {'d2', 'd3'})
        0.5
    """
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    for rank, doc in enumerate(ranked, start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    if gain == "linear":
        return grades
    if gain == "exponential":
        return np.exp2(grades) - 1.0
    raise EvalcoreError(f"unknown gain {gain!r}; use 'linear' or 'exponential'", field="gain")


def dcg_at_k(
    retrieved: Sequence[str],
    relevant: Relevance,
    k: int | None = 10,
    *,
    gain: Literal["linear", "exponential"] = "linear",
) -> float:
    """Discounted cumulative gain: DCG@k = Σ_{i=1}^{min(k, |ranking|)} g(rel_i) / log2(i + 1).

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off (≥ 1), or None for the whole list.
        gain: ``"linear"`` g(r) = r (scikit-learn's ``dcg_score``) or ``"exponential"``
            g(r) = 2^r − 1 (Burges et al.); identical for binary relevance.

    Returns:
        DCG@k (≥ 0).

    Examples:
        >>> from evalcore.metrics import dcg_at_k
        >>> dcg_at_k(['d1', 'd2', 'd3'], {'d1': 1, 'd3': 2}, k=3)  # 1/log2(2) + 2/log2(4)
        2.0
    """
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    grades = np.array([rel.get(d, 0.0) for d in ranked], dtype=np.float64)
    discounts = np.log2(np.arange(2, grades.size + 2, dtype=np.float64))
    return float(np.sum(_gain(grades, gain) / discounts))


def ndcg_at_k(
    retrieved: Sequence[str],
    relevant: Relevance,
    k: int | None = 10,
    *,
    gain: Literal["linear", "exponential"] = "linear",
    zero_division: ZeroDivision = 0.0,
) -> float:
    """Normalized DCG: NDCG@k = DCG@k / IDCG@k.

    DCG@k = Σ_{i=1}^{min(k, |ranking|)} g(rel_i) / log2(i + 1), the discount applied at every
    position (including the first). IDCG@k is the DCG@k of the ideal ranking of **all judged
    relevant ids** (grades sorted in decreasing order), not only of those retrieved, so a
    ranking that misses relevant documents scores below 1. Gains are linear by default
    (g(r) = r), which matches scikit-learn's ``ndcg_score``; ``gain="exponential"`` uses
    2^r − 1.

    Args:
        retrieved: Ranked ids, best first.
        relevant: Relevant ids or id → grade.
        k: Cut-off (≥ 1), or None for the whole list (IDCG over every relevant id).
        gain: ``"linear"`` or ``"exponential"``.
        zero_division: Value when nothing is relevant (IDCG = 0): number or "error".

    Returns:
        NDCG@k in [0, 1].

    Examples:
        >>> from evalcore.metrics import ndcg_at_k
        >>> round(ndcg_at_k(['d1', 'd2', 'd3'], {'d1': 1, 'd3': 2}, k=3), 4)
        0.7602
    """
    check_zero_division(zero_division)
    ranked = _ranking(retrieved, k)
    rel = _grades(relevant)
    grades = np.array([rel.get(d, 0.0) for d in ranked], dtype=np.float64)
    dcg = float(np.sum(_gain(grades, gain) / np.log2(np.arange(2, grades.size + 2))))
    ideal = np.sort(np.fromiter(rel.values(), dtype=np.float64, count=len(rel)))[::-1]
    if k is not None:
        ideal = ideal[: int(k)]
    idcg = float(np.sum(_gain(ideal, gain) / np.log2(np.arange(2, ideal.size + 2))))
    return safe_ratio(dcg, idcg, zero_division, "NDCG")


@dataclass(frozen=True)
class MetricResult:
    """A metric's mean over queries (or items) with the per-query scores behind it.

    Unpacks as ``mean, per_item = result``.

    Attributes:
        name: The metric's name.
        mean: Mean of the per-item scores (NaN scores are skipped).
        per_item: Query (item) id → score, in the order of the judgments.
    """

    name: str
    mean: float
    per_item: dict[Hashable, float]

    def __iter__(self) -> Any:
        return iter((self.mean, self.per_item))

    @property
    def values(self) -> np.ndarray:
        """Per-item scores as an array (same order as ``per_item``)."""
        return np.fromiter(self.per_item.values(), dtype=np.float64, count=len(self.per_item))

    def series(self) -> pd.Series:
        """Per-item scores as a pandas Series indexed by id (ready for ``stats.compare``)."""
        return pd.Series(self.per_item, name=self.name, dtype=np.float64)


def mean_over_queries(
    metric: Callable[..., float],
    run: Mapping[Hashable, Sequence[str]],
    qrels: Mapping[Hashable, Relevance],
    **kwargs: Any,
) -> MetricResult:
    """Apply a per-query metric to every judged query; return the mean and per-query scores.

    mean = (1/|Q|) Σ_{q ∈ Q} metric(run[q], qrels[q]) over the judged queries Q (NaN scores,
    e.g. from ``zero_division=float("nan")``, are left out of the mean). A judged query missing
    from ``run`` is scored on an empty ranking; queries in ``run`` without judgments are
    ignored (as trec_eval does).

    Args:
        metric: A per-query function such as :func:`ndcg_at_k`; if it returns a tuple (like
            :func:`precision_recall_f1`) pass ``field`` to pick an element by name.
        run: Query id → ranked ids.
        qrels: Query id → relevant ids or id → grade.
        **kwargs: Passed to ``metric`` (``k``, ``zero_division`` …); ``field`` selects the
            element of a tuple result.

    Returns:
        A :class:`MetricResult`.

    Examples:
        >>> from evalcore.metrics import mean_over_queries, mrr
        >>> run = {'q1': ['d1', 'd2'], 'q2': ['d3', 'd4']}
        >>> qrels = {'q1': {'d2'}, 'q2': {'d3'}}
        >>> mean, per_query = mean_over_queries(mrr, run, qrels)
        >>> mean, per_query
        (0.75, {'q1': 0.5, 'q2': 1.0})
    """
    if not isinstance(qrels, Mapping) or not qrels:
        raise EvalcoreError("no judged queries: qrels must be a non-empty mapping", field="qrels")
    if not isinstance(run, Mapping):
        raise EvalcoreError("run must map query id → ranked ids", field="run")
    field_name = kwargs.pop("field", None)
    per: dict[Hashable, float] = {}
    for qid, rel in qrels.items():
        try:
            value: Any = metric(run.get(qid, []), rel, **kwargs)
        except EvalcoreError as exc:
            raise EvalcoreError(f"query {qid!r}: {exc.reason}", field=exc.field) from None
        if field_name is not None:
            value = getattr(value, field_name)
        per[qid] = float(value)
    vals = np.fromiter(per.values(), dtype=np.float64, count=len(per))
    mean = float(np.nanmean(vals)) if np.any(~np.isnan(vals)) else float("nan")
    name = getattr(metric, "__name__", "metric") + (f".{field_name}" if field_name else "")
    return MetricResult(name=name, mean=mean, per_item=per)
