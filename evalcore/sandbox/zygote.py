"""The zygotes: the processes that fork every sample and do nothing else.

The worker (see :mod:`.worker`) forks them once; each then serves requests over a Unix socket
(:func:`_zygote_loop`). Imports only what the worker has loaded already.
"""

from __future__ import annotations

import _socket
import _thread
import gc
import os
import resource
import struct
import sys

from .linux import (
    CLONE_NEWNS as _CLONE_NEWNS,
)
from .linux import (
    CLONE_NEWPID as _CLONE_NEWPID,
)
from .linux import (
    MS_BIND as _MS_BIND,
)
from .linux import (
    MS_NODEV as _MS_NODEV,
)
from .linux import (
    MS_NOEXEC as _MS_NOEXEC,
)
from .linux import (
    MS_NOSUID as _MS_NOSUID,
)
from .linux import (
    MS_RDONLY as _MS_RDONLY,
)
from .linux import (
    MS_REC as _MS_REC,
)
from .linux import (
    MS_REMOUNT as _MS_REMOUNT,
)
from .linux import (
    MS_SLAVE as _MS_SLAVE,
)
from .linux import (
    PR_SET_NO_NEW_PRIVS as _PR_SET_NO_NEW_PRIVS,
)
from .linux import (
    PR_SET_PDEATHSIG as _PR_SET_PDEATHSIG,
)
from .linux import (
    PR_SET_SECCOMP as _PR_SET_SECCOMP,
)
from .linux import (
    SECCOMP_MODE_FILTER as _SECCOMP_MODE_FILTER,
)
from .linux import (
    SIGKILL as _SIGKILL,
)
from .sample import THREAD_STACK as _THREAD_STACK
from .sample import capped_streams as _capped_streams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .linux import Libc

_EINVAL = 22


class _ZygoteDied(RuntimeError):
    """The zygote is gone: the worker exits and the pool replaces it."""


