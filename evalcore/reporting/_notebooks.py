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
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore._executor import Executor, as_executor
from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError
from evalcore.reporting import _notebook_progress
from evalcore.reporting._clean import clean_notebook_file
from evalcore.reporting._export import (
    CHROMIUM_HINT,
    ExportResult,
    export_notebook,
    find_chromium,
    pdf_session,
)
from evalcore.reporting._notebook_index import _cell as _cell
from evalcore.reporting._notebook_index import _rel as _rel
from evalcore.reporting._notebook_index import _short_param as _short_param
from evalcore.reporting._notebook_index import display_summary, summary_frame, write_index
from evalcore.reporting._notebook_kernel import AGENT_SEED_FILE as AGENT_SEED_FILE
from evalcore.reporting._notebook_kernel import ENGINE_NAME as ENGINE_NAME
from evalcore.reporting._notebook_kernel import KERNEL_NAME as KERNEL_NAME
from evalcore.reporting._notebook_kernel import _execute
from evalcore.reporting._notebook_kernel import _kernel_env as _kernel_env
from evalcore.reporting._notebook_kernel import _register_engine as _register_engine
from evalcore.reporting._notebook_kernel import suite_agent_seed as suite_agent_seed
from evalcore.reporting._notebook_progress import (
    SuiteEstimate,
    _expected_samples,
    _Heartbeat,
    _Progress,
)
from evalcore.reporting._notebook_progress import _duration as _duration
from evalcore.reporting._notebook_progress import _enforce_timeout as _enforce_timeout
from evalcore.reporting._notebook_progress import _kernel_pid as _kernel_pid
from evalcore.reporting._notebook_progress import _samples_left_s as _samples_left_s
from evalcore.reporting._notebook_progress import _samples_written as _samples_written
from evalcore.reporting._notebook_progress import _step as _step
from evalcore.reporting._notebook_progress import expected_durations as expected_durations
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
from evalcore.reporting._suite_folder import LATEST as LATEST
from evalcore.reporting._suite_folder import LATEST_PARTIAL as LATEST_PARTIAL
from evalcore.reporting._suite_folder import EntryResult as EntryResult
from evalcore.reporting._suite_folder import NotebookSuiteResult as NotebookSuiteResult
from evalcore.reporting._suite_folder import _link_target as _link_target
from evalcore.reporting._suite_folder import _load_manifest as _load_manifest
from evalcore.reporting._suite_folder import _update_latest as _update_latest
from evalcore.reporting._suite_folder import find_suite_dir as find_suite_dir
from evalcore.reporting._suite_folder import is_full_and_complete as is_full_and_complete
from evalcore.reporting._suite_folder import new_suite_id as new_suite_id

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
    """Execute a suite of notebooks and write a report folder (see the module docstring).

    Every entry is checked before the first one runs (missing notebook, malformed parameter
    file, unknown parameter), so a typo costs nothing; then each runs in order, and a failure is
    recorded while the suite goes on.

    Args:
        suite: The suite YAML (:mod:`evalcore.reporting._notebook_suite`); resuming and ``None``: the run's.
        only: Run only these entries (and those they read from); resuming: the run's.
        output: Folder that receives ``<suite-run-id>/`` and the ``latest`` link.
        root: Repository root (the notebooks' working directory); found from the suite file if ``None``.
        smoke: Per-run overrides (``params/smoke.yaml`` shape) merged on top; resuming: the run's.
        pdf: Also print each HTML export to PDF (needs Chromium).
        echo: Receives progress lines; ``None`` is silent.
        resume: Continue an interrupted run in its folder (an id, a path, ``True``/``"latest"``): the
            notebooks that finished with the same parameters are kept, the others run again.
        progress_every: Seconds between progress lines while a notebook runs (0: none).
        cell_timeout: Fail a notebook whose cell runs longer than this many seconds.
        notebook_timeout: Stop (interrupt, then kill) and fail a notebook running longer than this.
        cluster: A Dask cluster to run each notebook on (docs/cluster.md; no ``notebook_timeout`` there).
        cluster_wait_s: Seconds to wait for the cluster's first worker.
        executor: Where the notebooks run (a remote one: :meth:`Executor.notebooks`; None: here).

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
    run = _prepare(_sayer(echo), Path(output).resolve(), suite, only, root, smoke, resume)
    _announce(run, chromium_needed=pdf and bool(run.to_run) and not remote)
    if executor is not None and remote:  # each notebook on a worker (docs/cluster.md)
        executor.notebooks(
            run.to_run,
            results=run.results,
            number_of={id(r): i for i, r in enumerate(run.results, start=1)},
            suite_dir=run.suite_dir,
            root=run.base,
            meta=run.meta,
            cell_timeout=cell_timeout,
            pdf=pdf,
            say=run.say,
            resume_hint=f"evalcore: interrupted; finished notebooks are kept. Continue with:\n"
            f"  evalcore notebooks run --resume {run.suite_id} --cluster ADDRESS",
        )
    expected = expected_durations(run.out_root, run.suite_path, run.smoke)
    estimate = SuiteEstimate(expected, [entry.name for entry, _ in run.to_run])  # paces learned as they finish
    every = progress_every if progress_every > 0 else (1.0 if notebook_timeout else 0)
    # one Chromium prints every PDF of the run (a browser per page took 0.8 s more each)
    with _Heartbeat(run.say, every, quiet=progress_every <= 0 or remote), pdf_session(pdf and not remote):
        for position, (entry, result) in enumerate(run.to_run if not remote else []):
            _run_entry(run, position, entry, result, estimate, pdf, cell_timeout, notebook_timeout)
    return _conclude(run)


@dataclass
class _SuiteRun:
    """A notebook-suite run being made: how it talks, where it writes, what it runs."""

    say: Callable[[str], None]
    out_root: Path
    suite_path: Path
    base: Path
    smoke: Mapping[str, Mapping[str, Any]] | None
    only: list[str] | None
    suite_dir: Path
    suite_id: str
    meta: dict[str, Any]
    results: list[EntryResult]
    to_run: list[tuple[NotebookEntry, EntryResult]]
    n_entries: int
    resumed: bool
    previous_partial: str | None = None


def _sayer(echo: Callable[[str], None] | None) -> Callable[[str], None]:
    """``echo`` for whole lines from two threads (the progress thread prints too), flushed."""
    raw_say = echo or (lambda _msg: None)
    lock = threading.Lock()

    def say(message: str) -> None:
        with lock:
            raw_say(message)
            if echo is print:
                sys.stdout.flush()

    return say


def _prepare(
    say: Callable[[str], None],
    out_root: Path,
    suite: str | os.PathLike[str] | None,
    only: Sequence[str] | None,
    root: str | os.PathLike[str] | None,
    smoke: Mapping[str, Mapping[str, Any]] | None,
    resume: str | bool | None,
) -> _SuiteRun:
    """Read and check the suite (and the run resumed), make the suite folder, plan what runs."""
    previous: dict[str, EntryResult] = {}
    prev_meta: dict[str, Any] = {}
    resume_dir: Path | None = None
    if resume:
        resume_dir = find_suite_dir(out_root, None if resume is True else str(resume))
        prev_meta, previous = _load_manifest(resume_dir)
        suite = suite if suite is not None else (prev_meta.get("suite") or "params/suite.yaml")
        smoke = prev_meta["smoke"] if smoke is None and prev_meta.get("smoke") else smoke
        only = prev_meta["only"] if not only and prev_meta.get("only") else only
        root = prev_meta["root"] if root is None and prev_meta.get("root") else root
    suite_path = Path(suite if suite is not None else "params/suite.yaml")
    base = Path(root).resolve() if root is not None else find_root(suite_path)
    entries, n_entries = _entries(suite_path, base, smoke, only, say)
    if out_root.exists() and not out_root.is_dir():
        raise EvalcoreError("the report folder exists and is not a directory", path=out_root, field="output")
    out_root.mkdir(parents=True, exist_ok=True)
    if resume_dir is not None:
        suite_dir, suite_id = resume_dir, resume_dir.name
    else:
        suite_id = new_suite_id(out_root)
        suite_dir = out_root / suite_id
        suite_dir.mkdir(parents=True)
    results, to_run = _plan(entries, previous, suite_dir, base)
    meta: dict[str, Any] = dict(prev_meta) if resume_dir is not None else {}
    meta.update({"suite": str(suite_path.resolve()), "root": str(base), "id": suite_id})
    meta.setdefault("started", _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    if smoke:
        meta["smoke"] = to_json_native({k: dict(v) for k, v in smoke.items()}, strict=True)
    if only:
        meta["only"] = list(only)
    if resume_dir is not None:
        meta["resumed"] = [*meta.get("resumed", []), _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")]
    only_list = list(only) if only else None
    return _SuiteRun(
        say, out_root, suite_path, base, smoke, only_list, suite_dir, suite_id, meta, results, to_run, n_entries,
        resumed=resume_dir is not None,
    )  # fmt: skip


def _entries(
    suite_path: Path,
    base: Path,
    smoke: Mapping[str, Mapping[str, Any]] | None,
    only: Sequence[str] | None,
    say: Callable[[str], None],
) -> tuple[list[NotebookEntry], int]:
    """The entries to run (``only`` and the entries they read from) and how many the suite
    file has; every parameter checked against its notebook."""
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
    return entries, n_entries


def _plan(
    entries: Sequence[NotebookEntry], previous: Mapping[str, EntryResult], suite_dir: Path, base: Path
) -> tuple[list[EntryResult], list[tuple[NotebookEntry, EntryResult]]]:
    """Every entry's result (kept from the resumed run when it finished with the same
    parameters) and the entries to run."""
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
    return results, to_run


def _announce(run: _SuiteRun, chromium_needed: bool) -> None:
    """Write the first index, point ``latest-partial`` at the run, say what runs."""
    write_index(run.suite_dir, run.results, run.meta)
    # A run in progress is partial until it completes the whole suite: `latest` keeps pointing
    # at the last complete full-suite report, `latest-partial` at this one.
    run.previous_partial = _link_target(run.out_root, LATEST_PARTIAL)
    if not _update_latest(run.out_root, run.suite_id, LATEST_PARTIAL):
        run.say(
            f"evalcore: {run.out_root / LATEST_PARTIAL} is not a symbolic link; left as it is "
            f"(remove it to let it point to the newest partial run)"
        )
    if chromium_needed and find_chromium() is None:  # on a cluster: the workers' Chromium
        run.say(CHROMIUM_HINT)
    if run.resumed:
        run.say(
            f"evalcore: resuming suite {run.suite_id} in {_display_path(run.suite_dir)}: "
            f"{len(run.results) - len(run.to_run)} notebook(s) "
            f"finished before, {len(run.to_run)} to run"
        )
    else:
        run.say(f"evalcore: suite {run.suite_path} -> {_display_path(run.suite_dir)} ({len(run.results)} notebook(s))")


def _run_entry(
    run: _SuiteRun,
    position: int,
    entry: NotebookEntry,
    result: EntryResult,
    estimate: SuiteEstimate,
    pdf: bool,
    cell_timeout: float | None,
    notebook_timeout: float | None,
) -> None:
    """Run one notebook here, export it and say how it went (its time and its export's)."""
    number = next(i for i, r in enumerate(run.results, start=1) if r is result)
    run_dir = run.suite_dir / entry.name
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in (run_dir / RECORDS_FILENAME, run_dir / "kernel.log", run_dir / "stderr.log"):
        stale.unlink(missing_ok=True)  # a rerun (resume) starts from a clean record
    out_nb = run_dir / f"{entry.name}.ipynb"
    run.say(f"[{number}/{len(run.results)}] {entry.name}: {result.notebook} ...{estimate.start_eta(position)}")
    result.status = "running"
    run.meta["finished"] = None
    write_index(run.suite_dir, run.results, run.meta)
    start = time.perf_counter()
    _notebook_progress._CURRENT = progress = estimate.progress(
        position,
        number,
        len(run.results),
        start,
        watch=run.suite_dir / "runs",
        expected=_expected_samples(result.params),
        timeout=notebook_timeout,
    )
    try:
        _execute_entry(run, entry, result, out_nb, progress, cell_timeout, notebook_timeout)
        result.duration_s = round(time.perf_counter() - start, 2)
        estimate.ran(progress, result.duration_s, time.perf_counter())  # its finishing starts
        _drop_empty_kernel_log(run_dir)
        _finish_entry(result, out_nb, run_dir, run.suite_dir, pdf)
        result.finish_s = round(estimate.finished(progress, time.perf_counter()), 2)
    finally:
        _notebook_progress._CURRENT = None
    tail = (
        f"  {result.status} in {_duration(result.duration_s or 0.0)} (exported in {_duration(result.finish_s or 0.0)})"
    )
    if result.error:
        tail += f": {result.error}"
    run.say(tail)
    run.meta["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_index(run.suite_dir, run.results, run.meta)


def _execute_entry(
    run: _SuiteRun,
    entry: NotebookEntry,
    result: EntryResult,
    out_nb: Path,
    progress: _Progress,
    cell_timeout: float | None,
    notebook_timeout: float | None,
) -> None:
    """Execute the notebook (its status and error into ``result``); on Ctrl-C record it as
    interrupted and say how to resume."""
    try:
        result.status, result.error = _execute(entry, result.params, out_nb, run.base, run.suite_dir, cell_timeout)
    except KeyboardInterrupt:
        result.status, result.error = "interrupted", "interrupted (Ctrl-C)"
        result.duration_s = round(time.perf_counter() - progress.started, 2)
        write_index(run.suite_dir, run.results, run.meta)
        run.say(
            f"evalcore: interrupted during {entry.name}; finished notebooks are kept. Continue with:\n"
            f"  evalcore notebooks run --resume {run.suite_id}"
            + (f" --output {_display_path(run.out_root)}" if run.out_root != Path("reports").resolve() else "")
        )
        raise
    if progress.stopping_since is not None:
        where = f" in cell {progress.cell}/{progress.n_cells}" if progress.cell else ""
        where += f" [{progress.step}]" if progress.step else ""
        result.status = "failed"
        result.error = f"ran longer than {notebook_timeout:g} s (notebook timeout); stopped{where}" + (
            f" ({result.error})" if result.error else ""
        )


def _conclude(run: _SuiteRun) -> NotebookSuiteResult:
    """The last index; ``latest`` moved to a complete run of the whole suite (else said why
    not); the headline table; the count of notebooks ok; last, the index's path."""
    results, out_root, suite_id = run.results, run.out_root, run.suite_id
    run.meta["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    index = write_index(run.suite_dir, results, run.meta)
    complete = is_full_and_complete(results, run.n_entries)
    if complete:
        latest_ok = _update_latest(out_root, suite_id, LATEST)
        if not latest_ok:
            run.say(
                f"evalcore: {out_root / LATEST} is not a symbolic link; left as it is "
                f"(remove it to let it point to the newest complete run)"
            )
        if _link_target(out_root, LATEST_PARTIAL) == suite_id:  # no longer partial
            previous = run.previous_partial if run.previous_partial != suite_id else None
            _update_latest(out_root, previous, LATEST_PARTIAL)
    else:
        latest_ok = _link_target(out_root, LATEST_PARTIAL) == suite_id
        only = run.only
        why_partial = (
            "--only " + ",".join(only) if only and len(results) < run.n_entries else "not every notebook finished"
        )
        run.say(
            f"evalcore: a partial run ({why_partial}): "
            f"{_display_path(out_root / LATEST_PARTIAL)} points to it; {_display_path(out_root / LATEST)} "
            f"still points to the last complete run of the whole suite"
        )
    from evalcore.reporting._headline import headline_tables

    table = headline_tables(summary_frame(results))
    if table:
        run.say("")
        run.say(table.to_text())
        run.say("")
    failed = [r.name for r in results if r.status != "ok"]
    run.say(
        f"evalcore: {len(results) - len(failed)}/{len(results)} notebook(s) ok"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    run.say(f"evalcore: every recorded number: {_display_path(run.suite_dir / 'summary.csv')}")
    shown = out_root / (LATEST if complete else LATEST_PARTIAL) / "index.html" if latest_ok else index
    run.say(_display_path(shown))
    return NotebookSuiteResult(suite_dir=run.suite_dir, results=results, index=index)


def has_figures(folder: Path) -> bool:
    """True when ``folder/figures`` already holds PNGs (saved by the notebook with
    ``save_figure``); the PNG outputs are then not extracted a second time."""
    figures = Path(folder) / "figures"
    return figures.is_dir() and any(figures.glob("*.png"))


def run_suite_entry(
    name: str,
    notebook: Path,
    params: dict[str, Any],
    suite_dir: Path,
    root: Path,
    *,
    cell_timeout: float | None = None,
    pdf: bool = False,
    before_export: Callable[[], None] | None = None,
) -> EntryResult:
    """Execute and export one suite entry in ``suite_dir/name`` (what an executor that runs entries
    elsewhere does on its worker: the same papermill run and export as :func:`run_notebooks`).

    The notebook is executed with papermill (the runner's engine, kernel, environment and cell
    timeout) into ``suite_dir/name/name.ipynb``; an empty ``kernel.log`` is removed; then
    ``before_export`` runs (e.g. rewriting a scratch folder's paths); then the notebook is exported
    (stderr moved out, HTML, PDF if asked, figures, records) as the one-machine runner does.

    Args:
        name: The entry's name (its folder in ``suite_dir``).
        notebook: The notebook to execute.
        params: Its parameters, ``{suite_dir}``/``{root}`` markers already substituted.
        suite_dir: The suite folder (holds the run's agent seed file).
        root: The working directory of the kernel.
        cell_timeout: Seconds a cell may run.
        pdf: Also print the HTML export to PDF.
        before_export: Called after the execution, before the export.

    Returns:
        The :class:`EntryResult`: status, error, ``duration_s`` (the execution's wall time, not
        rounded) and the export's fields (executed, html, pdf, figures, records, messages;
        paths relative to ``suite_dir``).
    """
    run_dir = suite_dir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    out_nb = run_dir / f"{name}.ipynb"
    entry = NotebookEntry(name=name, notebook=notebook, params_file=None, params=params)
    start = time.perf_counter()
    status, error = _execute(entry, params, out_nb, root, suite_dir, cell_timeout)
    result = EntryResult(name=name, notebook=notebook.name, status=status, error=error)
    result.duration_s = time.perf_counter() - start
    _drop_empty_kernel_log(run_dir)
    if before_export is not None:
        before_export()
    _finish_entry(result, out_nb, run_dir, suite_dir, pdf)
    return result


def format_duration(seconds: float) -> str:
    """A duration as the suite runner prints it (``42 s``, ``3 min 05 s``, ``1 h 02 min``).

    Args:
        seconds: The duration (its fraction is dropped).

    Returns:
        The text.
    """
    return _duration(seconds)


def _drop_empty_kernel_log(run_dir: Path) -> None:
    """Remove ``run_dir/kernel.log`` when the kernel wrote nothing to it."""
    kernel_log = run_dir / "kernel.log"
    if kernel_log.exists() and kernel_log.stat().st_size == 0:
        kernel_log.unlink()


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
