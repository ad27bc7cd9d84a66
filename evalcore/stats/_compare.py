"""Paired comparison of two systems' per-item scores keyed by item id."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.stats._multiple import adjust_p_values
from evalcore.stats._paired import (
    cohens_d_paired,
    mcnemar,
    paired_bootstrap,
    paired_t,
    permutation_test,
    wilcoxon,
)
from evalcore.stats._validate import check_positive_int, check_probability, is_binary

Scores = Union[Mapping[Hashable, float], pd.Series]
TestName = Literal["auto", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation"]
Align = Literal["strict", "intersection"]

_TESTS = ("auto", "mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation")


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
        ci_method: How the interval was made ("paired_t" or "paired_bootstrap").
        p_value: p-value of ``test``.
        test: Test used ("mcnemar", "paired_t", "wilcoxon", "paired_bootstrap", "permutation").
        n: Number of paired items.
        n_dropped: Items present in only one series (dropped with ``align="intersection"``).
        correlation: Pearson correlation of A's and B's per-item scores (NaN if one is constant).
        effect_size: Cohen's d for paired data, mean(d)/sd(d).
        alpha: Significance level.
        confidence: Confidence level of the interval.
        significant: p (or p_adjusted when set) ≤ alpha.
        p_adjusted: Multiplicity-adjusted p-value, None unless a correction was applied.
        correction: The correction applied ("holm", "bh"), or None.
        extra: Secondary results: ``wilcoxon_p``, ``bootstrap_p``, ``bootstrap_ci_low``,
            ``bootstrap_ci_high`` (continuous scores); ``n_10``, ``n_01`` (McNemar).
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

    def with_adjusted(self, p_adjusted: float, correction: str) -> "ComparisonResult":
        """A copy carrying an adjusted p-value, with ``significant`` re-decided on it."""
        return dataclasses.replace(
            self, p_adjusted=float(p_adjusted), correction=correction,
            significant=bool(p_adjusted <= self.alpha),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of native Python values; ``extra`` is flattened in, NaN/inf become None."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            out[f.name] = _native(getattr(self, f.name))
        for key, value in self.extra.items():
            out[key] = _native(value)
        return out


def _native(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


def _to_series(scores: Any, field_name: str) -> pd.Series:
    if isinstance(scores, pd.Series):
        s = scores
    elif isinstance(scores, Mapping):
        s = pd.Series(list(scores.values()), index=pd.Index(list(scores.keys()), dtype=object),
                      dtype=object)
    else:
        raise EvalcoreError(
            f"expected per-item scores keyed by item id (a dict or pandas Series), "
            f"got {type(scores).__name__}", field=field_name)
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
            raise EvalcoreError(f"item {item_id!r}: score {value!r} is not a number",
                                field=field_name) from None
        if not math.isfinite(v):
            raise EvalcoreError(f"item {item_id!r}: score {value!r} is not finite",
                                field=field_name)
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
    """
    if align not in ("strict", "intersection"):
        raise EvalcoreError(f"unknown align {align!r}; use 'strict' or 'intersection'",
                            field="align")
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
    n_resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonResult:
    """Paired comparison of two systems' per-item scores, aligned by item id.

    The test (``test="auto"``): McNemar for binary (0/1) scores, with the paired-bootstrap
    (percentile) interval of the difference; the paired t-test otherwise, with its t interval,
    and the Wilcoxon signed-rank test and the paired bootstrap (BCa) reported in ``extra``.
    ``difference`` = mean_a − mean_b; effect size = Cohen's d_z = mean(d)/sd(d).

    Args:
        a: Scores of system A keyed by item id (dict or pandas Series with unique index).
        b: Scores of system B keyed by item id.
        name_a: Name of A in the record and in error messages.
        name_b: Name of B.
        alpha: Significance level.
        confidence: Confidence level of the interval (default 1 − alpha).
        test: "auto" or a test name to force it.
        align: "strict" (default) refuses different id sets; "intersection" keeps the shared
            ids and reports how many were dropped in ``n_dropped``.
        n_resamples: Bootstrap / permutation resamples.
        seed: Seed for the resampling (results are deterministic).

    Returns:
        A :class:`ComparisonResult`.

    Raises:
        EvalcoreError: duplicated or mismatched ids, fewer than 2 shared items, non-numeric
            scores, McNemar forced on non-binary scores, unknown ``test``.
    """
    alpha = check_probability(alpha, "alpha")
    confidence = 1.0 - alpha if confidence is None else check_probability(confidence, "confidence")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if test not in _TESTS:
        raise EvalcoreError(f"unknown test {test!r}; use one of {', '.join(_TESTS)}", field="test")
    x, y, _ids, n_dropped = align_scores(a, b, align=align, name_a=name_a, name_b=name_b)
    n = x.size
    if n < 2:
        raise EvalcoreError(f"a paired comparison needs at least 2 shared items, got {n}",
                            field="align")
    binary = is_binary(x) and is_binary(y)
    chosen = ("mcnemar" if binary else "paired_t") if test == "auto" else test
    boot_method = "percentile" if binary else "bca"
    boot = paired_bootstrap(x, y, n_resamples=n_resamples, confidence=confidence, seed=seed,
                            method=boot_method)
    extra: dict[str, Any] = {}
    if chosen == "mcnemar":
        res = mcnemar(x, y)
        extra.update(n_10=res.details["n_10"], n_01=res.details["n_01"],
                     mcnemar_exact=res.details["exact"])
        ci_low, ci_high, ci_method = boot.ci_low, boot.ci_high, "paired_bootstrap"
    else:
        t_res = paired_t(x, y, confidence=confidence)
        if chosen == "paired_t":
            res = t_res
        elif chosen == "wilcoxon":
            res = wilcoxon(x, y)
        elif chosen == "paired_bootstrap":
            res = boot
        else:
            res = permutation_test(x, y, n_resamples=n_resamples, seed=seed)
        if chosen == "paired_bootstrap":
            ci_low, ci_high, ci_method = boot.ci_low, boot.ci_high, "paired_bootstrap"
        else:
            ci_low, ci_high, ci_method = t_res.ci_low, t_res.ci_high, "paired_t"
        if chosen != "paired_t":
            extra["paired_t_p"] = t_res.p_value
        if chosen != "wilcoxon":
            extra["wilcoxon_p"] = wilcoxon(x, y).p_value
    extra["bootstrap_p"] = boot.p_value
    extra["bootstrap_ci_low"] = boot.ci_low
    extra["bootstrap_ci_high"] = boot.ci_high
    return ComparisonResult(
        name_a=str(name_a), name_b=str(name_b),
        mean_a=float(x.mean()), mean_b=float(y.mean()), difference=float((x - y).mean()),
        ci_low=float(ci_low), ci_high=float(ci_high), ci_method=ci_method,
        p_value=float(res.p_value), test=chosen, n=int(n), n_dropped=int(n_dropped),
        correlation=_correlation(x, y), effect_size=cohens_d_paired(x, y),
        alpha=alpha, confidence=confidence, significant=bool(res.p_value <= alpha),
        extra=extra,
    )


