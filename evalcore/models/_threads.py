"""How many CPU threads the embedded model uses: the CPUs other work leaves idle, re-decided per call.

llama.cpp (built with OpenMP) splits each matrix product across its threads, which then wait for
each other at every layer. On a quiet 2-core machine two threads generate ~1.6x faster than one
(87 against 54 tokens/s for SmolLM2-135M); on a busy one, a thread that loses its core stalls the
other, and two threads were ~7x slower than one (wall) at six times the CPU time. So the count
follows the machine: before each call the idle CPUs are measured over the time since the last
decision (for the first call: over the model's load), from ``/proc/stat`` (every CPU's busy
time) less this process's own CPU time, and the model uses as many threads as there are CPUs
nobody else is using (at least 1, at most :data:`MAX_THREADS`). The choice changes no result:
each output value of llama.cpp's CPU kernels is computed whole by one thread, so logits are
bit-identical for any thread count (``tests/models/test_local_model_threads.py`` checks greedy
and sampled texts, logits and letter log-probabilities with 1, 2 and switching counts).

``EVALCORE_LLAMA_THREADS=N`` fixes the count (a measurement, or a machine without ``/proc``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

THREADS_ENV = "EVALCORE_LLAMA_THREADS"
MAX_THREADS = 8
"""Upper bound: a 135M-parameter model gains nothing from more threads than this."""
MIN_WINDOW_S = 0.05
"""A shorter window since the last decision keeps the choice (a few clock ticks are noise)."""
SLACK = 0.25
"""A CPU counts as free when others leave at least 1 - SLACK of it idle."""
_PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class Reading:
    """CPU seconds since boot: the whole machine's busy and total time, and this process's own."""

    busy: float
    total: float
    own: float


def read_cpu() -> Reading | None:
    """Read the machine's CPU times (``/proc/stat`` line ``cpu``) and this process's.

    Returns:
        The reading, or None where ``/proc/stat`` cannot be read or parsed.
    """
    try:
        first = _PROC_STAT.read_text().split("\n", 1)[0].split()
        ticks = [int(x) for x in first[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError, IndexError):
        return None
    if not first or first[0] != "cpu" or len(ticks) < 8:
        return None
    hz = float(os.sysconf("SC_CLK_TCK"))
    total = sum(ticks) / hz
    idle = (ticks[3] + ticks[4]) / hz
    t = os.times()
    return Reading(busy=total - idle, total=total, own=t.user + t.system)


def threads_between(prev: Reading, now: Reading, n_machine: int, n_allowed: int) -> int | None:
    """Threads that fit the CPUs that other work left idle between two readings.

    ``span = Δtotal / n_machine`` (wall seconds), ``others = (Δbusy - Δown) / span`` (CPUs busy
    with other processes, steal time included), ``free = min(n_allowed, n_machine - others)``,
    threads ``= clamp(floor(free + SLACK), 1, MAX_THREADS)``.

    Args:
        prev: The earlier reading.
        now: The later reading.
        n_machine: CPUs that ``/proc/stat`` counts (the machine's).
        n_allowed: CPUs this process may run on (its affinity).

    Returns:
        The thread count, or None when the window is shorter than :data:`MIN_WINDOW_S`.
    """
    span = (now.total - prev.total) / max(n_machine, 1)
    if span < MIN_WINDOW_S:
        return None
    others = max(0.0, (now.busy - prev.busy) - (now.own - prev.own)) / span
    free = min(float(n_allowed), n_machine - others)
    return max(1, min(MAX_THREADS, n_allowed, int(free + SLACK)))


def fixed_threads() -> int | None:
    """The count fixed by ``EVALCORE_LLAMA_THREADS`` (a positive integer), else None."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def _allowed_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ThreadChooser:
    """Chooses the embedded model's thread count from the idle CPUs (one per loaded model).

    Args:
        fixed: A fixed count (the caller's ``n_threads`` or ``EVALCORE_LLAMA_THREADS``); None
            measures.
    """

    def __init__(self, fixed: int | None = None) -> None:
        self.fixed = fixed
        self.threads = fixed or 1
        self._last: Reading | None = None
        self._n_machine = os.cpu_count() or 1
        self._n_allowed = _allowed_cpus()

    def first(self) -> int:
        """The count to load the model with (1 unless fixed); the first call's comes from the load's time.

        The machine is read now, so the first call's :meth:`update` judges the CPUs over the load
        (a few tenths of a second) without waiting for a window of its own.
        """
        if self.fixed is None:
            self._last = read_cpu()
        return self.threads

    def update(self) -> int:
        """The count for the next call: the idle CPUs since the last decision.

        Returns:
            The thread count (unchanged when the window is too short or ``/proc/stat`` unreadable).
        """
        if self.fixed is not None:
            return self.fixed
        now = read_cpu()
        if now is None:
            return self.threads
        if self._last is None:
            self._last = now
            return self.threads
        chosen = threads_between(self._last, now, self._n_machine, self._n_allowed)
        if chosen is not None:
            self.threads = chosen
            self._last = now
        return self.threads
