"""evalcore.metrics: one metric a function, its formula in the docstring.

Retrieval (binary or graded relevance), classification, similarity, the agent performance
scores and learning metrics. Per-query retrieval metrics are averaged with
:func:`mean_over_queries`, which returns the per-query scores alongside the mean.
"""

from evalcore.metrics._classification import (
    ConfusionCounts,
    accuracy,
    confusion_counts,
    fpr,
    tnr,
    tpr,
)
from evalcore.metrics._learning import learning_curve, learning_curve_improvement, reuse_rate
from evalcore.metrics._performance import (
    RESPONSE_TIME_TIERS,
    memory_score,
    response_time_score,
    throughput_score,
)
from evalcore.metrics._retrieval import (
    MetricResult,
    PrecisionRecallF1,
    dcg_at_k,
    hit_rate,
    mean_over_queries,
    mrr,
    ndcg_at_k,
    precision_at_k,
    precision_recall_f1,
    recall_at_k,
)
from evalcore.metrics._similarity import (
    cosine_similarity,
    levenshtein_distance,
    levenshtein_similarity,
)

__all__: list[str] = [
    "RESPONSE_TIME_TIERS",
    "ConfusionCounts",
    "MetricResult",
    "PrecisionRecallF1",
    "accuracy",
    "confusion_counts",
    "cosine_similarity",
    "dcg_at_k",
    "fpr",
    "hit_rate",
    "learning_curve",
    "learning_curve_improvement",
    "levenshtein_distance",
    "levenshtein_similarity",
    "mean_over_queries",
    "memory_score",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "precision_recall_f1",
    "recall_at_k",
    "response_time_score",
    "reuse_rate",
    "throughput_score",
    "tnr",
    "tpr",
]
