"""Learning metrics of a tool-building agent: tool reuse and the learning curve."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore._validate import (
    ZeroDivision,
    as_float_array,
    check_binary,
    check_zero_division,
    safe_ratio,
)
from evalcore.errors import EvalcoreError


def reuse_rate(reused: Sequence[bool], *, zero_division: ZeroDivision = 0.0) -> float:
    """Tool reuse rate: (1/n) Σ 1[request i was served by an existing tool].

    Pass one flag per request that *should* be able to reuse a tool (for example every
    paraphrase after the first in a group of paraphrased queries); ``True`` when the agent
    reused an existing tool, ``False`` when it synthesized a new one or failed.

    Args:
        reused: One boolean (or 0/1) per request.
        zero_division: Value for an empty sequence (number or "error").

    Returns:
        The reuse rate in [0, 1].

    Examples:
        >>> from evalcore.metrics import reuse_rate
        >>> reuse_rate([True, False, True, True])
        0.75
    """
    check_zero_division(zero_division)
    flags = as_float_array(reused, "reused", allow_empty=True)
    check_binary(flags, "reused")
    return safe_ratio(float(flags.sum()), flags.size, zero_division, "reuse rate")


def learning_curve(timings: Sequence[float | Sequence[float]]) -> np.ndarray:
    """Median timing of each round of repeated queries: m_r = median(timings of round r).

    Args:
        timings: One entry per round, in order; each a timing (seconds) or a sequence of the
            timings measured in that round.

    Returns:
        Array of per-round medians.

    Examples:
        >>> from evalcore.metrics import learning_curve
        >>> learning_curve([[2.0, 4.0, 3.0], [1.0, 2.0], [1.5]]).tolist()
        [3.0, 1.5, 1.5]
    """
    if isinstance(timings, (str, bytes)) or len(timings) == 0:
        raise EvalcoreError("no rounds: at least one round of timings is needed", field="timings")
    medians = []
    for r, round_t in enumerate(timings):
        arr = as_float_array(
            np.atleast_1d(np.asarray(round_t, dtype=float)) if np.ndim(round_t) == 0 else round_t, f"timings[{r}]"
        )
        if np.any(arr < 0):
            raise EvalcoreError("timings must be ≥ 0", field=f"timings[{r}]")
        medians.append(float(np.median(arr)))
    return np.array(medians)


def learning_curve_improvement(
    timings: Sequence[float | Sequence[float]], *, zero_division: ZeroDivision = 0.0
) -> float:
    """Learning-curve improvement rate: (m_first − m_last) / m_first over the per-round
    median timings m_r (see :func:`learning_curve`).

    Positive when the agent got faster (e.g. 0.5 = the last round takes half the time of the
    first), negative when it got slower.

    Args:
        timings: At least two rounds, each a timing or a sequence of timings.
        zero_division: Value when the first round's median is 0 (number or "error").

    Returns:
        The improvement rate (≤ 1).

    Examples:
        >>> from evalcore.metrics import learning_curve_improvement
        >>> learning_curve_improvement([[2.0, 4.0, 3.0], [1.0, 2.0], [1.5]])
        0.5
    """
    check_zero_division(zero_division)
    m = learning_curve(timings)
    if m.size < 2:
        raise EvalcoreError("a learning curve needs at least 2 rounds", field="timings")
    return safe_ratio(m[0] - m[-1], m[0], zero_division, "learning-curve improvement")
