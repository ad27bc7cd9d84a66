"""evalcore computes every Wilson interval in one place (``stats/_wilson.py``), which agrees
with statsmodels' ``proportion_confint``; the two call sites (a run's accuracy through
``wilson_interval``/``mean_ci`` and the multi-epoch ``clustered_wilson``) agree with each other."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

import evalcore
from evalcore.errors import EvalcoreError
from evalcore.stats import _intervals, clustered_wilson, mean_ci, wilson_interval
from evalcore.stats._wilson import wilson_bounds


@pytest.mark.parametrize("seed", range(30))
def test_wilson_bounds_match_statsmodels_for_a_real_effective_sample_size(seed):
    rng = np.random.default_rng(seed)
    n = float(rng.uniform(1.5, 400.0))  # an effective sample size need not be whole
    s = float(rng.uniform(0.0, n))
    conf = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    lo, hi = proportion_confint(s, n, alpha=1 - conf, method="wilson")
    assert wilson_bounds(s, n, conf) == pytest.approx((max(lo, 0.0), min(hi, 1.0)), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_clustered_wilson_matches_statsmodels_on_its_effective_sample_size(seed):
    rng = np.random.default_rng(100 + seed)
    items = int(rng.integers(3, 40))
    epochs = int(rng.integers(2, 6))
    clusters = [f"item-{i}" for i in range(items) for _ in range(epochs)]
    rate = rng.uniform(0.05, 0.95, items).repeat(epochs)
    values = (rng.random(items * epochs) < rate).astype(float)
    got = clustered_wilson(values, clusters)
    if 0.0 < got["mean"] < 1.0:
        lo, hi = proportion_confint(got["mean"] * got["n_eff"], got["n_eff"], alpha=0.05, method="wilson")
        assert (got["ci_low"], got["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_the_two_call_sites_agree_when_every_item_is_its_own_cluster(seed):
    # one sample per item: no design effect, n_eff = n, so the multi-epoch interval is the
    # plain one a single-epoch run reports
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 300))
    values = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(float)
    if values.min() == values.max():
        values[0] = 1.0 - values[0]
    clustered = clustered_wilson(values, [f"item-{i}" for i in range(n)], confidence=0.9)
    plain = wilson_interval(float(values.sum()), n, 0.9)
    via_mean_ci = mean_ci(values, method="wilson", confidence=0.9)
    assert clustered["n_eff"] == pytest.approx(n, rel=1e-12)
    assert (clustered["ci_low"], clustered["ci_high"]) == pytest.approx(plain, abs=1e-12)
    assert (via_mean_ci["ci_low"], via_mean_ci["ci_high"]) == pytest.approx(plain, abs=1e-15)


def test_clustered_wilson_is_computed_by_the_one_implementation(monkeypatch):
    calls = []

    def spy(s, n, confidence):
        calls.append((s, n, confidence))
        return wilson_bounds(s, n, confidence)

    monkeypatch.setattr(_intervals, "wilson_bounds", spy)
    out = clustered_wilson([1, 0, 1, 1, 0, 1], ["a", "a", "b", "b", "c", "c"], confidence=0.9)
    assert len(calls) == 1
    s, n, conf = calls[0]
    assert conf == 0.9 and n == pytest.approx(out["n_eff"]) and s == pytest.approx(out["mean"] * out["n_eff"])


def test_no_second_wilson_implementation_in_evalcore():
    root = pathlib.Path(evalcore.__file__).parent
    importing = re.compile(r"^\s*(from|import)\s+statsmodels\.stats\.proportion\b", re.M)
    hits = [str(p.relative_to(root)) for p in root.rglob("*.py") if importing.search(p.read_text("utf-8"))]
    assert hits == []


def test_clustered_wilson_refuses_a_confidence_outside_0_1():
    with pytest.raises(EvalcoreError, match="confidence"):
        clustered_wilson([1, 0, 1, 1], ["a", "a", "b", "b"], confidence=1.5)


def test_clustered_wilson_edges_are_exact():
    assert clustered_wilson([0, 0, 0, 0], ["a", "a", "b", "b"])["ci_low"] == 0.0
    assert clustered_wilson([1, 1, 1, 1], ["a", "a", "b", "b"])["ci_high"] == 1.0
