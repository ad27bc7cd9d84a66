"""Wild cluster bootstrap (WCR, null imposed) of a paired mean difference with few clusters.

The model is the intercept-only regression d_i = δ + u_i of the per-item differences
d_i = a_i − b_i, with items in G clusters c (e.g. MMLU subjects). With S_c = Σ_{i∈c} d_i,
n_c items in cluster c and n items in all, the CR1 t statistic for H0: δ = δ0 is

    t(δ0) = (d̄ − δ0) / SE,   SE = √(G/(G − 1) · Σ_c (S_c − n_c d̄)²) / n.

The restricted (WCR) wild cluster bootstrap imposes the null: the restricted residuals are
ũ_i = d_i − δ0, and draw b sets d*_i = δ0 + v_{b,c} ũ_i with one weight v_{b,c} per cluster, so
that with S0_c = S_c − n_c δ0 the bootstrap estimate and statistic are

    d̄*_b − δ0 = Σ_c v_{b,c} S0_c / n,
    t*_b = (d̄*_b − δ0) / (√(G/(G − 1) · Σ_c (v_{b,c} S0_c − n_c (d̄*_b − δ0))²) / n).

The symmetric two-sided p-value is p(δ0) = #{b : |t*_b| ≥ |t(δ0)|} / B. The weights are
Rademacher (±1 with probability 1/2 each) or Webb's six-point distribution
(±√(1/2), ±1, ±√(3/2), probability 1/6 each), which has 6^G distinct draws instead of 2^G and is
recommended when G is small (about 12 or fewer). When every distinct weight vector fits in the
requested number of draws (2^G or 6^G ≤ B) all of them are enumerated, each counted once, so the
p-value is exact and not random. The interval is the set of δ0 the test does not reject at
level α (test inversion, as in boottest), found by bisection on p(δ0) with the same weights.

Because the weight vectors with one value for every cluster reproduce |t(δ0)| exactly, the
p-value is never below k^(1 − G) (k = 2 Rademacher, 6 Webb): with 2 clusters no test at 5 %
can reject (Rademacher 1/2, Webb 1/6), and the interval is then the whole range the difference
can take, ± the scores' range.

Sources: Cameron, A. C., Gelbach, J. B. and Miller, D. L. (2008), "Bootstrap-based improvements
for inference with clustered errors", *Review of Economics and Statistics* 90(3), 414–427;
Webb, M. D. (2023), "Reworking wild bootstrap-based inference for clustered errors", *Canadian
Journal of Economics* 56(3), 839–858 (six-point weights); Roodman, D., MacKinnon, J. G., Nielsen,
M. Ø. and Webb, M. D. (2019), "Fast and wild: Bootstrap inference in Stata using boottest",
*Stata Journal* 19(1), 4–60 (WCR, symmetric p-value, inversion for the interval, enumeration);
MacKinnon, J. G., Nielsen, M. Ø. and Webb, M. D. (2023), "Cluster-robust inference: A guide to
empirical practice", *Journal of Econometrics* 232(2), 272–299.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from evalcore._validate import as_pair, check_positive_int, check_probability
from evalcore.errors import EvalcoreError
from evalcore.stats._intervals import _codes
from evalcore.stats._paired import TestResult

WildWeights = Literal["auto", "rademacher", "webb"]

#: ``weights="auto"`` uses Webb's six-point weights at or below this many clusters, Rademacher above.
WEBB_MAX_CLUSTERS = 12
_WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
_RADEMACHER = np.array([-1.0, 1.0])
#: Largest weight matrix drawn at once (draws × clusters); bigger problems are refused.
_MAX_CELLS = 50_000_000
#: Bisection steps of the test inversion (the interval's ends to ~1e-12 of the scores' range).
_BISECT = 60


def _weights(n_clusters: int, kind: str, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """The weight matrix (draws × clusters) and whether it enumerates every distinct vector."""
    values = _WEBB if kind == "webb" else _RADEMACHER
    k = values.size
    if k**n_clusters <= n_resamples:
        idx = np.array(list(itertools.product(range(k), repeat=n_clusters)), dtype=np.intp)
        return values[idx], True
    if n_resamples * n_clusters > _MAX_CELLS:
        raise EvalcoreError(
            f"{n_resamples} wild-bootstrap draws × {n_clusters} clusters is too large; "
            "use fewer resamples (the wild bootstrap is meant for few clusters)",
            field="n_resamples",
        )
    rng = np.random.default_rng(seed)
    return values[rng.integers(0, k, size=(n_resamples, n_clusters))], False


class _WildTest:
    """p(δ0) of the WCR wild cluster bootstrap for fixed data and weights."""

    def __init__(self, d: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> None:
        self.n = d.size
        self.g = int(codes.max()) + 1
        self.sums = np.bincount(codes, weights=d, minlength=self.g)
        self.sizes = np.bincount(codes, minlength=self.g).astype(np.float64)
        self.mean = float(d.mean())
        self.factor = self.g / (self.g - 1)
        self.w = weights
        resid = self.sums - self.sizes * self.mean
        self.scale = float(np.abs(d).sum()) + float(np.abs(resid).sum())
        self.se = self._se_raw(resid[None, :])[0] / self.n  # CR1

    def _se_raw(self, cluster_resid: np.ndarray) -> np.ndarray:
        return np.sqrt(self.factor * np.einsum("bg,bg->b", cluster_resid, cluster_resid))

    def _tol(self, delta0: float) -> float:
        return 1e-11 * (self.scale + abs(delta0) * self.n) + 1e-300

    def t_obs(self, delta0: float) -> float:
        """The CR1 t statistic for H0: δ = δ0 (±inf when the clustered SE is 0)."""
        num = self.mean - delta0
        if self.se * self.n <= self._tol(delta0):
            return 0.0 if abs(num) * self.n <= self._tol(delta0) else math.copysign(math.inf, num)
        return num / self.se

    def t_boot(self, delta0: float) -> np.ndarray:
        """The bootstrap t statistics t*_b under H0: δ = δ0 (module docstring)."""
        s0 = self.sums - self.sizes * delta0
        ws = self.w * s0
        num = ws.sum(axis=1)  # n · (d̄* − δ0)
        resid = ws - np.outer(num / self.n, self.sizes)
        den = self._se_raw(resid)
        tol = self._tol(delta0)
        zero_den = den <= tol
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(zero_den, 0.0, num / np.where(zero_den, 1.0, den))
        big = zero_den & (np.abs(num) > tol)
        t[big] = np.copysign(np.inf, num[big])
        return t

    def p_value(self, delta0: float) -> float:
        """Symmetric two-sided p-value: share of draws with |t*| ≥ |t(δ0)| (ties counted)."""
        t = abs(self.t_obs(delta0))
        tb = np.abs(self.t_boot(delta0))
        if math.isinf(t):
            return float(np.mean(np.isinf(tb)))
        return float(np.mean(tb >= t * (1.0 - 1e-10)))


def _bound(test: _WildTest, alpha: float, direction: float, cap: float) -> tuple[float, bool]:
    """End of the inverted interval on one side of d̄; ``capped`` when no δ0 up to the cap is
    rejected (the end is then the cap)."""
    centre = test.mean
    limit = cap if direction > 0 else -cap
    if direction * (limit - centre) <= 0.0:
        return centre, False
    step = test.se * 2.0 if test.se > 0 else abs(limit - centre) / 1024.0
    step = max(step, abs(limit - centre) * 1e-9)
    inside, outside = centre, None
    while True:
        point = centre + direction * step
        if direction * (point - limit) >= 0.0:
            point = limit
        if test.p_value(point) <= alpha:
            outside = point
            break
        inside = point
        if point == limit:
            return limit, True
        step *= 2.0
    for _ in range(_BISECT):
        mid = 0.5 * (inside + outside)
        if mid in (inside, outside):
            break
        if test.p_value(mid) <= alpha:
            outside = mid
        else:
            inside = mid
    return 0.5 * (inside + outside), False


def wild_cluster_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    *,
    confidence: float = 0.95,
    weights: WildWeights = "auto",
    n_resamples: int = 9_999,
    seed: int = 0,
    max_difference: float | None = None,
) -> TestResult:
    """Wild cluster bootstrap test (WCR, null imposed) of mean(a − b) = 0, with the interval
    found by inverting the test (formulas and sources in the module docstring).

    Args:
        a: Scores of system A.
        b: Scores of system B (same items, same order).
        clusters: Cluster label of each item.
        confidence: Confidence level of the interval.
        weights: "rademacher", "webb", or "auto" (Webb with at most
            :data:`WEBB_MAX_CLUSTERS` clusters, Rademacher above).
        n_resamples: Bootstrap draws B; when the distinct weight vectors (2^G or 6^G) are no
            more than B, all of them are used once instead (exact, not random).
        seed: Seed of the weight draws.
        max_difference: The largest |difference| the scores allow (their range); the interval
            is capped to ± it. Default: the observed range of the scores of both systems.

    Returns:
        A :class:`TestResult` named "wild_cluster" (``statistic`` is the CR1 t; ``details``:
        ``se`` (CR1), ``n_clusters``, ``weights``, ``draws``, ``enumerated``, ``p_floor`` (the
        smallest p-value these weights can give, k^(1 − G)), ``ci_capped_low`` /
        ``ci_capped_high`` (an end at the cap: no difference up to it is rejected)).

    Raises:
        EvalcoreError: fewer than 2 clusters, unknown weights, a label missing.

    Examples:
        >>> from evalcore.stats import wild_cluster_bootstrap
        >>> a = [1, 1, 0, 1, 1, 0, 1, 1]
        >>> b = [0, 1, 0, 0, 1, 0, 0, 1]
        >>> r = wild_cluster_bootstrap(a, b, ['x', 'x', 'y', 'y', 'z', 'z', 'w', 'w'])
        >>> r.difference, round(r.p_value, 4), r.details['weights'], r.details['draws']  # 4 clusters: 6**4 Webb draws
        (0.375, 0.0278, 'webb', 1296)
    """
    x, y = as_pair(a, b)
    confidence = check_probability(confidence, "confidence")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if weights not in ("auto", "rademacher", "webb"):
        raise EvalcoreError(f"unknown weights {weights!r}; use 'auto', 'rademacher' or 'webb'", field="weights")
    d = x - y
    codes = _codes(clusters, d.size)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise EvalcoreError("the wild cluster bootstrap needs at least 2 clusters", field="clusters")
    kind = ("webb" if n_clusters <= WEBB_MAX_CLUSTERS else "rademacher") if weights == "auto" else weights
    w, enumerated = _weights(n_clusters, kind, n_resamples, seed)
    test = _WildTest(d, codes, w)
    alpha = 1.0 - confidence
    if max_difference is None:
        both = np.concatenate([x, y])
        max_difference = float(both.max() - both.min())
    cap = abs(float(max_difference))
    p = test.p_value(0.0)
    lo, capped_lo = _bound(test, alpha, -1.0, cap)
    hi, capped_hi = _bound(test, alpha, 1.0, cap)
    k = 6 if kind == "webb" else 2
    details = {
        "se": float(test.se),
        "n_clusters": n_clusters,
        "weights": kind,
        "draws": int(w.shape[0]),
        "enumerated": enumerated,
        "p_floor": float(k ** (1 - n_clusters)),
        "ci_capped_low": capped_lo,
        "ci_capped_high": capped_hi,
    }
    return TestResult("wild_cluster", test.t_obs(0.0), p, d.size, test.mean, lo, hi, details)
