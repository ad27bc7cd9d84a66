"""A clock and a lock for latency tests: what a call waits for is zero on the clock, so a
latency is exact whatever the machine's load (shared by tests/models and tests/runs)."""

from __future__ import annotations

import threading
import time
import types


class FakeClock:
    """A ``perf_counter`` that moves only when a fake call says so: the time a call spends
    waiting (for a client slot, for a lock) is zero on it, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0
        self._lock = threading.Lock()

    def perf_counter(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


def use_clock(monkeypatch, module, clock: FakeClock) -> None:
    """Give ``module`` a ``time`` whose ``perf_counter`` is ``clock`` (the rest is the real one)."""
    real = {n: getattr(time, n) for n in dir(time) if not n.startswith("_")}
    fake = types.SimpleNamespace(**real)
    fake.perf_counter = clock.perf_counter
    monkeypatch.setattr(module, "time", fake)


class WatchedLock:
    """A reentrant lock that tells which threads have asked for it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._cond = threading.Condition()
        self.askers: set[int] = set()

    def acquire(self, *args, **kwargs) -> bool:
        with self._cond:
            self.askers.add(threading.get_ident())
            self._cond.notify_all()
        return self._lock.acquire(*args, **kwargs)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def wait_for_askers(self, n: int) -> None:
        # only orders the threads (the others queue before the first call's time passes); the
        # generous limit is no assertion: a correct latency is exact whether or not they queued
        with self._cond:
            self._cond.wait_for(lambda: len(self.askers) >= n, timeout=120)
