"""evalcore.stats: intervals, clustered standard errors, paired tests, corrections and power.

Every comparison evalcore reports is paired by item id and carries its interval:
:func:`compare` / :func:`compare_many` pick the right paired test, :func:`mean_ci` gives a
mean with its interval (Wilson for binary scores, clustered SE when items are clustered).
"""

from evalcore.stats._compare import ComparisonResult, align_scores, compare, compare_many
from evalcore.stats._intervals import (
    bootstrap_interval,
    clustered_se,
    clustered_wilson,
    mean_ci,
    wilson_interval,
)
from evalcore.stats._multiple import adjust_p_values, benjamini_hochberg, holm
from evalcore.stats._paired import (
    TestResult,
    clustered_difference,
    cohens_d_paired,
    mcnemar,
    mean_difference,
    paired_bootstrap,
    paired_t,
    permutation_test,
    wilcoxon,
)
from evalcore.stats._power import (
    min_detectable_difference,
    paired_power,
    paired_sd,
    sample_size_paired,
)

__all__: list[str] = [
    "ComparisonResult",
    "TestResult",
    "adjust_p_values",
    "align_scores",
    "benjamini_hochberg",
    "bootstrap_interval",
    "clustered_difference",
    "clustered_se",
    "clustered_wilson",
    "cohens_d_paired",
    "compare",
    "compare_many",
    "holm",
    "mcnemar",
    "mean_ci",
    "mean_difference",
    "min_detectable_difference",
    "paired_bootstrap",
    "paired_power",
    "paired_sd",
    "paired_t",
    "permutation_test",
    "sample_size_paired",
    "wilcoxon",
    "wilson_interval",
]