class Zygotes:
    """Starting the zygotes and talking to them (a mixin of :class:`.worker._Worker`, which sets
    the attributes below)."""

    libc: Libc | None
    namespaces: bool
    userns: bool
    is_root: bool
    uid: int
    check_view: str
    memory_cgroup: str
    filter_address: dict[str, int]
    prctl: Any
    _lean: tuple[Any, int] | None
    _zygote_pidns: bool

    if TYPE_CHECKING:

        def _join_memory_cgroup(self, pid: int) -> None: ...
        def _stash_check_site(self, copy: str) -> list[str]: ...
        def _bind_check_site(self, copy: str, site: Sequence[str]) -> None: ...

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
        self._join_memory_cgroup(pid)
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
        # Every thread a sample starts reserves a small stack (one malloc arena: the worker
        # runs with MALLOC_ARENA_MAX=1), so that many threads fit in the address-space limit.
        try:
            _thread.stack_size(_THREAD_STACK)
        except (ValueError, RuntimeError):
            pass
        if kind in ("check", "lean"):
            _capped_streams()  # output past the cap is dropped, never an error in the candidate
        if self.memory_cgroup and self.is_root:
            # Never the OOM killer's choice in the memory cgroup it shares with its samples.
            try:
                with open("/proc/self/oom_score_adj", "w") as fh:
                    fh.write("-1000")
            except OSError:
                pass
        if self.namespaces and kind in ("check", "lean"):
            self._hide_proc()

    proc_fd = -1  # (check zygotes) the worker's /proc, for a sample's set-up before its filter

    def _hide_proc(self) -> None:
        """(check and lean zygotes) A mount namespace of this zygote's own, a copy of the
        worker's that receives the worker's later mounts (scratch renewed, see scratch.py), in
        which ``/proc`` is an empty read-only tmpfs: a ``check`` candidate gets no ``/proc``.

        The inode numbers of ``/proc/<pid>`` entries come from the kernel's per-CPU
        ``get_next_ino`` counter, which a sample moves by looking entries up and the next
        sample on the same CPU reads (``os.stat("/proc/self").st_ino``, or the worker's pipes
        to it): a channel between samples. Without ``/proc`` (and without pipes and sockets,
        refused by the filter) a candidate can neither move that counter nor read it. The
        sample's own set-up (``oom_score_adj``) uses :attr:`proc_fd`, which it
        closes before its program runs. A refusal stops the zygote: the worker never runs a
        candidate with ``/proc`` it did not report.
        """
        libc = self.libc
        assert libc is not None
        self.proc_fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        libc.unshare(_CLONE_NEWNS)
        libc.mount(None, "/", None, _MS_REC | _MS_SLAVE)  # the worker's mounts come in, none go back
        libc.mount("tmpfs", "/proc", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY, "size=4k,mode=0555")
        if getattr(self, "check_view", ""):
            self._narrow_view(self.check_view)

    def _narrow_view(self, copy: str) -> None:
        """(check and lean zygotes) The check candidates' view: each folder and file the
        worker's view binds from the host (``/usr``, the interpreter's folders, the files of
        ``/etc``) replaced by its counterpart in ``copy``, a read-only copy in tmpfs (see
        view.py), or by nothing where the copy has none; then ``copy`` itself is covered.

        A read from tmpfs takes the same time whether or not an earlier sample read the file
        (tmpfs pages are always resident), so the page-cache timing channel carries nothing.
        """
        libc = self.libc
        assert libc is not None
        ro = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
        roots = ["/usr", *sorted(getattr(self, "_keep", ()))]
        roots += [v for v in getattr(self, "view", ()) if v.startswith("/etc/") and " " not in v]
        site = self._stash_check_site(copy)  # the site-packages, bound back below (fsview.py)
        for path in sorted(dict.fromkeys(roots), key=lambda p: (p.count("/"), p)):
            if os.path.islink(path) or not os.path.exists(path):
                continue
            src = copy + path
            if os.path.isdir(path):
                if os.path.isdir(src) and not os.path.islink(src):
                    libc.mount(src, path, None, _MS_BIND)
                else:
                    libc.mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=4k,mode=0555")
            else:
                libc.mount(
                    src if os.path.isfile(src) and not os.path.islink(src) else "/dev/null", path, None, _MS_BIND
                )
            libc.mount(None, path, None, ro)
        self._bind_check_site(copy, site)
        # What the worker hid inside the view (a problem file, see Worker._hide_all) stays
        # hidden where the copy holds it too.
        for path in sorted(getattr(self, "hidden", ()), key=len):
            if not os.path.lexists(copy + path) or not any(path.startswith(r.rstrip("/") + "/") for r in roots):
                continue
            if os.path.isdir(path):
                libc.mount(
                    "tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY, "size=4k,mode=0555"
                )
            else:
                libc.mount("/dev/null", path, None, _MS_BIND)
                libc.mount(None, path, None, ro)
        # The copy's own folder: covered by an empty one (the zygote's filter refuses umount).
        libc.mount("tmpfs", copy, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY, "size=4k,mode=0555")

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

    def _zygote_call(self, zygote: tuple[Any, int], data: bytes, fds: Sequence[int] = ()) -> tuple[Any, ...]:
        """One request to a zygote and its reply (two ints)."""
        self._zygote_send(zygote, data, fds)
        try:
            reply = zygote[0].recv(16)
        except OSError as exc:
            raise _ZygoteDied(f"sandbox zygote failed: {exc}") from exc
        if len(reply) != 8:
            raise _ZygoteDied("sandbox zygote exited")
        return struct.unpack("ii", reply)

    def _fork(self, zygote: tuple[Any, int], child_ends: tuple[Any, ...]) -> int:
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
                os.kill(-1, _SIGKILL)
            except BaseException:  # noqa: BLE001
                pass
            os._exit(0)
        os.waitpid(pid, 0)


