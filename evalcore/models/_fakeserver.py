"""A fault-injecting, OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` and injects failures at set
rates: 429 with ``Retry-After``, 500, stalls past the client's timeout, malformed JSON, and a
fraction of requests that fail every time. Which attempt fails is decided by a seeded hash of
the request body and its attempt number, so a run is reproducible whatever the arrival order.

It also enforces a provider's rate limits (:class:`RateLimits`): requests and tokens per
minute counted over a sliding window, a 429 with ``Retry-After`` past the limit and OpenAI's
``x-ratelimit-*`` headers on every reply; answers take a lognormal model time, and bursts of
requests (by arrival order) get 503.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[Sequence[dict[str, Any]]], str]


def _default_responder(messages: Sequence[dict[str, Any]]) -> str:
    return "Adding the numbers step by step gives 42.\n#### 42"


@dataclass(frozen=True)
class FaultRates:
    """Probability of each failure per attempt (their sum must not exceed 1).

    Attributes:
        rate_limit: 429 with a ``Retry-After`` header.
        server_error: 500 with a JSON error body.
        stall: The answer comes only after ``stall_s`` seconds (past the client timeout).
        malformed: 200 with a body that is not JSON.
        persistent: Fraction of distinct requests that get 500 on every attempt.
        no_message: 200 with valid JSON whose choice has no ``message``.
    """

    rate_limit: float = 0.0
    server_error: float = 0.0
    stall: float = 0.0
    malformed: float = 0.0
    persistent: float = 0.0
    no_message: float = 0.0

    def __post_init__(self) -> None:
        total = self.rate_limit + self.server_error + self.stall + self.malformed + self.no_message
        rates = (self.rate_limit, self.server_error, self.stall, self.malformed, self.persistent, self.no_message)
        if total > 1.0 or min(rates) < 0:
            raise ValueError(f"fault rates must be in [0, 1] and sum to <= 1, got {self}")


@dataclass(frozen=True)
class RateLimits:
    """A provider's rate limits, enforced over a sliding window of ``window_s`` seconds.

    A request is refused (429) when the requests of the last ``window_s`` seconds reached
    ``rpm · window_s / 60``, or when their tokens (prompt + completion, whitespace-separated
    words) plus this prompt's would pass ``tpm · window_s / 60``. Refused requests are not
    counted. Providers quantize their per-minute limits to shorter windows the same way.

    Attributes:
        rpm: Requests per minute (None: no limit).
        tpm: Tokens per minute (None: no limit).
        window_s: The window in seconds.
    """

    rpm: float | None = None
    tpm: float | None = None
    window_s: float = 60.0

    def __post_init__(self) -> None:
        for v in (self.rpm, self.tpm):
            if v is not None and not v > 0:
                raise ValueError(f"rate limits must be > 0, got {self}")
        if not self.window_s > 0:
            raise ValueError(f"window_s must be > 0, got {self.window_s}")


def format_reset(seconds: float) -> str:
    """Seconds in OpenAI's ``x-ratelimit-reset-*`` format: ``20ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1.0:
        return f"{max(int(math.ceil(seconds * 1000)), 0)}ms"
    minutes, rest = divmod(seconds, 60.0)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


class _Window:
    """The sliding-window log of admitted requests: ``[time, tokens]`` per request."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.log: collections.deque[list[float]] = collections.deque()
        self.tokens = 0.0

    def _prune(self, now: float) -> None:
        edge = now - self.limits.window_s
        while self.log and self.log[0][0] <= edge:
            self.tokens -= self.log.popleft()[1]

    def admit(self, now: float, prompt_tokens: int) -> tuple[list[float] | None, dict[str, str]]:
        """Admit or refuse a request; returns its log entry (None: refused) and the headers."""
        self._prune(now)
        lim, scale = self.limits, self.limits.window_s / 60.0
        max_req = lim.rpm * scale if lim.rpm else math.inf
        max_tok = lim.tpm * scale if lim.tpm else math.inf
        entry = None
        if len(self.log) + 1 <= max_req and self.tokens + prompt_tokens <= max_tok:
            entry = [now, float(prompt_tokens)]
            self.log.append(entry)
            self.tokens += prompt_tokens
        reset = (self.log[0][0] + lim.window_s - now) if self.log else 0.0
        headers: dict[str, str] = {}
        if lim.rpm:
            headers["x-ratelimit-limit-requests"] = f"{lim.rpm:g}"
            headers["x-ratelimit-remaining-requests"] = str(max(int(max_req - len(self.log)), 0))
            headers["x-ratelimit-reset-requests"] = format_reset(reset)
        if lim.tpm:
            headers["x-ratelimit-limit-tokens"] = f"{lim.tpm:g}"
            headers["x-ratelimit-remaining-tokens"] = str(max(int(max_tok - self.tokens), 0))
            headers["x-ratelimit-reset-tokens"] = format_reset(reset)
        if entry is None:
            headers["Retry-After"] = f"{max(reset, 0.001):.3f}"
        return entry, headers

    def add_tokens(self, entry: list[float], tokens: int) -> None:
        """Count the completion's tokens of an admitted request."""
        entry[1] += tokens
        self.tokens += tokens


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # the default backlog (5) resets bursts of new connections


