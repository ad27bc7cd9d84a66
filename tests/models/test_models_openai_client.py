"""The OpenAI-compatible client against the fault-injecting fake server."""

from __future__ import annotations

import asyncio
import time

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import FakeChatServer, FaultRates, GenerationParams, OpenAICompatibleModel, RetryPolicy, from_spec
from evalcore.models._server import free_port

MSG = [{"role": "user", "content": "What is six times seven?"}]
FAST = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05)


def _model(server: FakeChatServer, **kw) -> OpenAICompatibleModel:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 2.0)
    return OpenAICompatibleModel("fake", base_url=server.url, **kw)


def test_success_usage_and_cost_from_pricing(tmp_path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text("models:\n  fake: {input: 2.0, output: 10.0}\n")
    with FakeChatServer(responder=lambda m: "six times seven is 42\n#### 42") as srv:
        comp = _model(srv, pricing=prices).complete(MSG, GenerationParams(max_tokens=16))
    assert comp.ok and comp.text.endswith("#### 42") and comp.retries == 0
    # the fake server counts whitespace-separated words as tokens
    assert comp.usage.prompt_tokens == 5 and comp.usage.completion_tokens == 7
    assert comp.cost_usd == pytest.approx((5 * 2.0 + 7 * 10.0) / 1e6)
    assert comp.model == "fake" and comp.latency_s > 0


def test_rate_limit_retry_after_is_honoured() -> None:
    with FakeChatServer(rates=FaultRates(rate_limit=1.0), retry_after=0.3) as srv:
        comp = _model(srv, retry=RetryPolicy(max_retries=2, base_delay=0.001)).complete(MSG, GenerationParams())
    assert not comp.ok and comp.error.type == "RateLimitError"
    assert comp.retries == 2 and srv.counts["requests"] == 3
    assert comp.latency_s >= 0.6  # two waits of Retry-After: 0.3 s, not the 1 ms backoff


@pytest.mark.parametrize("kind", ["server_error", "malformed", "stall"])
def test_transient_faults_are_retried_until_success(kind) -> None:
    # rate 0.5 with a fixed seed: some attempts fail, the call ends ok with retries counted
    rates = FaultRates(**{kind: 0.6})
    with FakeChatServer(rates=rates, seed=3, stall_s=1.5) as srv:
        model = _model(srv, timeout=0.4, retry=RetryPolicy(max_retries=12, base_delay=0.01, max_delay=0.05))
        comps = [model.complete([{"role": "user", "content": f"q{i}"}], GenerationParams()) for i in range(6)]
    assert all(c.ok for c in comps)
    retries = sum(c.retries for c in comps)
    assert srv.counts["requests"] == 6 + retries  # every retry was a real request
    if kind == "stall":
        # Every stall times out and is retried; on a loaded machine an ordinary answer may
        # also miss the 0.4 s timeout, and is retried like one.
        assert retries >= srv.counts[kind] > 0
    else:
        assert retries == srv.counts[kind] > 0


def test_persistent_failure_is_an_error_never_an_empty_answer() -> None:
    with FakeChatServer(rates=FaultRates(persistent=1.0)) as srv:
        comp = _model(srv).complete(MSG, GenerationParams())
    assert not comp.ok and comp.error.type == "HTTP500" and comp.retries == FAST.max_retries
    assert srv.counts["requests"] == FAST.max_retries + 1


def test_client_error_is_not_retried() -> None:
    with FakeChatServer() as srv:
        model = OpenAICompatibleModel("fake", base_url=srv.url + "/wrong", retry=FAST)
        comp = model.complete(MSG, GenerationParams())
    assert not comp.ok and comp.error.type == "HTTP404" and comp.retries == 0


def test_connection_refused_is_retried_then_recorded() -> None:
    model = OpenAICompatibleModel("x", base_url=f"http://127.0.0.1:{free_port()}/v1", retry=FAST)
    comp = model.complete(MSG, GenerationParams())
    assert not comp.ok and comp.error.type == "ConnectionError" and comp.retries == 4


def test_check_reports_unreachable_endpoint() -> None:
    model = OpenAICompatibleModel("x", base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(EvalcoreError, match="cannot reach endpoint"):
        model.check(timeout=0.5)
    with FakeChatServer() as srv:
        _model(srv).check()


def test_concurrency_limit_is_respected() -> None:
    with FakeChatServer(latency_s=0.05) as srv:
        model = _model(srv, concurrency=3)

        async def many() -> list:
            return await asyncio.gather(
                *(model.acomplete([{"role": "user", "content": str(i)}], GenerationParams()) for i in range(12))
            )

        start = time.perf_counter()
        comps = asyncio.run(many())
        wall = time.perf_counter() - start
    assert all(c.ok for c in comps)
    assert srv.max_in_flight == 3
    assert wall >= 4 * 0.05  # 12 calls, 3 at a time, 50 ms each


def test_request_carries_generation_params() -> None:
    seen = []
    with FakeChatServer(responder=lambda m: seen.append(m) or "ok") as srv:
        model = _model(srv)
        req = model._request(MSG, GenerationParams(temperature=0.7, max_tokens=9, seed=5, stop=("###",)))
        assert req["temperature"] == 0.7 and req["max_tokens"] == 9 and req["seed"] == 5
        assert req["stop"] == ["###"] and "logprobs" not in req
        assert model.complete(MSG, GenerationParams()).text == "ok"
    assert seen == [MSG]


def test_openai_spec_needs_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EvalcoreError, match="OPENAI_API_KEY"):
        from_spec("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    m = from_spec("openai:gpt-4o-mini")
    assert m.name == "openai:gpt-4o-mini@https://api.openai.com/v1" and m.priced


def test_a_choice_without_a_message_is_an_error_never_an_empty_answer() -> None:
    with FakeChatServer(rates=FaultRates(no_message=1.0)) as srv:
        comp = _model(srv).complete(MSG, GenerationParams())
    assert not comp.ok and comp.text == ""
    assert comp.error.type == "MalformedResponse" and "no message" in comp.error.message
    assert srv.counts["requests"] == FAST.max_retries + 1  # retried like any unreadable reply


def test_a_choice_without_a_message_is_retried_until_a_real_answer() -> None:
    with FakeChatServer(rates=FaultRates(no_message=0.6), seed=5) as srv:
        model = _model(srv, retry=RetryPolicy(max_retries=12, base_delay=0.01, max_delay=0.05))
        comps = [model.complete([{"role": "user", "content": f"q{i}"}], GenerationParams()) for i in range(6)]
    assert all(c.ok and c.text.endswith("#### 42") for c in comps)
    assert sum(c.retries for c in comps) == srv.counts["no_message"] > 0
