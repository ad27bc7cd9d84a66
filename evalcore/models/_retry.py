"""Retry policy: exponential backoff with full jitter, honouring ``Retry-After``."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before retrying a failed call.

    The wait before retry ``n`` (0-based) is ``uniform(0, min(max_delay, base_delay * 2**n))``
    ("full jitter"), unless the server sent ``Retry-After``, which is then honoured (capped at
    ``max_retry_after``).

    Attributes:
        max_retries: Retries after the first attempt (total attempts = max_retries + 1).
        base_delay: Seconds of the first backoff step.
        max_delay: Cap of one backoff step in seconds.
        max_retry_after: Cap of a server-requested wait in seconds.
    """

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based).

        Args:
            attempt: How many retries have been made so far.
            rng: Source of jitter.
            retry_after: Seconds the server asked for, if any.

        Returns:
            The wait in seconds.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        cap = min(self.max_delay, self.base_delay * (2.0**attempt))
        return rng.uniform(0.0, cap)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Read the wait a server asks for.

    Understands ``retry-after-ms`` (milliseconds), ``Retry-After`` in seconds and
    ``Retry-After`` as an HTTP date.

    Args:
        headers: Response headers (case-insensitive mapping or plain dict).
        now: The current UNIX time (for tests); defaults to ``time.time()``.

    Returns:
        Seconds to wait (>= 0), or None when absent or unreadable.
    """
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            wait_ms = float(ms)
        except ValueError:
            wait_ms = math.nan
        if math.isfinite(wait_ms):
            return max(wait_ms / 1000.0, 0.0)
    value = lower.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:  # "nan" or "inf" is not a wait a server can mean
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)
