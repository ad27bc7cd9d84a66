"""The sample process's own set-up, between the zygote's fork and the program.

Runs in the sample (forked by a zygote, see :mod:`.zygote`): its pipes, limits, user, the
seccomp filter and (in a user namespace) its own ``/proc``, then the candidate's or the script's
harness (:mod:`.candidate`). Imports only what the worker has loaded already.
"""

from __future__ import annotations

import io
import marshal
import math
import os
import resource
import struct
import sys

from . import candidate as _candidate
from .framing import read_exact as _read_exact
from .linux import (
    CLONE_NEWNS as _CLONE_NEWNS,
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
    MS_RDONLY as _MS_RDONLY,
)
from .linux import (
    OWN_PID_SLOT as _OWN_PID_SLOT,
)
from .linux import (
    PR_SET_DUMPABLE as _PR_SET_DUMPABLE,
)
from .linux import (
    PR_SET_PDEATHSIG as _PR_SET_PDEATHSIG,
)
from .linux import (
    SIGKILL as _SIGKILL,
)
from .scratch import _scrub_environment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .linux import Libc

# What a check candidate's stdout and stderr keep (their memory files are capped by the
# file-size limit): writes past it are dropped, and the worker marks the output truncated.
OUTPUT_FILE_CAP = 16 * 1024 * 1024
# The stack each new thread reserves: enough for the default recursion limit through C calls
# (512 KiB measured on 3.11), so 64 threads reserve 64 MiB of the address-space limit, not
# 512 MiB (glibc's default is the 8 MiB of RLIMIT_STACK). A program may ask for more
# (threading.stack_size).
THREAD_STACK = 1024 * 1024


class _CappedFile(io.RawIOBase):
    """A write-only raw stream on a file descriptor that keeps the first ``cap`` bytes and
    drops the rest, never failing (a correct program that prints a lot is not failed by the
    cap: its output is truncated, and marked so by the worker)."""

    def __init__(self, fd: int, cap: int) -> None:
        self._fd, self._room = fd, cap

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:  # bytes-like
        n = len(data)
        room = self._room
        if room > 0:
            view = memoryview(data)[:room]
            try:
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                pass
            self._room = room - min(n, room)
        return n


def capped_streams() -> None:
    """Give this process ``sys.stdout``/``sys.stderr`` (and ``sys.__stdout__``/``__stderr__``)
    that keep :data:`OUTPUT_FILE_CAP` bytes each and drop the rest (a check zygote, whose
    samples inherit them; their fds 1 and 2 are the memory files the worker reads)."""
    for fd, name, errors in ((1, "stdout", "surrogateescape"), (2, "stderr", "backslashreplace")):
        stream = io.TextIOWrapper(io.BufferedWriter(_CappedFile(fd, OUTPUT_FILE_CAP)), encoding="utf-8", errors=errors)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


# Job fields the sample process needs (the rest stay with the worker).
_CHILD_KEYS = ("mode", "timeout_s", "memory_mb", "source")
_PR_SET_SECUREBITS = 28
_SECBITS_NOROOT = 0x3  # SECBIT_NOROOT | SECBIT_NOROOT_LOCKED


