"""Pacing to a provider's rate limits, asserted on the rate-limited fake server (issue 41)."""

from __future__ import annotations

import asyncio
import math

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import FakeChatServer, GenerationParams, OpenAICompatibleModel, RetryPolicy, from_spec
from evalcore.models._fakeserver import RateLimits, format_reset
from evalcore.models._pacing import AdaptiveConcurrency, RateBudget, SlotGate, parse_reset

PARAMS = GenerationParams(max_tokens=8)


def _ask(model: OpenAICompatibleModel, n: int) -> list:
    async def many() -> list:
        return await asyncio.gather(
            *(model.acomplete([{"role": "user", "content": f"question {i}"}], PARAMS) for i in range(n))
        )

    return asyncio.run(many())


def _served(srv: FakeChatServer) -> list[str]:
    return [content for content, outcome in srv.log if outcome == "ok"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("2m", 120.0)],
)
def test_parse_reset_reads_openai_durations(text, seconds) -> None:
    assert parse_reset(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", [None, "", "soon", "1x", "s", "nan", "1s2"])
def test_parse_reset_refuses_what_is_no_duration(text) -> None:
    assert parse_reset(text) is None


@pytest.mark.parametrize("seconds", [0.02, 0.5, 1.0, 1.25, 59.0, 360.0, 3723.5])
def test_the_servers_reset_format_reads_back(seconds) -> None:
    assert parse_reset(format_reset(seconds)) == pytest.approx(seconds, abs=1e-3)


@pytest.mark.parametrize("bad", [0, -1, -0.5, math.nan, math.inf, "many", True])
def test_bad_rates_are_refused(bad) -> None:
    for option in ("requests_per_minute", "tokens_per_minute"):
        with pytest.raises(EvalcoreError, match=option):
            OpenAICompatibleModel("x", base_url="http://127.0.0.1:9/v1", **{option: bad})


def test_rates_in_the_spec_and_options() -> None:
    m = from_spec("openai-compatible:x@http://127.0.0.1:9/v1?rpm=500&tpm=9000")
    assert (m.requests_per_minute, m.tokens_per_minute) == (500.0, 9000.0)
    assert m.name == "openai-compatible:x@http://127.0.0.1:9/v1"  # the rate is no part of the name
    m = from_spec("openai-compatible:x@http://127.0.0.1:9/v1?rpm=500", requests_per_minute=20)
    assert m.requests_per_minute == 20.0
    for spec in ("?rpm=0", "?rpm=-5", "?rpm=fast", "?burst=3"):
        with pytest.raises(EvalcoreError):
            from_spec("openai-compatible:x@http://127.0.0.1:9/v1" + spec)


def test_budget_paces_requests_and_tokens() -> None:
    b = RateBudget(rpm=600, headroom=0.0)  # one request every 0.1 s
    waits = [b.reserve(0) for _ in range(5)]
    assert waits[0] == pytest.approx(0.0, abs=0.01)
    assert [round(w2 - w1, 2) for w1, w2 in zip(waits, waits[1:])] == [0.1] * 4
    t = RateBudget(tpm=6000, headroom=0.0)  # 100 tokens a second
    assert t.reserve(50) == pytest.approx(0.0, abs=0.01)
    assert t.reserve(50) == pytest.approx(0.5, abs=0.01)
    t.charge(100)  # the reply's usage: 100 tokens more than estimated
    assert t.reserve(0) == pytest.approx(2.0, abs=0.02)
    t.pause(5.0)
    assert t.reserve(0) == pytest.approx(5.0, abs=0.02)


def test_budget_honours_ratelimit_headers() -> None:
    b = RateBudget()
    assert b.observe({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "9s"}) is None
    assert b.reserve(0) == pytest.approx(0.0, abs=0.01)
    assert b.observe({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m0s"}) == 60.0
    assert b.reserve(0) == pytest.approx(60.0, abs=0.05)


def test_aimd_halves_once_per_round_and_grows_back() -> None:
    a = AdaptiveConcurrency(16)
    epoch = a.epoch
    a.congestion(epoch)
    a.congestion(epoch)  # a second 429 of the same round: no second halving
    assert a.current == 8 and a.minimum_seen == 8
    a.congestion(a.epoch)
    assert a.current == 4 and a.minimum_seen == 4
    for _ in range(5):
        a.success()
    assert a.current == 5  # about +1 per round of `limit` successes (1/4 + 1/4.25 + ... > 1 after 5)
    for _ in range(500):
        a.success()
    assert a.current == 16 and a.minimum_seen == 4
    fixed = AdaptiveConcurrency(16, enabled=False)
    fixed.congestion(fixed.epoch)
    assert fixed.current == 16


def test_slot_gate_keeps_the_limit_and_the_order() -> None:
    async def scenario() -> tuple[list[int], int]:
        gate, order, peak = SlotGate(), [], 0

        async def one(i: int) -> None:
            nonlocal peak
            await gate.acquire(2)
            peak = max(peak, gate.active)
            order.append(i)
            await asyncio.sleep(0.01)
            gate.release(2)

        await asyncio.gather(*(one(i) for i in range(7)))
        return order, peak

    order, peak = asyncio.run(scenario())
    assert order == list(range(7)) and peak == 2


def test_paced_client_stays_under_the_limit_and_loses_nothing() -> None:
    n = 30
    with FakeChatServer(limits=RateLimits(rpm=1200, window_s=0.5)) as srv:  # 10 per half second
        model = OpenAICompatibleModel("fake", base_url=srv.url, concurrency=16, requests_per_minute=1200)
        comps = _ask(model, n)
        counts, served, admitted = dict(srv.counts), _served(srv), list(srv.admitted)
    assert all(c.ok for c in comps)
    assert sorted(served) == sorted(f"question {i}" for i in range(n))  # each answered once
    assert counts.get("limited", 0) <= 1  # paced below the limit (one allowed for a stalled arrival)
    stats = model.rate_stats()
    assert stats["n_429"] == counts.get("limited", 0) and stats["waits_s"] > 0 and stats["rpm"] == 1200
    # the paced client spreads its requests: no half second holds more than the server's 10
    assert all(sum(1 for t in admitted if s <= t < s + 0.5) <= 10 for s in admitted)
    assert admitted[-1] - admitted[0] >= (n - 1) * 0.05 * 0.9


def test_unpaced_client_is_refused_then_pauses_and_still_loses_nothing() -> None:
    n = 30
    retry = RetryPolicy(max_retries=30)
    with FakeChatServer(limits=RateLimits(rpm=1200, window_s=0.5)) as srv:
        model = OpenAICompatibleModel("fake", base_url=srv.url, concurrency=16, retry=retry)
        comps = _ask(model, n)
        counts, log = dict(srv.counts), list(srv.log)
    assert all(c.ok for c in comps)
    assert counts["ok"] == n and counts["limited"] > 0  # a burst of 16 met a limit of 10
    assert sum(c.retries for c in comps) == counts["limited"]  # each 429 was retried, nothing lost
    first = next(i for i, (_, outcome) in enumerate(log) if outcome == "limited")
    assert [o for _, o in log[:first]] == ["ok"] * first and first <= 10
    stats = model.rate_stats()
    assert stats["n_429"] == counts["limited"]
    assert stats["concurrency_min"] < 16  # the 429s halved the calls in flight


def test_token_limit_is_paced_with_usage_reconciled() -> None:
    n = 12
    with FakeChatServer(limits=RateLimits(tpm=12000, window_s=0.5)) as srv:  # 100 tokens a half second
        model = OpenAICompatibleModel("fake", base_url=srv.url, concurrency=8, tokens_per_minute=12000)
        comps = _ask(model, n)
        counts = dict(srv.counts)
    assert all(c.ok for c in comps) and counts["ok"] == n
    # each call: 2 prompt words + 10 answer words = 12 tokens by the server's count
    assert all(c.usage.total_tokens == 12 for c in comps)
    assert counts.get("limited", 0) <= 1 and model.rate_stats()["tpm"] == 12000


def test_error_burst_halves_concurrency_and_every_call_ends_ok() -> None:
    with FakeChatServer(bursts=[(4, 12)], retry_after=0.01, latency_s=0.01) as srv:
        model = OpenAICompatibleModel("fake", base_url=srv.url, concurrency=8, retry=RetryPolicy(max_retries=20))
        comps = _ask(model, 24)
        counts = dict(srv.counts)
    assert all(c.ok for c in comps) and counts["burst"] == 12 and counts["ok"] == 24
    stats = model.rate_stats()
    assert stats["n_503"] == 12 and stats["concurrency_min"] < 8


def test_lognormal_model_time_is_seeded() -> None:
    with FakeChatServer(latency_s=0.02, latency_sigma=0.5, seed=1) as a:
        with FakeChatServer(latency_s=0.02, latency_sigma=0.5, seed=1) as b:
            times = [a.model_time(i) for i in range(200)]
            assert times == [b.model_time(i) for i in range(200)]
    assert len(set(times)) == 200 and min(times) < 0.02 < max(times)


def test_two_model_objects_share_one_budget_per_endpoint() -> None:
    n = 20
    with FakeChatServer(limits=RateLimits(rpm=1200, window_s=0.5)) as srv:
        a = OpenAICompatibleModel("fake", base_url=srv.url, concurrency=8, requests_per_minute=1200)
        b = OpenAICompatibleModel("fake", base_url=srv.url + "/", concurrency=8)  # the same endpoint
        assert a.budget is b.budget and b.budget.rpm == 1200

        async def both() -> list:
            calls = [
                m.acomplete([{"role": "user", "content": f"question {i}"}], PARAMS)
                for i, m in zip(range(n), [a, b] * n)
            ]
            return await asyncio.gather(*calls)

        comps = asyncio.run(both())
        counts = dict(srv.counts)
    assert all(c.ok for c in comps) and counts["ok"] == n and counts.get("limited", 0) <= 1
    other = OpenAICompatibleModel("fake", base_url="http://127.0.0.1:9/v1")
    assert other.budget is not a.budget
