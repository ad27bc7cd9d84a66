"""evalcore.stats: intervals, clustered standard errors, paired tests (a wild cluster
bootstrap for few clusters), corrections and power.

Every comparison evalcore reports is paired by item id and carries its interval:
:func:`compare` / :func:`compare_many` pick the right paired test, :func:`mean_ci` gives a
mean with its interval (Wilson for binary scores, clustered SE when items are clustered).
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.stats._compare import ComparisonResult as ComparisonResult
    from evalcore.stats._compare import align_scores as align_scores
    from evalcore.stats._compare import compare as compare
    from evalcore.stats._compare import compare_many as compare_many
    from evalcore.stats._intervals import bootstrap_interval as bootstrap_interval
    from evalcore.stats._intervals import clustered_se as clustered_se
    from evalcore.stats._intervals import clustered_wilson as clustered_wilson
    from evalcore.stats._intervals import mean_ci as mean_ci
    from evalcore.stats._multiple import adjust_p_values as adjust_p_values
    from evalcore.stats._multiple import benjamini_hochberg as benjamini_hochberg
    from evalcore.stats._multiple import holm as holm
    from evalcore.stats._paired import TestResult as TestResult
    from evalcore.stats._paired import clustered_difference as clustered_difference
    from evalcore.stats._paired import cohens_d_paired as cohens_d_paired
    from evalcore.stats._paired import mcnemar as mcnemar
    from evalcore.stats._paired import mean_difference as mean_difference
    from evalcore.stats._paired import paired_bootstrap as paired_bootstrap
    from evalcore.stats._paired import paired_t as paired_t
    from evalcore.stats._paired import permutation_test as permutation_test
    from evalcore.stats._paired import wilcoxon as wilcoxon
    from evalcore.stats._power import min_detectable_difference as min_detectable_difference
    from evalcore.stats._power import min_detectable_difference_se as min_detectable_difference_se
    from evalcore.stats._power import paired_power as paired_power
    from evalcore.stats._power import paired_sd as paired_sd
    from evalcore.stats._power import sample_size_paired as sample_size_paired
    from evalcore.stats._wild import wild_cluster_bootstrap as wild_cluster_bootstrap
    from evalcore.stats._wilson import wilson_interval as wilson_interval

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
