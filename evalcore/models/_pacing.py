"""Pacing to a provider's rate limits: a shared request/token budget and adaptive concurrency.

* :class:`RateBudget` — one per endpoint and process, shared by every request of every model
  object that calls it (thread-safe; each event loop sleeps on its own). Requests are paced
  by the generic cell rate algorithm (GCRA, a token bucket written as a "theoretical arrival
  time"): request ``k`` leaves no earlier than ``k · 60 / rpm`` seconds after the first. Tokens
  likewise: a request reserves its estimated prompt tokens (characters / 4) and its expected
  completion tokens (``max_tokens`` until replies arrive, then their running mean, at most
  ``max_tokens``) before it is sent, and the difference to the reply's ``usage`` (actual
  prompt + completion tokens) is charged when it is known. A 429, ``Retry-After`` or an ``x-ratelimit-remaining-* = 0``
  header pauses every request to that endpoint until the reset the server names.
* :class:`AdaptiveConcurrency` — additive increase, multiplicative decrease (AIMD, as in TCP
  congestion control, Jacobson 1988): ``+1/limit`` per success, ``× 0.5`` on a 429, 503 or
  timeout, at most once per round of calls in flight, bounded by ``[1, maximum]``.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from evalcore.errors import EvalcoreError

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)")


def parse_reset(value: str | None) -> float | None:
    """Seconds in OpenAI's ``x-ratelimit-reset-*`` format: ``"1s"``, ``"6m0s"``, ``"20ms"``,
    ``"1h2m3.5s"``; a bare number is seconds.

    Args:
        value: The header's value.

    Returns:
        Seconds (>= 0), or None when absent or unreadable.
    """
    if value is None:
        return None
    text = value.strip().lower()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    pos, total = 0, 0.0
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * scale[match.group(2)]
        pos = match.end()
    return total if pos == len(text) and pos else None


def check_rate(value: Any, field: str) -> float | None:
    """A per-minute limit: None (no limit) or a finite number > 0.

    Raises:
        EvalcoreError: Zero, negative, not a number, not finite.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise EvalcoreError(f"expected a number per minute, got {value!r}", field=field)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number per minute, got {value!r}", field=field) from None
    if not math.isfinite(v) or v <= 0:
        raise EvalcoreError(f"must be a number > 0 (per minute), got {value!r}", field=field)
    return v


def estimate_tokens(messages: Any) -> int:
    """Prompt tokens estimated as characters / 4 (OpenAI's rule of thumb for English text),
    plus 4 per message for the chat format."""
    chars = 0
    n = 0
    for m in messages:
        chars += len(str(m.get("content", "")))
        n += 1
    return chars // 4 + 4 * n


