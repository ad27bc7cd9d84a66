"""evalcore.metrics: one metric a function, its formula in the docstring.

Retrieval (binary or graded relevance), classification, similarity, the agent performance
scores and learning metrics. Per-query retrieval metrics are averaged with
:func:`mean_over_queries`, which returns the per-query scores alongside the mean.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.metrics._classification import ConfusionCounts as ConfusionCounts
    from evalcore.metrics._classification import accuracy as accuracy
    from evalcore.metrics._classification import confusion_counts as confusion_counts
    from evalcore.metrics._classification import fpr as fpr
    from evalcore.metrics._classification import tnr as tnr
    from evalcore.metrics._classification import tpr as tpr
    from evalcore.metrics._learning import learning_curve as learning_curve
    from evalcore.metrics._learning import learning_curve_improvement as learning_curve_improvement
    from evalcore.metrics._learning import reuse_rate as reuse_rate
    from evalcore.metrics._performance import RESPONSE_TIME_TIERS as RESPONSE_TIME_TIERS
    from evalcore.metrics._performance import memory_score as memory_score
    from evalcore.metrics._performance import response_time_score as response_time_score
    from evalcore.metrics._performance import throughput_score as throughput_score
    from evalcore.metrics._retrieval import MetricResult as MetricResult
    from evalcore.metrics._retrieval import PrecisionRecallF1 as PrecisionRecallF1
    from evalcore.metrics._retrieval import dcg_at_k as dcg_at_k
    from evalcore.metrics._retrieval import hit_rate as hit_rate
    from evalcore.metrics._retrieval import mean_over_queries as mean_over_queries
    from evalcore.metrics._retrieval import mrr as mrr
    from evalcore.metrics._retrieval import ndcg_at_k as ndcg_at_k
    from evalcore.metrics._retrieval import precision_at_k as precision_at_k
    from evalcore.metrics._retrieval import precision_recall_f1 as precision_recall_f1
    from evalcore.metrics._retrieval import recall_at_k as recall_at_k
    from evalcore.metrics._similarity import cosine_similarity as cosine_similarity
    from evalcore.metrics._similarity import levenshtein_distance as levenshtein_distance
    from evalcore.metrics._similarity import levenshtein_similarity as levenshtein_similarity

_EXPORTS = {
    "evalcore.metrics._classification": (
        "ConfusionCounts",
        "accuracy",
        "confusion_counts",
        "fpr",
        "tnr",
        "tpr",
    ),
    "evalcore.metrics._learning": ("learning_curve", "learning_curve_improvement", "reuse_rate"),
    "evalcore.metrics._performance": (
        "RESPONSE_TIME_TIERS",
        "memory_score",
        "response_time_score",
        "throughput_score",
    ),
    "evalcore.metrics._retrieval": (
        "MetricResult",
        "PrecisionRecallF1",
        "dcg_at_k",
        "hit_rate",
        "mean_over_queries",
        "mrr",
        "ndcg_at_k",
        "precision_at_k",
        "precision_recall_f1",
        "recall_at_k",
    ),
    "evalcore.metrics._similarity": ("cosine_similarity", "levenshtein_distance", "levenshtein_similarity"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
