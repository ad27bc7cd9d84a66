"""Classification and similarity metrics: cross-checks against scikit-learn and own DP."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein
from sklearn.metrics import accuracy_score, confusion_matrix, recall_score
from sklearn.metrics.pairwise import cosine_similarity as sk_cosine

from evalcore.errors import EvalcoreError
from evalcore.metrics import (
    accuracy,
    confusion_counts,
    cosine_similarity,
    fpr,
    levenshtein_distance,
    levenshtein_similarity,
    tnr,
    tpr,
)


@pytest.mark.parametrize("seed", range(30))
def test_classification_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    y_true = rng.integers(0, 2, n)
    y_pred = rng.integers(0, 2, n)
    assert accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred))
    tn_, fp_, fn_, tp_ = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    assert confusion_counts(y_true, y_pred) == (tp_, fp_, tn_, fn_)
    for zd in (0.0, 1.0):
        assert tpr(y_true, y_pred, zero_division=zd) == pytest.approx(
            recall_score(y_true, y_pred, pos_label=1, zero_division=zd)
        )
        assert tnr(y_true, y_pred, zero_division=zd) == pytest.approx(
            recall_score(y_true, y_pred, pos_label=0, zero_division=zd)
        )
        if fp_ + tn_:
            assert fpr(y_true, y_pred, zero_division=zd) == pytest.approx(1 - tnr(y_true, y_pred))


def test_multiclass_accuracy_and_positive_label():
    y_true = ["cat", "dog", "bird", "dog"]
    y_pred = ["cat", "cat", "bird", "dog"]
    assert accuracy(y_true, y_pred) == 0.75
    c = confusion_counts(y_true, y_pred, positive="dog")
    assert c == (1, 0, 2, 1)
    assert tpr(y_true, y_pred, positive="dog") == 0.5
    assert confusion_counts([True, False], [True, True], positive=True) == (1, 1, 0, 0)


def test_zero_division_is_explicit():
    # no positives in y_true: TPR undefined
    assert tpr([0, 0], [0, 1]) == 0.0
    assert tpr([0, 0], [0, 1], zero_division=1.0) == 1.0
    assert math.isnan(tpr([0, 0], [0, 1], zero_division=float("nan")))
    with pytest.raises(EvalcoreError, match="TPR"):
        tpr([0, 0], [0, 1], zero_division="error")
    # no negatives: FPR and TNR undefined
    assert fpr([1, 1], [1, 0], zero_division=0.25) == 0.25
    assert tnr([1, 1], [1, 0], zero_division=0.75) == 0.75


def test_classification_bad_input():
    with pytest.raises(EvalcoreError, match="empty"):
        accuracy([], [])
    with pytest.raises(EvalcoreError, match="y_pred"):
        accuracy([1, 0], [1])
    with pytest.raises(EvalcoreError):
        tpr("101", "100")
    with pytest.raises(EvalcoreError, match="zero_division"):
        tnr([1], [1], zero_division="warn")


def _levenshtein_dp(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("seed", range(30))
def test_levenshtein_matches_dynamic_programming_and_rapidfuzz(seed):
    rng = np.random.default_rng(seed)
    alphabet = list("abcdé ")
    a = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
    b = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
    d = _levenshtein_dp(a, b)
    assert levenshtein_distance(a, b) == d == Levenshtein.distance(a, b)
    expected = 1.0 if not a and not b else 1 - d / max(len(a), len(b))
    assert levenshtein_similarity(a, b) == pytest.approx(expected)


def test_levenshtein_hand_computed():
    assert levenshtein_distance("kitten", "sitting") == 3
    assert levenshtein_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert levenshtein_similarity("", "") == 1.0
    assert levenshtein_similarity("abc", "") == 0.0
    with pytest.raises(EvalcoreError):
        levenshtein_distance("a", 3)


@pytest.mark.parametrize("seed", range(10))
def test_cosine_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(int(rng.integers(1, 6)), 4))
    y = rng.normal(size=(int(rng.integers(1, 6)), 4))
    x[0] = 0.0  # a zero vector: sklearn answers 0
    np.testing.assert_allclose(cosine_similarity(x, y), sk_cosine(x, y), atol=1e-12)
    np.testing.assert_allclose(cosine_similarity(x), sk_cosine(x), atol=1e-12)
    v = y[0]
    np.testing.assert_allclose(cosine_similarity(x, v), sk_cosine(x, v[None, :])[:, 0], atol=1e-12)
    np.testing.assert_allclose(cosine_similarity(v, x), sk_cosine(v[None, :], x)[0], atol=1e-12)


def test_cosine_vectors_hand_computed():
    assert cosine_similarity([1, 0], [0, 1]) == 0.0
    assert cosine_similarity([1, 1], [2, 2]) == pytest.approx(1.0)
    assert cosine_similarity([1, 2], [-1, -2]) == pytest.approx(-1.0)
    assert cosine_similarity([3, 4], [4, 3]) == pytest.approx(24 / 25)
    assert cosine_similarity([0, 0], [1, 0]) == 0.0
    assert math.isnan(cosine_similarity([0, 0], [1, 0], zero_division=float("nan")))
    with pytest.raises(EvalcoreError, match="zero"):
        cosine_similarity([0, 0], [1, 0], zero_division="error")
    with pytest.raises(EvalcoreError, match="dimensions"):
        cosine_similarity([1, 2, 3], [1, 2])
    with pytest.raises(EvalcoreError):
        cosine_similarity([], [])


def test_cosine_keeps_the_direction_of_huge_and_tiny_vectors():
    # the norms of 1e200 overflow and of 1e-200 underflow: scaled first, both are parallel
    assert cosine_similarity([1e200, 1e200], [1e200, 1e200]) == pytest.approx(1.0)
    assert cosine_similarity([1e-200, 0.0], [3e-200, 0.0]) == pytest.approx(1.0)
    assert cosine_similarity([1e200, 0.0], [0.0, 1e-200]) == pytest.approx(0.0)
    assert cosine_similarity([-1e-300, 1e-300], [1e300, -1e300]) == pytest.approx(-1.0)
    m = np.array([[1e200, 2e200], [1e-200, 2e-200], [0.0, 0.0]])
    sims = cosine_similarity(m)
    assert sims[0, 1] == pytest.approx(1.0) and sims[2, 0] == 0.0 and not np.isnan(sims).any()


def test_labels_with_nan_are_refused():
    with pytest.raises(EvalcoreError, match="NaN"):
        accuracy([math.nan, 1.0], [math.nan, 1.0])
    with pytest.raises(EvalcoreError, match="NaN"):
        tpr([1, 0], [1, float("nan")])
    with pytest.raises(EvalcoreError, match="NaN"):
        accuracy(["a", math.nan], ["a", "b"])
    assert accuracy(["a", None], ["a", None]) == 1.0
