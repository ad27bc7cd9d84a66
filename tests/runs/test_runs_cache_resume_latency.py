"""The run store: the cache key and unseeded sampling, resumes with other options,
latency accounting (failed calls, queueing), the printed n of a clustered interval."""

from __future__ import annotations

import json
import sqlite3
import threading

import numpy as np
import pytest
import yaml

from _latency_clock import FakeClock as _FakeClock
from _latency_clock import WatchedLock as _WatchedLock
from _latency_clock import use_clock as _use_clock
from evalcore._runstore import SAMPLES_FILE
from evalcore.benchmarks import load
from evalcore.errors import EvalcoreError
from evalcore.models import FakeChatServer, FaultRates, RetryPolicy, from_spec
from evalcore.runs import load_run, run_benchmark


def _right_answers():
    table = {it.fields["question"]: f"Working.\n#### {it.reference}" for it in load("gsm8k", source="sample")}

    def responder(messages) -> str:
        q = messages[-1]["content"]
        return next((a for k, a in table.items() if k in q), "no idea")

    return responder


def _run(spec, tmp_path, run_id, **kw):
    kw.setdefault("limit", 4)
    kw.setdefault("cache", tmp_path / "c.sqlite")
    return run_benchmark("gsm8k", spec, source="sample", progress=False, run_dir=tmp_path / "runs", run_id=run_id, **kw)


def test_a_sampled_request_without_a_seed_is_never_served_from_the_cache(tmp_path) -> None:
    with FakeChatServer() as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        sampled = {"temperature": 0.7, "seed": None}
        _run(spec, tmp_path, "s1", params=sampled)
        _run(spec, tmp_path, "s2", params=sampled)
        assert srv.counts["requests"] == 8  # old: 4 (the second run repeated the first's draws)
        assert load_run(tmp_path / "runs" / "s2").results["cached"] == 0
        # seeded sampling and greedy requests are still answered from the cache
        _run(spec, tmp_path, "g1", params={"temperature": 0.7, "seed": 3})
        _run(spec, tmp_path, "g2", params={"temperature": 0.7, "seed": 3})
        _run(spec, tmp_path, "g3")
        _run(spec, tmp_path, "g4")
        assert srv.counts["requests"] == 16
        assert load_run(tmp_path / "runs" / "g4").results["cached"] == 4


def test_a_damaged_cache_entry_is_asked_again_not_a_crash(tmp_path) -> None:
    with FakeChatServer(responder=_right_answers()) as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        _run(spec, tmp_path, "a")
        db = sqlite3.connect(tmp_path / "c.sqlite")
        db.execute("UPDATE responses SET completion = substr(completion, 1, 40)")  # torn values
        db.commit()
        db.close()
        with pytest.warns(UserWarning, match="could not be read"):
            path = _run(spec, tmp_path, "b")  # old: json.JSONDecodeError out of the run
        assert srv.counts["requests"] == 8
    res = load_run(path).results
    assert res["cached"] == 0 and res["accuracy_flexible"]["mean"] == 1.0 and res["complete"]


def _cut(path, keep: int) -> None:
    f = path / SAMPLES_FILE
    f.write_text("".join(f.read_text().splitlines(keepends=True)[:keep]))


def test_resume_with_another_seed_is_refused(tmp_path) -> None:
    # the generation seed is pinned, so only the few-shot choice follows --seed: the old code
    # resumed and mixed two few-shot selections in one run
    with FakeChatServer() as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        kw = dict(limit=None, few_shot=2, params={"seed": 5})
        path = _run(spec, tmp_path, "r", seed=0, **kw)
        _cut(path, 5)
        with pytest.raises(EvalcoreError, match="different seed") as info:
            _run(spec, tmp_path, "r", seed=1, **kw)
        assert info.value.field == "seed"
        _run(spec, tmp_path, "r", seed=0, **kw)  # the same options resume
    run = load_run(path)
    assert run.results["complete"] and len(run.samples) == run.config["n_items"]


def test_resume_with_another_price_is_refused(tmp_path) -> None:
    pricing = tmp_path / "pricing.yaml"
    pricing.write_text(yaml.safe_dump({"models": {"gpt-4o-mini": {"input": 150.0, "output": 600.0}}}))
    with FakeChatServer() as srv:
        spec = f"openai-compatible:gpt-4o-mini@{srv.url}"
        path = _run(spec, tmp_path, "p", cache=False)
        assert load_run(path).config["price"] == {"input": 0.15, "output": 0.6}
        _cut(path, 2)
        with pytest.raises(EvalcoreError, match="different price") as info:  # old: mixed costs
            _run(spec, tmp_path, "p", cache=False, model_options={"pricing": str(pricing)})
        assert info.value.field == "price"


