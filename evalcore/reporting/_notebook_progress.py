"""Progress of a running notebook suite: the progress line (notebook, cell, elapsed time, samples
written, time left), the heartbeat thread that prints it and stops a notebook over its time
limit, and the estimate of the time left (:class:`SuiteEstimate`: the expected durations of
:mod:`evalcore.reporting._suite_times` at the paces this run learns as its notebooks finish).

:mod:`evalcore.reporting._notebooks` re-exports these names.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.reporting._suite_times import TIMES_SUFFIX as TIMES_SUFFIX
from evalcore.reporting._suite_times import Expected
from evalcore.reporting._suite_times import expected_durations as expected_durations


@dataclass
class _Progress:
    """What the running notebook is doing, read by the heartbeat thread.

    ``expected_s``/``after_s``: the expected execution of this notebook and of the notebooks after
    it; ``finish_s``/``after_finish_s``: their expected finishing (stderr moved out of the
    notebook, HTML, PDF, records: seconds after the last cell, counted in the estimate since
    issue 39), each at its own pace (``pace``, ``finish_pace``: the PDF printer slows more on a
    busy machine than the notebooks do). ``phase`` is ``"running"``, then ``"finishing"`` from
    ``phase_started``.
    """

    name: str
    number: int
    total: int
    started: float
    watch: Path | None = None
    expected: dict[str, int] = field(default_factory=dict)
    cell: int | None = None
    n_cells: int | None = None
    cell_started: float | None = None
    step: str | None = None
    timeout: float | None = None
    client: Any = None
    stopping_since: float | None = None
    expected_s: float | None = None
    after_s: float | None = None
    estimate_from: str = ""
    pace: Pace | None = None
    finish_s: float | None = None
    after_finish_s: float = 0.0
    finish_pace: Pace | None = None
    phase: str = "running"
    phase_started: float | None = None


def _step(cells: Sequence[Any], index: int) -> str | None:
    """The heading of the notebook section cell ``index`` belongs to (the last markdown
    heading above it)."""
    for cell in reversed(cells[:index]):
        if cell.get("cell_type") != "markdown":
            continue
        for line in str(cell.get("source", "")).splitlines():
            if line.startswith("#"):
                text = line.lstrip("#").strip()
                return text if len(text) <= 60 else text[:57] + "..."
    return None


_CURRENT: _Progress | None = None
"""The notebook running now (set by the suite runner, read by the heartbeat and the kernel engine)."""


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _sample_counts(progress: _Progress) -> tuple[str, int, int | None]:
    """Samples written since the notebook started, from every ``samples.jsonl`` under the
    watched folder: ``(text, done, total)``.

    With the notebook's expected sample counts (run id -> samples), ``done`` and ``total`` add up
    over all its runs (the routing notebook writes several: a count of one run read against the
    whole notebook's time made the estimate jump); else ``done`` is the newest run's count and
    ``total`` None. The text is ``<run id>: 3/8 samples``, ``23/60 samples (4 of 6 runs)`` or
    ``<run id>: 3 samples`` ("" before any sample)."""
    if progress.watch is None or not progress.watch.is_dir():
        return "", 0, None
    wall_start = time.time() - (time.perf_counter() - progress.started)
    counts: dict[str, tuple[float, int]] = {}
    try:
        from evalcore._runstore import SAMPLES_FILE

        for path in progress.watch.rglob(SAMPLES_FILE):
            mtime = path.stat().st_mtime
            if mtime < wall_start - 1:
                continue
            with open(path, "rb") as fh:
                count = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
            counts[path.parent.name] = (mtime, count)
    except OSError:
        return "", 0, None
    if not counts:
        return "", 0, None
    expected = progress.expected
    if expected and any(run_id in expected for run_id in counts):
        done = sum(min(counts[r][1], n) for r, n in expected.items() if r in counts)
        total = sum(expected.values())
        if len(expected) == 1:
            return f"{next(iter(expected))}: {done}/{total} samples", done, total
        started = sum(1 for r in expected if r in counts)
        return f"{done}/{total} samples ({started} of {len(expected)} runs)", done, total
    run_id, (_, count) = max(counts.items(), key=lambda kv: kv[1][0])
    return f"{run_id}: {count} samples", count, None


def _samples_written(progress: _Progress) -> str:
    """The text of :func:`_sample_counts`."""
    return _sample_counts(progress)[0]


MIN_SAMPLE_SHARE = 0.25
"""The share of a notebook's samples written before their rate is used for its time left: earlier,
the elapsed time is mostly kernel start and model loading, and the rate overstates the rest."""


def _samples_left_s(progress: _Progress, now: float) -> float | None:
    """Seconds left in the notebook's benchmark runs at the rate their samples came so far
    (``None``: no sample total known, fewer than :data:`MIN_SAMPLE_SHARE` of them written, or
    all of them written)."""
    _, done, total = _sample_counts(progress)
    if not total or done <= 0 or done >= total or done / total < MIN_SAMPLE_SHARE:
        return None
    return (now - progress.started) / done * (total - done)


@dataclass
class Pace:
    """How fast this suite run goes against the expected durations, learned as notebooks finish.

    ``factor`` is the measured time of the finished notebooks over their expected time (a loaded
    machine: 2.5 means everything takes 2.5 times as long as measured quietly), and while a
    notebook runs past its own expected time that time counts too, so the estimate moves as the
    overrun grows instead of waiting at "finishing". Every estimate of time left is the expected
    durations times this factor.
    """

    expected_s: float = 0.0
    actual_s: float = 0.0

    def add(self, expected_s: float | None, actual_s: float) -> None:
        """Count a finished notebook (one without an expected duration teaches nothing)."""
        if expected_s is not None and expected_s > 0 and actual_s >= 0:
            self.expected_s += float(expected_s)
            self.actual_s += float(actual_s)

    def factor(self, running_expected_s: float | None = None, running_elapsed_s: float | None = None) -> float:
        """Measured / expected time so far (1.0 before any notebook finished), clamped to
        [0.1, 10]; with the running notebook's expected and elapsed time counted once it is
        slower than the factor of the finished ones predicts."""
        expected, actual = self.expected_s, self.actual_s
        base = actual / expected if expected > 0 else 1.0
        if running_expected_s and running_elapsed_s is not None and running_elapsed_s > base * running_expected_s:
            expected += running_expected_s
            actual += running_elapsed_s
            base = actual / expected
        return min(max(base, 0.1), 10.0)


def _estimate(progress: _Progress, now: float) -> tuple[float | None, float | None, float, float | None]:
    """``(here, over, factor, predicted)``: seconds left in this notebook (None: unknown), seconds
    it has run past its predicted duration (None: not past it), the pace factor, and the
    predicted duration (expected x factor; None without an expected duration)."""
    elapsed = now - progress.started
    pace = progress.pace.factor(progress.expected_s, elapsed) if progress.pace is not None else 1.0
    predicted = pace * progress.expected_s if progress.expected_s is not None else None
    candidates = []
    over = None
    if predicted is not None:
        if predicted - elapsed >= 1:
            candidates.append(predicted - elapsed)
        else:
            over = max(elapsed - predicted, 0.0)
    by_samples = _samples_left_s(progress, now)
    if by_samples is not None:
        candidates.append(by_samples)
    here = max(candidates) if candidates else None
    return here, (over if here is None else None), pace, predicted


def _finish_left(progress: _Progress, now: float) -> float:
    """Seconds of this notebook's finishing still to come at the finishing pace: all of it while
    the notebook runs; while it finishes, what is left of it (0 once past it)."""
    expected = progress.finish_s or 0.0
    if progress.phase != "finishing":
        return (progress.finish_pace.factor() if progress.finish_pace is not None else 1.0) * expected
    spent = now - (progress.phase_started if progress.phase_started is not None else now)
    pace = progress.finish_pace.factor(expected, spent) if progress.finish_pace is not None else 1.0
    return max(pace * expected - spent, 0.0)


def _after_left(progress: _Progress, pace: float) -> float | None:
    """Seconds of the notebooks after this one (execution at ``pace``, finishing at the
    finishing pace); None when one of them has no expected duration."""
    if progress.number >= progress.total:
        return 0.0
    if progress.after_s is None:
        return None
    finish_pace = progress.finish_pace.factor() if progress.finish_pace is not None else 1.0
    return pace * progress.after_s + finish_pace * progress.after_finish_s


def suite_left_s(progress: _Progress, now: float | None = None) -> float | None:
    """The estimate of the whole suite's time left in seconds: this notebook's (:func:`time_left`:
    what is left of its execution and of its finishing) plus the notebooks after it, execution and
    finishing, at this run's paces; while this notebook runs past its predicted time, its
    finishing and the notebooks after it only (a lower bound). None: unknown.

    Args:
        progress: The running notebook.
        now: ``time.perf_counter()`` value (default: now).

    Returns:
        Seconds, or None.
    """
    now = time.perf_counter() if now is None else now
    if progress.phase == "finishing":
        left = _finish_left(progress, now)
        pace = progress.pace.factor() if progress.pace is not None else 1.0
    else:
        here, over, pace, _ = _estimate(progress, now)
        if here is None and over is None:
            return None
        left = (here or 0.0) + _finish_left(progress, now)
    after = _after_left(progress, pace)
    return None if after is None else left + after


def _pace_note(pace: float) -> str:
    return f" at this run's pace, {pace:.1f}x" if abs(pace - 1.0) >= 0.15 else ""


def _suite_note(progress: _Progress, here: float, pace: float, source: str) -> str:
    """``" (suite: about 6 min 30 s, from ...)"``: the suite's time left after ``here`` seconds."""
    if progress.number >= progress.total:
        return ""
    after = _after_left(progress, pace)
    if after is None:
        return " (suite: unknown)"
    return f" (suite: about {_duration(here + after)}" + (f", from {source})" if source else ")")


def time_left(progress: _Progress, now: float | None = None) -> str:
    """The estimate of the time left, as a progress line says it: this notebook (its expected
    duration at this run's pace, or the rate of its samples, whichever is longer; then its
    finishing: HTML, PDF), the whole suite (the notebooks after it at this run's pace,
    :class:`Pace`) and where the estimate comes from. A notebook past its predicted time says by
    how much and what remains after it, never just "finishing".

    Args:
        progress: The running notebook.
        now: ``time.perf_counter()`` value (default: now).

    Returns:
        ``"about 1 min 10 s left (suite: about 6 min 30 s, from the run of 20261128T…)"``,
        ``"running 40 s past its expected 1 min 24 s, time left in it unknown (then the rest of the
        suite: about 2 min 10 s, ...)"`` or ``"time left unknown (no earlier run to estimate from)"``.
    """
    now = time.perf_counter() if now is None else now
    if progress.phase == "finishing":
        pace = progress.pace.factor() if progress.pace is not None else 1.0
        source = (progress.estimate_from + _pace_note(pace)) if progress.estimate_from else _pace_note(pace).strip()
        left = _finish_left(progress, now)
        if left > 0 or not progress.finish_s:  # never "0 s left" nor "past its expected 0 s"
            return f"about {_duration(max(left, 1.0))} left" + _suite_note(progress, left, pace, source)
        after = _suite_note(progress, 0.0, pace, source)  # past its expected export: say so, and what follows
        expected = (progress.finish_pace.factor() if progress.finish_pace is not None else 1.0) * progress.finish_s
        expected = max(expected, 1.0)
        text = f"past its expected {_duration(expected)} of export, time left in it unknown"
        return text + (after.replace(" (suite: about", " (then the rest of the suite: about") if after else "")
    here, over, pace, predicted = _estimate(progress, now)
    source = (progress.estimate_from + _pace_note(pace)) if progress.estimate_from else _pace_note(pace).strip()
    if here is None and over is None:
        return "time left unknown (no earlier run to estimate from)"
    finish = _finish_left(progress, now)
    if here is None:
        text = (
            f"running {_duration(over or 0.0)} past its expected {_duration(predicted or 0.0)}, time left in it unknown"
        )
        after = _suite_note(progress, finish, pace, source)
        return text + (after.replace(" (suite: about", " (then the rest of the suite: about") if after else "")
    text = f"about {_duration(here + finish)} left"
    note = _suite_note(progress, here + finish, pace, source)
    return text + (" in this notebook (suite: unknown)" if note == " (suite: unknown)" else note)


def start_eta(
    expected_s: float | None,
    after_s: float | None,
    pace: Pace | None,
    finish_s: float | None = None,
    after_finish_s: float = 0.0,
    finish_pace: Pace | None = None,
) -> str:
    """What a notebook's start line says of the time it and the suite will take (execution and
    finishing), at this run's paces: ``" (about 28 s; suite: about 9 min 40 s left)"`` ("" when
    nothing is expected)."""
    factor = pace.factor() if pace is not None else 1.0
    finishing = (finish_pace.factor() if finish_pace is not None else 1.0) * (finish_s or 0.0)
    if expected_s is None:
        return ""
    note = _pace_note(factor)
    here = factor * expected_s + finishing
    if after_s is not None:
        after = factor * after_s + (finish_pace.factor() if finish_pace is not None else 1.0) * after_finish_s
        return f" (about {_duration(here)}; suite: about {_duration(here + after)} left{note})"
    return f" (about {_duration(here)}{note})"


def progress_line(progress: _Progress, now: float | None = None) -> str:
    """One progress line: notebook ``[n/total]``, cell, elapsed time, samples written so far
    (``done/total`` when known) and the estimate of the time left (:func:`time_left`); while the
    notebook finishes, that it is exporting and for how long."""
    now = time.perf_counter() if now is None else now
    if progress.phase == "finishing":
        since = now - (progress.phase_started if progress.phase_started is not None else now)
        return (
            f"[{progress.number}/{progress.total}] {progress.name}: exporting (stderr moved out, HTML, PDF) "
            f"for {_duration(since)}, {_duration(now - progress.started)} elapsed, {time_left(progress, now)}"
        )
    parts = [f"[{progress.number}/{progress.total}] {progress.name}: running"]
    if progress.cell is not None:
        cell = f"cell {progress.cell}/{progress.n_cells}"
        if progress.step:
            cell += f" [{progress.step}]"
        if progress.cell_started is not None:
            cell += f" (for {_duration(now - progress.cell_started)})"
        parts.append(cell)
    parts.append(f"{_duration(now - progress.started)} elapsed")
    samples = _samples_written(progress)
    if samples:
        parts.append(samples)
    parts.append(time_left(progress, now))
    return ", ".join(parts)


@dataclass
class SuiteEstimate:
    """The suite run's expected times and the paces it learns as its notebooks run and finish:
    what the start lines and progress lines of :func:`~evalcore.reporting.run_notebooks` say.

    Attributes:
        expected: The expected times (:func:`~evalcore.reporting._suite_times.expected_durations`).
        names: The notebooks to run, in order.
        pace: Measured over expected execution time so far.
        finish_pace: Measured over expected finishing time so far.
    """

    expected: Expected
    names: list[str]
    pace: Pace = field(default_factory=lambda: Pace())
    finish_pace: Pace = field(default_factory=lambda: Pace())

    def _after(self, position: int) -> tuple[float | None, float]:
        rest = self.names[position + 1 :]
        if any(name not in self.expected.run for name in rest):
            return None, 0.0
        return sum(self.expected.run[n] for n in rest), sum(self.expected.finish_of(n) or 0.0 for n in rest)

    def start_eta(self, position: int) -> str:
        """The start line's estimate for the notebook at ``position`` (:func:`start_eta`)."""
        name = self.names[position]
        after_s, after_finish_s = self._after(position)
        return start_eta(
            self.expected.run.get(name),
            after_s,
            self.pace,
            self.expected.finish_of(name),
            after_finish_s,
            self.finish_pace,
        )

    def progress(self, position: int, number: int, total: int, started: float, **more: Any) -> _Progress:
        """The :class:`_Progress` of the notebook at ``position`` (``more``: further fields)."""
        name = self.names[position]
        after_s, after_finish_s = self._after(position)
        return _Progress(
            name,
            number,
            total,
            started,
            expected_s=self.expected.run.get(name),
            after_s=after_s,
            finish_s=self.expected.finish_of(name),
            after_finish_s=after_finish_s,
            estimate_from=self.expected.source,
            pace=self.pace,
            finish_pace=self.finish_pace,
            **more,
        )

    def ran(self, progress: _Progress, run_s: float, now: float) -> None:
        """The notebook's execution took ``run_s``: learn the pace; its finishing starts ``now``
        (the notebook's time limit no longer applies)."""
        self.pace.add(progress.expected_s, run_s)
        progress.phase, progress.phase_started, progress.timeout = "finishing", now, None

    def finished(self, progress: _Progress, now: float) -> float:
        """The notebook's finishing ended ``now``: learn the finishing pace; its seconds."""
        finish_s = now - (progress.phase_started if progress.phase_started is not None else now)
        self.finish_pace.add(progress.finish_s, finish_s)
        return finish_s


def _kernel_pid(progress: _Progress) -> int | None:
    try:
        return int(progress.client.km.provisioner.pid)
    except (AttributeError, TypeError, ValueError):
        return None


def _enforce_timeout(progress: _Progress, say: Callable[[str], None], grace: float = 20.0) -> None:
    """Over its time limit, a notebook's kernel is interrupted (SIGINT, as JupyterLab's stop
    button), and killed ``grace`` seconds later if the cell does not stop; papermill then
    fails the notebook and the suite goes on."""
    if not progress.timeout:
        return
    now = time.perf_counter()
    if progress.stopping_since is None and now - progress.started > progress.timeout:
        pid = _kernel_pid(progress)
        if pid is None:
            return
        progress.stopping_since = now
        say(
            f"  [{progress.number}/{progress.total}] {progress.name}: over its {progress.timeout:g} s limit, "
            f"stopping it"
        )
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGINT)
    elif progress.stopping_since is not None and now - progress.stopping_since > grace:
        pid = _kernel_pid(progress)
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        progress.stopping_since = float("inf")  # once


