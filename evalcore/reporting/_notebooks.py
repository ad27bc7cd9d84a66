"""The notebook-suite runner behind ``evalcore notebooks run`` (the papermill batch; not the
agent evaluation of :mod:`evalcore.agent_eval`).

Each notebook-suite entry is executed with papermill (kernel ``python3``, working directory = the
repository root, one at a time) into ``<output>/<suite-run-id>/<name>/``: the executed
notebook, its HTML export (inputs hidden), a PDF printed by headless Chromium, its figures as
PNG and its recorded numbers as ``records.json``. ``<output>/<suite-run-id>/index.html``
links everything and starts with the headline table (:mod:`evalcore.reporting._headline`);
the full sparse table of every record is ``summary.csv``. ``<output>/latest`` points to the
last complete run of the whole suite file; a partial run (``--only``, one interrupted or still
running, a resume that leaves notebooks unfinished) is ``<output>/latest-partial``. A failing
notebook does not stop the suite; it is marked failed in the index.

While a notebook runs, a progress line (notebook, cell, elapsed time, samples written) is
printed every ``progress_every`` seconds, whether or not the output is a terminal. The kernel's
own log (and what C libraries print) goes to ``<name>/kernel.log``; progress bars and warnings
that cells wrote to stderr are moved from the executed notebook to ``<name>/stderr.log`` before
export (:mod:`evalcore.reporting._clean`). An interrupted suite is continued with
``run_notebooks(resume=ID)`` (``evalcore notebooks run --resume [ID]``): finished notebooks are
kept, the others run again in the same folder, where their runs and response cache are.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html as _html
import json
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import to_json_native, write_text_atomic
from evalcore.errors import EvalcoreError
from evalcore.reporting._clean import clean_notebook_file
from evalcore.reporting._export import (
    CHROMIUM_HINT,
    ExportResult,
    export_notebook,
    find_chromium,
)
from evalcore.reporting._notebook_suite import (
    NotebookEntry,
    check_parameters,
    find_root,
    load_notebook_suite,
    substitute,
)
from evalcore.reporting._record import (
    RECORD_DIR_ENV,
    RECORDS_FILENAME,
    SUITE_DIR_ENV,
    _flatten,
    _write_sidecar_json,
    read_records,
    read_sidecar,
)

__all__ = [
    "EntryResult",
    "NotebookSuiteResult",
    "display_summary",
    "find_suite_dir",
    "new_suite_id",
    "run_notebooks",
    "summary_frame",
    "write_index",
]

KERNEL_NAME = "python3"


@dataclass
class EntryResult:
    """The outcome of one notebook run.

    Attributes:
        name: The suite entry's name.
        notebook: The source notebook (relative to the root where possible).
        status: ``"ok"``, ``"failed"``, ``"pending"``, ``"running"`` or ``"interrupted"``.
        duration_s: Wall time of the execution.
        params: The parameters it ran with.
        executed: The executed notebook (relative to the suite folder), if written.
        html: The HTML export, if made.
        pdf: The PDF, if made.
        figures: The PNG files.
        records: The recorded numbers.
        error: For a failed run, the exception (type: message).
        messages: Notes, e.g. why no PDF was made.
    """

    name: str
    notebook: str
    status: str = "pending"
    duration_s: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    executed: str | None = None
    html: str | None = None
    pdf: str | None = None
    figures: list[str] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    messages: list[str] = field(default_factory=list)


@dataclass
class NotebookSuiteResult:
    """The outcome of a suite run.

    Attributes:
        suite_dir: ``<output>/<suite-run-id>``.
        results: One :class:`EntryResult` per executed entry, in order.
        index: The ``index.html`` path.
    """

    suite_dir: Path
    results: list[EntryResult]
    index: Path

    @property
    def ok(self) -> bool:
        """True when every notebook ran to its end."""
        return all(r.status == "ok" for r in self.results)

    @property
    def failed(self) -> list[str]:
        """Names of the runs that failed."""
        return [r.name for r in self.results if r.status != "ok"]


def new_suite_id(output: Path) -> str:
    """Return a fresh suite-run id: the UTC time ``YYYYmmddTHHMMSSZ`` (``-2``… if taken)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = stamp, 1
    while (output / candidate).exists():
        n += 1
        candidate = f"{stamp}-{n}"
    return candidate


AGENT_SEED_FILE = ".agent_seed"
"""The notebook-suite run's one secret case seed for its agent notebooks (``reports/<id>/.agent_seed``,
readable by its owner only; kept for ``--resume``)."""