def test_latency_percentiles_leave_out_failed_calls(monkeypatch, tmp_path) -> None:
    # a persistent 500 fails at once (no retries); the clock moves only while the server
    # answers, each answer a little longer than the one before (0.10, 0.11, ... s), so a failed
    # call's latency is 0. The old summary put the failures' latencies into p50/p95.
    from evalcore.models import _openai

    clock = _FakeClock()
    _use_clock(monkeypatch, _openai, clock)
    answered: list[float] = []

    def responder(messages) -> str:
        answered.append(0.1 + 0.01 * len(answered))
        clock.advance(answered[-1])
        return "Working.\n#### 42"

    rates = FaultRates(persistent=0.5)
    with FakeChatServer(rates=rates, seed=2, responder=responder) as srv:
        model = from_spec(f"openai-compatible:fake@{srv.url}", retry=RetryPolicy(max_retries=0))
        # one call at a time: no call's time shows in another's latency
        path = _run(model, tmp_path, "lat", limit=20, cache=False, concurrency=1)
    res = load_run(path).results
    samples = [json.loads(line) for line in (path / SAMPLES_FILE).read_text().splitlines()]
    ok = [s["completion"]["latency_s"] for s in samples if not s["error"]]
    errors = [s["completion"]["latency_s"] for s in samples if s["error"]]
    assert len(samples) == 20 and len(ok) >= 5 and len(errors) >= 5
    assert sorted(ok) == pytest.approx(answered, abs=1e-9) and errors == [0.0] * len(errors)
    assert res["latency_n"] == len(ok) and res["latency_from_cache"] is False
    assert res["latency_p50_s"] == pytest.approx(float(np.percentile(ok, 50)), abs=1e-12)
    assert res["latency_p95_s"] == pytest.approx(float(np.percentile(ok, 95)), abs=1e-12)
    # the failed calls would have pulled the percentiles down
    assert res["latency_p50_s"] > float(np.percentile(ok + errors, 50))
    assert res["latency_p95_s"] > float(np.percentile(ok + errors, 95))


def test_latency_of_a_run_leaves_out_queueing_in_the_client(monkeypatch, tmp_path) -> None:
    # the run allows 8 calls in flight, the client 2. The server answers the two calls in
    # flight together, and the clock moves 0.2 s while it does: each call's own time is exactly
    # 0.2 s. The old latencies counted the queue (0.2, 0.2, 0.4, 0.4, ... p50 0.5 s).
    from evalcore.models import _openai

    clock = _FakeClock()
    _use_clock(monkeypatch, _openai, clock)
    # a generous limit only so that a broken pairing fails instead of hanging; no assertion
    pair = threading.Barrier(2, action=lambda: clock.advance(0.2), timeout=120)

    def responder(messages) -> str:
        pair.wait()
        return "Working.\n#### 42"

    with FakeChatServer(responder=responder) as srv:
        model = from_spec(f"openai-compatible:fake@{srv.url}", concurrency=2)
        path = _run(model, tmp_path, "q", limit=8, concurrency=8, cache=False)
        assert srv.max_in_flight == 2 and srv.counts["ok"] == 8
    run = load_run(path)
    res = run.results
    lat = [s["completion"]["latency_s"] for s in run.samples]
    assert len(lat) == 8 and lat == pytest.approx([0.2] * 8, abs=1e-9), lat
    assert res["latency_n"] == 8
    assert res["latency_p50_s"] == pytest.approx(0.2, abs=1e-9)
    assert res["latency_p95_s"] == pytest.approx(0.2, abs=1e-9)


def test_likelihood_latency_leaves_out_the_wait_for_the_model_lock(monkeypatch) -> None:
    from evalcore.runs import _execute
    from evalcore.runs._execute import _likelihood

    clock = _FakeClock()
    _use_clock(monkeypatch, _execute, clock)
    lock = _WatchedLock()
    served: list[int] = []

    class SlowLetters:
        name = "slow"
        call_lock = lock

        def letter_logprobs(self, messages, letters):
            with lock:
                if not served:  # the first call runs while the other two wait for the lock
                    lock.wait_for_askers(3)
                served.append(threading.get_ident())
                clock.advance(0.15)
                return {letter: -1.0 - i for i, letter in enumerate(letters)}

    out = []
    threads = [
        threading.Thread(
            target=lambda: out.append(_likelihood(SlowLetters(), [{"role": "user", "content": "q"}], ["a", "b"]))
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [c.text for c in out] == ["A"] * 3 and len(served) == 3
    lat = [c.latency_s for c in out]
    assert lat == pytest.approx([0.15] * 3, abs=1e-9), lat  # old: 0.15, 0.30, 0.45


def test_clustered_interval_prints_samples_items_and_effective_n(tmp_path) -> None:
    from evalcore.runs._cli import _fmt_ci
    from evalcore.stats import clustered_wilson

    # 4 items x 3 epochs: two items always right, one always wrong, one right once
    values = [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    clusters = [c for c in "abcd" for _ in range(3)]
    with FakeChatServer() as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        path = _run(spec, tmp_path, "e", limit=4, epochs=3, cache=False)
    acc = load_run(path).results["accuracy_flexible"]
    assert acc["n"] == 12 and acc["n_items"] == 4 and acc["method"] == "wilson_clustered"
    ref = clustered_wilson([float(v) for v in values], clusters)
    text = _fmt_ci({**ref, "n_items": 4})
    assert text == (
        f"{ref['mean']:.3f} [{ref['ci_low']:.3f}, {ref['ci_high']:.3f}] 95% CI, "
        f"n=12 samples of 4 items, effective n {ref['n_eff']:.1f}"
    )
    assert _fmt_ci({"mean": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 8}) == "0.500 [0.200, 0.800] 95% CI, n=8"
