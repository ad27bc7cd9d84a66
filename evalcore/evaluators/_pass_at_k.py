"""Unbiased pass@k (Chen et al., 2021, "Evaluating Large Language Models Trained on Code")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["pass_at_k", "estimate_pass_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of the probability that at least one of ``k`` samples passes (Chen et
    al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374, eq. 1).

    Formula: ``pass@k = 1 - C(n - c, k) / C(n, k)``, computed in the numerically stable
    product form ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)`` (equal to 1 when ``n - c < k``).

    Args:
        n: Samples drawn for the task.
        c: Samples among them that passed (``0 <= c <= n``).
        k: Budget of samples (``1 <= k <= n``).

    Returns:
        The estimate, in [0, 1].

    Raises:
        EvalcoreError: If ``n < k``, ``k < 1`` or ``c`` is outside ``[0, n]``.
    """
    n, c, k = _count(n, "n"), _count(c, "c"), _count(k, "k")
    if k < 1:
        raise EvalcoreError(f"k must be at least 1, got {k}", field="k")
    if n < k:
        raise EvalcoreError(f"pass@{k} needs at least {k} samples per task, got n={n}", field="k")
    if not 0 <= c <= n:
        raise EvalcoreError(f"number correct must be between 0 and n={n}, got {c}", field="c")
    if n - c < k:
        return 1.0
    # A plain product (no numpy): `evalcore score humaneval` should not pay numpy's import.
    return float(1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1)))


def _count(value: object, field: str) -> int:
    """A whole count (an int, or a float that is whole); 2.9 samples is an error, not 2."""
    if isinstance(value, bool):
        raise EvalcoreError(f"{field} must be a whole number, got {value!r}", field=field)
    try:
        whole = int(value)  # type: ignore[call-overload]
        exact = whole == value
    except (TypeError, ValueError, OverflowError):
        exact = False
    if not exact:
        raise EvalcoreError(f"{field} must be a whole number, got {value!r}", field=field)
    return whole


def estimate_pass_at_k(num_samples: Sequence[int], num_correct: Sequence[int], k: int) -> np.ndarray:
    """Per-task :func:`pass_at_k` for parallel sequences of sample and pass counts (Chen et al.
    2021; the name is that of their reference implementation).

    Args:
        num_samples: ``n`` per task.
        num_correct: ``c`` per task.
        k: Budget of samples.

    Returns:
        Array of per-task estimates (their mean is the benchmark's pass@k).
    """
    if len(num_samples) != len(num_correct):
        raise EvalcoreError("num_samples and num_correct differ in length", field="num_correct")
    import numpy as np

    return np.array([pass_at_k(n, c, k) for n, c in zip(num_samples, num_correct)], dtype=float)