def suite_agent_seed(suite_dir: Path) -> int:
    """The case seed every agent notebook of a notebook-suite run shares, so the category pages
    and the overview evaluate the same generated cases: drawn once per suite run from the
    operating system's CSPRNG (as a hosted agent cannot guess it) and kept in
    ``<suite_dir>/.agent_seed`` for a resume.

    Args:
        suite_dir: The suite run's folder.

    Returns:
        The seed.
    """
    import secrets

    path = Path(suite_dir) / AGENT_SEED_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text.isdigit():
            return int(text)
    except OSError:
        pass
    seed = secrets.randbits(63)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"{seed}\n")
    return seed


@contextlib.contextmanager
def _kernel_env(record_dir: Path, suite_dir: Path) -> Iterator[None]:
    """Environment the kernel inherits: record dir set, the suite run's agent case seed
    (``EVALCORE_AGENT_SEED``, read and removed by :func:`evalcore.reporting.shared_agent_seed`
    before an agent is started), a non-interactive MPLBACKEND removed."""
    from evalcore.agent_eval._config import SEED_ENV

    saved = {k: os.environ.get(k) for k in (RECORD_DIR_ENV, SUITE_DIR_ENV, "MPLBACKEND", SEED_ENV)}
    os.environ[RECORD_DIR_ENV] = str(record_dir)
    os.environ[SUITE_DIR_ENV] = str(suite_dir)
    os.environ[SEED_ENV] = str(suite_agent_seed(suite_dir))
    # An inherited MPLBACKEND=Agg would make inline figures vanish from the notebook.
    if os.environ.get("MPLBACKEND", "").lower() in {"agg", "pdf", "svg", "cairo", "ps", "template"}:
        del os.environ["MPLBACKEND"]
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _rel(path: Path | None, base: Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


LATEST = "latest"
LATEST_PARTIAL = "latest-partial"


def _update_latest(output: Path, suite_id: str | None, name: str = LATEST) -> bool:
    """Point ``output/<name>`` at ``suite_id`` (atomically; ``None`` removes the link); False
    when ``<name>`` is a real file or folder, which is left alone."""
    link = output / name
    if link.exists() and not link.is_symlink():
        return False
    if suite_id is None:
        link.unlink(missing_ok=True)
        return True
    tmp = output / f".{name}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(suite_id, tmp)
    os.replace(tmp, link)
    return True


def _link_target(output: Path, name: str) -> str | None:
    """The suite id ``output/<name>`` points at (``None``: no link, or not a link)."""
    link = output / name
    return os.readlink(link) if link.is_symlink() else None


def is_full_and_complete(results: Sequence[EntryResult], n_entries: int) -> bool:
    """True when a suite run is a complete run of the whole suite file: every entry of the file
    was run (``--only`` naming fewer makes it partial) and every notebook finished (``ok`` or ``failed``; none pending,
    running or interrupted). Only such a run becomes ``reports/latest``; others are partial
    (``reports/latest-partial``)."""
    return len(results) == n_entries and all(r.status in {"ok", "failed"} for r in results)


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
_KERNEL_LOG: Path | None = None
ENGINE_NAME = "evalcore-suite"


def _register_engine() -> None:
    """Register the papermill engine of the suite: nbclient's, plus the current cell for the
    progress lines and the kernel's own stdout/stderr sent to ``kernel.log``."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args

    if ENGINE_NAME in papermill_engines._engines:
        return

    class SuiteEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(
            cls,
            nb_man,
            kernel_name,
            log_output=False,
            stdout_file=None,
            stderr_file=None,
            start_timeout=60,
            execution_timeout=None,
            **kwargs,
        ):
            progress = _CURRENT
            original = nb_man.cell_start

            def cell_start(cell: Any, cell_index: int | None = None, **kw: Any) -> Any:
                if progress is not None:
                    progress.cell = (cell_index or 0) + 1
                    progress.n_cells = len(nb_man.nb.cells)
                    progress.cell_started = time.perf_counter()
                    progress.step = _step(nb_man.nb.cells, cell_index or 0)
                return original(cell, cell_index, **kw)

            nb_man.cell_start = cell_start
            kwargs = remove_args(["input_path"], **kwargs)
            safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
            final_kwargs = merge_kwargs(
                safe_kwargs,
                timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
                startup_timeout=start_timeout,
                kernel_name=kernel_name,
                log=logger,
                log_output=log_output,
                stdout_file=stdout_file,
                stderr_file=stderr_file,
            )
            client = PapermillNotebookClient(nb_man, **final_kwargs)
            if progress is not None:
                progress.client = client  # the heartbeat stops the kernel of a notebook over its time limit
            if _KERNEL_LOG is None:
                return client.execute()
            # The kernel process's own output (its log, e.g. "KeyboardInterrupt caught in kernel"
            # when it is shut down, and what C libraries print) goes to a file, not the terminal.
            with open(_KERNEL_LOG, "ab") as log:
                return client.execute(stdout=log, stderr=log)

    papermill_engines.register(ENGINE_NAME, SuiteEngine)


def _execute(
    entry: NotebookEntry,
    params: dict[str, Any],
    out_nb: Path,
    root: Path,
    suite_dir: Path,
    cell_timeout: float | None = None,
) -> tuple[str, str | None]:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    global _KERNEL_LOG
    _register_engine()
    _KERNEL_LOG = out_nb.parent / "kernel.log"
    with _kernel_env(out_nb.parent, suite_dir):
        try:
            pm.execute_notebook(
                str(entry.notebook),
                str(out_nb),
                parameters=params,
                engine_name=ENGINE_NAME,
                kernel_name=KERNEL_NAME,
                cwd=str(root),
                progress_bar=False,
                log_output=False,
                report_mode=False,
                execution_timeout=cell_timeout,
                # Errors in cells land in the executed notebook; the kernel's own log is kept
                # in kernel.log.
                extra_arguments=["--IPKernelApp.log_level=ERROR"],
            )
        except PapermillExecutionError as exc:
            where = f" (cell {exc.exec_count})" if exc.exec_count is not None else ""
            return "failed", f"{exc.ename}: {exc.evalue}{where}"
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - kernel death, timeouts: the suite goes on
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            if cell_timeout and ("timed out" in last.lower() or "TimeoutError" in last):
                first = last.splitlines()[0].removeprefix("nbclient.exceptions.")
                last = f"a cell ran longer than {cell_timeout:g} s (cell timeout): {first}"
            return "failed", last
        finally:
            _KERNEL_LOG = None
    return "ok", None


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


def find_suite_dir(output: str | os.PathLike[str], suite_id: str | None = None) -> Path:
    """The suite run folder to resume.

    Args:
        output: The report folder (``reports``).
        suite_id: A suite-run id (``reports/<id>``), a path to a suite run folder, or
            ``None``/``"latest"`` for the newest suite run folder (by id) in ``output``.

    Returns:
        The folder (it holds a ``suite.json``).

    Raises:
        EvalcoreError: No such suite run, or none to resume.
    """
    out = Path(output)
    if suite_id and suite_id != "latest":
        for candidate in (out / suite_id, Path(suite_id)):
            if (candidate / "suite.json").is_file():
                return candidate.resolve()
        raise EvalcoreError(
            f"no suite run {suite_id!r} to resume (no suite.json there)", path=out / suite_id, field="resume"
        )
    found = sorted(
        (p for p in out.glob("*") if not p.is_symlink() and (p / "suite.json").is_file()), key=lambda p: p.name
    )
    if not found:
        raise EvalcoreError("no suite run to resume in this folder", path=out, field="resume")
    return found[-1].resolve()


def _load_manifest(suite_dir: Path) -> tuple[dict[str, Any], dict[str, EntryResult]]:
    path = suite_dir / "suite.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        meta = dict(manifest.get("meta", {}))
        runs = {run["name"]: EntryResult(**run) for run in manifest["runs"]}
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EvalcoreError(f"not a suite manifest: {exc}", path=path) from exc
    return meta, runs


def _display_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_notebooks(
    suite: str | os.PathLike[str] | None = "params/suite.yaml",
    *,
    only: Sequence[str] | None = None,
    output: str | os.PathLike[str] = "reports",
    root: str | os.PathLike[str] | None = None,
    smoke: Mapping[str, Mapping[str, Any]] | None = None,
    pdf: bool = True,
    echo: Callable[[str], None] | None = print,
    resume: str | bool | None = None,
    progress_every: float = 30.0,
    cell_timeout: float | None = None,
    notebook_timeout: float | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
) -> NotebookSuiteResult:
    """Execute a suite of notebooks and write a report folder.

    Every entry is checked before the first one runs (missing notebook, malformed parameter
    file, unknown parameter), so a typo costs nothing. Then each entry is executed in order;
    a failure is recorded and the suite continues.

    Args:
        suite: The suite YAML (see :mod:`evalcore.reporting._notebook_suite`); with ``resume`` and
            ``None``, the suite file the resumed run was made from.
        only: Run only the entries with these names (resuming: those the run was made with).
        output: Folder that receives ``<suite-run-id>/`` and the ``latest`` link.
        root: Repository root (working directory of the notebooks, base of relative paths);
            found from the suite file when ``None``.
        smoke: Optional per-run overrides (``params/smoke.yaml`` shape) merged on top
            (resuming: the ones the run was made with, unless given).
        pdf: Also print each HTML export to PDF (needs Chromium).
        echo: Receives progress lines; ``None`` is silent.
        resume: Continue an interrupted suite run in its own folder: a suite-run id, a path,
            or ``True``/``"latest"`` for the newest. Notebooks that finished with the same
            parameters are kept; the others run again (their benchmark runs resume from what
            was recorded, with the same response cache).
        progress_every: Seconds between progress lines while a notebook runs (0: none).
        cell_timeout: Fail a notebook whose cell runs longer than this many seconds.
        notebook_timeout: Stop and fail a notebook that runs longer than this many seconds
            (its kernel is interrupted, then killed); the suite goes on.
        cluster: Run each notebook on a worker of a Dask cluster (a scheduler address, a
            scheduler file, ``local:N`` or a ``distributed.Client``; docs/cluster.md); the
            files come back to this machine. ``notebook_timeout`` does not apply there.
        cluster_wait_s: Seconds to wait for the cluster's first worker.

    Returns:
        The :class:`NotebookSuiteResult` (``.ok`` is False when a notebook failed).

    Raises:
        EvalcoreError: The suite is malformed, names a missing file, an unknown run
            (``only``) or an unknown parameter; or there is no suite run to resume.
    """
    from evalcore._checks import check_timeout

    progress_every = check_timeout(progress_every or 0, "progress_every", allow_zero=True) or 0.0
    if isinstance(cluster, str):  # local:0, a missing scheduler file: refused before anything else
        from evalcore.cluster._spec import parse_cluster

        parse_cluster(cluster)
    cell_timeout = check_timeout(cell_timeout, "cell_timeout", allow_none=True)
    notebook_timeout = check_timeout(notebook_timeout, "notebook_timeout", allow_none=True)
    raw_say = echo or (lambda _msg: None)
    lock = threading.Lock()  # the progress thread prints too: whole lines, never interleaved

    def say(message: str) -> None:
        with lock:
            raw_say(message)
            if echo is print:
                sys.stdout.flush()

    out_root = Path(output).resolve()
    previous: dict[str, EntryResult] = {}
    prev_meta: dict[str, Any] = {}
    resume_dir: Path | None = None
    if resume:
        resume_dir = find_suite_dir(out_root, None if resume is True else str(resume))
        prev_meta, previous = _load_manifest(resume_dir)
        if suite is None:
            suite = prev_meta.get("suite") or "params/suite.yaml"
        if smoke is None and prev_meta.get("smoke"):
            smoke = prev_meta["smoke"]
        if not only and prev_meta.get("only"):
            only = prev_meta["only"]
        if root is None and prev_meta.get("root"):
            root = prev_meta["root"]
    suite_path = Path(suite if suite is not None else "params/suite.yaml")
    base = Path(root).resolve() if root is not None else find_root(suite_path)
    entries = load_notebook_suite(suite_path, root=base, smoke=smoke)
    n_entries = len(entries)  # the whole suite file: a run of fewer is partial
    if only:
        names = {e.name for e in entries}
        missing = [n for n in only if n not in names]
        if missing:
            raise EvalcoreError(
                f"no run named {missing[0]!r} (runs: {', '.join(e.name for e in entries)})",
                path=suite_path,
                field="name",
            )
        entries = [e for e in entries if e.name in set(only)]
    for entry in entries:
        check_parameters(entry)

    if out_root.exists() and not out_root.is_dir():
        raise EvalcoreError("the report folder exists and is not a directory", path=out_root, field="output")
    out_root.mkdir(parents=True, exist_ok=True)
    if resume_dir is not None:
        suite_dir, suite_id = resume_dir, resume_dir.name
    else:
        suite_id = new_suite_id(out_root)
        suite_dir = out_root / suite_id
        suite_dir.mkdir(parents=True)
    markers = {"suite_dir": str(suite_dir), "root": str(base)}
    results: list[EntryResult] = []
    to_run: list[tuple[NotebookEntry, EntryResult]] = []
    for e in entries:
        result = EntryResult(
            name=e.name,
            notebook=_rel(e.notebook, base) or str(e.notebook),
            params=to_json_native(substitute(e.params, markers), strict=True),
        )
        old = previous.get(e.name)
        if (
            old is not None
            and old.status == "ok"
            and old.params == result.params
            and old.executed
            and (suite_dir / old.executed).exists()
        ):
            results.append(old)
        else:
            results.append(result)
            to_run.append((e, result))
    meta: dict[str, Any] = dict(prev_meta) if resume_dir is not None else {}
    meta.update({"suite": str(suite_path.resolve()), "root": str(base), "id": suite_id})
    meta.setdefault("started", _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    if smoke:
        meta["smoke"] = to_json_native({k: dict(v) for k, v in smoke.items()}, strict=True)
    if only:
        meta["only"] = list(only)
    if resume_dir is not None:
        meta["resumed"] = [*meta.get("resumed", []), _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")]
    index = write_index(suite_dir, results, meta)
    # A run in progress is partial until it completes the whole suite: `latest` keeps pointing
    # at the last complete full-suite report, `latest-partial` at this one.
    previous_partial = _link_target(out_root, LATEST_PARTIAL)
    if not _update_latest(out_root, suite_id, LATEST_PARTIAL):
        say(
            f"evalcore: {out_root / LATEST_PARTIAL} is not a symbolic link; left as it is "
            f"(remove it to let it point to the newest partial run)"
        )
    if pdf and to_run and find_chromium() is None:
        say(CHROMIUM_HINT)
    if resume_dir is not None:
        say(
            f"evalcore: resuming suite {suite_id} in {_display_path(suite_dir)}: "
            f"{len(results) - len(to_run)} notebook(s) "
            f"finished before, {len(to_run)} to run"
        )
    else:
        say(f"evalcore: suite {suite_path} -> {_display_path(suite_dir)} ({len(entries)} notebook(s))")
    global _CURRENT
    number_of = {id(r): i for i, r in enumerate(results, start=1)}
    durations, estimate_from = expected_durations(out_root, suite_path, smoke)

    def after(position: int) -> float | None:  # expected seconds of the notebooks still to run after this one
        rest = [durations.get(e.name) for e, _ in to_run[position + 1 :]]
        known = [d for d in rest if d is not None]
        return float(sum(known)) if len(known) == len(rest) else None

    if cluster is not None:  # Dask: each notebook on a worker (evalcore.cluster, docs/cluster.md)
        from evalcore.cluster._notebooks import run_on_cluster

        run_on_cluster(
            cluster,
            to_run,
            results=results,
            number_of=number_of,
            suite_dir=suite_dir,
            root=base,
            meta=meta,
            cell_timeout=cell_timeout,
            pdf=pdf,
            say=say,
            wait_s=cluster_wait_s,
            resume_hint=f"evalcore: interrupted; finished notebooks are kept. Continue with:\n"
            f"  evalcore notebooks run --resume {suite_id} --cluster ADDRESS",
        )
    with _Heartbeat(
        say,
        progress_every if progress_every and progress_every > 0 else (1.0 if notebook_timeout else 0),
        quiet=not progress_every or progress_every <= 0 or cluster is not None,
    ):
        for position, (entry, result) in enumerate(to_run if cluster is None else []):
            number = number_of[id(result)]
            run_dir = suite_dir / entry.name
            run_dir.mkdir(parents=True, exist_ok=True)
            for stale in (run_dir / RECORDS_FILENAME, run_dir / "kernel.log", run_dir / "stderr.log"):
                stale.unlink(missing_ok=True)  # a rerun (resume) starts from a clean record
            out_nb = run_dir / f"{entry.name}.ipynb"
            expected_s, after_s = durations.get(entry.name), after(position)
            eta = ""
            if expected_s is not None and after_s is not None:
                eta = f" (about {_duration(expected_s)}; suite: about {_duration(expected_s + after_s)} left)"
            elif expected_s is not None:
                eta = f" (about {_duration(expected_s)})"
            say(f"[{number}/{len(results)}] {entry.name}: {result.notebook} ...{eta}")
            result.status = "running"
            meta["finished"] = None
            write_index(suite_dir, results, meta)
            start = time.perf_counter()
            _CURRENT = progress = _Progress(
                entry.name,
                number,
                len(results),
                start,
                watch=suite_dir / "runs",
                expected=_expected_samples(result.params),
                timeout=notebook_timeout,
                expected_s=expected_s,
                after_s=after_s,
                estimate_from=estimate_from,
            )
            try:
                result.status, result.error = _execute(entry, result.params, out_nb, base, suite_dir, cell_timeout)
                if progress.stopping_since is not None:
                    where = f" in cell {progress.cell}/{progress.n_cells}" if progress.cell else ""
                    where += f" [{progress.step}]" if progress.step else ""
                    result.status = "failed"
                    result.error = f"ran longer than {notebook_timeout:g} s (notebook timeout); stopped{where}" + (
                        f" ({result.error})" if result.error else ""
                    )
            except KeyboardInterrupt:
                result.status, result.error = "interrupted", "interrupted (Ctrl-C)"
                result.duration_s = round(time.perf_counter() - start, 2)
                write_index(suite_dir, results, meta)
                say(
                    f"evalcore: interrupted during {entry.name}; finished notebooks are kept. Continue with:\n"
                    f"  evalcore notebooks run --resume {suite_id}"
                    + (f" --output {_display_path(out_root)}" if out_root != Path("reports").resolve() else "")
                )
                raise
            finally:
                _CURRENT = None
            result.duration_s = round(time.perf_counter() - start, 2)
            kernel_log = run_dir / "kernel.log"
            if kernel_log.exists() and kernel_log.stat().st_size == 0:
                kernel_log.unlink()
            _finish_entry(result, out_nb, run_dir, suite_dir, pdf)
            tail = f"  {result.status} in {_duration(result.duration_s)}"
            if result.error:
                tail += f": {result.error}"
            say(tail)
            meta["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
            index = write_index(suite_dir, results, meta)
    meta["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    index = write_index(suite_dir, results, meta)
    complete = is_full_and_complete(results, n_entries)
    if complete:
        latest_ok = _update_latest(out_root, suite_id, LATEST)
        if not latest_ok:
            say(
                f"evalcore: {out_root / LATEST} is not a symbolic link; left as it is "
                f"(remove it to let it point to the newest complete run)"
            )
        if _link_target(out_root, LATEST_PARTIAL) == suite_id:  # no longer partial
            _update_latest(out_root, previous_partial if previous_partial != suite_id else None, LATEST_PARTIAL)
    else:
        latest_ok = _link_target(out_root, LATEST_PARTIAL) == suite_id
        why_partial = "--only " + ",".join(only) if only and len(results) < n_entries else "not every notebook finished"
        say(
            f"evalcore: a partial run ({why_partial}): "
            f"{_display_path(out_root / LATEST_PARTIAL)} points to it; {_display_path(out_root / LATEST)} "
            f"still points to the last complete run of the whole suite"
        )
    from evalcore.reporting._headline import headline_tables

    table = headline_tables(summary_frame(results))
    if table:
        say("")
        say(table.to_text())
        say("")
    failed = [r.name for r in results if r.status != "ok"]
    say(
        f"evalcore: {len(results) - len(failed)}/{len(results)} notebook(s) ok"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    say(f"evalcore: every recorded number: {_display_path(suite_dir / 'summary.csv')}")
    shown = out_root / (LATEST if complete else LATEST_PARTIAL) / "index.html" if latest_ok else index
    say(_display_path(shown))
    return NotebookSuiteResult(suite_dir=suite_dir, results=results, index=index)


def has_figures(folder: Path) -> bool:
    """True when ``folder/figures`` already holds PNGs (saved by the notebook with
    ``save_figure``); the PNG outputs are then not extracted a second time."""
    figures = Path(folder) / "figures"
    return figures.is_dir() and any(figures.glob("*.png"))


def _finish_entry(result: EntryResult, out_nb: Path, run_dir: Path, suite_dir: Path, pdf: bool) -> None:
    """Export an executed notebook and gather its records (also after a failure)."""
    sidecar = run_dir / RECORDS_FILENAME
    records: dict[str, Any] = read_sidecar(sidecar) if sidecar.exists() else {}
    if not out_nb.exists():
        result.records = records
        return
    result.executed = _rel(out_nb, suite_dir)
    try:
        clean_notebook_file(out_nb, run_dir / "stderr.log")  # linked from the index as "stderr log"
        records.update(read_records(out_nb))
        exported: ExportResult = export_notebook(out_nb, run_dir, pdf=pdf, figures=not has_figures(run_dir))
    except EvalcoreError as exc:
        result.messages.append(f"export failed: {exc}")
    else:
        result.html = _rel(exported.html, suite_dir)
        result.pdf = _rel(exported.pdf, suite_dir)
        result.messages.extend(m for m in exported.messages if m != CHROMIUM_HINT)
    figures = sorted((run_dir / "figures").glob("*.png")) if (run_dir / "figures").is_dir() else []
    result.figures = [_rel(f, suite_dir) or str(f) for f in figures]
    result.records = records
    _write_sidecar_json(sidecar, records)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict) and {"mean", "ci_low", "ci_high"} <= set(value):
        parts = [value.get(k) for k in ("mean", "ci_low", "ci_high")]
        if all(isinstance(v, (int, float)) for v in parts):
            return f"{parts[0]:.3g} [{parts[1]:.3g}, {parts[2]:.3g}]"
        return ""
    if isinstance(value, (list, dict)):
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + "..."
    text = str(value)
    return text if len(text) <= 60 else "..." + text[-57:]


def _short_param(value: Any) -> str:
    if isinstance(value, str) and ("/" in value or os.sep in value):
        parts = Path(value).parts
        return "/".join(parts[-2:]) if len(parts) > 2 else value
    if isinstance(value, list):
        return "[" + ", ".join(_short_param(v) for v in value) + "]"
    return _cell(value)


def display_summary(results: Sequence[EntryResult]) -> Any:
    """The index's compact summary: one row per run; parameters in one cell; an interval
    record (``{mean, ci_low, ci_high}``) as ``mean [low, high]``; list-valued records left out
    (they are in each run's ``records.json``).

    Args:
        results: The suite's entry results.

    Returns:
        A ``pandas.DataFrame`` of strings indexed by run name.
    """
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"run": r.name, "status": r.status}
        row["parameters"] = ", ".join(f"{k}={_short_param(v)}" for k, v in r.params.items())
        for key, value in r.records.items():
            if isinstance(value, list):
                continue
            if isinstance(value, dict) and not {"mean", "ci_low", "ci_high"} <= set(value):
                for sub, item in _flatten(value, prefix=f"{key}.").items():
                    if not isinstance(item, list):
                        row[sub] = _cell(item)
            else:
                row[key] = _cell(value)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("run").fillna("") if not frame.empty else frame


def summary_frame(results: Sequence[EntryResult]) -> Any:
    """Build the index's summary table: one row per run, parameters then recorded numbers.

    Args:
        results: The suite's entry results.

    Returns:
        A ``pandas.DataFrame`` indexed by run name with ``status``, ``params.<name>`` and
        one column per (flattened) record.
    """
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"run": r.name, "status": r.status}
        row.update({f"params.{k}": v for k, v in r.params.items()})
        row.update(_flatten(r.records))
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("run") if not frame.empty else frame


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em;color:#222;max-width:1320px}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em} h3{font-size:1.05em;margin:1.4em 0 .3em}
table{border-collapse:collapse;font-size:.85em} th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top} th{background:#f3f3f3}
.ok{color:#176317;font-weight:bold} .failed,.interrupted{color:#b00020;font-weight:bold}
.pending,.running{color:#777} .nb td:nth-child(4),.nb td:nth-child(5){white-space:nowrap}
.err{font-family:monospace;color:#b00020;white-space:pre-wrap}
.headline td.num,.headline th{font-variant-numeric:tabular-nums} .headline td.num{text-align:right;white-space:nowrap}
.headline td{max-width:22em;overflow-wrap:anywhere} p.note{color:#555;font-size:.85em;margin:.2em 0 .4em}
"""


def _meta_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _row_sample_browser(suite_dir: Path, result: EntryResult) -> str | None:
    """The sample browser of the benchmark run a notebook made (its ``run_path`` record, else
    its ``run_id`` parameter under ``<suite_dir>/runs``), relative to ``suite_dir``; ``None``
    when it made none or the page is not there."""
    from evalcore.reporting._browser import BROWSER_FILE

    candidates = []
    if isinstance(result.records.get("run_path"), str):
        candidates.append(Path(result.records["run_path"]))
    if isinstance(result.params.get("run_id"), str) and result.params["run_id"]:
        candidates.append(suite_dir / "runs" / result.params["run_id"])
    for run in candidates:
        page = (run if run.is_absolute() else suite_dir / run) / BROWSER_FILE
        if page.is_file():
            rel = _rel(page, suite_dir)
            if rel and not rel.startswith(("/", "..")):
                return rel
    return None


def write_index(suite_dir: Path, results: Sequence[EntryResult], meta: Mapping[str, Any]) -> Path:
    """Write ``index.html``, ``suite.json`` and ``summary.csv`` of a suite run.

    Args:
        suite_dir: The suite run's folder.
        results: The entry results so far.
        meta: Suite facts shown in the header (``suite``, ``id``, ``started``...).

    Returns:
        The ``index.html`` path.
    """
    esc = _html.escape
    _write_sidecar_json(
        suite_dir / "suite.json",
        to_json_native({"meta": dict(meta), "runs": [asdict(r) for r in results]}, strict=True),
    )
    frame = summary_frame(results)
    if not frame.empty:
        csv = frame.to_csv()
        write_text_atomic(suite_dir / "summary.csv", csv)
    done = sum(r.status == "ok" for r in results)
    failed = sum(r.status == "failed" for r in results)
    from evalcore.reporting._browser import sample_browsers_section

    samples = sample_browsers_section(suite_dir)  # a sample browser per benchmark run: written, listed
    rows = []
    for r in results:
        links = []
        for label, target in (("notebook", r.executed), ("HTML", r.html), ("PDF", r.pdf)):
            if target:
                links.append(f'<a href="{esc(target)}">{label}</a>')
        browser = _row_sample_browser(suite_dir, r)
        if browser:
            links.append(
                f'<a href="{esc(browser)}" title="every sample of this run: prompt, response, '
                f'extracted answer, verdict">samples</a>'
            )
        records_file = suite_dir / r.name / RECORDS_FILENAME
        if records_file.exists():
            links.append(f'<a href="{esc(r.name)}/{RECORDS_FILENAME}">records JSON</a>')
        for log, label in (
            ("stderr.log", "progress bars and warnings moved out of the report"),
            ("kernel.log", "the kernel's own log"),
        ):
            if (suite_dir / r.name / log).exists():
                links.append(f'<a href="{esc(r.name)}/{log}" title="{esc(label)}">{log}</a>')
        figs = " ".join(f'<a href="{esc(f)}">{esc(Path(f).name)}</a>' for f in r.figures)
        detail = f'<div class="err">{esc(r.error)}</div>' if r.error else ""
        if r.messages:
            detail += "".join(f"<div>{esc(m)}</div>" for m in r.messages)
        duration = f"{r.duration_s:.1f} s" if r.duration_s is not None else ""
        rows.append(
            f"<tr><td>{esc(r.name)}</td><td>{esc(r.notebook)}</td>"
            f'<td class="{esc(r.status)}">{esc(r.status)}</td><td>{duration}</td>'
            f"<td>{' · '.join(links)}</td><td>{figs}</td><td>{detail}</td></tr>"
        )
    from evalcore.reporting._export import content_security_policy  # no script runs in the index
    from evalcore.reporting._headline import headline_tables
    from evalcore.reporting._tables import printable_text

    table = headline_tables(frame)
    headline = table.to_html() if table else "<p>No numbers recorded yet.</p>"
    shown_meta = {k: v for k, v in meta.items() if k not in {"smoke", "only", "root"}}
    if meta.get("root") and meta.get("suite"):  # the suite file as the user named it, not a machine path
        shown_meta["suite"] = _rel(Path(str(meta["suite"])), Path(str(meta["root"])))
    head = " · ".join(f"{esc(str(k))}: {esc(_meta_value(v))}" for k, v in shown_meta.items())
    title = f"evalcore report {esc(str(meta.get('id', '')))}"
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{content_security_policy()}<title>{title}</title>
<style>{_CSS}</style></head><body>
<h1>evalcore report {esc(str(meta.get("id", "")))}</h1>
<p>{head}</p>
<p>{done} ok · {failed} failed · {len(results) - done - failed} pending</p>
<h2>Headline</h2>
{headline}
<p>Every recorded number (<code>evalcore.record</code>) with the papermill parameters, one row per
notebook: <a href="summary.csv">summary.csv</a>; list-valued records in <a href="suite.json">suite.json</a>
and each run's records JSON.</p>
<h2>Notebooks</h2>
<table class="nb"><thead><tr><th>run</th><th>notebook</th><th>status</th><th>time</th><th>outputs</th>
<th>figures</th><th>details</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table>
{samples}</body></html>
"""
    index = suite_dir / "index.html"
    write_text_atomic(index, printable_text(body))  # a lone surrogate in an error: its escape
    return index
