"""The notebook suite on a Dask cluster: each notebook (one parameter set) runs on a worker.

The worker gets the notebook's bytes and its parameters, executes it with papermill exactly as
the one-machine runner does (same engine, kernel, cell timeout, kernel environment) in a scratch
suite folder of its own, rewrites the paths of that scratch folder in its text files to the
client's suite folder, exports the executed notebook there with the one-machine runner's own
step (HTML, and PDF with the worker's Chromium; figures, records), and sends the folder back as
a zip archive: the executed notebook, its HTML/PDF, records sidecar, figures, kernel log and
anything the notebook wrote under ``{suite_dir}`` (its benchmark runs). Workers need not share
a file system with the client. The client only unpacks each archive as it arrives and writes the
index as today; ``--resume`` works unchanged (finished notebooks are kept, the others are sent
again).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_on_cluster", "execute_entry"]

_TEXT_SUFFIXES = {".ipynb", ".json", ".jsonl", ".log", ".csv", ".txt", ".html", ".md", ".yaml", ".yml"}


def execute_entry(
    name: str,
    notebook_name: str,
    notebook: bytes,
    params: Any,
    root: str,
    seed: int,
    cell_timeout: float | None,
    version: str,
    pdf: bool = False,
    client_suite: str = "",
) -> dict[str, Any]:
    """On a worker: run and export one suite entry in a scratch suite folder; return it as a zip.

    Args:
        name: The entry's name (its folder).
        notebook_name: The notebook's file name.
        notebook: The notebook's bytes.
        params: Its parameters, ``{suite_dir}``/``{root}`` markers not yet substituted.
        root: The client's repository root (the working directory where it exists here).
        seed: The suite run's agent case seed (shared by all its notebooks).
        cell_timeout: Seconds a cell may run.
        version: The client's evalcore version.
        pdf: Also print the HTML export to PDF (with this worker's Chromium).
        client_suite: The client's suite folder: this worker's scratch path is rewritten to it
            in the text files before the export, so the HTML/PDF and records read as if run there.

    Returns:
        ``{"status", "error", "duration_s", "archive" (zip bytes), "scratch" (the folder's path),
        "entry" (the export's fields of an EntryResult: executed, html, pdf, figures, records,
        messages; paths relative to the suite folder), "no_chromium" (a PDF was asked and this
        worker has no Chromium), "worker" (its address)}``.
    """
    from evalcore.cluster._worker import _check_version
    from evalcore.reporting import AGENT_SEED_FILE, find_chromium, run_suite_entry, substitute

    _check_version(version)
    scratch = Path(tempfile.mkdtemp(prefix="evalcore-nb-"))
    try:
        suite, source = _scratch_suite(scratch, notebook_name, notebook, seed)
        cwd = Path(root) if Path(root).is_dir() else scratch
        values = substitute(params, {"suite_dir": str(suite), "root": str(cwd)})

        def rewrite() -> None:  # the export and the files sent back read as if run in the client's folder
            if client_suite:
                _rewrite_paths(suite, str(suite), client_suite)

        done = run_suite_entry(  # the one-machine execution and export, here on the worker
            name, source, values, suite, cwd, cell_timeout=cell_timeout, pdf=pdf, before_export=rewrite
        )
        return {
            "status": done.status,
            "error": done.error,
            "duration_s": done.duration_s,
            "archive": _zip_folder(suite, skip=AGENT_SEED_FILE),
            "scratch": str(suite),
            "entry": {key: getattr(done, key) for key in ("executed", "html", "pdf", "figures", "records", "messages")},
            "no_chromium": bool(pdf and find_chromium() is None),
            "worker": _worker_address(),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _scratch_suite(scratch: Path, notebook_name: str, notebook: bytes, seed: int) -> tuple[Path, Path]:
    """A suite folder in ``scratch`` holding the run's agent seed, and the notebook's copy beside
    it; returns the two paths (suite, notebook)."""
    from evalcore.reporting import AGENT_SEED_FILE

    suite = scratch / "suite"
    suite.mkdir(parents=True)
    fd = os.open(suite / AGENT_SEED_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"{seed}\n")
    source = scratch / "notebook" / notebook_name
    source.parent.mkdir()
    source.write_bytes(notebook)
    return suite, source


def _zip_folder(folder: Path, skip: str) -> bytes:
    """Every file under ``folder`` (but those named ``skip``) as zip bytes, paths relative to it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != skip:
                zf.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "?"


def _rewrite_paths(folder: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the UTF-8 text files under ``folder`` (the worker's scratch
    path becomes the client's suite folder before the export and before the files go back)."""
    if old == new:
        return
    for path in folder.rglob("*"):
        if not path.is_file() or path.suffix not in _TEXT_SUFFIXES:
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        if old in text:
            path.write_bytes(text.replace(old, new).encode("utf-8"))


def _unpack(archive: bytes, scratch: str, suite_dir: Path) -> None:
    """Unpack a worker's archive into the suite folder (the worker made its paths the client's;
    a scratch path still left in a text file is replaced too)."""
    target = suite_dir.resolve()
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        for info in zf.infolist():
            dest = (target / info.filename).resolve()
            if target not in dest.parents:  # only paths inside the suite folder
                continue
            data = zf.read(info)
            if dest.suffix in _TEXT_SUFFIXES and scratch:
                try:
                    data = data.decode("utf-8").replace(scratch, str(suite_dir)).encode("utf-8")
                except UnicodeDecodeError:
                    pass
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, dest)


def _submit_entries(
    client: Any,
    to_run: Sequence[tuple[Any, Any]],
    suite_dir: Path,
    root: Path,
    seed: int,
    options: tuple[float | None, bool],
    sent: Callable[[Any, Any], None],
) -> dict[Any, tuple[Any, Any]]:
    """Send every entry (its folder cleared first: a resume starts clean), calling ``sent(entry,
    result)`` after each; ``options``: the cell timeout and whether to print PDFs. Returns
    ``future -> (entry, result)``."""
    from evalcore import __version__

    cell_timeout, pdf = options
    pending: dict[Any, tuple[Any, Any]] = {}
    for entry, result in to_run:
        run_dir = suite_dir / entry.name
        if run_dir.exists():
            shutil.rmtree(run_dir)  # a rerun (resume) starts from a clean folder
        result.status = "running"
        future = client.submit(
            execute_entry,
            entry.name,
            Path(entry.notebook).name,
            Path(entry.notebook).read_bytes(),
            entry.params,
            str(root),
            seed,
            cell_timeout,
            __version__,
            pdf,
            str(suite_dir),
            pure=False,
            key=f"evalcore-notebook-{entry.name}-{os.urandom(6).hex()}",
        )
        pending[future] = (entry, result)
        sent(entry, result)
    return pending


def _take_reply(future: Any, result: Any, suite_dir: Path, told: set[str], say: Callable[[str], None]) -> None:
    """Unpack a finished entry's folder and fill its result (a failed task: its error); say once per
    worker that it has no Chromium (``told``: the workers said so already)."""
    from evalcore.cluster._errors import future_error_text
    from evalcore.reporting import CHROMIUM_HINT

    if future.status != "finished":
        result.status, result.error = "failed", f"on the cluster: {future_error_text(future)}"
        result.duration_s = 0.0
        return
    reply = future.result()
    _unpack(reply["archive"], reply["scratch"], suite_dir)
    result.status, result.error = reply["status"], reply["error"]
    result.duration_s = round(float(reply["duration_s"]), 2)
    for key, value in reply["entry"].items():  # exported on the worker
        setattr(result, key, value)
    if reply.get("no_chromium") and reply.get("worker") not in told:
        told.add(reply.get("worker"))
        say(f"{CHROMIUM_HINT} (on worker {reply.get('worker')})")


def run_on_cluster(
    cluster: Any,
    to_run: Sequence[tuple[Any, Any]],
    *,
    results: Sequence[Any],
    number_of: dict[int, int],
    suite_dir: Path,
    root: Path,
    meta: dict[str, Any],
    cell_timeout: float | None,
    pdf: bool,
    say: Callable[[str], None],
    resume_hint: str,
    wait_s: float,
) -> None:
    """Run the entries ``to_run`` of a suite on the cluster; fill their results as they finish.

    Args:
        cluster: A scheduler address, a scheduler file, ``local:N`` or a ``distributed.Client``.
        to_run: ``(NotebookEntry, EntryResult)`` pairs still to run.
        results: Every entry's result (the index is written from them).
        number_of: ``id(result) -> its number`` in the suite.
        suite_dir: The suite run's folder.
        root: The repository root.
        meta: The suite run's metadata (for the index).
        cell_timeout: Seconds a cell may run.
        pdf: Also print HTML to PDF (on the worker, with its Chromium).
        say: Progress lines.
        resume_hint: The line that tells how to resume (after Ctrl-C).
        wait_s: Seconds to wait for the first worker.
    """
    from evalcore.cluster._connect import open_cluster
    from evalcore.reporting import format_duration, suite_agent_seed, write_index

    if not to_run:
        return
    seed = suite_agent_seed(suite_dir)
    with open_cluster(cluster, wait_s=wait_s) as session:
        client = session.client
        link = session.dashboard_link
        say(
            f"evalcore: {len(to_run)} notebook(s) on {session.label} ({session.worker_count()} workers)"
            + (f"; dashboard: {link}" if link else "")
        )

        def sent(entry: Any, result: Any) -> None:
            say(f"[{number_of[id(result)]}/{len(results)}] {entry.name}: {result.notebook} ... (sent)")

        pending = _submit_entries(client, to_run, suite_dir, root, seed, (cell_timeout, pdf), sent)
        meta["finished"] = None
        write_index(suite_dir, results, meta)
        from distributed import as_completed

        told: set[str] = set()  # workers that said they have no Chromium
        try:
            for future in as_completed(list(pending)):
                entry, result = pending.pop(future)
                run_dir = suite_dir / entry.name
                _take_reply(future, result, suite_dir, told, say)
                run_dir.mkdir(parents=True, exist_ok=True)
                say(
                    f"  {entry.name}: {result.status} in {format_duration(result.duration_s)}"
                    + (f": {result.error}" if result.error else "")
                )
                write_index(suite_dir, results, meta)
        except KeyboardInterrupt:
            for _entry, result in pending.values():
                result.status, result.error = "interrupted", "interrupted (Ctrl-C)"
            write_index(suite_dir, results, meta)
            say(resume_hint)
            if pending and not session.owned:  # a user's own client outlives this call: drop its tasks
                with contextlib.suppress(Exception):
                    client.cancel(list(pending), force=True)
            raise
