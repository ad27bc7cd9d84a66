"""The worker process: sets up isolation once, forks zygotes, runs samples, decides verdicts.

A worker (``python -I -S -c "import _sandbox.worker ..."``, see :mod:`.pool`) imports only this
package and the standard library, and at import time only modules that register no fork
handlers (threading, random, tempfile, subprocess and queue do, and would run in every forked
sample). It never executes untrusted code and never forks a sample itself: its *zygotes*
(``evalcore-zygote`` in ``ps``) do, one request each over a Unix socket, the sample's pipes
passed with ``SCM_RIGHTS``. For ``check`` samples the worker itself is the test side
(:mod:`.testside`): it runs ``check`` against the candidate process through the call pipes.
See docs/sandbox.md for the isolation and the threat model.
"""

from __future__ import annotations

import gc
import marshal
import math
import os
import resource
import select
import signal
import stat as _stat
import struct
import sys
import time
import _socket

from . import candidate as _candidate
from . import testside as _testside
from .framing import read_exact as _read_exact, recv as _recv, send as _send, send_many as _send_many
from .linux import (
    CLONE_NEWIPC as _CLONE_NEWIPC, CLONE_NEWNET as _CLONE_NEWNET, CLONE_NEWNS as _CLONE_NEWNS,
    CLONE_NEWPID as _CLONE_NEWPID, CLONE_NEWUTS as _CLONE_NEWUTS,
    MOUNT_OPTION_FLAGS as _MOUNT_OPTION_FLAGS, MS_BIND as _MS_BIND, MS_NODEV as _MS_NODEV,
    MS_NOATIME as _MS_NOATIME, MS_NOSUID as _MS_NOSUID, MS_PRIVATE as _MS_PRIVATE, MS_RDONLY as _MS_RDONLY,
    MS_REC as _MS_REC, MS_REMOUNT as _MS_REMOUNT,
    PR_SET_DUMPABLE as _PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS as _PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG as _PR_SET_PDEATHSIG, PR_SET_SECCOMP as _PR_SET_SECCOMP,
    OWN_PID_SLOT as _OWN_PID_SLOT, SECCOMP_MODE_FILTER as _SECCOMP_MODE_FILTER, SIGKILL as _SIGKILL, Libc as _Libc,
    enter_user_namespace as _enter_user_namespace,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Sequence

DEFAULT_MAX_OUTPUT = 64 * 1024
_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_HIDDEN_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/home")
_SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# Modules programs commonly import, loaded once in the worker so forked samples start warm.
# Not hashlib: its OpenSSL libraries add ~20 memory mappings that every fork copies and every
# exit tears down (~0.1 ms per sample), more than the few programs that import it would save.
_PRELOAD = (
    "collections", "itertools", "functools", "re", "string", "typing", "heapq",
    "bisect", "copy", "operator", "io", "resource",
)
_WORKDIR = "/tmp/sandbox"
_RESULT_HOLD_S = 0.05
_RESULT_CAP = 1 << 16  # bytes kept of a script sample's result pipe: the last ones (its proof comes last)
_REPLY_BATCH = 4
_REPLY_HOLD_S = 0.02
_NEVER_HIDDEN = frozenset({"/", "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/var", "/opt", "/tmp"})
_SCRATCH_TMPFS = {"/tmp": "size=64m,mode=1777", "/var/tmp": "size=64m,mode=1777", "/dev/shm": "size=64m,mode=1777"}


class _Worker:
    """State of one worker process (runs in the worker)."""

    def __init__(self, index: int, allow_namespaces: bool = True, hide: Sequence[str] = ()) -> None:
        self.index = index
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
        self._keep: set[str] = set()  # directories of the interpreter, never hidden
        self.hide_seen: Any = None  # the last list of further paths hidden (see hide_more)
        try:
            self.libc = _Libc()
        except (OSError, AttributeError) as exc:
            self.notes.append(f"libc unavailable: {exc}")
            self.libc = None
        self.lasti_true, _ = _candidate.calibrate()
        self._workdir_ready = False
        self._fresh_tmpfs: set[str] = set()  # scratch directories that are tmpfs mounts of ours
        self._scratch_marks: dict[str, tuple] = {}  # their (size, ctime) when last known clean
        # The seccomp filters: the zygotes' (inherited by every sample), and each sample's own
        # (``check`` candidates may not start processes either).
        self.filters: dict[str, Any] = {}
        if self.libc is not None:
            try:
                for kind in ("zygote", "check", "script", "script_weak"):
                    prog = self.libc.filter(kind)
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
        self._env_workdir: str | None = None
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
        # The lean zygote: forked before the modules below are imported, it forks the ``check``
        # candidates whose program imports nothing (most HumanEval tasks). Its image is
        # ≈1 MB smaller, and every fork copies, and every exit tears down, each resident page.
        self._lean: tuple[Any, int] | None = self._fork_zygote("lean")
        # Pre-import what programs commonly import, so samples forked after this start warm.
        for name in _PRELOAD:
            try:
                __import__(name)
            except ImportError:
                pass
        if self.libc is not None:
            self.libc.set_name(b"evalcore-worker")
        self._start_zygotes()

    def _release_free_memory(self) -> None:
        """Give the C heap's free pages back before the zygotes are forked.

        Every fork copies the page-table entries of every resident page, and every exit tears
        them down again. Start-up garbage would otherwise ride along in every sample.
        ``malloc_trim`` is glibc's; elsewhere this does nothing.
        """
        if self.libc is None:
            return
        try:
            self.libc.lib.malloc_trim(0)
        except (AttributeError, OSError):
            pass

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
        mounts = []
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                parts = line.split()
                point = parts[4].replace("\\040", " ")
                opts = parts[5].split(",")
                mounts.append((point, opts))
        failed = []
        for point, opts in mounts:
            if point == "/proc" or point.startswith("/proc/") or point == "/dev" or point.startswith("/dev/"):
                continue
            flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
            for name, bit in _MOUNT_OPTION_FLAGS:
                if name in opts:
                    flags |= bit
            try:
                libc.mount(None, point, None, flags)
            except OSError:
                failed.append(point)
        self.readonly_ok = "/" not in failed
        if failed:
            self.notes.append("could not remount read-only: " + ", ".join(failed))
        self._keep = keep
        # What a sample must not see: the host's private directories, and what the parent named
        # (the project, its working directory, the problem files with their canonical solutions).
        named = self._hideable(hide)
        private = [d for d in _HIDDEN_DIRS if os.path.isdir(d) and not os.path.islink(d)]
        # A host directory that holds the interpreter (e.g. sys.prefix itself) stays; the
        # scratch directories get a fresh tmpfs below unless something must be bound back inside.
        private = [d for d in private if not any(k == d or d.startswith(k + "/") for k in keep)]
        private = [d for d in private if d not in _SCRATCH_TMPFS or any(k.startswith(d + "/") for k in keep)]
        self._hide_all(set(private) | set(named))
        for d in _SCRATCH_DIRS:
            if os.path.isdir(d) and not os.path.islink(d):
                if d not in self.hidden:
                    libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOATIME, _SCRATCH_TMPFS[d])
                    self._fresh_tmpfs.add(d)
                os.chmod(d, 0o1777)
        # A /proc that shows a process only to its own uid: each worker's samples run under
        # a uid of their own, so they see their own processes and nothing else. In a user
        # namespace (one uid only) each sample mounts instead a /proc of its own PID namespace.
        if self.is_root:
            libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | 8, "hidepid=2")
        else:
            self.own_proc = True

    def _hideable(self, paths: Sequence[str]) -> list[str]:
        """The named paths that can be hidden: real, existing here, neither a system directory
        nor one holding the interpreter (e.g. evalcore started from /usr: hiding it would hide
        the interpreter)."""
        named: list[str] = []
        for path in paths:
            real = os.path.realpath(path)
            if real in _NEVER_HIDDEN or real in self._keep or not os.path.exists(real) or real in named:
                continue
            named.append(real)
        return named

    def _hide_all(self, paths: Any) -> None:
        """Hide directories (an empty read-only tmpfs, the interpreter's directories inside
        bound back read-only) and files (an empty read-only file over each), outermost first."""
        libc = self.libc
        assert libc is not None
        keep = self._keep
        for d in sorted(paths, key=lambda p: (len(p), p)):
            if not os.path.lexists(d):
                continue  # inside a directory hidden already
            if not os.path.isdir(d):
                # A file (e.g. a problem file): an empty read-only file over it.
                libc.mount("/dev/null", d, None, _MS_BIND)
                libc.mount(None, d, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
                self.hidden.append(d)
                continue
            inside = sorted(k for k in keep if k.startswith(d + "/"))
            handles = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in inside]
            scratch = d in _SCRATCH_TMPFS
            libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV | (_MS_NOATIME if scratch else 0), "size=16m,mode=0755")
            for k, fd in handles:
                os.makedirs(k, mode=0o755, exist_ok=True)
                libc.mount(f"/proc/self/fd/{fd}", k, None, _MS_BIND | _MS_REC)
                libc.mount(None, k, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
                os.close(fd)
            if not scratch:
                libc.mount(None, d, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
            self.hidden.append(d)

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
        return True

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
                "read-only view of the host; private tmpfs /tmp, /var/tmp, /dev/shm renewed after "
                "every sample that changed them; hidden: " + ", ".join(self.hidden)
                if ns and self.readonly_ok
                else "temporary working directory only; the rest of the file system, including the "
                "project and the problem files, is reachable"
            ),
            "hidden": list(self.hidden),
            "user": user,
            "uid": self.uid if self.is_root else self.host_uid,
            "environment": "scrubbed (PATH, HOME, TMPDIR, LANG only)",
            "rlimits": ["cpu", "address_space", "file_size", "nofile", "core"] + (["nproc"] if self.is_root or self.userns else []),
            "kill_on_timeout": "whole PID namespace" if ns else "process group",
            "seccomp": (
                "check candidates: no fork/exec, no keyrings, namespaces, mounts, ptrace, bpf, perf, "
                "userfaultfd, io_uring, System V IPC, xattrs; sockets AF_UNIX/INET/INET6 only"
                + ("" if ns else "; script samples: no exec, signals only to themselves")
                if seccomp
                else "unavailable"
            ),
            "verdict": "decided in the worker; the candidate runs in a separate process (plain data only)",
            "notes": list(self.notes),
        }

    # ---------------------------------------------------------------- the zygote

    def _start_zygotes(self) -> None:
        """Fork the zygotes: the processes that fork every sample, and do nothing else.

        One for ``check`` candidates and one for ``script`` samples, forked after the
        namespaces are set up and the common modules preloaded, plus the lean one forked
        earlier (see ``__init__``). With namespaces each zygote is PID 1 of a PID namespace of
        its own: when it dies, the kernel kills every sample.
        """
        self._zygotes: dict[str, tuple[Any, int]] = {kind: self._fork_zygote(kind) for kind in ("check", "script")}
        self.zygote_pids = [pid for _sock, pid in self._zygotes.values()]
        if self._lean is not None:
            self.zygote_pids.append(self._lean[1])

    def _fork_zygote(self, kind: str) -> tuple[Any, int]:
        gc.collect()
        gc.freeze()  # forked samples then leave the worker's objects (and their pages) alone
        self._release_free_memory()
        mine, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        keep = {theirs.fileno()}
        # As root each zygote is PID 1 of a PID namespace of its own, and the worker goes back
        # to its own namespace after each fork. In a user namespace it cannot go back (its
        # namespace belongs to the host's user namespace): all its zygotes share one.
        restore = self.namespaces and not self.userns
        if restore or (self.userns and not self._zygote_pidns):
            self.libc.unshare(_CLONE_NEWPID)  # type: ignore[union-attr]
            self._zygote_pidns = True
        try:
            pid = os.fork()
        except BaseException:
            if restore:
                self.libc.setns(self.own_pidns, _CLONE_NEWPID)  # type: ignore[union-attr]
            raise
        if pid == 0:  # the zygote
            try:
                mine.close()
                for fd in range(3, max(keep) + 1):
                    if fd not in keep:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
                os.closerange(max(keep) + 1, 1 << 16)
                self._zygote_setup(kind)
                gc.collect()
                gc.freeze()
                _zygote_loop(self, theirs)
            finally:
                os._exit(0)
        if restore:
            self.libc.setns(self.own_pidns, _CLONE_NEWPID)  # type: ignore[union-attr]
        theirs.close()
        return mine, pid

    def _zygote_setup(self, kind: str) -> None:
        """What every sample inherits instead of setting it up itself (zygote side)."""
        if self.libc is not None:
            self.libc.set_name(b"evalcore-zygote")
        sys.argv = ["<program>"]  # what every sample's program sees
        try:
            os.setsid()  # a session without a controlling terminal, shared by its samples
        except OSError:
            pass
        if self.namespaces:
            # This zygote's own PID namespace: restored after each sample's fork.
            self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        if self.prctl is not None:
            # Die with the worker; samples (``no_new_privs`` is kept across fork and uid
            # changes) never gain privileges through exec.
            self.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
            self.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            address = self.filter_address.get("zygote")
            if address and self.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, address, 0, 0) != 0:
                os._exit(126)  # never fork samples without the filter this worker reported
        if self.is_root:
            os.setgroups([])  # the zygote stays root; samples inherit no supplementary groups
        for which, value in _FIXED_RLIMITS + (_ROOT_RLIMITS if self.is_root or self.userns else ()):
            try:
                resource.setrlimit(which, value)
            except (ValueError, OSError):
                pass


    def _zygote_send(self, zygote: tuple[Any, int], data: bytes, fds: Sequence[int] = ()) -> None:
        """One request to a zygote (with file descriptors passed along)."""
        sock = zygote[0]
        try:
            if fds:
                sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))])
            else:
                sock.send(data)
        except OSError as exc:
            raise _ZygoteDied(f"sandbox zygote failed: {exc}") from exc

    def _zygote_call(self, zygote: tuple[Any, int], data: bytes, fds: Sequence[int] = ()) -> tuple:
        """One request to a zygote and its reply (two ints)."""
        self._zygote_send(zygote, data, fds)
        try:
            reply = zygote[0].recv(16)
        except OSError as exc:
            raise _ZygoteDied(f"sandbox zygote failed: {exc}") from exc
        if len(reply) != 8:
            raise _ZygoteDied("sandbox zygote exited")
        return struct.unpack("ii", reply)

    def _child(self, fds: tuple) -> None:
        """Entry of a sample process (forked by a zygote); never returns.

        Its job comes first on its standard-input pipe (see :meth:`_payload`); it reads exactly
        that much, so what follows is the program's own input.
        """
        out_w, err_w, res_w, in_r = fds
        try:
            job = marshal.loads(_read_exact(in_r, struct.unpack("!I", _read_exact(in_r, 4) or b"")[0]) or b"")
            if job.get("_nice") or not self.namespaces:
                # A session, and so a scheduling group (autogroup), of its own: a prioritized
                # sample sets that group's priority (see _sample); without namespaces nothing
                # caps a sample's processes, and a fork bomb sharing the zygote's group would
                # starve the zygote that has to kill it.
                os.setsid()
            else:
                # A process group of its own, in the zygote's session, which has no controlling
                # terminal: a session per sample would also cost the kernel a scheduling group
                # created and destroyed each time (its processes are capped at 64).
                os.setpgid(0, 0)
            self._sample(job, fds, job["_workdir"])
        except BaseException as exc:  # noqa: BLE001
            try:
                os.write(err_w, f"sandbox setup failed: {exc}\n".encode())
            except OSError:
                pass
        os._exit(125)

    # ---------------------------------------------------------------- one sample

    def _payload(self, job: dict, workdir: str, stdin_data: bytes, nonces: bytes) -> bytes:
        """What a ``script`` sample reads from its standard input before the program runs:
        a 4-byte length, the job in marshal form, then the program's own standard input."""
        child = {key: job[key] for key in _CHILD_KEYS if key in job}
        child["_workdir"] = workdir
        child["_nonces"] = nonces
        child["_limits"] = self._rlimits(job)  # computed here: fewer pages for the sample to touch
        data = marshal.dumps(child)
        return struct.pack("!I", len(data)) + data + stdin_data

    def _workdir(self) -> tuple[str, str | None]:
        """The sample's working directory, and the temporary one to remove after it (fallback)."""
        if self.namespaces:
            if not self._workdir_ready:
                os.mkdir(_WORKDIR, 0o700)
                if self.is_root:
                    os.chown(_WORKDIR, self.uid, self.uid)
                self._workdir_ready = True
                self._mark_scratch()
            return _WORKDIR, None
        import tempfile

        tmpdir = tempfile.mkdtemp(prefix="evalcore-sandbox-")
        if self.is_root:
            os.chown(tmpdir, self.uid, self.uid)
        return tmpdir, tmpdir

    def _fork(self, zygote: tuple[Any, int], child_ends: tuple) -> int:
        """Ask a zygote to fork a sample with these pipe ends (closed here); its PID, or 0 with
        namespaces (where nothing here needs it: the zygote kills and reaps its current sample;
        a failed fork shows as pipes closed at once and is reported by the reap)."""
        sample_pid, err = 0, 0
        try:
            if self.namespaces:
                self._zygote_send(zygote, b"F", child_ends)
            else:
                sample_pid, err = self._zygote_call(zygote, b"F", child_ends)
        finally:
            for fd in child_ends:
                os.close(fd)
        if not self.namespaces and sample_pid <= 0:
            raise OSError(err, f"fork: {os.strerror(err)}")
        return sample_pid

    def run_check(self, job: dict) -> dict:
        """A ``check`` sample: the candidate in a fresh process, the test here (see testside)."""
        timeout = float(job.get("timeout_s", 10.0))
        max_out = int(job.get("max_output", DEFAULT_MAX_OUTPUT))
        codes = job["_compiled"] if "_compiled" in job else _testside.compile_check_job(job)
        if type(codes) is not tuple:
            # Nothing to run: the program (or the problem's own code) does not compile.
            return _check_reply(False, False, None, "", "", 0.0, _testside.describe(codes))
        program, prompt, test = codes
        workdir, tmpdir = self._workdir()
        child = {"mode": "check", "entry_point": job.get("entry_point", ""), "_program": program,
                 "_workdir": workdir, "_limits": self._rlimits(job)}
        if job.get("_nice"):
            child["_nice"] = job["_nice"]
        data = marshal.dumps(child)
        payload = struct.pack("!I", len(data)) + data
        # stdout and stderr go to in-memory files (capped by the file-size limit), read when the
        # candidate is gone: while it runs, the worker waits on the call pipes only.
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
        start = time.monotonic()
        try:
            self._fork(zygote, (out_w, err_w, res_w, in_r))
        except OSError:
            for fd in (out_r, err_r, res_r, in_w):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise
        session = _testside.Session(in_w, res_r, start + timeout)
        if rest:
            try:
                os.write(in_w, rest)  # the candidate reads its whole job first
            except OSError:
                pass
        reason = _testside.run_check(session, prompt, test, job.get("entry_point", ""))
        # The candidate is killed now (it only ever waits for the next call), with all it started;
        # its request pipe is closed after that (closing it first would wake it only to exit).
        reaped, status = self._zygote_call(zygote, b"W")
        os.close(in_w)
        if not self.namespaces and self.is_root:
            self._kill_uid()
        duration = time.monotonic() - start
        stdout, stderr = _read_output(out_r, max_out), _read_output(err_r, max_out)
        for fd in (out_r, err_r, res_r):
            os.close(fd)
        if tmpdir is not None:
            _rmtree(tmpdir)
        if self.namespaces:
            self._wipe_scratch()
        if reaped < 0:  # the fork failed (status is its errno)
            raise OSError(status, f"fork: {os.strerror(status)}")
        returncode: int | None = os.waitstatus_to_exitcode(status) if status != -1 else None
        return _check_reply(reason is None, session.timed_out, returncode, stdout, stderr, duration, reason)

    def run(self, job: dict) -> dict:
        if job.get("mode") == "check":
            return self.run_check(job)
        timeout = float(job.get("timeout_s", 10.0))
        max_out = int(job.get("max_output", DEFAULT_MAX_OUTPUT))
        stdin_data = (job.get("stdin") or "").encode()
        workdir, tmpdir = self._workdir()
        nonces = os.urandom(32).hex().encode()  # this sample's two, see _sample_main and _reply
        payload = self._payload(job, workdir, stdin_data, nonces)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        in_r, in_w = os.pipe()
        child_ends = (out_w, err_w, res_w, in_r)
        # What fits in the pipe is written now: the sample then never waits for this process.
        pending: dict[int, memoryview] = {}
        if len(payload) <= _PIPE_CAPACITY:
            os.write(in_w, payload)
            os.close(in_w)
        else:
            pending[in_w] = memoryview(payload)
            os.set_blocking(in_w, False)
        zygote = self._zygotes["script"]
        start = time.monotonic()
        try:
            sample_pid = self._fork(zygote, child_ends)
        except OSError:
            for fd in (out_r, err_r, res_r, *pending):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise
        # Without a PID namespace a daemonized child may hold the pipes open after the sample
        # ended: its pidfd says when the sample itself exits.
        exit_fd = -1
        if not self.namespaces:
            try:
                exit_fd = os.pidfd_open(sample_pid)
            except (OSError, AttributeError):
                exit_fd = -1
        bufs = {out_r: bytearray(), err_r: bytearray(), res_r: bytearray()}
        dropped = {out_r: 0, err_r: 0, res_r: 0}
        # The result pipe is read once both streams have closed (normally: the sample exited),
        # or from _RESULT_HOLD_S on: the harness's first write to it then does not wake this
        # process in the middle of every sample.
        open_fds = {out_r, err_r}
        held = True
        if exit_fd >= 0:
            open_fds.add(exit_fd)
        timed_out = False
        killed_at: float | None = None
        deadline = start + timeout
        exited = False
        while True:
            now = time.monotonic()
            if held and ((out_r not in open_fds and err_r not in open_fds) or now - start >= _RESULT_HOLD_S):
                open_fds.add(res_r)
                held = False
            if not open_fds - {exit_fd}:
                break
            if killed_at is None and now >= deadline:
                timed_out = True
                self._kill(zygote)
                killed_at = now
            if killed_at is not None and now - killed_at > 2.0:
                break
            wait = (deadline - now) if killed_at is None else 0.1
            if held:
                wait = min(wait, start + _RESULT_HOLD_S - now)
            try:
                readable, writable, _ = select.select(list(open_fds), list(pending), [], max(wait, 0.0))
            except InterruptedError:
                continue
            for fd in writable:
                view = pending[fd]
                try:
                    n = os.write(fd, view[:65536])
                    view = pending[fd] = view[n:]
                except (BlockingIOError, BrokenPipeError):
                    view = view[:0]
                if not view:
                    os.close(fd)
                    del pending[fd]
            for fd in readable:
                if fd == exit_fd:
                    open_fds.discard(fd)
                    exited = True
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                # Every channel is capped (the result pipe too: a flood must not grow the worker).
                if fd == res_r:
                    buf = bufs[fd]
                    buf += chunk[-_RESULT_CAP:]
                    if len(buf) > _RESULT_CAP:
                        del buf[: len(buf) - _RESULT_CAP]
                    continue
                room = max(0, max_out - len(bufs[fd]))
                bufs[fd] += chunk[:room]
                dropped[fd] += len(chunk) - min(room, len(chunk))
            if exited and killed_at is None:
                # The sample ended: what it left running dies now; drain for 0.2 s.
                self._kill(zygote)
                killed_at = time.monotonic() - 1.8
        if held:  # the drain ended first (streams held open in the fallback): what is there now
            os.set_blocking(res_r, False)
            try:
                for _ in range(1024):
                    chunk = os.read(res_r, 65536)
                    if not chunk:
                        break
                    bufs[res_r] += chunk[-_RESULT_CAP:]
                    if len(bufs[res_r]) > _RESULT_CAP:
                        del bufs[res_r][: len(bufs[res_r]) - _RESULT_CAP]
            except BlockingIOError:
                pass
        for fd in pending:
            os.close(fd)
        if exit_fd >= 0:
            os.close(exit_fd)
        # The zygote kills what is left of the sample (whose PID it alone can name) and reaps it.
        reaped, status = self._zygote_call(zygote, b"W")
        if not self.namespaces and self.is_root:
            self._kill_uid()
        if reaped < 0:  # the fork failed (status is its errno)
            for fd in bufs:
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise OSError(status, f"fork: {os.strerror(status)}")
        returncode: int | None = os.waitstatus_to_exitcode(status) if status != -1 else None
        duration = time.monotonic() - start
        for fd in bufs:
            os.close(fd)
        if tmpdir is not None:
            _rmtree(tmpdir)
        if self.namespaces:
            self._wipe_scratch()
        return self._reply(bufs, dropped, (out_r, err_r, res_r), timed_out, returncode, duration, nonces)

    def _reply(
        self, bufs: dict, dropped: dict, fds: tuple, timed_out: bool, returncode: int | None, duration: float, nonces: bytes
    ) -> dict:
        out_r, err_r, res_r = fds
        completed, reasons = False, []
        # Only lines carrying this sample's nonces count: the first proves success, the second
        # tags the harness's failure reasons.
        pass_line = b"PASS " + nonces[:32]
        fail_tag = b"FAIL " + nonces[32:] + b" "
        for line in bytes(bufs[res_r]).split(b"\n"):
            if line == pass_line:
                completed = True
            elif line.startswith(fail_tag):
                reasons.append(line[len(fail_tag):].decode("utf-8", "replace"))
        completed = completed and not timed_out
        reason = None
        if not completed:
            if timed_out:
                reason = "timed out"
            elif reasons:
                reason = reasons[-1]
            elif returncode is not None and returncode < 0:
                reason = f"killed by signal {signal.Signals(-returncode).name}" if -returncode in signal.valid_signals() else f"killed by signal {-returncode}"
            else:
                reason = f"program ended before completing (exit status {returncode})"
        return {
            "completed": completed,
            "timed_out": timed_out,
            "returncode": returncode,
            "stdout": _decode(bufs[out_r], dropped[out_r]),
            "stderr": _decode(bufs[err_r], dropped[err_r]),
            "duration_s": duration,
            "reason": reason,
        }

    def _kill(self, zygote: tuple[Any, int]) -> None:
        """Kill the running sample and everything it started (through its zygote)."""
        self._zygote_call(zygote, b"K")
        if not self.namespaces and self.is_root:
            self._kill_uid()

    def _kill_uid(self) -> None:
        """Fallback: kill every process of the sample uid, daemonized ones included."""
        pid = os.fork()
        if pid == 0:
            try:
                os.setresgid(self.uid, self.uid, self.uid)
                os.setresuid(self.uid, self.uid, self.uid)
                os.kill(-1, signal.SIGKILL)
            except BaseException:  # noqa: BLE001
                pass
            os._exit(0)
        os.waitpid(pid, 0)

    def _mark_scratch(self) -> None:
        """Remember the fresh scratch tmpfs directories (and the working directory) as clean."""
        marks = {}
        for d in self._fresh_tmpfs:
            marks[d] = _stat_mark(d)
        if self._workdir_ready:
            marks[_WORKDIR] = _stat_mark(_WORKDIR)
        self._scratch_marks = marks

    def _wipe_scratch(self) -> None:
        """Give the next sample scratch directories as fresh as the first one had.

        A scratch tmpfs that the sample left exactly as it found it (same inode, size, mode,
        owner, link count, modification and change times, read with one ``stat``; the mounts
        are ``noatime``) is kept; any other is replaced by a new, empty tmpfs, so nothing a
        sample wrote there (files, timestamps, modes, extended attributes, trees of any depth)
        reaches the next one. Directories that are not a tmpfs of ours are emptied instead.
        """
        renewed = False
        for d in _SCRATCH_DIRS:
            if d in self._fresh_tmpfs:
                if _stat_mark(d) == self._scratch_marks.get(d) and (
                    d != "/tmp" or not self._workdir_ready or _stat_mark(_WORKDIR) == self._scratch_marks.get(_WORKDIR)
                ):
                    continue
                if self._renew_tmpfs(d):
                    renewed = True
                    if d == "/tmp":
                        self._workdir_ready = False
                    continue
            try:
                names = os.listdir(d)
            except OSError:
                continue
            if d == "/tmp":
                self._workdir_ready = False
            for name in names:
                path = f"{d}/{name}"
                try:
                    if _stat.S_ISDIR(os.lstat(path).st_mode):
                        _rmtree(path)
                    else:
                        os.unlink(path)
                except OSError:
                    pass
            renewed = True
        if renewed:
            self._mark_scratch()

    def _renew_tmpfs(self, d: str) -> bool:
        """Replace a scratch tmpfs by a new empty one (False if that is refused)."""
        libc = self.libc
        if libc is None:
            return False
        if libc.lib.umount2(d.encode(), 2) != 0:  # MNT_DETACH
            return False
        try:
            libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOATIME, _SCRATCH_TMPFS[d])
            os.chmod(d, 0o1777)
        except OSError:
            return False
        return True

    def _sample(self, job: dict, fds: tuple, workdir: str) -> None:
        """Final set-up of the sample process, then the trusted harness.

        Every fresh page this touches costs the sample a copy-on-write fault, so it works from
        values the worker prepared (rlimits, the seccomp program's address, the libc calls)
        and calls ``prctl`` directly.
        """
        out_w, err_w, res_w, in_r = fds
        # Standard streams and the result pipe (fd 3); close the rest. The pipes arrived as
        # descriptors the zygote did not hold, so none of them is 0, 1 or 2, and one numbered 3
        # has been copied to its stream before fd 3 is replaced.
        dup2 = os.dup2
        dup2(in_r, 0)
        dup2(out_w, 1)
        dup2(err_w, 2)
        dup2(res_w, 3)
        os.closerange(4, 1 << 16)
        os.chdir(workdir)
        if self._env_workdir != workdir:  # scrubbed once per worker when the directory is fixed
            _scrub_environment(workdir)

        # The file-size, open-file, core and process limits, ``no_new_privs`` and the empty
        # supplementary groups are the zygote's own, inherited; CPU time and address space
        # depend on the job.
        setrlimit = resource.setrlimit
        for which, value in job["_limits"]:
            try:
                setrlimit(which, value)
            except (ValueError, OSError):
                pass
        nice = job.get("_nice")
        if nice:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, int(nice))
                fd = os.open("/proc/self/autogroup", os.O_WRONLY)
                os.write(fd, str(int(nice)).encode())
                os.close(fd)
            except OSError:
                pass
        if self.is_root:
            uid = self.uid
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        prctl = self.prctl
        if prctl is not None:
            # Not dumpable (the uid switch already made it so where fs.suid_dumpable is 0),
            # and (after the uid switch, which clears it) die with the zygote; errors are
            # ignored like those of setrlimit.
            if self.set_dumpable:
                prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
            if not self.namespaces:  # with them, the zygote's death kills its whole namespace
                prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
        check = job["mode"] == "check"
        if self.own_proc:
            # A /proc of this sample's own PID namespace (it sees itself and its children). The
            # host's /proc must not stay: there the user's other processes (evalcore itself)
            # are readable by the same uid. Where the kernel refuses a new proc (a /proc with
            # masked entries), an empty tmpfs hides it.
            libc = self.libc
            libc.unshare(_CLONE_NEWNS)  # type: ignore[union-attr]
            try:
                libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | 8)  # type: ignore[union-attr]
            except OSError:
                libc.mount("tmpfs", "/proc", "tmpfs", _MS_NOSUID | _MS_NODEV | 8 | _MS_RDONLY, "size=4k")  # type: ignore[union-attr]
        if self.userns and self.capset is not None:
            # Root of the user namespace: no capabilities, and none regained by exec (script).
            if prctl is not None:
                prctl(_PR_SET_SECUREBITS, _SECBITS_NOROOT, 0, 0, 0)
            if self.capset(self.libc.cap_header_address, self.libc.cap_data_address) != 0:  # type: ignore[union-attr]
                os._exit(126)
        # Script samples without namespaces (the weak fallback: evalcore's own user, no PID
        # namespace) get the check filter's signal confinement and no exec (see linux.py).
        kind = "check" if check else ("script" if self.namespaces else "script_weak")
        address = self.filter_address.get(kind)
        if address and _OWN_PID_SLOT.get(kind, -1) >= 0:
            self.filters[kind]._keep[_OWN_PID_SLOT[kind]].k = os.getpid()  # signals: only to itself
        if address and prctl is not None:
            if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, address, 0, 0) != 0:
                os._exit(126)  # never run a program without the filter this worker reported
        # sys.stdin/stdout/stderr are the worker's own (UTF-8) text streams on fds 0-2, which
        # now lead to the sample's pipes; the worker never buffered anything in them. sys.argv
        # was set by the zygote. The zygote froze everything it inherited into the permanent
        # generation: the sample's collections scan its own objects only, not the worker's
        # (whose pages a scan would copy, one page fault each).
        if check:
            _candidate.candidate_main(job, 0, 3)
        if not self.namespaces:
            job["_group"] = os.getpgid(0)  # confine the audit hook to this sample's group
        _candidate.sample_main(job, 3, self.lasti_true)

    def _rlimits(self, job: dict) -> tuple:
        """The job's own ``setrlimit`` calls (CPU seconds, address space); the rest are the zygote's."""
        cpu = int(math.ceil(float(job.get("timeout_s", 10.0)))) + 1
        mem = int(job.get("memory_mb", 512)) * 1024 * 1024
        return ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_AS, (mem, mem)))


