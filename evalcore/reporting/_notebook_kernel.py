"""The papermill side of the notebook suite: the suite's engine (nbclient's, plus the current cell
for the progress lines and the kernel's own output sent to ``kernel.log``), the environment a
notebook's kernel runs in, and the execution of one notebook.

Split from :mod:`evalcore.reporting._notebooks`, which re-exports these names.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalcore.reporting import _notebook_progress
from evalcore.reporting._notebook_progress import _step
from evalcore.reporting._notebook_suite import NotebookEntry
from evalcore.reporting._record import RECORD_DIR_ENV, SUITE_DIR_ENV

KERNEL_NAME = "python3"


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
    before an agent is started), progress bars off (``EVALCORE_PROGRESS=0``), a
    non-interactive MPLBACKEND removed."""
    from evalcore._progress import PROGRESS_ENV
    from evalcore.agent_eval import SEED_ENV

    saved = {k: os.environ.get(k) for k in (RECORD_DIR_ENV, SUITE_DIR_ENV, "MPLBACKEND", SEED_ENV, PROGRESS_ENV)}
    os.environ[RECORD_DIR_ENV] = str(record_dir)
    # no progress bar in a report: no one watches a papermill run (the suite prints its own lines)
    os.environ[PROGRESS_ENV] = "0"
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
            nb_man: Any,
            kernel_name: str,
            log_output: bool = False,
            stdout_file: Any = None,
            stderr_file: Any = None,
            start_timeout: int = 60,
            execution_timeout: float | None = None,
            **kwargs: Any,
        ) -> Any:
            progress = _notebook_progress._CURRENT
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
            with _ipc_folder() as sockets:
                client = PapermillNotebookClient(nb_man, config=_ipc_config(sockets), **final_kwargs)
                if progress is not None:
                    progress.client = client  # the heartbeat stops the kernel of a notebook over its time limit
                if _KERNEL_LOG is None:
                    return client.execute()
                # The kernel process's own output (its log, e.g. "KeyboardInterrupt caught in kernel"
                # when it is shut down, and what C libraries print) goes to a file, not the terminal.
                with open(_KERNEL_LOG, "ab") as log:
                    return client.execute(stdout=log, stderr=log)

    papermill_engines.register(ENGINE_NAME, SuiteEngine)


def _ipc_config(sockets: Path) -> Any:
    """The kernel's channels over Unix sockets (``KernelManager.transport = "ipc"``) in a private
    folder of this kernel's own, not TCP ports on 127.0.0.1: no other local user can connect, and
    the kernel does not print "Kernel is running over TCP without encryption" at every start.

    jupyter_client's default socket name is ``kernel-ipc-N`` in the working folder, N the first
    free number: two kernels started at once there (the cluster path runs notebooks side by side
    in one checkout) took the same sockets and read each other's messages ("Invalid Signature").
    """
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(sockets / "kernel")
    return config


@contextlib.contextmanager
def _ipc_folder() -> Iterator[Path]:
    """A fresh owner-only folder for one kernel's sockets, removed afterwards (a Unix socket's
    path must stay under ~107 bytes: a long ``TMPDIR`` falls back to /tmp)."""
    import shutil
    import tempfile

    base = tempfile.gettempdir()
    if len(base) > 60 or not os.access(base, os.W_OK):
        base = "/tmp"
    folder = Path(tempfile.mkdtemp(prefix="evalcore-kernel-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
    # papermill rewrites its output after every cell: it writes to a hidden partial file that
    # replaces ``out_nb`` only once it is a whole notebook (a full disk or a kill never leaves a
    # half-written notebook where the report and a resume read it)
    partial = out_nb.with_name(f".{out_nb.stem}.partial.ipynb")
    outcome: tuple[str, str | None] = ("ok", None)
    with _kernel_env(out_nb.parent, suite_dir), _publish_when_whole(partial, out_nb) as published:
        try:
            pm.execute_notebook(
                str(entry.notebook),
                str(partial),
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
            outcome = "failed", f"{exc.ename}: {exc.evalue}{where}"
        except KeyboardInterrupt:
            raise
        except OSError as exc:
            if isinstance(exc, TimeoutError):  # nbclient's CellTimeoutError is one: a cell, not a file
                outcome = "failed", _failure(exc, cell_timeout)
            else:
                reason = (
                    "no space left on device" if exc.errno == errno.ENOSPC else f"cannot write ({exc.strerror or exc})"
                )
                outcome = "failed", f"{reason}: {exc.filename or out_nb}"
        except Exception as exc:  # noqa: BLE001 - kernel death, timeouts: the suite goes on
            outcome = "failed", _failure(exc, cell_timeout)
        finally:
            _KERNEL_LOG = None
    if published.no_space:  # papermill's own message for a cut-short write is a JSON error
        return "failed", f"no space left on device: {out_nb}"
    return outcome


def _failure(exc: BaseException, cell_timeout: float | None) -> str:
    """One line for a notebook that failed outside its cells (kernel death, a cell timeout)."""
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if cell_timeout and ("timed out" in last.lower() or "TimeoutError" in last):
        first = last.splitlines()[0].removeprefix("nbclient.exceptions.")
        last = f"a cell ran longer than {cell_timeout:g} s (cell timeout): {first}"
    return last


class _Published:
    no_space = False


@contextlib.contextmanager
def _publish_when_whole(partial: Path, out_nb: Path) -> Iterator[_Published]:
    """Move ``partial`` to ``out_nb`` on the way out if it holds a whole notebook; drop it if not."""
    state = _Published()
    partial.unlink(missing_ok=True)
    try:
        yield state
    finally:
        if partial.exists():
            try:
                json.loads(partial.read_bytes())
            except ValueError:  # cut short (a full disk): nothing half-written is published
                partial.unlink(missing_ok=True)
                state.no_space = _disk_full(out_nb.parent)
            else:
                os.replace(partial, out_nb)


def _disk_full(folder: Path) -> bool:
    try:
        return os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize < 1024 * 1024
    except OSError:
        return False
