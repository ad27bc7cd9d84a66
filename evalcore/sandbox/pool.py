"""Parent side: the warm pool of sandbox workers, and the public entry points.

The parent (:class:`SandboxPool`) keeps ``N`` warm worker processes (one per CPU by default,
each pinned to a CPU of its own with its zygotes and samples) and keeps five jobs in flight per
worker (two near the end of a batch); the worker compiles queued programs together and answers
a few at a time. It hands jobs out longest-known-first (durations of earlier runs of the same
test); what it remembers orders the work and changes nothing a sample can observe (every
sample starts in the same session layout, at the same priority, and on a worker drawn without
regard to the order).
A worker that dies is replaced; the jobs it had in flight are retried, one at a time, so that a
job that kills workers fails alone and the others get their verdicts.
"""

from __future__ import annotations

import _thread
import os
import select
import sys

from .answer_keys import answer_key_paths
from .answer_keys import data_file_paths as data_file_paths
from .cgroup import _remove_cgroup
from .durations import (
    _MAX_DURATIONS,
    _cost_key,
    _load_durations,
    _save_durations,
    durations_file,
)
from .durations import (
    DURATIONS_ENV as DURATIONS_ENV,
)
from .framing import DEFAULT_MAX_OUTPUT
from .framing import recv as _recv
from .framing import send as _send
from .jobs import SandboxJob, SandboxResult
from .replies import Hook, Msg, Replies
from .report import _to_result as _to_result
from .report import isolation_report as _isolation_report
from .testside import attach_shared_code as _attach_shared_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
# Jobs handed to a worker ahead: it never waits for the parent between samples, and compiles
# the queued programs together; near the end of a batch, two (the last jobs spread evenly).
_IN_FLIGHT = 5
_IN_FLIGHT_TAIL = 2


class _WorkerDied(RuntimeError):
    pass


# Imported as a module (not run as a script) so that its cached bytecode is used; the package
# is imported as the top-level ``sandbox`` from evalcore's folder, which is on the worker's path
# only for that import (evalcore's own __init__ modules, the parent's side, are not loaded).
_EVALCORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # holds sandbox/
_WORKER_BOOT = (
    f"import sys; sys.path.insert(0, {_EVALCORE_DIR!r}); import sandbox.worker; del sys.path[0]; "
    "sandbox.worker._worker_main()"
)


def _site_dirs() -> list[str]:
    """This interpreter's site-packages, put on the worker's path without running .pth files."""
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    return [d for d in dirs if os.path.isdir(d)]


