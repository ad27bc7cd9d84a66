"""Progress lines for the routing study: every line has the total and the time left.

A routing study runs for minutes (the outcome matrix's model calls, the item bootstrap), in a
terminal or inside a notebook whose output is a log. :class:`Progress` prints plain lines
``<what>: <done>/<total> <unit>, <elapsed> elapsed, about <left> left`` at most every
``every_s`` seconds and once at the end, so a reader of the log always knows how far it got
and when it ends. The time left is the elapsed time per unit done times the units left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


class Progress:
    """Counts units of work towards a known total and prints a line now and then.

    Args:
        total: Units of work in all (> 0).
        what: What is being done (the start of every line).
        unit: Name of a unit (``"generations"``, ``"resamples"``).
        every_s: At most one line per this many seconds (the last line always prints).
        enabled: False prints nothing.
        stream: Where lines go (default: ``sys.stderr`` at the time of printing, as a tqdm bar:
            the notebook suite moves stderr out of the report into ``stderr.log``).
        clock: Seconds clock (tests pass a fake).
    """

    def __init__(
        self,
        total: int,
        what: str,
        *,
        unit: str = "steps",
        every_s: float = 10.0,
        enabled: bool = True,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(int(total), 0)
        self.what, self.unit, self.every_s = what, unit, float(every_s)
        self.enabled, self.stream, self.clock = enabled, stream, clock
        self.done = 0
        self.start = clock()
        self._last = -float("inf")

    def line(self, note: str = "") -> str:
        """The current progress line (without printing it)."""
        elapsed = self.clock() - self.start
        text = f"{self.what}: {self.done}/{self.total} {self.unit}, {format_seconds(elapsed)} elapsed"
        if self.done >= self.total:
            text += ", done"
        elif self.done > 0:
            left = elapsed / self.done * (self.total - self.done)
            text += f", about {format_seconds(left)} left"
        else:
            text += ", time left not known yet"
        return text + (f" ({note})" if note else "")

    def update(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` more units; print a line when ``every_s`` has passed or at the end."""
        self.done = min(self.total, self.done + int(n))
        now = self.clock()
        if self.enabled and (self.done >= self.total or now - self._last >= self.every_s):
            self._last = now
            print(self.line(note), file=self.stream or sys.stderr, flush=True)


class _Bar:
    """tqdm on a terminal or in a notebook open in JupyterLab (a widget; its bar shows the total,
    the rate and the time left), else :class:`Progress` lines (a log, the notebook suite's
    ``stderr.log``); ``progress=False`` shows nothing."""

    def __init__(self, total: int, what: str, unit: str, progress: bool | None) -> None:
        self._tqdm = None
        self._lines = None
        if progress is False:
            return
        from evalcore._progress import in_live_notebook, progress_bar

        if sys.stderr.isatty() or in_live_notebook():
            self._tqdm = progress_bar(total=total, desc=what, unit=f" {unit}", progress=True)
        else:
            self._lines = Progress(total, what, unit=unit)

    def update(self, n: int = 1, note: str = "") -> None:
        if self._tqdm is not None:
            self._tqdm.update(n)
        elif self._lines is not None:
            self._lines.update(n, note)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()


def bar(total: int, what: str, *, unit: str = "steps", progress: bool | None = None) -> _Bar:
    """A progress display with the total and the time left: a tqdm bar on a terminal or in
    JupyterLab, plain :class:`Progress` lines elsewhere (a papermill run, a log); nothing with
    ``progress=False``."""
    return _Bar(total, what, unit, progress)
