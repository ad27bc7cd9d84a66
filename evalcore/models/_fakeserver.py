"""A fault-injecting, OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` and injects failures at set
rates: 429 with ``Retry-After``, 500, stalls past the client's timeout, malformed JSON, and a
fraction of requests that fail every time. Which attempt fails is decided by a seeded hash of
the request body and its attempt number, so a run is reproducible whatever the arrival order.
"""

from __future__ import annotations

import hashlib
import json
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

    Attributes:
        counts: ``Counter`` of outcomes: ``ok``, ``rate_limit``, ``server_error``, ``stall``,
            ``malformed``, ``persistent``, ``requests``.
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
    ) -> None:
        self.rates = rates or FaultRates()
        self.seed = seed
        self.responder = responder or _default_responder
        self.retry_after = retry_after
        self.stall_s = stall_s
        self.latency_s = latency_s
        self.model = model
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
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

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
                    body = {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "evalcore"}]}
                    self._send(200, json.dumps(body).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                outcome = server.decide(body)
                try:
                    last = str((json.loads(body).get("messages") or [{}])[-1].get("content", ""))
                except (json.JSONDecodeError, AttributeError, IndexError):
                    last = ""
                with server._lock:
                    server.log.append((last, outcome))
                    server.counts["requests"] += 1
                    server.counts[outcome] += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._reply(outcome, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _reply(self, outcome: str, body: bytes) -> None:
                if outcome == "rate_limit":
                    self._send(
                        429,
                        b'{"error": {"message": "rate limited", "type": "rate_limit"}}',
                        {"Retry-After": f"{server.retry_after:g}"},
                    )
                    return
                if outcome in ("server_error", "persistent"):
                    self._send(500, b'{"error": {"message": "internal error", "type": "server"}}')
                    return
                if outcome == "malformed":
                    self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"mess')
                    return
                if outcome == "no_message":
                    # valid JSON, HTTP 200, a choice without a message: a broken gateway's reply
                    self._send(
                        200,
                        json.dumps(
                            {
                                "id": "chatcmpl-nomsg",
                                "object": "chat.completion",
                                "model": server.model,
                                "created": 0,
                                "choices": [{"index": 0, "finish_reason": "stop"}],
                            }
                        ).encode(),
                    )
                    return
                if outcome == "stall":
                    server._stopping.wait(server.stall_s)
                elif server.latency_s:
                    time.sleep(server.latency_s)
                try:
                    req = json.loads(body)
                except json.JSONDecodeError:
                    self._send(400, b'{"error": {"message": "request is not JSON"}}')
                    return
                try:
                    self._send(200, json.dumps(server._answer(req)).encode())
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler
