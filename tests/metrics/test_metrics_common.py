"""Shared invariance tests driven by a registry of metrics (scikit-learn test_common style).

Each metric is registered with the kind of input it takes, its range, whether it is symmetric
in its two arguments, its value for a perfect prediction, and whether it ignores the order of
the ranking. Every property is then tested on random inputs for every registered metric.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pytest

from evalcore import metrics as M


@dataclass(frozen=True)
class Spec:
    fn: Callable[..., Any]
    kind: str  # "ranking" | "labels" | "strings" | "vectors"
    bounds: tuple[float, float] = (0.0, 1.0)
    symmetric: bool = False
    perfect: float | None = 1.0
    rank_order_invariant: bool = False


def _f(fn: Callable[..., Any], field: str) -> Callable[..., float]:
    def wrapped(*args: Any, **kwargs: Any) -> float:
        return getattr(fn(*args, **kwargs), field)

    wrapped.__name__ = f"{fn.__name__}.{field}"
    return wrapped


REGISTRY: dict[str, Spec] = {
    "precision": Spec(_f(M.precision_recall_f1, "precision"), "ranking", rank_order_invariant=True),
    "recall": Spec(_f(M.precision_recall_f1, "recall"), "ranking", rank_order_invariant=True),
    "f1": Spec(_f(M.precision_recall_f1, "f1"), "ranking", rank_order_invariant=True),
    "precision@3": Spec(partial(M.precision_at_k, k=3), "ranking", perfect=None),
    "recall@5": Spec(partial(M.recall_at_k, k=5), "ranking", perfect=None),
    "hit_rate": Spec(M.hit_rate, "ranking", rank_order_invariant=True),
    "mrr": Spec(M.mrr, "ranking"),
    "ndcg@5": Spec(partial(M.ndcg_at_k, k=5), "ranking"),
    "ndcg@5_exp": Spec(partial(M.ndcg_at_k, k=5, gain="exponential"), "ranking"),
    "ndcg_full": Spec(partial(M.ndcg_at_k, k=1000), "ranking"),
    "ndcg@all": Spec(partial(M.ndcg_at_k, k=None), "ranking"),
    "precision@all": Spec(partial(M.precision_at_k, k=None), "ranking", rank_order_invariant=True),
    "recall@all": Spec(partial(M.recall_at_k, k=None), "ranking", rank_order_invariant=True),
    "dcg@5": Spec(partial(M.dcg_at_k, k=5), "ranking", bounds=(0, np.inf), perfect=None),
    "accuracy": Spec(M.accuracy, "labels", symmetric=True),
    "tpr": Spec(M.tpr, "labels"),
    "tnr": Spec(M.tnr, "labels"),
    "fpr": Spec(M.fpr, "labels", perfect=0.0),
    "levenshtein_similarity": Spec(M.levenshtein_similarity, "strings", symmetric=True),
    "levenshtein_distance": Spec(M.levenshtein_distance, "strings", bounds=(0, np.inf), symmetric=True, perfect=0.0),
    "cosine_similarity": Spec(M.cosine_similarity, "vectors", bounds=(-1.0, 1.0), symmetric=True),
}

NAMES = sorted(REGISTRY)

# Public names of evalcore.metrics that are not pairwise metrics, with the reason: everything
# else must be in REGISTRY, so a new metric cannot skip the shared invariance tests.
NOT_PAIRWISE_METRICS = {
    "MetricResult": "result type",
    "PrecisionRecallF1": "result type",
    "ConfusionCounts": "result type",
    "confusion_counts": "counts, not a score",
    "mean_over_queries": "aggregator over per-query metrics",
    "RESPONSE_TIME_TIERS": "constant",
    "response_time_score": "one latency, tested in performance",
    "memory_score": "two memory readings, tested in performance",
    "throughput_score": "one rate, tested in performance",
    "learning_curve": "timings over encounters, tested in learning",
    "learning_curve_improvement": "timings over encounters, tested in learning",
    "reuse_rate": "counts, tested in learning",
}


def _underlying(fn: Callable[..., Any]) -> str:
    while isinstance(fn, partial):
        fn = fn.func
    name = fn.__name__
    return name.split(".")[0]


def test_every_public_metric_is_registered():
    registered = {_underlying(spec.fn) for spec in REGISTRY.values()}
    # wrapped functions (precision_recall_f1.precision) carry their source's name first
    public = set(M.__all__)
    missing = public - registered - set(NOT_PAIRWISE_METRICS)
    assert not missing, f"public metrics without a registry entry: {sorted(missing)}"
    stale = (registered | set(NOT_PAIRWISE_METRICS)) - public
    assert not stale, f"registered names that evalcore.metrics does not export: {sorted(stale)}"


def test_k_none_means_the_whole_list():
    ranking, relevant = ["a", "x", "b", "y"], {"a": 1, "b": 1, "c": 1}
    assert M.precision_at_k(ranking, relevant, k=None) == 0.5
    assert M.precision_at_k([], relevant, k=None) == 0.0
    assert M.recall_at_k(ranking, relevant, k=None) == pytest.approx(2 / 3)
    idcg = 1 + 1 / np.log2(3) + 1 / np.log2(4)  # every judged relevant id, not only four ranks
    dcg = 1 + 1 / np.log2(4)
    assert M.dcg_at_k(ranking, relevant, k=None) == pytest.approx(dcg)
    assert M.ndcg_at_k(ranking, relevant, k=None) == pytest.approx(dcg / idcg)
    assert M.ndcg_at_k(ranking, relevant, k=None) == pytest.approx(M.ndcg_at_k(ranking, relevant, k=50))


def _inputs(kind: str, rng: np.random.Generator) -> tuple[Any, Any]:
    if kind == "ranking":
        docs = [f"d{i}" for i in range(int(rng.integers(2, 15)))]
        retrieved = list(rng.permutation(docs)[: int(rng.integers(1, len(docs) + 1))])
        relevant = {d: int(rng.integers(1, 4)) for d in docs if rng.random() < 0.4}
        return retrieved, relevant or {docs[0]: 1}
    if kind == "labels":
        n = int(rng.integers(2, 40))
        t = rng.integers(0, 2, n)
        t[0], t[1] = 0, 1  # both classes present, so no ratio is 0/0
        return t, rng.integers(0, 2, n)
    if kind == "strings":
        alphabet = list("abcxyz")
        return tuple("".join(rng.choice(alphabet, int(rng.integers(0, 10)))) for _ in range(2))
    if kind == "vectors":
        return rng.normal(size=5), rng.normal(size=5)
    raise AssertionError(kind)


def _perfect(kind: str, rng: np.random.Generator) -> tuple[Any, Any]:
    a, b = _inputs(kind, rng)
    if kind == "ranking":
        ideal = sorted(b, key=lambda d: -b[d])
        return ideal, b
    if kind == "labels":
        return a, a.copy()
    if kind == "strings":
        return a, a
    return a, 3.0 * a


@pytest.mark.parametrize("name", NAMES)
def test_range(name):
    spec = REGISTRY[name]
    rng = np.random.default_rng(0)
    lo, hi = spec.bounds
    for _ in range(50):
        value = spec.fn(*_inputs(spec.kind, rng))
        assert lo - 1e-12 <= value <= hi + 1e-12, (name, value)


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].kind != "ranking"])
def test_symmetry(name):
    # (ranking metrics take a ranking and judgments: swapping them is meaningless)
    spec = REGISTRY[name]
    rng = np.random.default_rng(1)
    pairs = [_inputs(spec.kind, rng) for _ in range(30)]
    same = [spec.fn(a, b) == pytest.approx(spec.fn(b, a)) for a, b in pairs]
    if spec.symmetric:
        assert all(same), name
    else:
        assert not all(same), f"{name} is registered as asymmetric but behaved symmetrically"


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].perfect is not None])
def test_perfect_prediction(name):
    spec = REGISTRY[name]
    rng = np.random.default_rng(2)
    for _ in range(20):
        assert spec.fn(*_perfect(spec.kind, rng)) == pytest.approx(spec.perfect), name


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].kind == "labels"])
def test_item_order_invariance(name):
    spec = REGISTRY[name]
    rng = np.random.default_rng(3)
    for _ in range(20):
        t, p = _inputs("labels", rng)
        perm = rng.permutation(t.size)
        assert spec.fn(t[perm], p[perm]) == pytest.approx(spec.fn(t, p))


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].kind == "ranking"])
def test_judgment_order_invariance(name):
    # the order in which relevance judgments are listed never matters
    spec = REGISTRY[name]
    rng = np.random.default_rng(4)
    for _ in range(20):
        retrieved, relevant = _inputs("ranking", rng)
        shuffled = dict(sorted(relevant.items(), key=lambda _: rng.random()))
        assert spec.fn(retrieved, shuffled) == pytest.approx(spec.fn(retrieved, relevant))


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].kind == "ranking"])
def test_rank_order_sensitivity(name):
    # set-based metrics ignore the order of the ranking; rank-based ones must not
    spec = REGISTRY[name]
    rng = np.random.default_rng(5)
    same = []
    for _ in range(40):
        retrieved, relevant = _inputs("ranking", rng)
        shuffled = list(rng.permutation(retrieved))
        same.append(spec.fn(shuffled, relevant) == pytest.approx(spec.fn(retrieved, relevant)))
    if spec.rank_order_invariant:
        assert all(same), name
    else:
        assert not all(same), name


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].kind == "ranking"])
def test_mean_over_queries_is_query_order_invariant(name):
    spec = REGISTRY[name]
    rng = np.random.default_rng(6)
    run, qrels = {}, {}
    for q in range(15):
        run[f"q{q}"], qrels[f"q{q}"] = _inputs("ranking", rng)
    res = M.mean_over_queries(spec.fn, run, qrels)
    rev = M.mean_over_queries(spec.fn, run, dict(reversed(list(qrels.items()))))
    assert rev.mean == pytest.approx(res.mean)
    assert rev.per_item == res.per_item
    assert res.mean == pytest.approx(np.mean([spec.fn(run[q], qrels[q]) for q in qrels]))
