"""Paired comparison of two systems' per-item scores keyed by item id."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd

from evalcore._io import to_json_native
from evalcore._validate import check_positive_int, check_probability, is_binary
from evalcore.errors import EvalcoreError
from evalcore.stats._multiple import adjust_p_values
from evalcore.stats._paired import (
    TestResult,
    clustered_difference,
    cohens_d_paired,
    mcnemar,
    paired_bootstrap,
    paired_t,
    permutation_test,
    wilcoxon,
)
from evalcore.stats._power import min_detectable_difference, min_detectable_difference_se
from evalcore.stats._wild import WEBB_MAX_CLUSTERS, WildWeights, wild_cluster_bootstrap

Scores: TypeAlias = Mapping[Hashable, float] | pd.Series
TestName = Literal[
    "auto", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation", "clustered", "wild_cluster"
]
Align = Literal["strict", "intersection"]

_TESTS = ("auto", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation", "clustered", "wild_cluster")
#: ``test="auto"`` with clusters uses the wild cluster bootstrap up to this many clusters, the
#: CR1 clustered t-test above (MacKinnon, Nielsen & Webb 2023: CR1 + t over-rejects with few
#: clusters; Webb's weights are advised up to about 12).
WILD_MAX_CLUSTERS = WEBB_MAX_CLUSTERS


@dataclass(frozen=True)
class ComparisonResult:
    """Tidy record of a paired comparison of systems A and B.

    Attributes:
        name_a: Name of system A.
        name_b: Name of system B.
        mean_a: Mean score of A over the compared items.
        mean_b: Mean score of B.
        difference: mean_a − mean_b (= mean of the per-item differences).
        ci_low: Lower bound of the interval of the difference.
        ci_high: Upper bound of the interval of the difference.
        ci_method: How the interval was made ("paired_t", "paired_bootstrap", "clustered" or
            "wild_cluster").
        p_value: p-value of ``test``.
        test: Test used ("mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation",
            "clustered", "wild_cluster").
        n: Number of paired items.
        n_dropped: Items present in only one series (dropped with ``align="intersection"``).
        correlation: Pearson correlation of A's and B's per-item scores (NaN if one is constant).
        effect_size: Cohen's d for paired data, mean(d)/sd(d).
        alpha: Significance level.
        confidence: Confidence level of the interval.
        significant: p (or p_adjusted when set) ≤ alpha.
        p_adjusted: Multiplicity-adjusted p-value, None unless a correction was applied.
        correction: The correction applied ("holm", "bh"), or None.
        extra: Secondary results: ``bootstrap_p``, ``bootstrap_ci_low``, ``bootstrap_ci_high``;
            ``<test>_p`` for each other test run (``paired_t_p``, ``wilcoxon_p``, ``mcnemar_p``,
            ``clustered_p``); ``n_10``, ``n_01``, ``mcnemar_exact`` (binary scores);
            ``clustered_se`` (CR1), ``clustered_df`` (G − 1), ``n_clusters`` (with clusters);
            ``wild_weights``, ``wild_draws``, ``wild_enumerated``, ``wild_p_floor`` (the
            smallest p-value the wild bootstrap can give with these clusters) and
            ``wild_cluster_p`` when it was not the test chosen (up to 12 clusters);
            ``ci_capped`` (an end of the wild bootstrap's interval is the scores' range: no
            difference up to it is rejected); ``ci_collapsed`` (the interval is a point: the
            per-item differences carry no variation to estimate uncertainty from);
            ``score_range`` (max − min of both systems' scores);
            ``mdd_80``: the minimum detectable difference at 80 % power and level ``alpha`` for
            this n: for the clustered test from its own variance and degrees of freedom
            (:func:`~evalcore.stats.min_detectable_difference_se`), otherwise from the observed
            standard deviations and correlation
            (:func:`~evalcore.stats.min_detectable_difference`); None when the difference does
            not vary; never above ``score_range``, and ``mdd_capped`` is True when it is the range
            (no difference the scores allow is detected with 80 % power, always the case when the
            wild bootstrap's ``wild_p_floor`` exceeds alpha); ``mdd_basis`` says which
            (``"clustered"`` or ``"paired"``).
    """

    name_a: str
    name_b: str
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    ci_method: str
    p_value: float
    test: str
    n: int
    n_dropped: int
    correlation: float
    effect_size: float
    alpha: float
    confidence: float
    significant: bool
    p_adjusted: float | None = None
    correction: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def with_adjusted(self, p_adjusted: float, correction: str) -> ComparisonResult:
        """A copy carrying an adjusted p-value, with ``significant`` re-decided on it."""
        return dataclasses.replace(
            self,
            p_adjusted=float(p_adjusted),
            correction=correction,
            significant=bool(p_adjusted <= self.alpha),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of native Python values; ``extra`` is flattened in, NaN/inf become None."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return to_json_native({**values, **self.extra})


def _to_series(scores: Any, field_name: str) -> pd.Series:
    if isinstance(scores, pd.Series):
        s = scores
    elif isinstance(scores, Mapping):
        s = pd.Series(list(scores.values()), index=pd.Index(list(scores.keys()), dtype=object), dtype=object)
    else:
        raise EvalcoreError(
            f"expected per-item scores keyed by item id (a dict or pandas Series), got {type(scores).__name__}",
            field=field_name,
        )
    if len(s) == 0:
        raise EvalcoreError("no scores: at least one item is needed", field=field_name)
    dup = s.index[s.index.duplicated()]
    if len(dup):
        shown = ", ".join(repr(x) for x in list(dict.fromkeys(dup))[:5])
        raise EvalcoreError(f"duplicated item ids: {shown}", field=field_name)
    values = []
    for item_id, value in s.items():
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise EvalcoreError(f"item {item_id!r}: score {value!r} is not a number", field=field_name) from None
        if not math.isfinite(v):
            raise EvalcoreError(f"item {item_id!r}: score {value!r} is not finite", field=field_name)
        values.append(v)
    return pd.Series(values, index=pd.Index(list(s.index), dtype=object), dtype=float)


def align_scores(
    a: Scores, b: Scores, *, align: Align = "strict", name_a: str = "a", name_b: str = "b"
) -> tuple[np.ndarray, np.ndarray, list[Hashable], int]:
    """Align two per-item score series by item id.

    Args:
        a: Scores of A keyed by item id (dict or Series with unique index).
        b: Scores of B keyed by item id.
        align: "strict" refuses different id sets; "intersection" keeps the common ids.
        name_a: Name used in error messages for ``a``.
        name_b: Name used in error messages for ``b``.

    Returns:
        ``(values_a, values_b, ids, n_dropped)`` with ids sorted (by their string form), so the
        result does not depend on the order of the input.

    Raises:
        EvalcoreError: duplicated ids, non-numeric or non-finite scores, mismatched ids under
            "strict", or no common ids.

    Examples:
        >>> from evalcore.stats import align_scores
        >>> a, b, ids, dropped = align_scores({'q1': 1.0, 'q2': 0.0}, {'q2': 0.0, 'q1': 0.0})
        >>> a.tolist(), b.tolist(), ids, dropped
        ([1.0, 0.0], [0.0, 0.0], ['q1', 'q2'], 0)
    """
    if align not in ("strict", "intersection"):
        raise EvalcoreError(f"unknown align {align!r}; use 'strict' or 'intersection'", field="align")
    sa = _to_series(a, name_a)
    sb = _to_series(b, name_b)
    ids_a, ids_b = set(sa.index), set(sb.index)
    common = ids_a & ids_b
    n_dropped = len(ids_a | ids_b) - len(common)
    if n_dropped and align == "strict":
        only_a = sorted(ids_a - ids_b, key=str)[:5]
        only_b = sorted(ids_b - ids_a, key=str)[:5]
        raise EvalcoreError(
            f"the two series cover different items: {len(ids_a - ids_b)} only in {name_a!r} "
            f"(e.g. {only_a}), {len(ids_b - ids_a)} only in {name_b!r} (e.g. {only_b}); "
            "pass align='intersection' to compare the shared items",
            field="align",
        )
    if not common:
        raise EvalcoreError(f"{name_a!r} and {name_b!r} share no item ids", field="align")
    ids = sorted(common, key=lambda k: (str(k), type(k).__name__))
    da = dict(zip(sa.index, sa.to_numpy()))
    db = dict(zip(sb.index, sb.to_numpy()))
    xa = np.array([da[i] for i in ids], dtype=np.float64)
    xb = np.array([db[i] for i in ids], dtype=np.float64)
    return xa, xb, ids, n_dropped


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _mdd(x: np.ndarray, y: np.ndarray, alpha: float, score_range: float) -> float | None:
    sd_a, sd_b = float(x.std(ddof=1)), float(y.std(ddof=1))
    rho = _correlation(x, y)
    if float((x - y).std(ddof=1)) == 0.0:
        return None
    rho = 0.0 if not math.isfinite(rho) else max(-1.0, min(1.0, rho))
    return min_detectable_difference(x.size, sd_a, sd_b, rho, alpha, 0.8, max_difference=score_range)


def compare(
    a: Scores,
    b: Scores,
    *,
    name_a: str = "a",
    name_b: str = "b",
    alpha: float = 0.05,
    confidence: float | None = None,
    test: TestName = "auto",
    align: Align = "strict",
    clusters: Mapping[Hashable, Hashable] | pd.Series | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    wild_weights: WildWeights = "auto",
) -> ComparisonResult:
    """Paired comparison of two systems' per-item scores, aligned by item id.

    The test (``test="auto"``):

    - binary (0/1) scores: McNemar (McNemar 1947), with the paired-bootstrap (percentile;
      Efron 1979) interval of the difference;
    - continuous scores: the paired t-test (Student 1908) with its t interval; the Wilcoxon
      signed-rank test (Wilcoxon 1945) and the paired bootstrap (BCa; Efron 1987) are reported
      in ``extra``;
    - with ``clusters`` and at most :data:`WILD_MAX_CLUSTERS` (12) clusters: the wild cluster
      bootstrap (:func:`evalcore.stats.wild_cluster_bootstrap`: WCR, null imposed, Webb or
      Rademacher weights, every weight vector enumerated when they fit in ``n_resamples``;
      Roodman et al. 2019) and its interval by test inversion; the CR1 t-test's p-value is in
      ``extra["clustered_p"]``;
    - with more clusters: the clustered paired t-test (:func:`clustered_difference`: CR1
      standard error, t with G − 1 degrees of freedom) and its interval;
    - with clusters the unclustered test's p-value is reported in ``extra`` and ``mdd_80`` uses
      the clustered variance.

    The minimum detectable difference is never above the scores' range (1 for 0/1 scores):
    when the power formula gives more, ``mdd_80`` is the range and ``mdd_capped`` is True (no
    difference the scores allow is detected with 80 % power).

    ``difference`` = mean_a − mean_b; effect size = Cohen's d_z = mean(d)/sd(d) (Cohen 1988).
    The full references are in :mod:`evalcore.stats._paired`.

    Args:
        a: Scores of system A keyed by item id (dict or pandas Series with unique index).
        b: Scores of system B keyed by item id.
        name_a: Name of A in the record and in error messages.
        name_b: Name of B.
        alpha: Significance level.
        confidence: Confidence level of the interval (default 1 − alpha).
        test: "auto" or a test name to force it ("mcnemar", "paired_t", "wilcoxon",
            "paired_bootstrap", "permutation", "clustered", "wild_cluster").
        align: "strict" (default) refuses different id sets; "intersection" keeps the shared
            ids and reports how many were dropped in ``n_dropped``.
        clusters: Item id → cluster label (e.g. MMLU subject); needed by "clustered".
        n_resamples: Bootstrap / permutation resamples.
        seed: Seed for the resampling (results are deterministic).
        wild_weights: Weights of the wild cluster bootstrap: "auto" (Webb up to 12 clusters,
            Rademacher above), "webb" or "rademacher".

    Returns:
        A :class:`ComparisonResult`.

    Raises:
        EvalcoreError: duplicated or mismatched ids, fewer than 2 shared items, non-numeric
            scores, McNemar forced on non-binary scores, an item without a cluster label,
            unknown ``test``.

    Examples:
        >>> from evalcore.stats import compare
        >>> new = {'q1': 1, 'q2': 1, 'q3': 0, 'q4': 1}
        >>> old = {'q1': 0, 'q2': 1, 'q3': 0, 'q4': 0}
        >>> r = compare(new, old, name_a='new', name_b='old')
        >>> r.test, r.mean_a, r.mean_b, r.difference, r.p_value, r.significant
        ('mcnemar', 0.75, 0.25, 0.5, 0.5, False)
        >>> r.ci_method, r.ci_low, r.ci_high
        ('paired_bootstrap', 0.0, 1.0)
    """
    alpha = check_probability(alpha, "alpha")
    confidence = 1.0 - alpha if confidence is None else check_probability(confidence, "confidence")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if test not in _TESTS:
        raise EvalcoreError(f"unknown test {test!r}; use one of {', '.join(_TESTS)}", field="test")
    x, y, ids, n_dropped = align_scores(a, b, align=align, name_a=name_a, name_b=name_b)
    if x.size < 2:
        raise EvalcoreError(f"a paired comparison needs at least 2 shared items, got {x.size}", field="align")
    labels = _checked_labels(clusters, ids, test)
    binary = is_binary(x) and is_binary(y)
    chosen = _chosen_test(test, binary, labels)
    both = np.concatenate([x, y])
    score_range = float(both.max() - both.min())
    results = _run_tests(
        x,
        y,
        labels,
        chosen=chosen,
        binary=binary,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        wild_weights=wild_weights,
        score_range=score_range,
    )
    res = results[chosen]
    interval = _interval_of(results, chosen)
    extra = _extra(results, chosen, labels is not None, score_range)
    extra.update(_mdd_extra(x, y, results, chosen, alpha, score_range, extra))
    if interval.test == "wild_cluster":
        wd = interval.details or {}
        extra["ci_capped"] = bool(wd["ci_capped_low"] or wd["ci_capped_high"])
    extra["ci_collapsed"] = bool(float(interval.ci_high) - float(interval.ci_low) <= 1e-9 * max(1.0, score_range))
    boot = results["paired_bootstrap"]
    extra["bootstrap_p"] = boot.p_value
    extra["bootstrap_ci_low"] = boot.ci_low
    extra["bootstrap_ci_high"] = boot.ci_high
    return ComparisonResult(
        name_a=str(name_a),
        name_b=str(name_b),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        difference=float((x - y).mean()),
        ci_low=float(interval.ci_low),
        ci_high=float(interval.ci_high),
        ci_method=interval.test,
        p_value=float(res.p_value),
        test=chosen,
        n=int(x.size),
        n_dropped=int(n_dropped),
        correlation=_correlation(x, y),
        effect_size=cohens_d_paired(x, y),
        alpha=alpha,
        confidence=confidence,
        significant=bool(res.p_value <= alpha),
        extra=extra,
    )


def _checked_labels(clusters: Any, ids: list[Hashable], test: str) -> list[Hashable] | None:
    """The items' cluster labels (None without clusters); a clustered test without them refused."""
    labels = _cluster_labels(clusters, ids) if clusters is not None else None
    if test in ("clustered", "wild_cluster") and labels is None:
        raise EvalcoreError(f"test {test!r} needs cluster labels", field="clusters")
    if labels is not None and len(set(labels)) < 2:
        raise EvalcoreError(
            f"the compared items all lie in one cluster ({labels[0]!r}): a clustered comparison needs "
            "at least 2 clusters",
            field="clusters",
        )
    return labels


def _chosen_test(test: str, binary: bool, labels: list[Hashable] | None) -> str:
    """The test ``test="auto"`` stands for (McNemar, paired t, or a clustered test), else ``test``."""
    if test != "auto":
        return test
    if labels is None:
        return "mcnemar" if binary else "paired_t"
    return "wild_cluster" if len(set(labels)) <= WILD_MAX_CLUSTERS else "clustered"


def _run_tests(
    x: np.ndarray,
    y: np.ndarray,
    labels: list[Hashable] | None,
    *,
    chosen: str,
    binary: bool,
    confidence: float,
    n_resamples: int,
    seed: int,
    wild_weights: WildWeights,
    score_range: float,
) -> dict[str, TestResult]:
    """Every test :func:`compare` reports, by name: the chosen one and those whose p it adds."""
    boot = paired_bootstrap(
        x, y, n_resamples=n_resamples, confidence=confidence, seed=seed, method="percentile" if binary else "bca"
    )
    results: dict[str, TestResult] = {"paired_bootstrap": boot}
    if binary or chosen == "mcnemar":
        results["mcnemar"] = mcnemar(x, y)
    if not binary or chosen in ("paired_t", "wilcoxon"):
        results["paired_t"] = paired_t(x, y, confidence=confidence)
        results["wilcoxon"] = wilcoxon(x, y)
    if chosen == "permutation":
        results["permutation"] = permutation_test(x, y, n_resamples=n_resamples, seed=seed)
    if labels is not None:
        results["clustered"] = clustered_difference(x, y, labels, confidence=confidence)
        if chosen == "wild_cluster" or len(set(labels)) <= WILD_MAX_CLUSTERS:
            results["wild_cluster"] = wild_cluster_bootstrap(
                x,
                y,
                labels,
                confidence=confidence,
                weights=wild_weights,
                n_resamples=n_resamples,
                seed=seed,
                max_difference=score_range,
            )
    return results


def _interval_of(results: dict[str, TestResult], chosen: str) -> TestResult:
    """The result whose interval the comparison reports: the chosen test's, else the t or bootstrap's."""
    if chosen in ("clustered", "paired_bootstrap", "wild_cluster"):
        return results[chosen]
    if "paired_t" in results and chosen != "mcnemar":
        return results["paired_t"]
    return results["paired_bootstrap"]


def _extra(results: dict[str, TestResult], chosen: str, clustered: bool, score_range: float) -> dict[str, Any]:
    """McNemar's counts, the other tests' p-values and the clustered and wild details, for ``extra``."""
    extra: dict[str, Any] = {}
    if "mcnemar" in results:
        mc = results["mcnemar"].details or {}
        extra.update(n_10=mc["n_10"], n_01=mc["n_01"], mcnemar_exact=mc["exact"])
    for name in ("mcnemar", "paired_t", "wilcoxon", "clustered", "wild_cluster"):
        if name in results and name != chosen:
            extra[f"{name}_p"] = results[name].p_value
    if clustered:
        cd = results["clustered"].details or {}
        extra["clustered_se"] = cd["se"]
        extra["clustered_df"] = cd["df"]
        extra["n_clusters"] = cd["n_clusters"]
    if "wild_cluster" in results:
        wd = results["wild_cluster"].details or {}
        extra.update(
            wild_weights=wd["weights"],
            wild_draws=wd["draws"],
            wild_enumerated=wd["enumerated"],
            wild_p_floor=wd["p_floor"],
        )
    extra["score_range"] = score_range
    return extra


def _mdd_extra(
    x: np.ndarray,
    y: np.ndarray,
    results: dict[str, TestResult],
    chosen: str,
    alpha: float,
    score_range: float,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """``mdd_80``, its basis and whether it is capped at the scores' range."""
    mdd: float | None
    if chosen in ("clustered", "wild_cluster"):
        # the MDD of the test actually run: its CR1 variance and its t with G − 1 df (for the
        # wild bootstrap an approximation; it is the range when the bootstrap cannot reject)
        se = (results["clustered"].details or {})["se"]
        mdd = (
            min_detectable_difference_se(se, alpha, 0.8, df=extra["clustered_df"], max_difference=score_range)
            if se > 0
            else None
        )
        if chosen == "wild_cluster" and extra["wild_p_floor"] > alpha and score_range > 0:
            mdd = score_range
        basis = "clustered"
    else:
        mdd = _mdd(x, y, alpha, score_range)
        basis = "paired"
    return {
        "mdd_basis": basis,
        "mdd_80": mdd,
        "mdd_capped": bool(mdd is not None and score_range > 0 and mdd >= score_range),
    }


def _cluster_labels(clusters: Any, ids: list[Hashable]) -> list[Hashable]:
    if isinstance(clusters, pd.Series):
        if clusters.index.has_duplicates:
            raise EvalcoreError("duplicated item ids in the cluster labels", field="clusters")
        mapping = dict(zip(clusters.index, clusters.to_numpy()))
    elif isinstance(clusters, Mapping):
        mapping = dict(clusters)
    else:
        raise EvalcoreError("expected a mapping item id → cluster label", field="clusters")
    missing = [i for i in ids if i not in mapping]
    if missing:
        raise EvalcoreError(
            f"{len(missing)} compared items have no cluster label (e.g. {missing[:5]})", field="clusters"
        )
    return [mapping[i] for i in ids]


def compare_many(
    series: Mapping[str, Scores] | pd.DataFrame,
    correction: str | None = "holm",
    *,
    alpha: float = 0.05,
    **kwargs: Any,
) -> pd.DataFrame:
    """Compare every pair of systems and correct the p-values for multiplicity (Holm 1979 or
    Benjamini & Hochberg 1995; :mod:`evalcore.stats._multiple`).

    Pairs are (i, j) with i before j in the input order; each is :func:`compare` d. The
    p-values of all pairs are adjusted together (Holm or Benjamini–Hochberg) and
    ``significant`` is decided on the adjusted p-value.

    Args:
        series: System name → per-item scores keyed by item id; or a DataFrame with one column
            per system indexed by item id. NaN cells count as missing items, and as with
            :func:`compare` the default alignment refuses a pair whose items differ (the
            message says which): pass ``align="intersection"`` to compare each pair on the
            items both systems have (the row's ``n_dropped`` says how many were left out).
        correction: "holm" (default), "bh", or "none"/None for no correction.
        alpha: Significance level (family-wise for Holm, FDR for BH).
        **kwargs: Passed to :func:`compare` (``test``, ``align``, ``n_resamples``, ``seed``,
            ``confidence``).

    Returns:
        One row per pair with the columns of :meth:`ComparisonResult.to_dict`.

    Examples:
        >>> from evalcore.stats import compare_many
        >>> scores = {'a': {'q1': 1, 'q2': 1, 'q3': 0, 'q4': 1},
        ...           'b': {'q1': 0, 'q2': 1, 'q3': 0, 'q4': 0},
        ...           'c': {'q1': 1, 'q2': 0, 'q3': 0, 'q4': 0}}
        >>> table = compare_many(scores, correction='holm')
        >>> table[['name_a', 'name_b', 'difference', 'p_value', 'p_adjusted']].round(4)
          name_a name_b  difference  p_value  p_adjusted
        0      a      b         0.5      0.5         1.0
        1      a      c         0.5      0.5         1.0
        2      b      c         0.0      1.0         1.0
    """
    if isinstance(series, pd.DataFrame):
        series = {str(c): series[c].dropna() for c in series.columns}
    if not isinstance(series, Mapping):
        raise EvalcoreError("expected a mapping of system name to per-item scores", field="series")
    if len(series) < 2:
        raise EvalcoreError(f"needs at least 2 systems, got {len(series)}", field="series")
    correction = "none" if correction is None else correction
    if correction not in ("holm", "bh", "none"):
        raise EvalcoreError(f"unknown correction {correction!r}; use 'holm', 'bh' or 'none'", field="correction")
    names = list(series)
    results = [
        compare(series[na], series[nb], name_a=str(na), name_b=str(nb), alpha=alpha, **kwargs)
        for na, nb in itertools.combinations(names, 2)
    ]
    if correction != "none":
        adjusted = adjust_p_values([r.p_value for r in results], correction)
        results = [r.with_adjusted(p, correction) for r, p in zip(results, adjusted)]
    return pd.DataFrame([r.to_dict() for r in results])