class SampleSetup:
    """What a forked sample does before its program runs (a mixin of :class:`.worker._Worker`,
    which sets the attributes below)."""

    libc: Libc | None
    namespaces: bool
    userns: bool
    own_proc: bool
    is_root: bool
    uid: int
    proc_fd: int
    memory_cgroup: str
    prctl: Any
    capset: Any
    set_dumpable: bool
    filter_address: dict[str, int]
    filters: dict[str, Any]
    seccomp_calls: dict[str, tuple[Any, ...]]
    lasti_true: int
    _env_workdir: str | None

    def _child(self, fds: tuple[Any, ...]) -> None:
        """Entry of a sample process (forked by a zygote); never returns.

        Its job comes first on its standard-input pipe (see :meth:`_payload`); it reads exactly
        that much, so what follows is the program's own input.
        """
        out_w, err_w, res_w, in_r = fds
        try:
            job = marshal.loads(_read_exact(in_r, struct.unpack("!I", _read_exact(in_r, 4) or b"")[0]) or b"")
            # The same layout for every sample of a mode, whatever the job (issue 42: a layout
            # or a priority chosen from how long the test took before is a bit the next sample
            # of the problem reads with os.getsid/os.getpriority).
            if not self.namespaces:
                # A session, and so a scheduling group (autogroup), of its own: without
                # namespaces nothing caps a sample's processes, and a fork bomb sharing the
                # zygote's group would starve the zygote that has to kill it.
                os.setsid()
            else:
                # A process group of its own, in the zygote's session, which has no controlling
                # terminal: a session per sample would also cost the kernel a scheduling group
                # created and destroyed each time (its processes are capped).
                os.setpgid(0, 0)
            self._sample(job, fds, job["_workdir"])
        except BaseException as exc:  # noqa: BLE001
            try:
                os.write(err_w, f"sandbox setup failed: {exc}\n".encode())
            except OSError:
                pass
        os._exit(125)

    # ---------------------------------------------------------------- one sample

    def _payload(self, job: dict[str, Any], workdir: str, stdin_data: bytes, nonces: bytes) -> bytes:
        """What a ``script`` sample reads from its standard input before the program runs:
        a 4-byte length, the job in marshal form, then the program's own standard input."""
        child = {key: job[key] for key in _CHILD_KEYS if key in job}
        child["_workdir"] = workdir
        child["_nonces"] = nonces
        child["_limits"] = self._rlimits(job)  # computed here: fewer pages for the sample to touch
        data = marshal.dumps(child)
        return struct.pack("!I", len(data)) + data + stdin_data

    def _sample(self, job: dict[str, Any], fds: tuple[Any, ...], workdir: str) -> None:
        """Final set-up of the sample process, then the trusted harness.

        Every fresh page this touches costs the sample a copy-on-write fault, so it works from
        values the worker prepared (rlimits, the seccomp program's address, the libc calls)
        and calls ``prctl`` directly.
        """
        self._sample_streams(fds, workdir)
        self._sample_limits(job)
        check = job["mode"] == "check"
        self._sample_proc_and_caps(check)
        self._sample_filter(check)
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

    def _sample_streams(self, fds: tuple[Any, ...], workdir: str) -> None:
        """The sample's OOM score, its standard streams and result pipe, its working directory."""
        out_w, err_w, res_w, in_r = fds
        # A check zygote has no /proc in its mount namespace (see Zygotes._hide_proc): these
        # go through the worker's, held open by the zygote and closed below.
        proc = self.proc_fd if self.proc_fd >= 0 else None
        prefix = "self/" if proc is not None else "/proc/self/"
        if self.memory_cgroup:
            # The zygote may not be chosen when this sample fills its memory cgroup: it is.
            try:
                fd = os.open(prefix + "oom_score_adj", os.O_WRONLY, dir_fd=proc)
                os.write(fd, b"1000")
                os.close(fd)
            except OSError:
                pass
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

    def _sample_limits(self, job: dict[str, Any]) -> None:
        """The job's rlimits, the sandbox's uid, not dumpable, death with the zygote."""
        # The file-size, open-file, core and process limits, ``no_new_privs`` and the empty
        # supplementary groups are the zygote's own, inherited; CPU time and address space
        # depend on the job.
        setrlimit = resource.setrlimit
        for which, value in job["_limits"]:
            try:
                setrlimit(which, value)
            except (ValueError, OSError):
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

    def _sample_proc_and_caps(self, check: bool) -> None:
        """A script sample's own /proc; no capabilities in a user namespace."""
        if self.own_proc and not check:
            # A /proc of this sample's own PID namespace (it sees itself and its children). The
            # host's /proc must not stay: there the user's other processes (evalcore itself)
            # are readable by the same uid. Where the kernel refuses a new proc (a /proc with
            # masked entries), an empty tmpfs hides it. (Check candidates have no /proc at all:
            # their zygote's mount namespace hides it.) The worker's mounts propagate to its
            # zygotes' namespaces: this copy's /proc is made private first, so that the new
            # mount stays in this sample.
            libc = self.libc
            libc.unshare(_CLONE_NEWNS)  # type: ignore[union-attr]
            libc.mount(None, "/proc", None, _MS_PRIVATE)  # type: ignore[union-attr]
            try:
                libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | 8)  # type: ignore[union-attr]
            except OSError:
                libc.mount("tmpfs", "/proc", "tmpfs", _MS_NOSUID | _MS_NODEV | 8 | _MS_RDONLY, "size=4k")  # type: ignore[union-attr]
        if self.userns and self.capset is not None:
            # Root of the user namespace: no capabilities, and none regained by exec (script).
            if self.prctl is not None:
                self.prctl(_PR_SET_SECUREBITS, _SECBITS_NOROOT, 0, 0, 0)
            if self.capset(self.libc.cap_header_address, self.libc.cap_data_address) != 0:  # type: ignore[union-attr]
                os._exit(126)

    def _sample_filter(self, check: bool) -> None:
        """The sample's own seccomp filter (its PID written in first where it confines signals)."""
        # Script samples without namespaces (the weak fallback: evalcore's own user, no PID
        # namespace) get the check filter's signal confinement and no exec (see linux.py).
        kind = "check" if check else ("script" if self.namespaces else "script_weak")
        address = self.filter_address.get(kind)
        if address and _OWN_PID_SLOT.get(kind, -1) >= 0:
            self.filters[kind]._keep[_OWN_PID_SLOT[kind]].k = os.getpid()  # signals: only to itself
        if address:
            install, args = self.seccomp_calls[kind]
            if install(*args) != 0:
                os._exit(126)  # never run a program without the filter this worker reported

    def _rlimits(self, job: dict[str, Any]) -> tuple[Any, ...]:
        """The job's own ``setrlimit`` calls (CPU seconds, address space); the rest are the zygote's."""
        cpu = int(math.ceil(float(job.get("timeout_s", 10.0)))) + 1
        mem = int(job.get("memory_mb", 512)) * 1024 * 1024
        return ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_AS, (mem, mem)))
