"""Hostile agents of issue 37's third round (test fixtures, like :mod:`evalcore.agent_eval._gaming`).

Each was once able to score high on what it attacks:

* :class:`EchoSpecify` (robustness): answers what it can compute and refuses everything else by
  echoing the request back with "please specify", flagged as a clarification; the request's own
  values in the echo were taken for a diagnosis, "specify" for a clarification;
* :class:`CacheAcrossReset` (performance): 2.2 s a request it has never seen, answers from a
  cache of responses by request text that ``reset()`` keeps; latency was timed on requests the
  functional category had sent (1 ms) and the reset was never verified;
* :class:`MemfdHolder` (memory): right answers, each request puts ``chunk_mb`` MiB into a memfd
  it unmaps and keeps open (``reset()`` closes them); the RSS never grew;
* :class:`JunkSweepTools` (sweep): answers rightly from code it keeps to itself; built with a
  threshold (as the sweep builds its agents) it registers junk tools named like the kinds and
  its search returns the junk tool named like the query's kind; relevance was read from names.

The hosted ones are built by ``make_*`` factories (``tests/agent_eval/_hostile_r3.py:make_memfd``).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from evalcore.agent_eval._cases.kinds import STARTER_KINDS, SYNTHESIZED_KINDS, recognize
from evalcore.agent_eval._oracle import HonestAgent, agent_eval_cases
from evalcore.agents import AgentResponse, ToolMatch


class EchoSpecify(HonestAgent):
    """Honest on the requests it can answer; every edge request that is not one is echoed back
    with "please specify" (``needs_clarification``), whatever is wrong with it."""

    def process_request(self, query: str) -> AgentResponse:
        case = self._lookup(query)
        if case is not None and case.expected_behavior != "answer":
            return AgentResponse(success=False, needs_clarification=True, error=f"{query} — please specify")
        return super().process_request(query)


class CacheAcrossReset(HonestAgent):
    """``delay_s`` seconds on a request it has not answered before; a response cache by text
    that ``reset()`` leaves alone."""

    def __init__(self, *args: Any, delay_s: float = 2.2, **kwargs: Any) -> None:
        self.delay_s = delay_s
        self._cache: dict[str, AgentResponse] = {}
        super().__init__(*args, **kwargs)

    def process_request(self, query: str) -> AgentResponse:
        hit = self._cache.get(query)
        if hit is not None:
            return hit
        time.sleep(self.delay_s)
        resp = super().process_request(query)
        self._cache[query] = resp
        return resp


class MemfdHolder(HonestAgent):
    """Right answers; each request writes ``chunk_mb`` MiB into a new memfd that is never
    mapped and stays open (at most ``cap_mb`` in all); ``reset()`` closes them."""

    def __init__(self, *args: Any, chunk_mb: int = 24, cap_mb: int = 400, **kwargs: Any) -> None:
        self.chunk_mb, self.cap_mb = chunk_mb, cap_mb
        self._fds: list[int] = []
        self._fd_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        with self._fd_lock:
            for fd in self._fds:
                os.close(fd)
            self._fds = []
        super().reset()

    def process_request(self, query: str) -> AgentResponse:
        with self._fd_lock:
            if (len(self._fds) + 1) * self.chunk_mb <= self.cap_mb:
                fd = os.memfd_create("ballast")
                block = b"\xa5" * 2**20
                for _ in range(self.chunk_mb):
                    os.write(fd, block)
                self._fds.append(fd)
        return super().process_request(query)


class _JunkRegistry:
    def __init__(self, owner: JunkSweepTools) -> None:
        self._owner = owner

    def list_tools(self) -> list[str]:
        return sorted(self._owner.junk)

    def describe(self, name: str) -> dict[str, Any]:
        return {"name": name, "code": self._owner.junk[name], "tests": None}

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        seen = recognize(query)
        kind = seen[0] if seen is not None else next((v for w, v in _WORDS.items() if w in query.lower()), None)
        if kind is None or kind not in self._owner.junk or k <= 0:
            return []
        return [ToolMatch(kind, 1.0)]


_WORDS = {"%": "percentage", "revers": "reverse_string", "factorial": "factorial", "celsius": "temperature_conversion"}
"""A word of a request in other phrasing → its kind."""


class JunkSweepTools(HonestAgent):
    """Answers from its own (unlisted) tools; given a ``threshold`` it registers a junk tool
    named like each kind (``def <kind>(**kw): return 0``) and searches by those names."""

    def __init__(self, *args: Any, threshold: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kinds = (*STARTER_KINDS, *SYNTHESIZED_KINDS) if threshold is not None else ()
        self.junk = {k: f"def {k}(**kw):\n    return 0\n" for k in kinds}
        self._junk_registry = _JunkRegistry(self)

    @property
    def registry(self) -> Any:
        return self._junk_registry


def make_memfd(**kwargs: Any) -> MemfdHolder:
    """Factory of :class:`MemfdHolder` (``chunk_mb``, ``cap_mb``; the rest as
    :func:`~evalcore.agent_eval._oracle.agent_eval_cases`)."""
    chunk, cap = kwargs.pop("chunk_mb", 24), kwargs.pop("cap_mb", 400)
    return MemfdHolder(*agent_eval_cases(**kwargs), chunk_mb=chunk, cap_mb=cap)
