"""evalcore.stats: intervals, clustered standard errors, paired tests (a wild cluster
bootstrap for few clusters), corrections and power.

Every comparison evalcore reports is paired by item id and carries its interval:
:func:`compare` / :func:`compare_many` pick the right paired test, :func:`mean_ci` gives a
mean with its interval (Wilson for binary scores, clustered SE when items are clustered).
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.stats._compare": ("ComparisonResult", "align_scores", "compare", "compare_many"),
    "evalcore.stats._intervals": ("bootstrap_interval", "clustered_se", "clustered_wilson", "mean_ci"),
    "evalcore.stats._wilson": ("wilson_interval",),  # plain Python: light commands print it
    "evalcore.stats._multiple": ("adjust_p_values", "benjamini_hochberg", "holm"),
    "evalcore.stats._paired": (
        "TestResult",
        "clustered_difference",
        "cohens_d_paired",
        "mcnemar",
        "mean_difference",
        "paired_bootstrap",
        "paired_t",
        "permutation_test",
        "wilcoxon",
    ),
    "evalcore.stats._power": (
        "min_detectable_difference",
        "min_detectable_difference_se",
        "paired_power",
        "paired_sd",
        "sample_size_paired",
    ),
    "evalcore.stats._wild": ("wild_cluster_bootstrap",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
