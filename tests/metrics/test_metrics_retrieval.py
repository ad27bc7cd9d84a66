"""Retrieval metrics: hand-computed cases and cross-checks against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score, precision_recall_fscore_support

from evalcore.errors import EvalcoreError
from evalcore.metrics import (
    MetricResult,
    dcg_at_k,
    hit_rate,
    mean_over_queries,
    mrr,
    ndcg_at_k,
    precision_at_k,
    precision_recall_f1,
    recall_at_k,
)


def _random_query(rng: np.random.Generator, graded: bool):
    """A universe of docs, a ranking of some of them, and relevance judgments."""
    n_docs = int(rng.integers(3, 30))
    docs = [f"d{i}" for i in range(n_docs)]
    n_ret = int(rng.integers(1, n_docs + 1))
    retrieved = list(rng.permutation(docs)[:n_ret])
    if graded:
        grades = {d: int(rng.integers(0, 4)) for d in docs if rng.random() < 0.6}
        relevant = grades
    else:
        relevant = {d for d in docs if rng.random() < 0.4}
    return docs, retrieved, relevant


@pytest.mark.parametrize("seed", range(40))
def test_precision_recall_f1_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    docs, retrieved, relevant = _random_query(rng, graded=False)
    k = None if seed % 2 else int(rng.integers(1, len(retrieved) + 1))
    top = retrieved if k is None else retrieved[:k]
    y_true = [int(d in relevant) for d in docs]
    y_pred = [int(d in top) for d in docs]
    for zd in (0.0, 1.0):
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="binary", zero_division=zd)
        got = precision_recall_f1(retrieved, relevant, k=k, zero_division=zd)
        assert got == pytest.approx((p, r, f), abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("graded", [False, True])
def test_ndcg_matches_sklearn_when_all_judged_docs_are_scored(seed, graded):
    # sklearn computes the ideal DCG from every doc it scores: put every judged doc in the
    # scored universe (non-retrieved docs get scores below every retrieved one), so both use
    # all judged relevant items for the ideal ranking.
    rng = np.random.default_rng(1000 + seed)
    docs, retrieved, relevant = _random_query(rng, graded)
    grade = (lambda d: float(relevant.get(d, 0))) if graded else (lambda d: float(d in relevant))
    if sum(grade(d) for d in docs) == 0:
        relevant = {docs[0]: 2} if graded else {docs[0]}
    k = int(rng.integers(1, len(retrieved) + 1))
    rank_score = {d: float(len(docs) - i) for i, d in enumerate(retrieved)}
    rest = [d for d in docs if d not in rank_score]
    for j, d in enumerate(rest):
        rank_score[d] = -1.0 - j
    y_true = np.array([[grade(d) for d in docs]])
    y_score = np.array([[rank_score[d] for d in docs]])
    expected = ndcg_score(y_true, y_score, k=k)
    assert ndcg_at_k(retrieved, relevant, k=k) == pytest.approx(expected, abs=1e-12)


def test_ndcg_hand_computed_ideal_uses_unretrieved_relevant_items():
    # Retrieved a(3), b(0), c(1); judged z(2) never retrieved.
    # DCG@3 = 3/log2(2) + 0/log2(3) + 1/log2(4) = 3.5
    # IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3.5 + 2/log2(3)
    relevant = {"a": 3, "c": 1, "z": 2}
    expected = 3.5 / (3.5 + 2 / math.log2(3))
    assert ndcg_at_k(["a", "b", "c"], relevant, k=3) == pytest.approx(expected, abs=1e-15)
    # a perfect ranking of the retrieved part alone is not perfect overall
    assert ndcg_at_k(["a", "c"], relevant, k=2) < 1.0
    assert ndcg_at_k(["a", "z", "c"], relevant, k=3) == pytest.approx(1.0)
    # exponential gains: DCG = 7 + 0 + 1/2; IDCG = 7 + 3/log2(3) + 1/2
    assert ndcg_at_k(["a", "b", "c"], relevant, k=3, gain="exponential") == pytest.approx(
        7.5 / (7.5 + 3 / math.log2(3))
    )
    assert dcg_at_k(["a", "b", "c"], relevant, k=3) == pytest.approx(3.5)


def test_ndcg_discount_applies_at_first_position_and_binary_case():
    # single relevant doc at rank 2: DCG = 1/log2(3); IDCG = 1/log2(2) = 1
    assert ndcg_at_k(["x", "r"], {"r"}, k=10) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["r", "x"], {"r"}, k=1) == 1.0
    assert ndcg_at_k(["x", "r"], {"r"}, k=1) == 0.0


def test_no_relevant_items_uses_zero_division():
    assert ndcg_at_k(["a", "b"], set(), k=2) == 0.0
    assert math.isnan(ndcg_at_k(["a"], {}, k=2, zero_division=float("nan")))
    assert recall_at_k(["a"], set(), k=1, zero_division=1.0) == 1.0
    with pytest.raises(EvalcoreError, match="recall"):
        recall_at_k(["a"], set(), k=1, zero_division="error")
    # grades <= 0 are not relevant
    assert ndcg_at_k(["a"], {"a": 0, "b": -1}, k=1) == 0.0
    assert mrr(["a", "b"], set()) == 0.0
    assert hit_rate(["a", "b"], set()) == 0.0
    assert precision_recall_f1([], set()) == (0.0, 0.0, 0.0)
    assert precision_recall_f1([], set(), zero_division=1.0) == (1.0, 1.0, 1.0)


def test_precision_recall_at_k_hand_computed():
    retrieved = ["a", "b", "c", "d", "e"]
    relevant = {"b", "d", "z"}
    assert precision_at_k(retrieved, relevant, k=2) == 0.5
    assert precision_at_k(retrieved, relevant, k=4) == 0.5
    assert precision_at_k(retrieved, relevant, k=10) == 0.2  # denominator stays k
    assert recall_at_k(retrieved, relevant, k=2) == pytest.approx(1 / 3)
    assert recall_at_k(retrieved, relevant, k=5) == pytest.approx(2 / 3)
    assert hit_rate(retrieved, relevant, k=1) == 0.0
    assert hit_rate(retrieved, relevant, k=2) == 1.0


def test_mrr_hand_computed():
    assert mrr(["a", "b", "c"], {"c"}) == pytest.approx(1 / 3)
    assert mrr(["a", "b", "c"], {"b", "c"}) == 0.5
    assert mrr(["a", "b", "c"], {"c"}, k=2) == 0.0
    assert mrr(["a", "b", "c"], {"q"}) == 0.0
    assert mrr(["a", "b"], {"a": 0, "b": 2}) == 0.5


@pytest.mark.parametrize("seed", range(20))
def test_mrr_and_hit_rate_against_bruteforce(seed):
    rng = np.random.default_rng(seed)
    _, retrieved, relevant = _random_query(rng, graded=False)
    ranks = [i + 1 for i, d in enumerate(retrieved) if d in relevant]
    assert mrr(retrieved, relevant) == (1 / ranks[0] if ranks else 0.0)
    assert hit_rate(retrieved, relevant) == float(bool(ranks))


def test_bad_inputs_raise_evalcore_error():
    with pytest.raises(EvalcoreError, match="duplicated"):
        ndcg_at_k(["a", "a"], {"a"})
    with pytest.raises(EvalcoreError, match="k must"):
        precision_at_k(["a"], {"a"}, k=0)
    with pytest.raises(EvalcoreError):
        recall_at_k("abc", {"a"})
    with pytest.raises(EvalcoreError):
        mrr(["a"], "a")
    with pytest.raises(EvalcoreError, match="grade"):
        ndcg_at_k(["a"], {"a": "high"})
    with pytest.raises(EvalcoreError, match="gain"):
        ndcg_at_k(["a"], {"a"}, gain="cubic")
    with pytest.raises(EvalcoreError, match="zero_division"):
        ndcg_at_k(["a"], {"a"}, zero_division="warn")


def test_mean_over_queries_returns_per_query_scores():
    run = {"q1": ["a", "b"], "q2": ["c", "d"], "unjudged": ["x"]}
    qrels = {"q1": {"b"}, "q2": {"c"}, "q3": {"e"}}
    res = mean_over_queries(mrr, run, qrels)
    assert isinstance(res, MetricResult)
    assert res.per_item == {"q1": 0.5, "q2": 1.0, "q3": 0.0}
    assert res.mean == pytest.approx(0.5)
    mean, per = res
    assert mean == res.mean and per is res.per_item
    assert list(res.series().index) == ["q1", "q2", "q3"]
    np.testing.assert_allclose(res.values, [0.5, 1.0, 0.0])
    f1 = mean_over_queries(precision_recall_f1, run, qrels, field="f1")
    assert f1.per_item["q1"] == pytest.approx(2 / 3)
    nanres = mean_over_queries(recall_at_k, {"q1": ["a"]}, {"q1": {"a"}, "q2": set()}, k=1, zero_division=float("nan"))
    assert nanres.mean == 1.0 and math.isnan(nanres.per_item["q2"])
    with pytest.raises(EvalcoreError, match="q1"):
        mean_over_queries(mrr, {"q1": ["a", "a"]}, {"q1": {"a"}})
    with pytest.raises(EvalcoreError, match="qrels"):
        mean_over_queries(mrr, {}, {})


def test_all_ties_in_relevance():
    # every judged doc has the same grade: any order of all of them is ideal
    relevant = {"a": 2, "b": 2, "c": 2}
    for ranking in (["a", "b", "c"], ["c", "a", "b"], ["b", "c", "a"]):
        assert ndcg_at_k(ranking, relevant, k=3) == pytest.approx(1.0)
        assert precision_recall_f1(ranking, relevant) == (1.0, 1.0, 1.0)
    # the same grades with one non-relevant doc in front: DCG = 2/log2(3) + 2/log2(4)
    expected = (2 / math.log2(3) + 2 / math.log2(4)) / (2 + 2 / math.log2(3) + 2 / math.log2(4))
    assert ndcg_at_k(["x", "a", "b"], relevant, k=3) == pytest.approx(expected)
    assert mrr(["x", "a", "b"], relevant) == 0.5
