"""Performance scores and learning metrics: tiers, formulas, edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.metrics import (
    learning_curve,
    learning_curve_improvement,
    memory_score,
    response_time_score,
    reuse_rate,
    throughput_score,
)


@pytest.mark.parametrize(
    ("seconds", "complexity", "expected"),
    [
        (0.0, "simple", 1.0),
        (1.0, "simple", 1.0),
        (1.01, "simple", 0.8),
        (2.0, "simple", 0.8),
        (4.9, "simple", 0.5),
        (5.0, "simple", 0.5),
        (5.1, "simple", 0.2),
        (60, "simple", 0.2),
        (3.0, "complex", 1.0),
        (3.5, "complex", 0.8),
        (5.0, "complex", 0.8),
        (9.99, "complex", 0.5),
        (10.0, "complex", 0.5),
        (10.5, "complex", 0.2),
    ],
)
def test_response_time_tiers(seconds, complexity, expected):
    assert response_time_score(seconds, complexity) == expected


def test_response_time_vectorized_and_errors():
    out = response_time_score([0.5, 1.5, 3.0, 7.0], "simple")
    np.testing.assert_array_equal(out, [1.0, 0.8, 0.5, 0.2])
    with pytest.raises(EvalcoreError, match="complexity"):
        response_time_score(1.0, "medium")
    with pytest.raises(EvalcoreError):
        response_time_score(-1.0)
    with pytest.raises(EvalcoreError):
        response_time_score(float("nan"))


def test_memory_and_throughput_scores():
    assert memory_score(0) == 1.0
    assert memory_score(50) == 0.75
    assert memory_score(200) == 0.0
    assert memory_score(1000) == 0.0
    assert memory_score(-30) == 1.0
    assert memory_score(50, budget_mb=100) == 0.5
    assert throughput_score(5, target=10) == 0.5
    assert throughput_score(25, target=10) == 1.0
    assert throughput_score(0) == 0.0
    with pytest.raises(EvalcoreError, match="target"):
        throughput_score(1, target=0)
    with pytest.raises(EvalcoreError, match="budget"):
        memory_score(1, budget_mb=-1)
    with pytest.raises(EvalcoreError, match="qps"):
        throughput_score(-1)


def test_reuse_rate():
    assert reuse_rate([True, False, True, True]) == 0.75
    assert reuse_rate([1, 1]) == 1.0
    assert reuse_rate([]) == 0.0
    assert reuse_rate([], zero_division=1.0) == 1.0
    with pytest.raises(EvalcoreError, match="reuse"):
        reuse_rate([], zero_division="error")
    with pytest.raises(EvalcoreError, match="binary"):
        reuse_rate([0.5])


def test_learning_curve_improvement_uses_medians():
    rounds = [[4.0, 2.0, 100.0], [3.0, 1.0, 2.0], [1.0, 50.0, 0.5]]
    np.testing.assert_array_equal(learning_curve(rounds), [4.0, 2.0, 1.0])
    assert learning_curve_improvement(rounds) == pytest.approx((4.0 - 1.0) / 4.0)
    assert learning_curve_improvement([2.0, 3.0]) == pytest.approx(-0.5)
    assert learning_curve_improvement([0.0, 1.0]) == 0.0
    with pytest.raises(EvalcoreError, match="2 rounds"):
        learning_curve_improvement([1.0])
    with pytest.raises(EvalcoreError):
        learning_curve_improvement([])
    with pytest.raises(EvalcoreError, match="timings"):
        learning_curve_improvement([[1.0], []])
    with pytest.raises(EvalcoreError, match="zero_division"):
        learning_curve_improvement([0.0, 1.0], zero_division="error")
