"""OpenAI-compatible chat client: an aiohttp transport (or the ``openai`` SDK), our own retries,
pacing to a requests/tokens-per-minute budget and adaptive concurrency (:mod:`._pacing`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiohttp

from evalcore.errors import EvalcoreError
from evalcore.models._pacing import (
    AdaptiveConcurrency,
    RateStats,
    SlotGate,
    check_rate,
    estimate_tokens,
    shared_budget,
)
from evalcore.models._pricing import Price, load_pricing, price_for
from evalcore.models._retry import RetryPolicy, parse_retry_after
from evalcore.models._sync import run_sync
from evalcore.models._types import Completion, CompletionError, GenerationParams, Message, Usage

_RETRY_STATUS = {408, 409, 429}
#: failures that mean "too much load": the adaptive concurrency halves on them
_CONGESTION = {"RateLimitError", "HTTP503", "Timeout"}
TRANSPORTS = ("aiohttp", "openai")


class _Retryable(Exception):
    """A failure worth retrying, with the server's requested wait if any."""

    def __init__(
        self, kind: str, message: str, retry_after: float | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.headers = headers


class _Fatal(Exception):
    """A failure that no retry will fix (bad request, authentication)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _HTTPStatus(Exception):
    """A reply with an error status (the aiohttp transport)."""

    def __init__(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {body[:300].decode('utf-8', 'replace')}")
        self.status = status
        self.headers = headers


def _by_status(status: int, msg: str, headers: Mapping[str, str] | None) -> _Retryable | _Fatal:
    if status in _RETRY_STATUS or status >= 500:
        kind = "RateLimitError" if status == 429 else f"HTTP{status}"
        return _Retryable(kind, msg, parse_retry_after(headers), headers)
    return _Fatal(f"HTTP{status}", msg)


def _classify(exc: BaseException) -> _Retryable | _Fatal:
    if isinstance(exc, _HTTPStatus):
        return _by_status(exc.status, str(exc), exc.headers)
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return _Retryable("Timeout", f"no answer within the timeout ({exc.__class__.__name__})")
    if isinstance(exc, (aiohttp.ClientConnectionError, ConnectionError)):
        return _Retryable("ConnectionError", str(exc) or exc.__class__.__name__)
    if isinstance(
        exc, (json.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError, aiohttp.ClientPayloadError)
    ):
        return _Retryable("MalformedResponse", f"unreadable response: {str(exc)[:300]}")
    if isinstance(exc, aiohttp.ClientError):
        return _Retryable(exc.__class__.__name__, str(exc)[:300])
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return _Retryable("Timeout", f"no answer within the timeout ({exc.__class__.__name__})")
    if isinstance(exc, openai.APIConnectionError):
        return _Retryable("ConnectionError", str(exc) or exc.__class__.__name__)
    if isinstance(exc, openai.APIStatusError):
        headers = exc.response.headers if exc.response is not None else None
        return _by_status(exc.status_code, f"HTTP {exc.status_code}: {str(exc)[:300]}", headers)
    if isinstance(exc, openai.APIResponseValidationError):
        return _Retryable("MalformedResponse", f"unreadable response: {str(exc)[:300]}")
    if isinstance(exc, openai.APIError):
        return _Retryable(exc.__class__.__name__, str(exc)[:300])
    return _Fatal(exc.__class__.__name__, str(exc)[:300])


def _parse_reply(data: Any) -> tuple[str, Usage, str | None, list[dict[str, Any]] | None]:
    """``(text, usage, model, logprobs)`` of a chat completion's JSON; ValueError when unreadable."""
    if not isinstance(data, dict):
        raise ValueError("response is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ValueError("response's choice has no message")
    text = message.get("content")
    if text is None:
        # a refusal is the model's answer (scored as such); a reply with neither is unreadable
        text = message.get("refusal")
    if not isinstance(text, str):
        raise ValueError("response's message has no content")
    usage = Usage()
    raw_usage = data.get("usage")
    if isinstance(raw_usage, dict):
        usage = Usage(
            prompt_tokens=int(raw_usage.get("prompt_tokens") or 0),
            completion_tokens=int(raw_usage.get("completion_tokens") or 0),
        )
    logprobs = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and lp.get("content"):
        logprobs = [
            {
                "token": t["token"],
                "logprob": float(t["logprob"]),
                "top": {a["token"]: float(a["logprob"]) for a in (t.get("top_logprobs") or [])},
            }
            for t in lp["content"]
        ]
    model = data.get("model")
    return text, usage, str(model) if model else None, logprobs


async def _closer(session: aiohttp.ClientSession) -> AsyncIterator[None]:
    """Held per loop: ``loop.shutdown_asyncgens`` (``asyncio.run``, ``asyncio.Runner``) closes
    the session when its loop ends, so no "Unclosed client session" is reported."""
    try:
        yield
    finally:
        await session.close()


class _LoopState:
    """One event loop's connection pool (or SDK client) and its slot gate."""

    def __init__(self, session: Any, keeper: AsyncIterator[None] | None) -> None:
        self.session = session
        self.keeper = keeper
        self.gate = SlotGate()


class OpenAICompatibleModel:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Calls go through aiohttp with one keep-alive connection pool per event loop (``transport
    = "openai"`` uses the ``openai`` SDK with ``max_retries=0`` instead). This class retries on
    429, 5xx, timeouts, connection errors and malformed responses with exponential backoff and
    full jitter, honouring ``Retry-After``. With ``requests_per_minute`` / ``tokens_per_minute``
    every request is paced to a budget shared by all calls of the process to this endpoint; a
    429, ``Retry-After`` or an exhausted ``x-ratelimit-remaining-*`` pauses them all; the calls
    in flight adapt (AIMD) between 1 and ``concurrency``. A call that still fails is returned
    as a Completion with ``error`` set and ``retries`` counted; it never raises.

    Args:
        model: The model name sent to the endpoint (``gpt-4o-mini``, ``smollm2``).
        base_url: Endpoint base URL (``http://127.0.0.1:8000/v1``); None uses
            ``$OPENAI_BASE_URL`` or the OpenAI API.
        api_key: API key; None uses ``$OPENAI_API_KEY``, or ``"EMPTY"`` when ``require_key`` is
            false (local servers ignore it).
        provider: ``"openai"`` or ``"openai-compatible"``; part of :attr:`name`.
        require_key: Raise :class:`EvalcoreError` when no key is found.
        concurrency: The most calls in flight at once (per event loop).
        timeout: Seconds one attempt may take in total.
        retry: The retry policy.
        pricing: Pricing override file (see :func:`~evalcore.models.load_pricing`).
        seed: Seed of the jitter generator.
        requests_per_minute: The endpoint's request budget (None: unpaced).
        tokens_per_minute: The endpoint's token budget, prompt + completion (None: unpaced).
        adaptive: Halve the calls in flight on 429, 503 and timeouts, add one back per round
            of successes (False: always ``concurrency``).
        transport: ``"aiohttp"`` (default, the fastest measured) or ``"openai"`` (the SDK).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str = "openai-compatible",
        require_key: bool = False,
        concurrency: int = 8,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        pricing: str | os.PathLike[str] | None = None,
        seed: int = 0,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        adaptive: bool = True,
        transport: str = "aiohttp",
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise EvalcoreError(f"must be an integer >= 1, got {concurrency!r}", field="concurrency")
        if transport not in TRANSPORTS:
            raise EvalcoreError(f"must be one of {list(TRANSPORTS)}, got {transport!r}", field="transport")
        from evalcore._checks import check_timeout

        check_timeout(timeout, "timeout")
        rpm = check_rate(requests_per_minute, "requests_per_minute")
        tpm = check_rate(tokens_per_minute, "tokens_per_minute")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if require_key:
                raise EvalcoreError(
                    "no API key: set the OPENAI_API_KEY environment variable (in Python, api_key= also works)",
                    field="OPENAI_API_KEY",
                )
            key = "EMPTY"
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.provider = provider
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self.transport = transport
        self.requests_per_minute = rpm
        self.tokens_per_minute = tpm
        self.budget = shared_budget(self.base_url, rpm, tpm)
        self.adaptive = AdaptiveConcurrency(concurrency, enabled=adaptive)
        self.stats = RateStats()
        self._api_key = key
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._chat_url = self.base_url + "/chat/completions"
        self._rng = random.Random(seed)
        self._price: Price | None = price_for(model, load_pricing(pricing))
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()

    @property
    def name(self) -> str:
        """``provider:model@base_url`` — the cache key's model part."""
        return f"{self.provider}:{self.model}@{self.base_url}"

    @property
    def endpoint(self) -> str:
        """The base URL."""
        return self.base_url

    @property
    def price(self) -> dict[str, float] | None:
        """USD per 1M ``input`` and ``output`` tokens this model is priced at, or None."""
        return None if self._price is None else {"input": self._price.input, "output": self._price.output}

    @property
    def priced(self) -> bool:
        """Whether the pricing table knows this model."""
        return self._price is not None

    def rate_stats(self) -> dict[str, Any]:
        """What pacing did so far: limits, calls in flight now and at the lowest, waits, 429s.

        Returns:
            ``{rpm, tpm, concurrency_max, concurrency_final, concurrency_min, waits_s, n_waits,
            n_429, n_503, n_timeouts}`` (``waits_s``: seconds requests spent waiting for the
            budget or a pause, summed over requests).
        """
        s = self.stats
        return {
            "rpm": self.requests_per_minute,
            "tpm": self.tokens_per_minute,
            "concurrency_max": self.concurrency,
            "concurrency_final": self.adaptive.current,
            "concurrency_min": self.adaptive.minimum_seen,
            "waits_s": round(s.waits_s, 3),
            "n_waits": s.n_waits,
            "n_429": s.n_429,
            "n_503": s.n_503,
            "n_timeouts": s.n_timeouts,
        }

    async def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            if self.transport == "openai":
                import openai

                client = openai.AsyncOpenAI(
                    api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
                )
                state = _LoopState(client, None)
            else:
                session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=self.concurrency, keepalive_timeout=60),
                    timeout=aiohttp.ClientTimeout(total=self.timeout),
                    headers=self._headers,
                    skip_auto_headers=("User-Agent",),
                )
                keeper = _closer(session)
                state = _LoopState(session, keeper)
                self._per_loop[loop] = state
                await keeper.__anext__()  # registers it with the loop's async-generator hooks
            self._per_loop[loop] = state
        return state

    def _request(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "top_p": params.top_p,
        }
        if params.seed is not None:
            req["seed"] = params.seed
        if params.stop:
            req["stop"] = list(params.stop)
        if params.logprobs:
            req["logprobs"] = True
            if params.top_logprobs:
                req["top_logprobs"] = params.top_logprobs
        return req

    async def _attempt(self, state: _LoopState, req: dict[str, Any], body: bytes) -> Completion:
        headers: Mapping[str, str] | None
        if self.transport == "openai":
            from openai.types.chat import ChatCompletion

            # ``post`` with our own JSON body skips the SDK's per-call parameter transformation
            resp = await asyncio.wait_for(
                state.session.post(
                    "/chat/completions", cast_to=ChatCompletion, body=req, options={"timeout": self.timeout}
                ),
                timeout=self.timeout + 0.5,
            )
            data, headers = resp.model_dump(), None
        else:
            async with state.session.post(self._chat_url, data=body) as reply:
                raw = await reply.read()
                headers = reply.headers
                if reply.status >= 400:
                    raise _HTTPStatus(reply.status, raw, headers)
            data = json.loads(raw)
        if headers is not None:
            self.budget.observe(headers)
        text, usage, model, logprobs = _parse_reply(data)
        cost = self._price.cost(usage.prompt_tokens, usage.completion_tokens) if self._price else 0.0
        return Completion(text=text, usage=usage, cost_usd=cost, model=model or self.model, logprobs=logprobs)

    async def _paced(self, tokens: int) -> float:
        """Wait for the budget (and any pause); returns the seconds waited."""
        wait = self.budget.reserve(tokens)
        if wait > 0:
            self.stats.waited(wait)
            await asyncio.sleep(wait)
        return max(wait, 0.0)

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Answer ``messages``; never raises for a failed call.

        Args:
            messages: Chat messages.
            params: Generation parameters.

        Returns:
            The Completion; ``error`` set (and ``retries`` counted) when every attempt failed.
        """
        state = await self._state()
        req = self._request(messages, params)
        body = json.dumps(req).encode() if self.transport == "aiohttp" else b""
        estimate = 0
        if self.budget.tpm:  # prompt (characters / 4) + the completion expected (see _pacing)
            estimate = estimate_tokens(req["messages"]) + self.budget.expected_completion(int(params.max_tokens or 0))
        retries = 0
        await state.gate.acquire(self.adaptive.current)
        try:
            # latency starts when the call is sent, not while it waits for a slot or the budget
            await self._paced(estimate)
            start = time.perf_counter()
            while True:
                sent_epoch = self.adaptive.epoch
                try:
                    comp = await self._attempt(state, req, body)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # classified below; nothing escapes
                    verdict = _classify(exc)
                else:
                    if self.budget.tpm:
                        self.budget.charge(comp.usage.total_tokens - estimate, comp.usage.completion_tokens)
                    self.adaptive.success()
                    comp.latency_s = time.perf_counter() - start
                    comp.retries = retries
                    return comp
                if isinstance(verdict, _Retryable):
                    self.stats.failed(verdict.kind)
                    if verdict.kind in _CONGESTION:
                        self.adaptive.congestion(sent_epoch)
                if isinstance(verdict, _Fatal) or retries >= self.retry.max_retries:
                    return Completion(
                        text="",
                        model=self.model,
                        retries=retries,
                        latency_s=time.perf_counter() - start,
                        error=CompletionError(type=verdict.kind, message=str(verdict)),
                    )
                if verdict.retry_after is not None or verdict.headers is not None:
                    # the server named a wait: every request to it pauses, this one retries after
                    if verdict.retry_after is not None:
                        self.budget.pause(self.retry.backoff(retries, self._rng, verdict.retry_after))
                    self.budget.observe(verdict.headers)
                else:
                    await asyncio.sleep(self.retry.backoff(retries, self._rng, None))
                retries += 1
                await self._paced(estimate)
        finally:
            state.gate.release(self.adaptive.current)

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Blocking form of :meth:`acomplete`."""
        return run_sync(self.acomplete(messages, params))

    async def acheck(self, timeout: float = 5.0) -> None:
        """Check that the endpoint answers before a run starts.

        Args:
            timeout: Seconds to wait for ``GET /models``.

        Raises:
            EvalcoreError: The endpoint cannot be reached or refuses the key.
        """
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=timeout), headers=self._headers
        ) as session:
            for attempt in range(3):
                try:
                    async with session.get(self.base_url + "/models") as reply:
                        status = reply.status
                        await reply.read()
                except (TimeoutError, aiohttp.ClientError) as exc:
                    if attempt == 2:
                        raise EvalcoreError(
                            f"cannot reach endpoint {self.base_url}: {exc.__class__.__name__}: {exc}", field="model"
                        ) from exc
                else:
                    if status in (401, 403):
                        raise EvalcoreError(
                            f"endpoint {self.base_url} refused the API key (HTTP {status})", field="model"
                        )
                    if status < 400 or status in (404, 405) or attempt == 2:
                        return  # no /models route, or it answers if badly: the run's retries take over
                await asyncio.sleep(0.2 * (attempt + 1))

    def check(self, timeout: float = 5.0) -> None:
        """Blocking form of :meth:`acheck`."""
        run_sync(self.acheck(timeout))

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self.name!r})"
