"""Classification metrics with explicit zero-division handling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from evalcore._validate import ZeroDivision, check_zero_division, safe_ratio
from evalcore.errors import EvalcoreError


def _labels(y_true: Sequence[Any], y_pred: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    def conv(v: Any, field: str) -> np.ndarray:
        if isinstance(v, (str, bytes)):
            raise EvalcoreError("expected a sequence of labels, got a single string", field=field)
        raw = v.to_numpy() if hasattr(v, "to_numpy") else list(v)
        arr = np.asarray(raw)
        if arr.ndim != 1:
            raise EvalcoreError(f"expected a 1-D sequence of labels, got shape {arr.shape}", field=field)
        # (checked on the labels as given: numpy turns ["a", nan] into the strings "a", "nan")
        nan = (
            np.isnan(arr).any()
            if arr.dtype.kind in "fc"
            else any(isinstance(x, (float, np.floating)) and x != x for x in raw)
        )
        if nan:
            raise EvalcoreError("labels contain NaN (NaN equals no label, itself included)", field=field)
        return arr

    t, p = conv(y_true, "y_true"), conv(y_pred, "y_pred")
    if t.size == 0:
        raise EvalcoreError("empty input: at least one label is needed", field="y_true")
    if t.size != p.size:
        raise EvalcoreError(f"y_true has {t.size} labels but y_pred has {p.size}", field="y_pred")
    return t, p


def accuracy(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Accuracy: (1/n) Σ 1[y_pred_i = y_true_i] (any hashable labels, multi-class allowed).

    The per-item scores are ``1[y_pred_i = y_true_i]``; their mean is returned.

    Args:
        y_true: True labels.
        y_pred: Predicted labels, same length.

    Returns:
        Accuracy in [0, 1].

    Examples:
        >>> from evalcore.metrics import accuracy
        >>> accuracy(['cat', 'dog', 'fish', 'cat'], ['cat', 'dog', 'cat', 'cat'])
        0.75
    """
    t, p = _labels(y_true, y_pred)
    return float(np.mean(t == p))


class ConfusionCounts(NamedTuple):
    """Binary confusion counts with respect to a positive label."""

    tp: int
    fp: int
    tn: int
    fn: int


def confusion_counts(y_true: Sequence[Any], y_pred: Sequence[Any], *, positive: Any = 1) -> ConfusionCounts:
    """Binary confusion counts: TP = #{true = pos, pred = pos}, FP = #{true ≠ pos, pred = pos},
    TN = #{true ≠ pos, pred ≠ pos}, FN = #{true = pos, pred ≠ pos}.

    Every label other than ``positive`` counts as negative.

    Args:
        y_true: True labels.
        y_pred: Predicted labels, same length.
        positive: The positive label (default 1; ``True`` for booleans compares equal to 1).

    Returns:
        ``ConfusionCounts(tp, fp, tn, fn)``.

    Examples:
        >>> from evalcore.metrics import confusion_counts
        >>> confusion_counts([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
        ConfusionCounts(tp=2, fp=1, tn=1, fn=1)
    """
    t, p = _labels(y_true, y_pred)
    tpos, ppos = t == positive, p == positive
    return ConfusionCounts(
        int(np.count_nonzero(tpos & ppos)),
        int(np.count_nonzero(~tpos & ppos)),
        int(np.count_nonzero(~tpos & ~ppos)),
        int(np.count_nonzero(tpos & ~ppos)),
    )


def _rate(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    positive: Any,
    zero_division: ZeroDivision,
    count: str,
    other: str,
    name: str,
) -> float:
    """``count / (count + other)`` for two fields of :func:`confusion_counts` (zero division
    handled by :func:`safe_ratio`)."""
    check_zero_division(zero_division)
    c = confusion_counts(y_true, y_pred, positive=positive)
    num = getattr(c, count)
    return safe_ratio(num, num + getattr(c, other), zero_division, name)


def tpr(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    positive: Any = 1,
    zero_division: ZeroDivision = 0.0,
) -> float:
    """True-positive rate (recall, sensitivity): TPR = TP / (TP + FN).

    Args:
        y_true: True labels.
        y_pred: Predicted labels.
        positive: The positive label.
        zero_division: Value when there is no positive item (number or "error").

    Returns:
        TPR in [0, 1].

    Examples:
        >>> from evalcore.metrics import tpr
        >>> round(tpr([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]), 4)
        0.6667
        >>> tpr(['spam', 'ham', 'spam'], ['spam', 'spam', 'ham'], positive='spam')
        0.5
    """
    return _rate(y_true, y_pred, positive, zero_division, "tp", "fn", "TPR")


def fpr(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    positive: Any = 1,
    zero_division: ZeroDivision = 0.0,
) -> float:
    """False-positive rate (fall-out): FPR = FP / (FP + TN) = 1 − TNR.

    Args:
        y_true: True labels.
        y_pred: Predicted labels.
        positive: The positive label.
        zero_division: Value when there is no negative item (number or "error").

    Returns:
        FPR in [0, 1].

    Examples:
        >>> from evalcore.metrics import fpr
        >>> fpr([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
        0.5
    """
    return _rate(y_true, y_pred, positive, zero_division, "fp", "tn", "FPR")


def tnr(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    positive: Any = 1,
    zero_division: ZeroDivision = 0.0,
) -> float:
    """True-negative rate (specificity): TNR = TN / (TN + FP).

    Args:
        y_true: True labels.
        y_pred: Predicted labels.
        positive: The positive label.
        zero_division: Value when there is no negative item (number or "error").

    Returns:
        TNR in [0, 1].

    Examples:
        >>> from evalcore.metrics import tnr
        >>> tnr([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
        0.5
        >>> tnr([1, 1], [1, 1])  # no negatives: zero_division
        0.0
    """
    return _rate(y_true, y_pred, positive, zero_division, "tn", "fp", "TNR")
