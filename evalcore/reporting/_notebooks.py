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

import datetime as _dt
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._executor import Executor, as_executor
from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError
from evalcore.reporting import _notebook_progress
from evalcore.reporting._clean import clean_notebook_file
from evalcore.reporting._export import (
    CHROMIUM_HINT as CHROMIUM_HINT,  # re-exported: cluster
)
from evalcore.reporting._export import (
    ExportResult,
    export_notebook,
    find_chromium,
)
from evalcore.reporting._notebook_index import _cell as _cell
from evalcore.reporting._notebook_index import _rel as _rel
from evalcore.reporting._notebook_index import _short_param as _short_param
from evalcore.reporting._notebook_index import display_summary, summary_frame, write_index
from evalcore.reporting._notebook_kernel import AGENT_SEED_FILE as AGENT_SEED_FILE
from evalcore.reporting._notebook_kernel import ENGINE_NAME as ENGINE_NAME
from evalcore.reporting._notebook_kernel import KERNEL_NAME as KERNEL_NAME
from evalcore.reporting._notebook_kernel import _execute as _execute  # re-exported: cluster
from evalcore.reporting._notebook_kernel import _kernel_env as _kernel_env
from evalcore.reporting._notebook_kernel import _register_engine as _register_engine
from evalcore.reporting._notebook_kernel import suite_agent_seed as suite_agent_seed
from evalcore.reporting._notebook_progress import TIMES_SUFFIX as TIMES_SUFFIX
from evalcore.reporting._notebook_progress import (
    Pace,
    _expected_samples,
    _Heartbeat,
    _Progress,
    expected_durations,
    start_eta,
)
from evalcore.reporting._notebook_progress import (
    _duration as _duration,  # re-exported: cluster
)
from evalcore.reporting._notebook_progress import _enforce_timeout as _enforce_timeout
from evalcore.reporting._notebook_progress import _kernel_pid as _kernel_pid
from evalcore.reporting._notebook_progress import _samples_left_s as _samples_left_s
from evalcore.reporting._notebook_progress import _samples_written as _samples_written
from evalcore.reporting._notebook_progress import _step as _step
from evalcore.reporting._notebook_progress import progress_line as progress_line
from evalcore.reporting._notebook_progress import time_left as time_left
from evalcore.reporting._notebook_suite import (
    NotebookEntry,
    check_parameters,
    find_root,
    load_notebook_suite,
    substitute,
    with_dependencies,
)
from evalcore.reporting._record import (
    RECORDS_FILENAME,
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
    executor: Executor | None = None,
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
        executor: Where the notebooks run: a remote executor (``cluster``'s, or a
            ``DaskExecutor``) takes each entry to a worker (:meth:`Executor.notebooks`); None or
            a local one: the kernels run here.

    Returns:
        The :class:`NotebookSuiteResult` (``.ok`` is False when a notebook failed).

    Raises:
        EvalcoreError: The suite is malformed, names a missing file, an unknown run
            (``only``) or an unknown parameter; or there is no suite run to resume.
    """
    from evalcore._checks import check_timeout

    progress_every = check_timeout(progress_every or 0, "progress_every", allow_zero=True) or 0.0
    executor = as_executor(executor, cluster, wait_s=cluster_wait_s)  # local:0 and the like: now
    remote = executor is not None and executor.remote
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
        entries, needed_by = with_dependencies(entries, list(only))
        for name, readers in needed_by.items():  # a comparison needs the runs it compares
            say(f"evalcore: --only: also running {name} ({', '.join(readers)} reads what it writes)")
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
    if pdf and to_run and not remote and find_chromium() is None:  # on a cluster: the workers' Chromium
        say(CHROMIUM_HINT)
    if resume_dir is not None:
        say(
            f"evalcore: resuming suite {suite_id} in {_display_path(suite_dir)}: "
            f"{len(results) - len(to_run)} notebook(s) "
            f"finished before, {len(to_run)} to run"
        )
    else:
        say(f"evalcore: suite {suite_path} -> {_display_path(suite_dir)} ({len(entries)} notebook(s))")
    number_of = {id(r): i for i, r in enumerate(results, start=1)}
    durations, estimate_from = expected_durations(out_root, suite_path, smoke)
    pace = Pace()  # this run's measured / expected time, learned as notebooks finish

    def after(position: int) -> float | None:  # expected seconds of the notebooks still to run after this one
        rest = [durations.get(e.name) for e, _ in to_run[position + 1 :]]
        known = [d for d in rest if d is not None]
        return float(sum(known)) if len(known) == len(rest) else None

    if executor is not None and remote:  # each notebook on a worker (docs/cluster.md)
        executor.notebooks(
            to_run,
            results=results,
            number_of=number_of,
            suite_dir=suite_dir,
            root=base,
            meta=meta,
            cell_timeout=cell_timeout,
            pdf=pdf,
            say=say,
            resume_hint=f"evalcore: interrupted; finished notebooks are kept. Continue with:\n"
            f"  evalcore notebooks run --resume {suite_id} --cluster ADDRESS",
        )
    with _Heartbeat(
        say,
        progress_every if progress_every and progress_every > 0 else (1.0 if notebook_timeout else 0),
        quiet=not progress_every or progress_every <= 0 or remote,
    ):
        for position, (entry, result) in enumerate(to_run if not remote else []):
            number = number_of[id(result)]
            run_dir = suite_dir / entry.name
            run_dir.mkdir(parents=True, exist_ok=True)
            for stale in (run_dir / RECORDS_FILENAME, run_dir / "kernel.log", run_dir / "stderr.log"):
                stale.unlink(missing_ok=True)  # a rerun (resume) starts from a clean record
            out_nb = run_dir / f"{entry.name}.ipynb"
            expected_s, after_s = durations.get(entry.name), after(position)
            eta = start_eta(expected_s, after_s, pace)
            say(f"[{number}/{len(results)}] {entry.name}: {result.notebook} ...{eta}")
            result.status = "running"
            meta["finished"] = None
            write_index(suite_dir, results, meta)
            start = time.perf_counter()
            _notebook_progress._CURRENT = progress = _Progress(
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
                pace=pace,
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
                _notebook_progress._CURRENT = None
            result.duration_s = round(time.perf_counter() - start, 2)
            pace.add(expected_s, result.duration_s)
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
