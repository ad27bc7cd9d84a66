"""Performance scores: response-time tiers, memory growth and throughput, each in [0, 1]."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from evalcore._validate import as_float_array
from evalcore.errors import EvalcoreError

#: Response-time tiers: complexity → ((upper bound in seconds, score), …); slower → 0.2.
RESPONSE_TIME_TIERS: dict[str, tuple[tuple[float, float], ...]] = {
    "simple": ((1.0, 1.0), (2.0, 0.8), (5.0, 0.5)),
    "complex": ((3.0, 1.0), (5.0, 0.8), (10.0, 0.5)),
}
#: Score of a response slower than every tier.
SLOWEST_TIER_SCORE = 0.2


def response_time_score(
    seconds: float | Sequence[float] | np.ndarray,
    complexity: Literal["simple", "complex"] = "simple",
) -> float | np.ndarray:
    """Tiered response-time score.

    simple queries:  t ≤ 1 s → 1.0, t ≤ 2 s → 0.8, t ≤ 5 s → 0.5, slower → 0.2;
    complex queries: t ≤ 3 s → 1.0, t ≤ 5 s → 0.8, t ≤ 10 s → 0.5, slower → 0.2.

    Args:
        seconds: One response time or an array of them (seconds, ≥ 0).
        complexity: "simple" or "complex".

    Returns:
        The score (a float for a scalar input, else an array of per-response scores).

    Examples:
        >>> from evalcore.metrics import response_time_score
        >>> response_time_score(0.4)
        1.0
        >>> response_time_score([0.4, 3.0, 30.0]).tolist()
        [1.0, 0.5, 0.2]
        >>> response_time_score(3.0, complexity='complex')
        1.0
    """
    if complexity not in RESPONSE_TIME_TIERS:
        raise EvalcoreError(f"unknown complexity {complexity!r}; use 'simple' or 'complex'", field="complexity")
    scalar = np.ndim(seconds) == 0
    t = as_float_array(np.atleast_1d(np.asarray(seconds, dtype=float)) if scalar else seconds, "seconds")
    if np.any(t < 0):
        raise EvalcoreError("response times must be ≥ 0", field="seconds")
    tiers = RESPONSE_TIME_TIERS[complexity]
    bounds = np.array([b for b, _ in tiers])
    scores = np.array([s for _, s in tiers] + [SLOWEST_TIER_SCORE])
    out = scores[np.searchsorted(bounds, t, side="left")]
    return float(out[0]) if scalar else out


def memory_score(delta_mb: float, budget_mb: float = 200.0) -> float:
    """Memory-growth score: 1 − min(max(ΔMB, 0) / budget, 1), budget 200 MB by default.

    A process that freed memory (ΔMB < 0) scores 1.

    Args:
        delta_mb: Memory growth in MB over the measured workload.
        budget_mb: Growth that scores 0 (> 0).

    Returns:
        Score in [0, 1].

    Examples:
        >>> from evalcore.metrics import memory_score
        >>> memory_score(50.0)
        0.75
        >>> memory_score(300.0)
        0.0
    """
    d, b = float(delta_mb), float(budget_mb)
    if not math.isfinite(d):
        raise EvalcoreError(f"must be finite, got {delta_mb!r}", field="delta_mb")
    if not math.isfinite(b) or b <= 0:
        raise EvalcoreError(f"must be > 0, got {budget_mb!r}", field="budget_mb")
    return 1.0 - min(max(d, 0.0) / b, 1.0)


def throughput_score(qps: float, target: float = 10.0) -> float:
    """Throughput score: min(QPS / target, 1).

    Args:
        qps: Measured queries per second (≥ 0).
        target: Queries per second that score 1 (> 0; default 10).

    Returns:
        Score in [0, 1].

    Examples:
        >>> from evalcore.metrics import throughput_score
        >>> throughput_score(5.0)
        0.5
        >>> throughput_score(25.0)
        1.0
    """
    q, t = float(qps), float(target)
    if not math.isfinite(q) or q < 0:
        raise EvalcoreError(f"must be a finite number ≥ 0, got {qps!r}", field="qps")
    if not math.isfinite(t) or t <= 0:
        raise EvalcoreError(f"must be > 0, got {target!r}", field="target")
    return min(q / t, 1.0)
