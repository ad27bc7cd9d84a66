"""OpenAI-compatible chat client on the ``openai`` package, with our own retries."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import weakref
from collections.abc import Sequence
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from evalcore.errors import EvalcoreError
from evalcore.models._pricing import Price, load_pricing, price_for
from evalcore.models._retry import RetryPolicy, parse_retry_after
from evalcore.models._sync import run_sync
from evalcore.models._types import Completion, CompletionError, GenerationParams, Message, Usage

_RETRY_STATUS = {408, 409, 429}


class _Retryable(Exception):
    """A failure worth retrying, with the server's requested wait if any."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class _Fatal(Exception):
    """A failure that no retry will fix (bad request, authentication)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _classify(exc: BaseException) -> _Retryable | _Fatal:
    if isinstance(exc, openai.APITimeoutError) or isinstance(exc, asyncio.TimeoutError):
        return _Retryable("Timeout", f"no answer within the timeout ({exc.__class__.__name__})")
    if isinstance(exc, openai.APIConnectionError):
        return _Retryable("ConnectionError", str(exc) or exc.__class__.__name__)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        headers = exc.response.headers if exc.response is not None else None
        msg = f"HTTP {status}: {str(exc)[:300]}"
        if status in _RETRY_STATUS or status >= 500:
            kind = "RateLimitError" if status == 429 else f"HTTP{status}"
            return _Retryable(kind, msg, parse_retry_after(headers))
        return _Fatal(f"HTTP{status}", msg)
    if isinstance(
        exc, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError)
    ):
        return _Retryable("MalformedResponse", f"unreadable response: {str(exc)[:300]}")
    if isinstance(exc, openai.APIError):
        return _Retryable(exc.__class__.__name__, str(exc)[:300])
    return _Fatal(exc.__class__.__name__, str(exc)[:300])


class OpenAICompatibleModel:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    The ``openai`` client runs with ``max_retries=0``; this class retries on 429, 5xx, timeouts,
    connection errors and malformed responses with exponential backoff and full jitter,
    honouring ``Retry-After``. A call that still fails is returned as a Completion with
    ``error`` set and ``retries`` counted; it never raises.

    Args:
        model: The model name sent to the endpoint (``gpt-4o-mini``, ``smollm2``).
        base_url: Endpoint base URL (``http://127.0.0.1:8000/v1``); None uses
            ``$OPENAI_BASE_URL`` or the OpenAI API.
        api_key: API key; None uses ``$OPENAI_API_KEY``, or ``"EMPTY"`` when ``require_key`` is
            false (local servers ignore it).
        provider: ``"openai"`` or ``"openai-compatible"``; part of :attr:`name`.
        require_key: Raise :class:`EvalcoreError` when no key is found.
        concurrency: Calls in flight at once (per event loop).
        timeout: Seconds one attempt may take in total.
        retry: The retry policy.
        pricing: Pricing override file (see :func:`~evalcore.models.load_pricing`).
        seed: Seed of the jitter generator.
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
    ) -> None:
        if concurrency < 1:
            raise EvalcoreError(f"must be >= 1, got {concurrency}", field="concurrency")
        from evalcore._checks import check_timeout

        check_timeout(timeout, "timeout")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if require_key:
                raise EvalcoreError(
                    "no API key: set the OPENAI_API_KEY environment variable (in Python, api_key= also works)", field="OPENAI_API_KEY"
                )
            key = "EMPTY"
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.provider = provider
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self._api_key = key
        self._rng = random.Random(seed)
        self._price: Price | None = price_for(model, load_pricing(pricing))
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

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

    def _state(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
            )
            state = (client, asyncio.Semaphore(self.concurrency))
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

    async def _attempt(self, client: openai.AsyncOpenAI, req: dict[str, Any]) -> Completion:
        # ``post`` with our own JSON body skips the SDK's per-call parameter transformation
        # (about a millisecond); the response is still parsed into the SDK's ChatCompletion.
        resp = await asyncio.wait_for(
            client.post("/chat/completions", cast_to=ChatCompletion, body=req, options={"timeout": self.timeout}),
            timeout=self.timeout + 0.5,
        )
        if not getattr(resp, "choices", None):
            raise ValueError("response has no choices")
        choice = resp.choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise ValueError("response's choice has no message")
        text = getattr(message, "content", None)
        if text is None:
            # a refusal is the model's answer (scored as such); a reply with neither is unreadable
            text = getattr(message, "refusal", None)
        if not isinstance(text, str):
            raise ValueError("response's message has no content")
        usage = Usage()
        if resp.usage is not None:
            usage = Usage(
                prompt_tokens=int(resp.usage.prompt_tokens or 0),
                completion_tokens=int(resp.usage.completion_tokens or 0),
            )
        logprobs = None
        lp = getattr(choice, "logprobs", None)
        if lp is not None and getattr(lp, "content", None):
            logprobs = [
                {
                    "token": t.token,
                    "logprob": float(t.logprob),
                    "top": {a.token: float(a.logprob) for a in (t.top_logprobs or [])},
                }
                for t in lp.content
            ]
        cost = self._price.cost(usage.prompt_tokens, usage.completion_tokens) if self._price else 0.0
        return Completion(text=text, usage=usage, cost_usd=cost, model=str(resp.model or self.model), logprobs=logprobs)

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Answer ``messages``; never raises for a failed call.

        Args:
            messages: Chat messages.
            params: Generation parameters.

        Returns:
            The Completion; ``error`` set (and ``retries`` counted) when every attempt failed.
        """
        client, sem = self._state()
        req = self._request(messages, params)
        retries = 0
        async with sem:
            # latency starts when the call is sent, not while it waits for a free slot
            start = time.perf_counter()
            while True:
                try:
                    comp = await self._attempt(client, req)
                    comp.latency_s = time.perf_counter() - start
                    comp.retries = retries
                    return comp
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # classified below; nothing escapes
                    verdict = _classify(exc)
                if isinstance(verdict, _Fatal) or retries >= self.retry.max_retries:
                    return Completion(
                        text="",
                        model=self.model,
                        retries=retries,
                        latency_s=time.perf_counter() - start,
                        error=CompletionError(type=verdict.kind, message=str(verdict)),
                    )
                await asyncio.sleep(self.retry.backoff(retries, self._rng, verdict.retry_after))
                retries += 1

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
        client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=timeout)
        try:
            for attempt in range(3):
                try:
                    await asyncio.wait_for(client.models.list(), timeout=timeout + 0.5)
                    return
                except openai.APIStatusError as exc:
                    if exc.status_code in (401, 403):
                        raise EvalcoreError(
                            f"endpoint {self.base_url} refused the API key (HTTP {exc.status_code})", field="model"
                        ) from exc
                    if exc.status_code in (404, 405):
                        return  # no /models route; the chat route may still work
                    if attempt == 2:
                        return  # it answers, if badly; the run's retries take over
                except (TimeoutError, openai.APIConnectionError) as exc:
                    if attempt == 2:
                        raise EvalcoreError(
                            f"cannot reach endpoint {self.base_url}: {exc.__class__.__name__}: {exc}", field="model"
                        ) from exc
                await asyncio.sleep(0.2 * (attempt + 1))
        finally:
            await client.close()

    def check(self, timeout: float = 5.0) -> None:
        """Blocking form of :meth:`acheck`."""
        run_sync(self.acheck(timeout))

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self.name!r})"