class _WorkerHandle:
    def __init__(
        self,
        index: int,
        cpu: int | None = None,
        namespaces: bool = True,
        hide: Sequence[str] = (),
        check_view: dict[str, Any] | None = None,
    ) -> None:
        import marshal
        import subprocess

        # LD_BIND_NOW: every symbol is resolved when the worker starts, so samples never write
        # the dynamic linker's tables (a copy-on-write fault per page, per sample).
        config: dict[str, Any] = {"namespaces": namespaces, "hide": answer_key_paths() + list(hide)}
        if check_view is not None:  # the check candidates' copy in tmpfs (see view.py)
            config["check_view"] = check_view.get("path") or ""
            config["check_view_note"] = check_view.get("reason") or ""
        # MALLOC_ARENA_MAX=1: glibc's arena setting, inherited by every sample; without it
        # each thread a sample starts reserves a 64 MiB arena of its address-space limit.
        env = {
            "PATH": _SAFE_PATH,
            "LANG": "C.UTF-8",
            "LD_BIND_NOW": "1",
            "MALLOC_ARENA_MAX": "1",
            "EVALCORE_SANDBOX_CONFIG": marshal.dumps(config).hex(),
        }
        if os.environ.get("EVALCORE_SANDBOX_CGROUP") == "0":
            env["EVALCORE_SANDBOX_CGROUP"] = "0"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-S",
                "-X",
                "utf8",
                "-c",
                _WORKER_BOOT,
                f"{index}:{'' if cpu is None else cpu}",
                *_site_dirs(),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
            cwd="/",
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.cpu = cpu
        self.namespaces = namespaces
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self._hello_lock = _thread.allocate_lock()
        self.zygote_pids: list[int] = []  # the worker's zygotes (fork the samples), after the handshake
        self.cgroup = ""  # the worker's memory cgroup (removed when it is closed), after the handshake
        self._isolation: dict[str, Any] | None = None

    def ready(self) -> dict[str, Any]:
        """Wait for the worker's handshake (once); returns its isolation report."""
        with self._hello_lock:
            if self._isolation is None:
                hello = self._recv(60.0)
                if "error" in hello:
                    raise _WorkerDied(hello["error"])
                self.zygote_pids = [int(p) for p in hello.get("zygotes") or ()]
                self.cgroup = str(hello.get("cgroup") or "")
                self._isolation = hello["isolation"]
        return self._isolation

    @property
    def isolation(self) -> dict[str, Any]:
        return self.ready()

    def _recv(self, timeout: float) -> Msg:
        ready, _, _ = select.select([self.rfd], [], [], timeout)
        if not ready:
            raise _WorkerDied("sandbox worker did not answer")
        msg = _recv(self.rfd)
        if msg is None:
            raise _WorkerDied("sandbox worker exited")
        return msg

    def send(self, job: Msg) -> None:
        try:
            _send(self.wfd, job)
        except OSError as exc:
            raise _WorkerDied(str(exc)) from exc

    def recv(self, timeout: float) -> Msg:
        return self._recv(timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        import subprocess

        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        cgroup = self.cgroup
        if cgroup:
            _remove_cgroup(cgroup)


class SandboxPool:
    """A set of warm sandbox workers; each request forks a fresh isolated sample process.

    Worker ``i`` is pinned to the ``i``-th CPU this process may use (round robin when there are
    more workers than CPUs); its zygotes and samples inherit the CPU. A worker runs one sample
    at a time, so the default (one worker per CPU) suits CPU-bound tests such as HumanEval's;
    for samples that mostly sleep or wait, ask for more workers.

    Args:
        workers: Number of worker processes (default: :func:`default_workers`).
        namespaces: False runs the weak fallback even where namespaces work (for tests; the
            default reads ``EVALCORE_SANDBOX_NAMESPACES``, ``0`` meaning False).
        hide: Further paths samples must not see, besides :func:`answer_key_paths` (e.g. the
            folder of a problems file, see :func:`data_file_paths`); :meth:`hide` adds more
            later.
    """

    def __init__(self, workers: int | None = None, *, namespaces: bool | None = None, hide: Sequence[str] = ()) -> None:
        self.size = max(1, int(workers or default_workers()))
        if namespaces is None:  # EVALCORE_SANDBOX_NAMESPACES=0: the weak fallback (to test it)
            namespaces = os.environ.get("EVALCORE_SANDBOX_NAMESPACES", "1") != "0"
        self._namespaces = namespaces  # False: the weak fallback even where namespaces work
        import queue
        import threading

        self._lock = threading.Lock()
        self._idle: queue.Queue[Any] = queue.Queue()
        self._all: list[_WorkerHandle] = []
        self._closed = False
        self._durations: dict[str, float] = {}
        self._durations_loaded = False  # the saved ones are read at the first batch
        self._hide: tuple[str, ...] = tuple(dict.fromkeys(os.path.abspath(os.fspath(p)) for p in hide))
        self._cpus = _usable_cpus()
        # The check candidates' file-system view, a copy in tmpfs made here (the parent: its
        # pages are never charged to a sample's memory cgroup), once per machine (view.py).
        self._check_view: dict[str, Any] | None = None
        if namespaces:
            from .view import ensure_view

            self._check_view = ensure_view()
        self._grow(self.size)

    def hide(self, paths: Sequence[str]) -> None:
        """Hide further paths from every later sample (files or directories).

        Workers started from now on hide them at start; running ones before their next job
        (every job carries the list; a worker that cannot hide them fails the job instead of
        running it with them visible). Without namespaces nothing is hidden (the weak fallback).
        """
        new = [os.path.abspath(os.fspath(p)) for p in paths]
        with self._lock:
            self._hide = tuple(dict.fromkeys(self._hide + tuple(new)))

    def _grow(self, n: int) -> None:
        # Workers start in parallel; each takes jobs as soon as its own handshake arrives.
        for _ in range(n):
            h = _WorkerHandle(
                len(self._all),
                self._cpus[len(self._all) % len(self._cpus)],
                self._namespaces,
                self._hide,
                self._check_view,
            )
            self._all.append(h)
            self._idle.put(h)

    def ensure(self, workers: int) -> None:
        """Grow the pool to at least ``workers`` processes."""
        with self._lock:
            if workers > len(self._all):
                self._grow(workers - len(self._all))
                self.size = len(self._all)

    @property
    def isolation(self) -> dict[str, Any]:
        """What the workers isolate (from the first worker's handshake)."""
        return dict(self._all[0].isolation) if self._all else {}

    def _replace(self, dead: _WorkerHandle) -> _WorkerHandle:
        """Swap a dead worker for a fresh one (returned to the caller, not made idle)."""
        dead.close()
        with self._lock:
            if dead in self._all:
                self._all.remove(dead)
            fresh = _WorkerHandle(len(self._all), dead.cpu, self._namespaces, self._hide, self._check_view)
            self._all.append(fresh)
        return fresh

    def _drive(
        self,
        handle: _WorkerHandle,
        jobs: Sequence[Msg],
        take: Callable[[], int | None],
        out: list[Any],
        depth: Callable[[], int],
    ) -> None:
        """Feed one worker, keeping ``depth()`` jobs in flight so it never waits for this process.

        A worker that dies (the kernel killed it, or an evalcore bug; samples cannot reach it)
        is replaced. The jobs it had in flight are retried on the fresh worker one at a time,
        so that the job that was running when a worker died is known: a job in flight alone
        when a worker died twice is reported as a sandbox failure; the others get their verdict.
        """
        replacements = 0
        retry: list[int] = []
        solo_deaths: dict[int, int] = {}
        while True:
            inflight: list[int] = []
            try:
                handle.ready()
                while True:
                    # After a death, the retried jobs go one at a time.
                    limit = 1 if retry or (inflight and inflight[0] in solo_deaths) else depth()
                    while len(inflight) < limit:
                        i = retry.pop(0) if retry else take()
                        if i is None:
                            break
                        inflight.append(i)
                        # The problem's prompt and test compiled here on first sight (see
                        # attach_shared_code), job by job: the first jobs go out at once rather
                        # than after every test of the batch is compiled.
                        handle.send(_attach_shared_code(jobs[i]))
                        if retry or i in solo_deaths:
                            break
                    if not inflight:
                        break
                    i = inflight[0]
                    reply = handle.recv(float(jobs[i].get("timeout_s", 10.0)) + 60.0)
                    isolation = reply.pop("_isolation", None)
                    if isolation is not None:  # the worker hid further paths (see hide())
                        handle._isolation = isolation
                    zygotes = reply.pop("_zygotes", None)
                    if zygotes is not None:  # and started a new check zygote (CPU accounting)
                        handle.zygote_pids = [int(z) for z in zygotes]
                    reply["isolation"] = handle.isolation
                    out[i] = reply
                    inflight.pop(0)
            except _WorkerDied as exc:
                if len(inflight) == 1:
                    (i,) = inflight
                    solo_deaths[i] = solo_deaths.get(i, 0) + 1
                    if solo_deaths[i] >= 2:
                        out[i] = {"error": f"sandbox worker failed while running this sample: {exc}"}
                    else:
                        retry.insert(0, i)
                else:
                    retry = inflight + retry
                try:
                    handle = self._replace(handle)
                except OSError:
                    return
                replacements += 1
                if replacements <= 3 + 2 * len(solo_deaths) and replacements <= 20:
                    continue
                for i in retry:
                    out[i] = {"error": f"sandbox worker failed: {exc}"}
            self._idle.put(handle)
            return

    def map(self, jobs: Sequence[Msg], concurrency: int | None = None, done: Hook | None = None) -> list[Msg]:
        """Run many jobs on the pool in parallel; replies in the order of ``jobs``; ``done()`` as each arrives."""
        jobs = list(jobs)
        if not jobs:
            return []
        hide = self._hide
        if hide:  # running workers may have started before these were named
            jobs = [dict(job, _hide=hide) for job in jobs]
        n = max(1, min(concurrency or self.size, len(jobs), self.size))
        out: list[Any] = Replies(len(jobs), done)
        import random
        import threading

        lock = threading.Lock()
        counter = [0]
        keys = [_cost_key(job) for job in jobs]
        if not self._durations_loaded:
            saved = _load_durations(durations_file())
            with self._lock:
                if not self._durations_loaded:
                    self._durations_loaded = True
                    saved.update(self._durations)
                    self._durations = saved
        order = self._schedule(jobs, keys)

        def take() -> int | None:
            with lock:
                if counter[0] >= len(jobs):
                    return None
                counter[0] += 1
                return order[counter[0] - 1]

        def depth() -> int:
            # Fewer jobs queued per worker once the rest of the batch would fit in the queues.
            return _IN_FLIGHT if len(jobs) - counter[0] > n * _IN_FLIGHT else _IN_FLIGHT_TAIL

        # One worker (waiting if all are busy), plus whichever others are idle right now:
        # concurrent calls share the pool instead of deadlocking on it.
        handles = [self._idle.get()]
        while len(handles) < n:
            try:
                handles.append(self._idle.get_nowait())
            except Exception:  # queue.Empty
                break
        n = len(handles)
        # Which worker starts first (and so takes the longest job) is drawn here: the order
        # comes from durations that earlier samples wrote, and a worker is observable (its
        # samples' uid, their CPU).
        random.SystemRandom().shuffle(handles)
        if n == 1:
            self._drive(handles[0], jobs, take, out, depth)
        else:
            threads = [threading.Thread(target=self._drive, args=(h, jobs, take, out, depth)) for h in handles]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        with self._lock:  # concurrent calls share the pool (and its durations)
            snapshot = dict(self._durations) if self._learn(jobs, out, keys) else None
        if snapshot is not None:
            _save_durations(durations_file(), snapshot)
        return [r if r is not None else {"error": "sandbox job was not run"} for r in out]

    def _schedule(self, jobs: Sequence[Msg], keys: Sequence[str] | None = None) -> list[int]:
        """The order to hand out jobs: longest expected first (LPT), else as given.

        A job's expected duration is the last one measured for the same test (``check`` mode)
        or the same program (``script`` mode) on this pool; jobs never seen count as the
        median of those seen. Starting the long jobs first keeps one slow test from
        finishing alone at the end of a batch. With nothing known, the order is unchanged.

        Samples wrote these durations: they change the order only, never what a sample finds
        when it starts (issue 42: a session and ``nice`` -5 for a slow job were a bit the next
        read). The worker that starts first is drawn per batch (:meth:`map`), not picked.
        """
        known = self._durations
        if not known:
            return list(range(len(jobs)))
        if keys is None:
            keys = [_cost_key(job) for job in jobs]
        expected = [known.get(key) for key in keys]
        seen = sorted(e for e in expected if e is not None)
        if not seen:
            return list(range(len(jobs)))
        default = seen[len(seen) // 2]
        guess = [e if e is not None else default for e in expected]
        return sorted(range(len(jobs)), key=lambda i: -guess[i])

    def _learn(self, jobs: Sequence[Msg], replies: Sequence[Msg | None], keys: Sequence[str] | None = None) -> bool:
        """Remember each job's measured duration for :meth:`_schedule` (bounded memory).

        Returns:
            Whether a ``check`` job's duration is new, or moved by more than 10 ms and by more
            than a factor of two (then the durations are worth saving for later processes,
            see :func:`durations_file`).
        """
        known = self._durations
        if keys is None:
            keys = [_cost_key(job) for job in jobs]
        changed = False
        for job, reply, key in zip(jobs, replies, keys):
            if reply is None or "duration_s" not in reply:
                continue
            if len(known) >= _MAX_DURATIONS:
                known.clear()
            seconds = float(reply["duration_s"])
            before = known.pop(key, None)  # re-inserted: the dict keeps the newest last
            known[key] = seconds
            if job.get("mode") == "check" and (
                before is None or (abs(seconds - before) > 0.01 and not 0.5 * before <= seconds <= 2.0 * before)
            ):
                changed = True
        return changed

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) used so far by the workers and their finished samples.

        Read from ``/proc/<pid>/stat`` (utime, stime, cutime, cstime of each live worker and
        of its zygote, whose children the samples are); 0.0 where ``/proc`` is unavailable.
        Workers that were replaced are not counted.

        Returns:
            The total, in seconds.
        """
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        total = 0
        with self._lock:
            pids = [h.proc.pid for h in self._all] + [p for h in self._all for p in h.zygote_pids]
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        return total / tick

    def submit(self, job: Msg) -> Msg:
        """Run one job on an idle worker (blocks until one is free)."""
        return self.map([job], 1)[0]

    def close(self) -> None:
        """Stop every worker."""
        with self._lock:
            self._closed = True
            for h in self._all:
                h.close()
            self._all.clear()


def _usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask), in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def default_workers() -> int:
    """One worker per CPU this process may use, 1 to 16 (see :class:`SandboxPool`)."""
    return min(16, len(_usable_cpus()))


_POOL: SandboxPool | None = None
_POOL_LOCK = _thread.allocate_lock()


def get_pool(workers: int | None = None, hide: Sequence[str] = ()) -> SandboxPool:
    """The process-wide warm pool, started on first use and grown to ``workers``; ``hide``:
    further paths its samples must not see (see :meth:`SandboxPool.hide`)."""
    global _POOL
    want = max(1, int(workers or default_workers()))
    with _POOL_LOCK:
        if _POOL is None or _POOL._closed:
            _POOL = SandboxPool(want, hide=hide)
            import atexit

            atexit.register(_POOL.close)
        else:
            _POOL.ensure(want)
            if hide:
                _POOL.hide(hide)
        return _POOL


def shutdown_pool() -> None:
    """Stop the process-wide pool (a later call starts a fresh one)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.close()
            _POOL = None


def isolation_text(info: dict[str, Any] | None = None) -> str:
    """What the sandbox isolates on this machine, as text for a person (``evalcore score
    --show-isolation``): the level, each layer, and the samples' file-system view (the
    allow-list), one path a line.

    Args:
        info: An isolation report (default: a one-worker pool's, started and stopped here).
    """
    if info is None:
        pool = SandboxPool(1)
        try:
            info = dict(pool.isolation)
        finally:
            pool.close()
    return _isolation_report(info)


def run_jobs(jobs: Sequence[SandboxJob], workers: int | None = None, done: Hook | None = None) -> list[SandboxResult]:
    """Run prepared jobs (``mode`` ``"script"`` or ``"check"``, see :class:`SandboxJob`) on the
    warm pool; one :class:`SandboxResult` per job, in order; ``done()`` as each finishes."""
    pool = get_pool(workers)
    batch: list[Any] = list(jobs)  # SandboxJob dicts
    return [_to_result(r) for r in pool.map(batch, workers, done)]


def run_python(
    source: str,
    *,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    stdin: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
) -> SandboxResult:
    """Run a Python program in the sandbox.

    ``completed`` is True only if the program's last statement finished (an unforgeable
    per-run nonce written by the harness after the program returned, see the module
    docstring); ``sys.exit(0)`` part-way, ``os._exit(0)`` or any exception leave it False.

    Args:
        source: The program (run as ``__main__``).
        timeout_s: Wall-clock limit; everything the program started is killed after it.
        memory_mb: Address-space limit of the program's process.
        stdin: Text fed to the program's standard input.
        max_output: Bytes kept of stdout and of stderr each.

    Returns:
        The :class:`SandboxResult`.
    """
    job: SandboxJob = {
        "mode": "script",
        "source": source,
        "timeout_s": float(timeout_s),
        "memory_mb": int(memory_mb),
        "stdin": stdin,
        "max_output": int(max_output),
    }
    return run_jobs([job], workers=None)[0]