class FakeChatServer:
    """An OpenAI-compatible chat server that fails on purpose.

    Args:
        rates: Failure rates.
        seed: Seed of the fault decisions.
        responder: ``messages -> answer text``; the default answers ``#### 42``.
        retry_after: Seconds sent in ``Retry-After`` with a 429.
        stall_s: Seconds a stalled request waits before answering.
        latency_s: Seconds every successful answer waits (simulated model time).
        model: Model name reported in answers.
        host: Interface to bind (loopback).
        port: Port; 0 picks a free one.
        limits: Rate limits enforced like a provider's (None: none).
        latency_sigma: With ``latency_s``, each answer's model time is lognormal with median
            ``latency_s`` and this sigma (seeded by arrival order); 0 is constant.
        bursts: ``(first, count)`` pairs: requests number ``first`` to ``first + count - 1``
            (0-based, arrival order) are answered 503 with ``Retry-After: retry_after``.

    Attributes:
        counts: ``Counter`` of outcomes: ``ok``, ``rate_limit``, ``server_error``, ``stall``,
            ``malformed``, ``persistent``, ``no_message``, ``limited`` (refused by
            ``limits``), ``burst``, ``requests``.
        max_in_flight: The most chat requests handled at once.
        log: ``(last message content, outcome)`` of every chat request, in arrival order.
    """

    def __init__(
        self,
        *,
        rates: FaultRates | None = None,
        seed: int = 0,
        responder: Responder | None = None,
        retry_after: float = 0.05,
        stall_s: float = 2.0,
        latency_s: float = 0.0,
        model: str = "fake-model",
        host: str = "127.0.0.1",
        port: int = 0,
        limits: RateLimits | None = None,
        latency_sigma: float = 0.0,
        bursts: Sequence[tuple[int, int]] = (),
    ) -> None:
        self.rates = rates or FaultRates()
        self.seed = seed
        self.responder = responder or _default_responder
        self.retry_after = retry_after
        self.stall_s = stall_s
        self.latency_s = latency_s
        self.model = model
        self.limits = limits
        self.latency_sigma = latency_sigma
        self.bursts = tuple(bursts)
        self._window = _Window(limits) if limits is not None else None
        self.admitted: list[float] = []  # monotonic arrival times of the requests admitted by ``limits``
        self.counts: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._attempts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for an OpenAI client (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeChatServer:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="fake-chat-server", kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def decide(self, body: bytes) -> str:
        """Pick this attempt's outcome for a request body (and count the attempt).

        Args:
            body: The raw request body.

        Returns:
            One of ``ok``, ``rate_limit``, ``server_error``, ``stall``, ``malformed``,
            ``persistent``.
        """
        key = hashlib.sha256(body).hexdigest()
        with self._lock:
            attempt = self._attempts[key]
            self._attempts[key] += 1
        r = self.rates
        if r.persistent and random.Random(f"{self.seed}|{key}|persistent").random() < r.persistent:
            return "persistent"
        u = random.Random(f"{self.seed}|{key}|{attempt}").random()
        for kind, rate in (
            ("rate_limit", r.rate_limit),
            ("server_error", r.server_error),
            ("stall", r.stall),
            ("malformed", r.malformed),
            ("no_message", r.no_message),
        ):
            if u < rate:
                return kind
            u -= rate
        return "ok"

    def model_time(self, index: int) -> float:
        """Seconds request number ``index`` takes: ``latency_s``, or lognormal around it."""
        if not self.latency_sigma:
            return self.latency_s
        rng = random.Random(f"{self.seed}|latency|{index}")
        return self.latency_s * math.exp(rng.gauss(0.0, self.latency_sigma))

    def _answer(self, req: dict[str, Any]) -> dict[str, Any]:
        messages = req.get("messages") or []
        text = self.responder(messages)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        completion_tokens = len(text.split())
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"fake": self})