def compare_many(
    series: Mapping[str, Scores] | pd.DataFrame,
    correction: Literal["holm", "bh", "none"] | None = "holm",
    *,
    alpha: float = 0.05,
    **kwargs: Any,
) -> pd.DataFrame:
    """Compare every pair of systems and correct the p-values for multiplicity.

    Pairs are (i, j) with i before j in the input order; each is :func:`compare` d. The
    p-values of all pairs are adjusted together (Holm or Benjamini–Hochberg) and
    ``significant`` is decided on the adjusted p-value.

    Args:
        series: System name → per-item scores keyed by item id; or a DataFrame with one column
            per system indexed by item id (NaN cells count as missing items).
        correction: "holm" (default), "bh", or "none"/None for no correction.
        alpha: Significance level (family-wise for Holm, FDR for BH).
        **kwargs: Passed to :func:`compare` (``test``, ``align``, ``n_resamples``, ``seed``,
            ``confidence``).

    Returns:
        One row per pair with the columns of :meth:`ComparisonResult.to_dict`.
    """
    if isinstance(series, pd.DataFrame):
        series = {str(c): series[c].dropna() for c in series.columns}
    if not isinstance(series, Mapping):
        raise EvalcoreError("expected a mapping of system name to per-item scores",
                            field="series")
    if len(series) < 2:
        raise EvalcoreError(f"needs at least 2 systems, got {len(series)}", field="series")
    correction = "none" if correction is None else correction
    if correction not in ("holm", "bh", "none"):
        raise EvalcoreError(f"unknown correction {correction!r}; use 'holm', 'bh' or 'none'",
                            field="correction")
    names = list(series)
    results = [
        compare(series[na], series[nb], name_a=str(na), name_b=str(nb), alpha=alpha, **kwargs)
        for na, nb in itertools.combinations(names, 2)
    ]
    if correction != "none":
        adjusted = adjust_p_values([r.p_value for r in results], correction)
        results = [r.with_adjusted(p, correction) for r, p in zip(results, adjusted)]
    return pd.DataFrame([r.to_dict() for r in results])
