"""The benchmark notebook's latency is results.json's: answered model calls only.

``summarize`` leaves out failed calls, and cache hits unless every answer came from the cache;
the notebook's record and usage table used to take every sample (errors' ~0 s and cache hits'
old latencies included), so one name showed two numbers.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalcore import reporting as rep
from evalcore.models import FakeChatServer, FaultRates, RetryPolicy, from_spec
from evalcore.runs import load_run, run_benchmark

KEYS = ("latency_p50_s", "latency_p95_s", "latency_n")


def _run(model, tmp_path, run_id, limit):
    return run_benchmark(
        "gsm8k",
        model,
        source="sample",
        progress=False,
        run_dir=tmp_path / "runs",
        run_id=run_id,
        limit=limit,
        cache=tmp_path / "cache.sqlite",
    )


def _assert_notebook_matches_results(run) -> None:
    res = dict(run.results)
    frame = rep.samples_frame(run)
    record = rep.benchmark_records(run, frame)
    row = rep.usage_summary(frame).set_index("measure").loc["latency_s"]
    # the numbers that were 0.344 in results.json and 6.81 in the notebook
    assert record["latency_p50_s"] == pytest.approx(res["latency_p50_s"])
    assert row["p50"] == pytest.approx(res["latency_p50_s"])
    assert row["p95"] == pytest.approx(res["latency_p95_s"])
    assert row["n"] == res["latency_n"]
    assert row["covers"].startswith(f"{res['latency_n']} of {len(frame)} calls")
    assert {k: record.get(k) for k in KEYS} == pytest.approx({k: res[k] for k in KEYS})
    # the same numbers when the record is computed from the samples alone (no results.json)
    recomputed = rep.benchmark_records(SimpleNamespace(samples=run.samples, config=run.config, results={}), frame)
    assert {k: recomputed.get(k) for k in KEYS} == pytest.approx({k: res[k] for k in KEYS})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A run with failed calls, cache hits and fresh answers, and one answered from the cache."""
    tmp_path = tmp_path_factory.mktemp("latency")
    with FakeChatServer(latency_s=0.3) as srv:
        model = from_spec(f"openai-compatible:fake@{srv.url}", retry=RetryPolicy(max_retries=0))
        _run(model, tmp_path, "warm", limit=4)  # fills the cache with 0.3 s answers
        # now half the new requests fail at once (0 s) and the answered ones take 0.05 s
        srv.rates, srv.seed, srv.latency_s = FaultRates(persistent=0.5), 2, 0.05
        mixed = load_run(_run(model, tmp_path, "mixed", limit=12))
        cached = load_run(_run(model, tmp_path, "cached", limit=4))
    return mixed, cached


def test_notebook_latency_equals_results_json(runs) -> None:
    mixed, _ = runs
    samples = mixed.samples
    errors = [s for s in samples if s["error"]]
    hits = [s for s in samples if s.get("cached") and not s["error"]]
    fresh = [s for s in samples if not s.get("cached") and not s["error"]]
    assert errors and hits and fresh  # the run has all three kinds of sample
    res = mixed.results
    assert res["latency_n"] == len(fresh) and res["latency_from_cache"] is False
    assert 0.05 <= res["latency_p50_s"] < 0.3
    _assert_notebook_matches_results(mixed)
    covers = rep.usage_summary(rep.samples_frame(mixed)).set_index("measure").loc["latency_s", "covers"]
    assert f"{len(errors)} failed" in covers and f"{len(hits)} cache hits" in covers


def test_notebook_latency_of_a_run_answered_from_the_cache(runs) -> None:
    _, cached = runs
    assert all(s.get("cached") for s in cached.samples)
    assert cached.results["latency_from_cache"] is True and cached.results["latency_p50_s"] >= 0.3
    _assert_notebook_matches_results(cached)


def test_samples_frame_has_cached(runs) -> None:
    mixed, _ = runs
    frame = rep.samples_frame(mixed)
    assert "cached" in frame and frame["cached"].tolist() == [bool(s.get("cached")) for s in mixed.samples]