class _ZygoteDied(RuntimeError):
    """The zygote is gone: the worker exits and the pool replaces it."""


# Job fields the sample process needs (the rest stay with the worker).
_CHILD_KEYS = ("mode", "timeout_s", "memory_mb", "source", "_nice")
_PR_SET_SECUREBITS = 28
_SECBITS_NOROOT = 0x3  # SECBIT_NOROOT | SECBIT_NOROOT_LOCKED
_EINVAL = 22
_PIPE_CAPACITY = 65536  # Linux's default: a write of at most this much to a fresh pipe never blocks


def _zygote_loop(worker: _Worker, sock: Any) -> None:
    """The zygote's whole life: fork a sample per request, reap it when asked; never returns.

    Requests: ``F`` (four pipe ends attached) forks the next sample, answered with
    ``(pid, errno)`` only without namespaces; ``K`` kills the current sample, ``W`` kills and
    reaps it, both answered with ``(pid, wait status)``, or ``(-1, errno)`` after a failed fork.

    It touches as few pages as it can between forks (see :meth:`_Worker._start_zygotes`):
    everything it calls is bound to a local name first, and it allocates almost nothing.
    """
    recvmsg, send = sock.recvmsg, sock.send
    fork, close, waitpid, exit_ = os.fork, os.close, os.waitpid, os._exit
    kill, killpg, sigkill = os.kill, os.killpg, _SIGKILL
    unpack, pack = struct.unpack, struct.pack
    space = _socket.CMSG_SPACE(16)
    ns = worker.namespaces
    lib = worker.libc.raw if worker.libc is not None else None  # plain ints: no conversions
    get_errno = worker.libc.last_errno if worker.libc is not None else None
    own = worker.own_pidns if ns else -1
    newpid = _CLONE_NEWPID
    child = worker._child
    current, fork_err = 0, 0  # the sample forked last (0: none), and the errno if that failed
    while True:
        try:
            data, anc, _flags, _addr = recvmsg(16, space)
        except OSError:
            exit_(0)
        if not data:
            exit_(0)
        op = data[:1]
        if op == b"W" or op == b"K":  # kill (and for W reap) the current sample
            pid, status = current, 0
            if pid <= 0:
                pid, status = -1, fork_err
            else:
                try:
                    if ns:
                        kill(pid, sigkill)  # PID 1 of its namespace: the kernel kills the rest
                    else:
                        killpg(pid, sigkill)  # its process group
                except OSError:
                    pass
                if op == b"W":
                    try:
                        status = waitpid(pid, 0)[1]
                    except ChildProcessError:
                        status = -1
            if op == b"W":
                current, fork_err = 0, 0
            send(pack("ii", pid, status))
            continue
        fds = ()
        for _level, _kind, raw in anc:
            fds += unpack(f"{len(raw) // 4}i", raw[: len(raw) // 4 * 4])  # all, so all get closed
        pid, err = -1, 0
        if len(fds) != 4:
            err = _EINVAL
        elif ns and lib.unshare(newpid) != 0:
            err = get_errno()
        else:
            try:
                pid = fork()
            except OSError as exc:
                err = exc.errno or _EINVAL
            if pid == 0:
                child(fds)  # never returns
            if ns and lib.setns(own, newpid) != 0:
                exit_(1)  # the next sample would share this one's namespace: stop instead
        for fd in fds:
            close(fd)
        current, fork_err = (pid, 0) if pid > 0 else (0, err or _EINVAL)
        if not ns:
            send(pack("ii", pid, err))


# Limits every sample gets, set once in the zygote (RLIMIT_NPROC only when running as root:
# it counts all the processes of the real user).
_FIXED_RLIMITS = (
    (resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024)),
    (resource.RLIMIT_NOFILE, (256, 256)),
    (resource.RLIMIT_CORE, (0, 0)),
)
_ROOT_RLIMITS = ((resource.RLIMIT_NPROC, (64, 64)),)


def _scrub_environment(workdir: str) -> None:
    os.environ.clear()
    os.environ.update(
        {"PATH": _SAFE_PATH, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    )
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None


def _stat_mark(path: str) -> tuple:
    """What tells a scratch directory unchanged: one ``lstat`` (None if it is gone)."""
    try:
        st = os.lstat(path)
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mode, st.st_uid, st.st_nlink, st.st_mtime_ns, st.st_ctime_ns)


def _rmtree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``, importing shutil on first need.

    shutil loads zlib, bz2 and lzma: imported at start-up, their libraries would be mapped
    into every forked sample, and copied and torn down with it, for nothing.
    """
    import shutil

    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # a tree deeper than the recursion limit
        pass
    if os.path.lexists(path):
        _rmtree_deep(path)


def _rmtree_deep(path: str) -> None:
    """Remove a directory tree of any depth, holding one descriptor at a time (no recursion,
    no path longer than one name)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    names: list[str] = []
    steps = 0
    try:
        while steps < 10_000_000:
            steps += 1
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            sub = entry.name
                            break
                        os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        pass
            if sub is not None:
                try:
                    child = os.open(sub, flags, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                break
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _check_reply(
    completed: bool, timed_out: bool, returncode: int | None, stdout: str, stderr: str, duration: float, reason: str | None
) -> dict:
    return {
        "completed": completed, "timed_out": timed_out, "returncode": returncode, "stdout": stdout,
        "stderr": stderr, "duration_s": duration, "reason": None if completed else (reason or "failed"),
    }


def _read_output(fd: int, limit: int) -> str:
    """The first ``limit`` bytes of a captured output file, decoded, with a truncation note."""
    size = os.fstat(fd).st_size
    data = os.pread(fd, min(size, limit), 0) if size else b""
    return _decode(bytearray(data), max(0, size - len(data)))


def _decode(buf: bytearray, dropped: int) -> str:
    text = bytes(buf).decode("utf-8", "replace")
    if dropped:
        text += f"\n[... output truncated: {dropped} more bytes]"
    return text


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
        import json

        config = json.loads(os.environ.get("EVALCORE_SANDBOX_CONFIG") or "{}")
        worker = _Worker(index, bool(config.get("namespaces", True)), list(config.get("hide") or ()))
    except BaseException as exc:  # noqa: BLE001
        _send(proto_out, {"error": f"worker start failed: {exc}"})
        return
    _send(proto_out, {"isolation": worker.isolation(), "zygotes": worker.zygote_pids})
    queue: list[dict] = []
    replies: list[dict] = []
    while True:
        if not queue:
            _send_many(proto_out, replies)
            job = _recv(proto_in)
            if job is None:
                return
            queue.append(job)
        while select.select([proto_in], [], [], 0)[0]:  # what the parent has sent already
            job = _recv(proto_in)
            if job is None:
                return
            queue.append(job)
        if "_compiled" not in queue[0]:
            # Compile every queued program now, one after another: the first compile after a
            # sample runs with cold CPU caches (the sample and the fork evicted the compiler),
            # the next ones run warm, at less than half the cost.
            for queued in queue:
                if "_compiled" not in queued and queued.get("mode") == "check":
                    queued["_compiled"] = _testside.compile_check_job(queued)
        job = queue.pop(0)
        if job.get("_fault") == "exit-worker":  # fault injection for the pool's tests
            os._exit(3)
        try:
            hidden_more = False
            if job.get("_hide") and job["_hide"] != worker.hide_seen:
                hidden_more = worker.hide_more(list(job["_hide"]))
                worker.hide_seen = job["_hide"]
            reply = worker.run(job)
            if hidden_more:
                reply["_isolation"] = worker.isolation()  # the parent updates its copy
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
        if len(queue) <= 1 or len(replies) >= _REPLY_BATCH or float(reply.get("duration_s", 1.0)) > _REPLY_HOLD_S:
            _send_many(proto_out, replies)

