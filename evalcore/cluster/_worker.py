"""What runs on a Dask worker: its own warm sandbox pool (a worker plugin) and the chunk tasks.

Each worker starts one sandbox pool, once, with as many sandbox processes as the worker has
threads, pinned to the CPUs the fewest other evalcore workers on the same machine hold (lock
files per CPU, released by the kernel when the worker dies; see :func:`_claim_cpus`). Isolation
is exactly the one-machine sandbox's: the worker calls :func:`~evalcore.evaluators._code_execution.evaluate_code_batch`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from distributed import WorkerPlugin, get_worker

if TYPE_CHECKING:
    from evalcore.sandbox import SandboxJob, SandboxResult

__all__ = ["SandboxPlugin", "score_chunk", "run_jobs", "ready_pool", "pool_isolation", "PLUGIN_NAME"]

PLUGIN_NAME = "evalcore-sandbox"
_CPU_LOCKS: list[int] = []  # open lock files (two per CPU this worker's pool holds)
_SIBLING_FILES: list[str] = []  # this worker's cluster-keyed lock files, removed on release
_POOL_SIZE: list[int] = []


def _worker_threads() -> int:
    try:
        worker = get_worker()
    except ValueError:
        return 1
    state = getattr(worker, "state", None)
    return max(1, int(getattr(state, "nthreads", None) or getattr(worker, "nthreads", 1) or 1))


# Lock slots per CPU: slot 0 says "an evalcore worker's sandbox runs here", slot k that k others
# already do. A worker takes the free slot of lowest rank, so the sandboxes of every evalcore
# cluster on one machine spread over its CPUs (issue 38: with slot 0 only, a worker that found
# every CPU taken by another cluster's workers left its pool unpinned, and the pool then pinned
# its first process to the first CPU: two such workers put both sandboxes on CPU 0).
# Besides, a lock per CPU for the workers of one cluster (keyed by its scheduler's address): the
# workers of one cluster first take CPUs none of their siblings holds. Without it, with another
# cluster holding slot 0 of CPU 1 only, the first worker took slot 0 of CPU 0 and its sibling slot 1
# of CPU 0 (the lowest free slot), and both sandboxes ran on CPU 0 (seen in the 20-run loop).
_MAX_SLOTS = 64


def _cpu_lock_path(cpu: int, slot: int) -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    suffix = "" if slot == 0 else f"-{slot}"  # slot 0: the name evalcore used before slots
    return os.path.join(tempfile.gettempdir(), f"evalcore-dask-cpu-{uid}-{cpu}{suffix}.lock")


def _sibling_lock_path(cluster: str, cpu: int, slot: int) -> str:
    """The lock of ``cpu`` among the workers of ``cluster`` (slot k: k siblings hold it already)."""
    import hashlib

    uid = os.getuid() if hasattr(os, "getuid") else 0
    key = hashlib.sha256(cluster.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"evalcore-dask-cluster-{uid}-{key}-{cpu}-{slot}.lock")


def _try_lock(path: str) -> int | None:
    """An open, exclusively locked file descriptor for ``path``, or None when another holds it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _free_slot(cpu: int) -> int:
    """How many evalcore workers on this machine hold ``cpu`` (its lowest free slot; only probed)."""
    for slot in range(_MAX_SLOTS):
        fd = _try_lock(_cpu_lock_path(cpu, slot))
        if fd is not None:
            os.close(fd)
            return slot
    return _MAX_SLOTS


def _lock_slot(cpu: int) -> int | None:
    """The lowest free slot of ``cpu``, locked (its descriptor), or None when all are held."""
    for slot in range(_MAX_SLOTS):
        fd = _try_lock(_cpu_lock_path(cpu, slot))
        if fd is not None:
            return fd
    return None


def _claim_cpus(count: int, cluster: str = "") -> list[int]:
    """Take ``count`` distinct CPUs (at most as many as this process may use): first CPUs no other
    worker of ``cluster`` (its scheduler's address) holds, and among those the one the fewest
    evalcore workers on this machine hold (slot 0 free, then slot 1, ...). Empty where nothing can
    be locked.
    """
    try:
        usable = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []
    want = min(count, len(usable))
    claimed: list[int] = []
    for sibling_slot in range(_MAX_SLOTS):
        ranked = sorted((c for c in usable if c not in claimed), key=lambda c: (_free_slot(c), c))
        for cpu in ranked:
            if len(claimed) >= want:
                return claimed
            sibling = _try_lock(_sibling_lock_path(cluster, cpu, sibling_slot))
            if sibling is None:
                continue
            fd = _lock_slot(cpu)
            if fd is None:
                os.close(sibling)
                continue
            _CPU_LOCKS.extend((sibling, fd))
            _SIBLING_FILES.append(_sibling_lock_path(cluster, cpu, sibling_slot))
            claimed.append(cpu)
        if len(claimed) >= want:
            break
    return claimed


def _scheduler_address(worker: Any = None) -> str:
    """The address of the scheduler ``worker`` (or the worker running this task) serves; "" outside."""
    if worker is None:
        try:
            worker = get_worker()
        except ValueError:
            return ""
    return str(getattr(getattr(worker, "scheduler", None), "address", "") or "")