class RateBudget:
    """The requests- and tokens-per-minute budget of one endpoint, shared by the process.

    Args:
        rpm: Requests per minute (None: unpaced).
        tpm: Tokens per minute (None: unpaced).
        headroom: Fraction of the limits left unused, for the jitter between the moment a
            request leaves and the moment the server counts it.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None, headroom: float = 0.03) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self.headroom = headroom
        self._lock = threading.Lock()
        self._req_tat = 0.0  # theoretical arrival time of the next request
        self._tok_tat = 0.0  # the same for tokens
        self._paused_until = 0.0
        self._completion_sum = 0.0
        self._completions = 0

    def expected_completion(self, max_tokens: int) -> int:
        """Completion tokens to reserve for a request: ``max_tokens`` until replies have been
        seen, then the mean completion so far (never more than ``max_tokens``)."""
        with self._lock:
            if not self._completions:
                return max_tokens
            return min(max_tokens, int(math.ceil(self._completion_sum / self._completions)))

    def configure(self, rpm: float | None, tpm: float | None) -> None:
        """Set the limits (a later model object for the same endpoint may name them)."""
        with self._lock:
            self.rpm, self.tpm = rpm, tpm

    def reserve(self, tokens: int) -> float:
        """Reserve one request and ``tokens`` tokens; returns the seconds to wait before sending."""
        now = time.monotonic()
        with self._lock:
            send = max(now, self._paused_until)
            if self.rpm:
                send = max(send, self._req_tat)
            if self.tpm:
                send = max(send, self._tok_tat)
            scale = 1.0 - self.headroom
            if self.rpm:
                self._req_tat = max(self._req_tat, send) + 60.0 / (self.rpm * scale)
            if self.tpm:
                self._tok_tat = max(self._tok_tat, send) + 60.0 * tokens / (self.tpm * scale)
        return send - now

    def charge(self, tokens: int, completion_tokens: int | None = None) -> None:
        """Charge ``tokens`` more (negative: refund) once a reply's usage is known.

        Args:
            tokens: Actual tokens minus the tokens reserved.
            completion_tokens: The reply's completion tokens (their mean is the next estimate).
        """
        if not self.tpm:
            return
        with self._lock:
            self._tok_tat += 60.0 * tokens / (self.tpm * (1.0 - self.headroom))
            if completion_tokens is not None:
                self._completion_sum += completion_tokens
                self._completions += 1

    def pause(self, seconds: float) -> None:
        """No request to this endpoint leaves for ``seconds`` (the latest pause wins)."""
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    def observe(self, headers: Mapping[str, str] | None) -> float | None:
        """Honour ``x-ratelimit-*`` headers: a remaining count of 0 pauses until its reset.

        Returns:
            The pause set in seconds, or None.
        """
        if not headers:
            return None
        wait = None
        for kind in ("requests", "tokens"):
            remaining = headers.get(f"x-ratelimit-remaining-{kind}")
            if remaining is None:
                continue
            try:
                left = float(remaining)
            except ValueError:
                continue
            if left <= 0:
                reset = parse_reset(headers.get(f"x-ratelimit-reset-{kind}"))
                if reset is not None:
                    wait = max(wait or 0.0, reset)
        if wait:
            self.pause(wait)
        return wait


_budgets: dict[str, RateBudget] = {}
_budgets_lock = threading.Lock()


def shared_budget(endpoint: str, rpm: float | None, tpm: float | None) -> RateBudget:
    """The process-wide budget of ``endpoint`` (created on first use; limits named later win)."""
    with _budgets_lock:
        budget = _budgets.get(endpoint)
        if budget is None:
            budget = _budgets[endpoint] = RateBudget(rpm, tpm)
        elif rpm is not None or tpm is not None:
            budget.configure(rpm, tpm)
        return budget


class AdaptiveConcurrency:
    """AIMD limit of calls in flight, bounded by ``[1, maximum]``; starts at ``maximum``.

    Args:
        maximum: The most calls in flight.
        enabled: False keeps the limit at ``maximum`` (a fixed-concurrency client).
    """

    def __init__(self, maximum: int, enabled: bool = True) -> None:
        self.maximum = maximum
        self.enabled = enabled
        self.limit = float(maximum)
        self.minimum_seen = maximum
        self._epoch = 0  # bumped at each decrease; a call sent before it cannot decrease again
        self._lock = threading.Lock()

    @property
    def current(self) -> int:
        """The whole number of calls allowed in flight now."""
        return max(1, int(self.limit))

    @property
    def epoch(self) -> int:
        """The decrease counter a call notes when it is sent."""
        return self._epoch

    def success(self) -> None:
        """Additive increase: one more slot per ``limit`` successes."""
        if not self.enabled:
            return
        with self._lock:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)

    def congestion(self, sent_epoch: int) -> None:
        """Multiplicative decrease (halve), once per round: only a call sent after the last
        decrease can decrease again."""
        if not self.enabled:
            return
        with self._lock:
            if sent_epoch != self._epoch:
                return
            self.limit = max(1.0, self.limit / 2.0)
            self._epoch += 1
            self.minimum_seen = min(self.minimum_seen, self.current)


class SlotGate:
    """Calls in flight on one event loop, up to a limit that may change between calls.

    Waiters are served first in, first out; a slot is handed over on release.
    """

    def __init__(self) -> None:
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, limit: int) -> None:
        """Wait for a slot."""
        if self.active < limit and not self._waiters:
            self.active += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted, then cancelled: give it back
                self.release(limit)
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(self, limit: int) -> None:
        """Free a slot and hand the free ones to the waiters."""
        self.active -= 1
        while self._waiters and self.active < limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.active += 1
                fut.set_result(None)


class RateStats:
    """What pacing did for one model object: recorded in a run's ``results.json["rate"]``."""

    def __init__(self) -> None:
        self.waits_s = 0.0
        self.n_waits = 0
        self.n_429 = 0
        self.n_503 = 0
        self.n_timeouts = 0
        self._lock = threading.Lock()

    def waited(self, seconds: float) -> None:
        """Count a wait for the budget."""
        if seconds > 0:
            with self._lock:
                self.waits_s += seconds
                self.n_waits += 1

    def failed(self, kind: str) -> None:
        """Count a 429, 503 or timeout."""
        with self._lock:
            if kind == "RateLimitError":
                self.n_429 += 1
            elif kind == "HTTP503":
                self.n_503 += 1
            elif kind == "Timeout":
                self.n_timeouts += 1
