"""Confidence intervals for proportions and means, and clustered standard errors.

Sources: Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical
inference", *JASA* 22(158), 209–212 (see :mod:`evalcore.stats._wilson`); Student (1908), "The
probable error of a mean", *Biometrika* 6(1), 1–25 (the t interval); Efron, B. (1979) and
Efron, B. (1987), "Better bootstrap confidence intervals", *JASA* 82(397), 171–185 (bootstrap,
BCa); Liang, K.-Y. and Zeger, S. L. (1986), *Biometrika* 73(1), 13–22, and Cameron, A. C. and
Miller, D. L. (2015), "A practitioner's guide to cluster-robust inference" (clustered standard
errors, CR1); Miller, E. (2024), "Adding error bars to evals", arXiv:2411.00640; Kish, L. (1965),
*Survey Sampling* (design effect and effective sample size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from evalcore._validate import (
    as_float_array,
    check_positive_int,
    check_probability,
    is_binary,
    rng_from,
)
from evalcore.errors import EvalcoreError
from evalcore.stats._resample import bca_interval_mean, bootstrap_means, percentile_interval
from evalcore.stats._wilson import wilson_bounds, wilson_interval  # without scipy (light commands)

BootstrapMethod = Literal["percentile", "bca"]
MeanCIMethod = Literal["wilson", "bootstrap", "t", "clustered"]


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[..., Any] = np.mean,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
    method: BootstrapMethod = "bca",
) -> tuple[float, float]:
    """Bootstrap confidence interval of a statistic of one sample (Efron 1979; BCa Efron 1987).

    Resamples θ*_b = statistic(x*_b), b = 1..B, x*_b drawn with replacement from x.
    ``"percentile"``: the α/2 and 1 − α/2 quantiles of θ*; ``"bca"``: bias-corrected and
    accelerated quantiles (see :func:`evalcore.stats._resample.bca_interval_mean`). For the mean
    (the default) evalcore's own vectorized engine is used; any other statistic goes through
    :func:`scipy.stats.bootstrap` (vectorized when the statistic takes ``axis``).

    Args:
        values: The sample (1-D, finite, non-empty).
        statistic: Function of the sample; ``np.mean`` uses the fast engine.
        n_resamples: Number of resamples B.
        confidence: Confidence level 1 − α.
        seed: Seed or Generator (results are deterministic for a given seed).
        method: ``"bca"`` (default) or ``"percentile"``.

    Returns:
        ``(low, high)``.

    Examples:
        >>> from evalcore.stats import bootstrap_interval
        >>> low, high = bootstrap_interval([0.2, 0.4, 0.5, 0.7, 0.9], n_resamples=2000, seed=0)
        >>> round(low, 4), round(high, 4)
        (0.34, 0.76)
    """
    x = as_float_array(values)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    confidence = check_probability(confidence, "confidence")
    if method not in ("percentile", "bca"):
        raise EvalcoreError(f"unknown method {method!r}; use 'percentile' or 'bca'", field="method")
    rng = rng_from(seed)
    if statistic is np.mean:
        theta_b = bootstrap_means(x, n_resamples, rng)
        if method == "percentile":
            return percentile_interval(theta_b, confidence)
        return bca_interval_mean(x, theta_b, confidence)
    theta = float(statistic(x))
    if x.size < 2 or np.ptp(x) == 0.0:
        return theta, theta
    kwargs: dict[str, Any] = dict(
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="BCa" if method == "bca" else "percentile",
        batch=max(1, 2_000_000 // x.size),
    )
    try:
        res = sps.bootstrap((x,), statistic, rng=rng, **kwargs)
    except TypeError:  # scipy < 1.15 names the generator random_state
        res = sps.bootstrap((x,), statistic, random_state=rng, **kwargs)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _codes(clusters: Any, n: int) -> np.ndarray:
    """Integer codes 0..G−1 for the cluster labels (any hashable labels, in order of appearance)."""
    if isinstance(clusters, (str, bytes)):
        raise EvalcoreError("expected one cluster label per value, got a string", field="clusters")
    if isinstance(clusters, np.ndarray) or hasattr(clusters, "to_numpy"):
        arr = clusters.to_numpy() if hasattr(clusters, "to_numpy") else clusters
        if arr.ndim != 1 or arr.size != n:
            raise EvalcoreError(f"needs one cluster label per value ({n}), got shape {arr.shape}", field="clusters")
        codes, _ = pd.factorize(arr)
        if np.any(codes < 0):
            bad = int(np.flatnonzero(codes < 0)[0])
            raise EvalcoreError(f"missing cluster label at position {bad}", field="clusters")
        return codes
    labels = list(clusters)
    if len(labels) != n:
        raise EvalcoreError(f"needs one cluster label per value ({n}), got {len(labels)}", field="clusters")
    index: dict[Any, int] = {}
    out = np.empty(n, dtype=np.intp)
    for pos, label in enumerate(labels):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            raise EvalcoreError(f"missing cluster label at position {pos}", field="clusters")
        out[pos] = index.setdefault(label, len(index))
    return out


def clustered_se(values: Sequence[float] | np.ndarray, clusters: Sequence[Any] | np.ndarray) -> float:
    """Cluster-robust standard error of the mean (Miller 2024, "Adding Error Bars to Evals").

    SE_clustered = √( Σ_c ( Σ_{i∈c} (x_i − x̄) )² ) / n.
    With one item per cluster this is √(Σ (x_i − x̄)²)/n, the plug-in SE of the mean. It equals
    statsmodels' cluster-robust OLS standard error of an intercept without small-sample correction.

    Args:
        values: Per-item scores.
        clusters: One cluster label per item (e.g. the MMLU subject).

    Returns:
        The clustered standard error.

    Examples:
        >>> from evalcore.stats import clustered_se
        >>> round(clustered_se([1, 0, 1, 1, 0, 0], ['a', 'a', 'b', 'b', 'c', 'c']), 4)
        0.2357
    """
    x = as_float_array(values)
    codes = _codes(clusters, x.size)
    sums = np.bincount(codes, weights=x - x.mean())
    return float(math.sqrt(float(np.sum(sums**2))) / x.size)


def mean_ci(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None = None,
    method: MeanCIMethod | None = None,
    confidence: float = 0.95,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> dict[str, Any]:
    """Mean of per-item scores with its confidence interval and standard error.

    Methods (``method=None`` picks ``"clustered"`` when clusters are given, ``"wilson"`` for
    binary scores, ``"t"`` otherwise):

    - ``"wilson"``: :func:`wilson_interval` (Wilson 1927); se = √(p̂(1 − p̂)/n). Binary scores only.
    - ``"t"``: x̄ ± t_{1−α/2, n−1} · s/√n, s the sample standard deviation (ddof = 1; Student
      1908).
    - ``"bootstrap"``: BCa bootstrap of the mean (Efron 1987); se = standard deviation of the resampled means.
    - ``"clustered"``: x̄ ± t_{1−α/2, G−1} · √(G/(G−1)) · SE_clustered (:func:`clustered_se`),
      G the number of clusters: the CR1 small-sample factor and G − 1 degrees of freedom, as
      statsmodels' cluster-robust OLS of the scores on a constant (``use_correction=True``,
      ``df_correction=True``, ``use_t=True``; Cameron & Miller 2015, "A Practitioner's Guide to
      Cluster-Robust Inference"). With few clusters the plain z interval is too narrow.

    With n = 1 the ``"t"`` interval, and with a single cluster the ``"clustered"`` one, are
    undefined: ``se``, ``ci_low`` and ``ci_high`` are then NaN.

    Args:
        values: Per-item scores.
        clusters: Optional cluster label per item (only with ``"clustered"``).
        method: See above.
        confidence: Confidence level 1 − α.
        n_resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        ``{"mean", "ci_low", "ci_high", "se", "n", "method"}`` with native Python numbers
        (``"clustered"`` adds ``"n_clusters"``).

    Examples:
        >>> from evalcore.stats import mean_ci
        >>> r = mean_ci([1, 0, 1, 1, 0, 1, 1, 1])  # 0/1 scores: Wilson
        >>> r['method'], r['mean'], round(r['ci_low'], 4), round(r['ci_high'], 4)
        ('wilson', 0.75, 0.4093, 0.9285)
        >>> r = mean_ci([0.2, 0.4, 0.5, 0.7, 0.9])  # other scores: t interval
        >>> r['method'], round(r['mean'], 4), round(r['ci_low'], 4), round(r['ci_high'], 4)
        ('t', 0.54, 0.2045, 0.8755)
    """
    x = as_float_array(values)
    confidence = check_probability(confidence, "confidence")
    n = x.size
    mean = float(x.mean())
    if method is None:
        method = "clustered" if clusters is not None else ("wilson" if is_binary(x) else "t")
    if clusters is not None and method != "clustered":
        raise EvalcoreError(f"clusters are only used by method='clustered', not {method!r}", field="clusters")
    nan = float("nan")
    if method == "wilson":
        if not is_binary(x):
            raise EvalcoreError("method 'wilson' needs binary (0/1) scores", field="values")
        low, high = wilson_interval(float(x.sum()), n, confidence)
        se = math.sqrt(mean * (1.0 - mean) / n)
    elif method == "t":
        if n < 2:
            low = high = se = nan
        else:
            se = float(x.std(ddof=1) / math.sqrt(n))
            half = float(sps.t.ppf(1.0 - (1.0 - confidence) / 2.0, n - 1)) * se
            low, high = mean - half, mean + half
    elif method == "bootstrap":
        rng = rng_from(seed)
        theta_b = bootstrap_means(x, check_positive_int(n_resamples, "n_resamples"), rng)
        low, high = bca_interval_mean(x, theta_b, confidence)
        se = float(theta_b.std(ddof=1)) if theta_b.size > 1 else 0.0
    elif method == "clustered":
        if clusters is None:
            raise EvalcoreError("method 'clustered' needs cluster labels", field="clusters")
        codes = _codes(clusters, n)
        if np.unique(codes).size < 2:
            low = high = se = nan
        else:
            g = int(np.unique(codes).size)
            se = clustered_se(x, clusters) * math.sqrt(g / (g - 1.0))
            half = float(sps.t.ppf(1.0 - (1.0 - confidence) / 2.0, g - 1)) * se
            low, high = mean - half, mean + half
    else:
        raise EvalcoreError(
            f"unknown method {method!r}; use 'wilson', 'bootstrap', 't' or 'clustered'",
            field="method",
        )
    out = {"mean": mean, "ci_low": float(low), "ci_high": float(high), "se": float(se), "n": int(n), "method": method}
    if method == "clustered":
        out["n_clusters"] = int(np.unique(codes).size)
    return out


def clustered_wilson(
    values: Sequence[float] | np.ndarray, clusters: Sequence[Any] | np.ndarray, confidence: float = 0.95
) -> dict[str, Any]:
    """Wilson interval for 0/1 scores repeated within items (epochs), by effective sample size
    (Wilson 1927 on Kish's 1965 effective sample size, the design effect from the cluster-robust
    standard error).

    With n samples in k items, p̂ the mean, SE_c the cluster-robust standard error
    (:func:`evalcore.stats.clustered_se`) and SE_iid = √(p̂(1 − p̂)/n):
    design effect ``deff = SE_c² / SE_iid²``, ``n_eff = n / deff = p̂(1 − p̂) / SE_c²`` (at most
    n), and the interval
    is Wilson's for ``p̂ · n_eff`` successes in ``n_eff`` trials, computed by
    :func:`evalcore.stats._wilson.wilson_bounds` like every Wilson interval evalcore reports. When
    p̂ is 0 or 1 the design effect is undefined and ``n_eff = k`` (items, the conservative choice). Unlike
    ``p̂ ± z·SE_c`` the interval stays inside [0, 1] and never collapses to a point when every
    sample agrees.

    Args:
        values: 0/1 scores, one per sample.
        clusters: The item of each sample.
        confidence: Confidence level.

    Returns:
        ``{"mean", "ci_low", "ci_high", "se", "n", "n_eff", "method": "wilson_clustered"}``.

    Examples:
        >>> from evalcore.stats import clustered_wilson
        >>> r = clustered_wilson([1, 1, 0, 1, 0, 0], ['a', 'a', 'b', 'b', 'c', 'c'])
        >>> r['mean'], round(r['n_eff'], 4), round(r['ci_low'], 4), round(r['ci_high'], 4)
        (0.5, 4.5, 0.1607, 0.8393)
    """
    x = np.asarray(values, dtype=float)
    n, k, p = x.size, len(set(clusters)), float(x.mean())
    se_c = clustered_se(x, list(clusters))
    if 0.0 < p < 1.0:  # SE_c = 0: no variation between items at all, n_eff = n
        n_eff = min(float(n), p * (1.0 - p) / se_c**2) if se_c > 0.0 else float(n)
    else:
        n_eff = float(k)
    low, high = wilson_bounds(p * n_eff, n_eff, check_probability(confidence, "confidence"))
    low, high = (0.0 if p == 0.0 else float(max(low, 0.0)), 1.0 if p == 1.0 else float(min(high, 1.0)))
    return {
        "mean": p,
        "ci_low": low,
        "ci_high": high,
        "se": se_c,
        "n": int(n),
        "n_eff": n_eff,
        "method": "wilson_clustered",
    }