def _release_cpus() -> None:
    while _SIBLING_FILES:  # one per cluster: removed (the per-CPU slots stay, a fixed few)
        with contextlib.suppress(OSError):
            os.unlink(_SIBLING_FILES.pop())
    while _CPU_LOCKS:
        with contextlib.suppress(OSError):
            os.close(_CPU_LOCKS.pop())


def start_pool(threads: int, hide: Sequence[str] = (), cluster: str | None = None) -> Any:
    """Start this process's sandbox pool (``threads`` sandbox processes) on CPUs of its own
    (``cluster``: the scheduler's address, found from the running task when None)."""
    from evalcore.sandbox import get_pool

    existing = [p for p in hide if os.path.exists(p)]
    if _POOL_SIZE:
        return get_pool(_POOL_SIZE[0], hide=existing)
    cpus = _claim_cpus(threads, _scheduler_address() if cluster is None else cluster)
    before = None
    if cpus and hasattr(os, "sched_setaffinity"):
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)  # the pool pins its processes to the CPUs it may use
    try:
        pool = get_pool(threads, hide=existing)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)  # the worker itself keeps every CPU
    _POOL_SIZE.append(threads)
    return pool


class SandboxPlugin(WorkerPlugin):
    """Start the worker's sandbox pool once, when the worker starts (or when registered)."""

    name = PLUGIN_NAME

    def __init__(self, hide: Sequence[str] = ()) -> None:
        self.hide = tuple(hide)

    def setup(self, worker: Any) -> None:
        threads = max(1, int(getattr(getattr(worker, "state", None), "nthreads", 0) or 1))
        start_pool(threads, self.hide, _scheduler_address(worker))

    def teardown(self, worker: Any) -> None:
        from evalcore.sandbox import shutdown_pool

        shutdown_pool()
        _POOL_SIZE.clear()
        _release_cpus()


def _check_version(expected: str) -> None:
    from evalcore import __version__
    from evalcore.errors import EvalcoreError

    if __version__ != expected:
        raise EvalcoreError(
            f"worker {get_worker().address} has evalcore {__version__}, the client has evalcore "
            f"{expected}: install the same version on every worker",
            field="cluster",
        )


def ready_pool(version: str, hide: Sequence[str] = ()) -> int:
    """Check the client's evalcore version and start this worker's pool if it is not running
    (what every task does first: verdict chunks and raw jobs alike); returns its size."""
    _check_version(version)
    threads = _POOL_SIZE[0] if _POOL_SIZE else _worker_threads()
    start_pool(threads, hide)
    return threads


def run_jobs(jobs: Sequence[SandboxJob], version: str, hide: Sequence[str] = ()) -> list[SandboxResult]:
    """Run prepared sandbox jobs (:class:`~evalcore.sandbox.SandboxJob` dicts) in this worker's
    pool, the one the verdict chunks use; one :class:`~evalcore.sandbox.SandboxResult` per job."""
    from evalcore.sandbox import run_jobs as run_sandbox_jobs

    threads = ready_pool(version, hide)
    return run_sandbox_jobs(jobs, workers=threads)


_LAST_END = threading.local()  # per worker thread: when its previous chunk ended (perf_counter)


def score_chunk(
    chunk: dict[str, Any], timeout_s: float, version: str, hide: Sequence[str] = (), run: str = ""
) -> dict[str, Any]:
    """Check one chunk of samples in this worker's sandbox pool.

    Args:
        chunk: ``{"problems": {task_id: {prompt, test, entry_point}}, "samples": [[id, task_id,
            completion], ...]}``: each problem's text once, however many samples it has.
        timeout_s: Wall-clock limit per sample.
        version: The client's evalcore version (a mismatch is refused).
        hide: Paths the samples must not see (those that exist on this worker are hidden).
        run: The client's run token (a gap is measured only between chunks of one run).

    Returns:
        ``{"verdicts": [[passed, result], ...], "compute_s": ..., "gap_s": ...}``: the verdicts in
        the order of the chunk's samples; the seconds this call took on the worker; and the
        seconds this worker thread sat between its previous chunk's end and this one's start
        (the per-chunk overhead it sees: result hand-back, scheduling, transfer; ``None`` for its
        first chunk of the run). The client sizes later chunks from the two (see ``_verdicts.ChunkSizer``).
    """
    from evalcore.evaluators import CodeSample, evaluate_code_batch

    start = time.perf_counter()
    last_run, last = getattr(_LAST_END, "value", ("", None))
    threads = ready_pool(version, hide)
    problems = chunk["problems"]
    samples = [
        CodeSample(
            id=sid,
            prompt=problems[task]["prompt"],
            completion=completion,
            test=problems[task]["test"],
            entry_point=problems[task]["entry_point"],
        )
        for sid, task, completion in chunk["samples"]
    ]
    existing = [p for p in hide if os.path.exists(p)]
    results = evaluate_code_batch(samples, workers=threads, timeout_s=timeout_s, hide=existing)
    end = time.perf_counter()
    _LAST_END.value = (run, end)
    return {
        "verdicts": [[bool(r.passed), r.result] for r in results],
        "compute_s": end - start,
        "gap_s": None if last is None or last_run != run or not run else max(0.0, start - last),
    }


def pool_isolation() -> dict[str, Any]:
    """This worker's sandbox isolation report (starts its pool if needed)."""
    return dict(start_pool(_POOL_SIZE[0] if _POOL_SIZE else _worker_threads()).isolation)