# Canned replies of the error outcomes: status, body, and whether Retry-After is sent.
_ERROR_REPLIES: dict[str, tuple[int, bytes, bool]] = {
    "burst": (503, b'{"error": {"message": "overloaded", "type": "server"}}', True),
    "rate_limit": (429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}', True),
    "server_error": (500, b'{"error": {"message": "internal error", "type": "server"}}', False),
    "persistent": (500, b'{"error": {"message": "internal error", "type": "server"}}', False),
    "malformed": (200, b'{"id": "chatcmpl-broken", "choices": [{"mess', False),
}


class _Handler(BaseHTTPRequestHandler):
    """The fake server's request handler; ``fake`` (the :class:`FakeChatServer`) is set per server."""

    protocol_version = "HTTP/1.1"
    fake: FakeChatServer

    def setup(self) -> None:
        super().setup()
        # answer in one segment: without this, Nagle + delayed ACK add ~40 ms per call
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        # the header buffer send_header fills (CPython's http.server; not in typeshed)
        buffer: list[bytes] = self._headers_buffer  # type: ignore[attr-defined]
        buffer.append(b"\r\n")
        buffer.append(body)
        self.flush_headers()

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/") == "/v1/models":
            body = {"object": "list", "data": [{"id": self.fake.model, "object": "model", "owned_by": "evalcore"}]}
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:  # noqa: N802
        server = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        try:
            messages = json.loads(body).get("messages") or [{}]
            last = str(messages[-1].get("content", ""))
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        except (json.JSONDecodeError, AttributeError, IndexError):
            last, prompt_tokens = "", 0
        outcome, extra, entry, index = self._admit(prompt_tokens)
        if not outcome:
            outcome = server.decide(body)
        with server._lock:
            server.log.append((last, outcome))
            server.counts["requests"] += 1
            server.counts[outcome] += 1
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            self._reply(outcome, body, extra, entry, index)
        finally:
            with server._lock:
                server.in_flight -= 1

    def _admit(self, prompt_tokens: int) -> tuple[str, dict[str, str], list[float] | None, int]:
        """The request's index, and its outcome where a burst or the rate window decides it ("" otherwise)."""
        server = self.fake
        extra: dict[str, str] = {}
        entry = None
        with server._lock:
            index = server.counts["requests"]
            outcome = ""
            if any(first <= index < first + n for first, n in server.bursts):
                outcome = "burst"
            elif server._window is not None:
                entry, extra = server._window.admit(time.monotonic(), prompt_tokens)
                if entry is None:
                    outcome = "limited"
                else:
                    server.admitted.append(entry[0])
        return outcome, extra, entry, index

    def _reply(self, outcome: str, body: bytes, extra: dict[str, str], entry: list[float] | None, index: int) -> None:
        server = self.fake
        if outcome == "limited":
            self._send(429, b'{"error": {"message": "rate limit reached", "type": "requests"}}', extra)
            return
        if outcome in _ERROR_REPLIES:
            status, reply, retry = _ERROR_REPLIES[outcome]
            self._send(status, reply, {"Retry-After": f"{server.retry_after:g}"} if retry else None)
            return
        if outcome == "no_message":
            # valid JSON, HTTP 200, a choice without a message: a broken gateway's reply
            broken = {
                "id": "chatcmpl-nomsg",
                "object": "chat.completion",
                "model": server.model,
                "created": 0,
                "choices": [{"index": 0, "finish_reason": "stop"}],
            }
            self._send(200, json.dumps(broken).encode())
            return
        if outcome == "stall":
            server._stopping.wait(server.stall_s)
        elif server.latency_s:
            time.sleep(server.model_time(index))
        try:
            req = json.loads(body)
        except json.JSONDecodeError:
            self._send(400, b'{"error": {"message": "request is not JSON"}}')
            return
        answer = server._answer(req)
        if entry is not None and server._window is not None:
            with server._lock:
                server._window.add_tokens(entry, int(answer["usage"]["completion_tokens"]))
        try:
            self._send(200, json.dumps(answer).encode(), extra)
        except (BrokenPipeError, ConnectionResetError):
            return