class _Heartbeat:
    """Prints :func:`progress_line` every ``every`` seconds while a notebook runs."""

    def __init__(self, say: Callable[[str], None], every: float, quiet: bool = False) -> None:
        self.say, self.every, self.quiet = say, every, quiet
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="evalcore-suite-progress", daemon=True)

    def __enter__(self) -> _Heartbeat:
        if self.every and self.every > 0:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)

    def _loop(self) -> None:
        last_number = None
        next_at = time.perf_counter() + self.every
        while not self.stop.wait(1.0 if self.every >= 1 else self.every):
            progress = _CURRENT
            if progress is None:
                continue
            if progress.number != last_number:  # a new notebook: a full interval before its first line
                last_number, next_at = progress.number, progress.started + self.every
            try:
                _enforce_timeout(progress, self.say)
            except Exception:  # noqa: BLE001 - the notebook then simply runs on
                pass
            if not self.quiet and time.perf_counter() >= next_at:
                next_at = time.perf_counter() + self.every
                try:
                    self.say("  " + progress_line(progress))
                except Exception:  # noqa: BLE001 - a progress line never stops the suite
                    pass


def _expected_samples(params: Mapping[str, Any]) -> dict[str, int]:
    """run id -> samples a benchmark notebook will write (``limit`` x ``epochs``), if known."""
    run_id, limit = params.get("run_id"), params.get("limit")
    if "datasets" in params:  # the routing notebook: one run per dataset x strategy
        from evalcore.routing import expected_samples

        return expected_samples(dict(params))
    if isinstance(run_id, str) and run_id and isinstance(limit, int) and limit > 0:
        epochs = params.get("epochs", 1)
        return {run_id: limit * (epochs if isinstance(epochs, int) and epochs > 0 else 1)}
    return {}