def _zygote_loop(worker: Any, sock: Any) -> None:
    """The zygote's whole life: fork a sample per request, reap it when asked; never returns.

    Requests: ``F`` (four pipe ends attached) forks the next sample, answered with
    ``(pid, errno)`` only without namespaces; ``K`` kills the current sample, ``W`` kills and
    reaps it, both answered with ``(pid, wait status)``, or ``(-1, errno)`` after a failed fork.

    It touches as few pages as it can between forks (see :meth:`_Worker._start_zygotes`):
    everything it calls is bound to a local name first, and it allocates almost nothing.
    """
    recvmsg, send = sock.recvmsg, sock.send
    close, waitpid, exit_ = os.close, os.waitpid, os._exit
    kill, killpg, sigkill = os.kill, os.killpg, _SIGKILL
    unpack, pack = struct.unpack, struct.pack
    space = _socket.CMSG_SPACE(16)
    ns = worker.namespaces
    lib: Any = worker.libc.raw if worker.libc is not None else None  # plain ints: no conversions
    get_errno: Any = worker.libc.last_errno if worker.libc is not None else None
    own = worker.own_pidns if ns else -1
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
            pid, status = (current, _zygote_stop(current, ns, op == b"W")) if current > 0 else (-1, fork_err)
            if op == b"W":
                current, fork_err = 0, 0
            send(pack("ii", pid, status))
            continue
        if current > 0:
            # The worker forks the next sample without having reaped this one (it never
            # should): it dies first, with all it started, whatever the worker did.
            try:
                kill(current, sigkill) if ns else killpg(current, sigkill)
                waitpid(current, 0)
            except OSError:
                pass
            current = 0
        fds: tuple[int, ...] = ()
        for _level, _kind, raw in anc:
            fds += unpack(f"{len(raw) // 4}i", raw[: len(raw) // 4 * 4])  # all, so all get closed
        pid, err = _zygote_fork(fds, ns, lib, get_errno, own, child)
        for fd in fds:
            close(fd)
        current, fork_err = (pid, 0) if pid > 0 else (0, err or _EINVAL)
        if not ns:
            send(pack("ii", pid, err))


def _zygote_stop(
    pid: int, ns: bool, reap: bool, kill: Any = os.kill, killpg: Any = os.killpg, waitpid: Any = os.waitpid
) -> int:
    """Kills sample ``pid`` (with a PID namespace the sample, its PID 1, so the kernel kills the
    rest; without, its process group) and, if ``reap``, reaps it: its wait status (-1: already
    reaped), 0 when not reaped. (The calls are bound at definition, as in :func:`_zygote_loop`.)"""
    try:
        if ns:
            kill(pid, _SIGKILL)
        else:
            killpg(pid, _SIGKILL)
    except OSError:
        pass
    if not reap:
        return 0
    try:
        return int(waitpid(pid, 0)[1])
    except ChildProcessError:
        return -1


def _zygote_fork(
    fds: tuple[int, ...],
    ns: bool,
    lib: Any,
    get_errno: Any,
    own: int,
    child: Any,
    fork: Any = os.fork,
    exit_: Any = os._exit,
) -> tuple[int, int]:
    """Forks the next sample, which runs ``child(fds)`` (its four pipe ends) in a new PID
    namespace where ``ns``: ``(pid, errno)``, pid -1 if it failed. (The calls are bound at
    definition, as in :func:`_zygote_loop`.)"""
    pid, err = -1, 0
    if len(fds) != 4:
        err = _EINVAL
    elif ns and lib.unshare(_CLONE_NEWPID) != 0:
        err = get_errno()
    else:
        try:
            pid = fork()
        except OSError as exc:
            err = exc.errno or _EINVAL
        if pid == 0:
            child(fds)  # never returns
        if ns and lib.setns(own, _CLONE_NEWPID) != 0:
            exit_(1)  # the next sample would share this one's namespace: stop instead
    return pid, err


# Limits every sample gets, set once in the zygote (RLIMIT_NPROC only when running as root:
# it counts all the processes of the real user).
_FIXED_RLIMITS = (
    (resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024)),
    (resource.RLIMIT_NOFILE, (256, 256)),
    (resource.RLIMIT_CORE, (0, 0)),
)
_ROOT_RLIMITS = ((resource.RLIMIT_NPROC, (128, 128)),)  # 64 threads and more fit
