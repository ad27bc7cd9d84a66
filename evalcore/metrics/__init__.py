"""evalcore.metrics: one metric a function, its formula in the docstring.

Retrieval (binary or graded relevance), classification, similarity, the agent performance
scores and learning metrics. Per-query retrieval metrics are averaged with
:func:`mean_over_queries`, which returns the per-query scores alongside the mean.
"""

from evalcore._lazy import lazy_exports

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
