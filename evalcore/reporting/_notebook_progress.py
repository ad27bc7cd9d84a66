"""Progress of a running notebook suite: the progress line (notebook, cell, elapsed time, samples
written, time left), the heartbeat thread that prints it and stops a notebook over its time
limit, and the expected durations and sample counts the time left is estimated from.

Split from :mod:`evalcore.reporting._notebooks`, which re-exports these names.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError


@dataclass
class _Progress:
    """What the running notebook is doing, read by the heartbeat thread."""

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


def _samples_written(progress: _Progress) -> str:
    """The newest ``samples.jsonl`` under the watched folder written since the notebook
    started: ``<run id>: N samples`` (``N/M`` when the notebook's parameters say how many)."""
    if progress.watch is None or not progress.watch.is_dir():
        return ""
    newest: tuple[float, Path] | None = None
    wall_start = time.time() - (time.perf_counter() - progress.started)
    try:
        from evalcore._runstore import SAMPLES_FILE

        for path in progress.watch.rglob(SAMPLES_FILE):
            mtime = path.stat().st_mtime
            if mtime >= wall_start - 1 and (newest is None or mtime > newest[0]):
                newest = (mtime, path)
        if newest is None:
            return ""
        with open(newest[1], "rb") as fh:
            count = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
    except OSError:
        return ""
    run_id = newest[1].parent.name
    expected = progress.expected.get(run_id)
    return f"{run_id}: {count}/{expected} samples" if expected else f"{run_id}: {count} samples"


def _samples_left_s(progress: _Progress, now: float) -> float | None:
    """Seconds left in the notebook's benchmark run at the rate its samples came so far
    (``None``: no sample count with a known total yet)."""
    if progress.watch is None or not progress.expected:
        return None
    text = _samples_written(progress)
    if "/" not in text:
        return None
    try:
        done, total = (int(x) for x in text.rsplit(": ", 1)[1].split(" ", 1)[0].split("/"))
    except ValueError:
        return None
    if done <= 0:
        return None
    return (now - progress.started) / done * max(total - done, 0)


def time_left(progress: _Progress, now: float | None = None) -> str:
    """The estimate of the time left, as a progress line says it: this notebook (from its
    expected duration, or the rate of its samples) and the whole suite (the expected durations
    of the notebooks after it), and where the estimate comes from.

    Args:
        progress: The running notebook.
        now: ``time.perf_counter()`` value (default: now).

    Returns:
        ``"about 1 min 10 s left (suite: about 6 min 30 s, from the run of 20261128T…)"`` or
        ``"time left unknown (no earlier run to estimate from)"``.
    """
    now = time.perf_counter() if now is None else now
    elapsed = now - progress.started
    here = _samples_left_s(progress, now)
    if here is None and progress.expected_s is not None:
        here = max(progress.expected_s - elapsed, 0.0)
    if here is None:
        return "time left unknown (no earlier run to estimate from)"
    text = f"about {_duration(here)} left" if here >= 1 else "finishing"
    if progress.after_s is not None and progress.number < progress.total:
        suite_left = here + progress.after_s
        text += f" (suite: about {_duration(suite_left)}"
        text += f", from {progress.estimate_from})" if progress.estimate_from else ")"
    elif progress.number < progress.total:
        text += " in this notebook (suite: unknown)"
    return text


def progress_line(progress: _Progress, now: float | None = None) -> str:
    """One progress line: notebook ``[n/total]``, cell, elapsed time, samples written so far
    (``done/total`` when known) and the estimate of the time left (:func:`time_left`)."""
    now = time.perf_counter() if now is None else now
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


TIMES_SUFFIX = ".times.yaml"
"""Beside a suite file, its notebooks' measured durations (``params/suite.times.yaml``: name:
seconds), the estimate of time left before this machine has finished a run of its own."""


def expected_durations(output: Path, suite_path: Path, smoke: Mapping[str, Any] | None) -> tuple[dict[str, float], str]:
    """How long each notebook is expected to take, for the estimate of the time left.

    From the last complete run in ``output/latest`` made with the same smoke values (its
    notebooks that ran to their end, ok or failed); else, for a run without smoke values, from the durations
    measured beside the suite file (``<suite>.times.yaml``); else nothing.

    Args:
        output: The report folder.
        suite_path: The suite file.
        smoke: The smoke values of this run.

    Returns:
        ``({name: seconds}, where they come from)``.
    """
    from evalcore.reporting._notebooks import LATEST

    latest = output / LATEST / "suite.json"
    try:
        manifest = json.loads(latest.read_text(encoding="utf-8"))
        if (manifest.get("meta", {}).get("smoke") or None) == (
            to_json_native(dict(smoke), strict=True) if smoke else None
        ):
            found = {
                r["name"]: float(r["duration_s"])
                for r in manifest.get("runs", [])
                if r.get("status") in ("ok", "failed") and isinstance(r.get("duration_s"), (int, float))
            }
            if found:
                return found, f"the run of {manifest.get('meta', {}).get('id', '?')}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    times = suite_path.with_name(suite_path.stem + TIMES_SUFFIX)
    if not smoke and times.is_file():
        try:
            from evalcore._yaml import read_yaml

            data = read_yaml(times).data or {}
            found = {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}
            if found:
                return found, f"times measured on 2 cores ({times.name})"
        except (EvalcoreError, AttributeError, ValueError):
            pass
    return {}, ""


def _expected_samples(params: Mapping[str, Any]) -> dict[str, int]:
    """run id -> samples a benchmark notebook will write (``limit`` x ``epochs``), if known."""
    run_id, limit = params.get("run_id"), params.get("limit")
    if "datasets" in params:  # the routing notebook: one run per dataset x strategy
        from evalcore.routing._default import expected_samples

        return expected_samples(dict(params))
    if isinstance(run_id, str) and run_id and isinstance(limit, int) and limit > 0:
        epochs = params.get("epochs", 1)
        return {run_id: limit * (epochs if isinstance(epochs, int) and epochs > 0 else 1)}
    return {}
