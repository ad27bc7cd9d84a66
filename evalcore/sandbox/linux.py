"""Linux system calls the sandbox needs, through ctypes: namespaces, mounts, prctl, capabilities,
and the seccomp filters of the sample processes.

Worker side (the sandbox's parent never imports it), and the child that hosts a Python agent
(:mod:`evalcore.agents._host`) before it imports agent code; Python 3.11 has no
``os.unshare``/``mount``.
"""

from __future__ import annotations

import _signal
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# sched.h, mount.h, prctl.h, capability.h
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_THREAD = 0x00010000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_SLAVE = 1 << 19
MS_SHARED = 1 << 20
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SIGKILL = int(_signal.SIGKILL)

# Mount options that a bind remount must repeat (in a user namespace they are locked).
MOUNT_OPTION_FLAGS = (
    ("nosuid", MS_NOSUID),
    ("nodev", MS_NODEV),
    ("noexec", MS_NOEXEC),
    ("noatime", MS_NOATIME),
    ("nodiratime", MS_NODIRATIME),
    ("relatime", MS_RELATIME),
)

# --------------------------------------------------------------------------------------------
# seccomp: what a sample may not ask the kernel (in the spirit of Docker's default profile).
# --------------------------------------------------------------------------------------------

_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10

# Per architecture: AUDIT_ARCH value, whether syscall numbers at or above 0x40000000 (x32)
# must be refused, and the numbers of the calls refused in every sample.
_ARCHES: dict[str, tuple[int, bool, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        True,
        {
            # keys and keyrings
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            # namespaces, mounts, root changes
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            # other processes' memory
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "pidfd_getfd": 438,
            # kernel attack surface
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "fanotify_init": 300,
            "lookup_dcookie": 212,
            "iopl": 172,
            "ioperm": 173,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "acct": 163,
            "syslog": 103,
            "quotactl": 179,
            "settimeofday": 164,
            "clock_settime": 227,
            "adjtimex": 159,
            "clock_adjtime": 305,
            "move_pages": 279,
            "migrate_pages": 256,
            # System V IPC (outlives the sample in its IPC namespace)
            "shmget": 29,
            "shmat": 30,
            "shmctl": 31,
            "shmdt": 67,
            "semget": 64,
            "semop": 65,
            "semctl": 66,
            "semtimedop": 220,
            "msgget": 68,
            "msgsnd": 69,
            "msgrcv": 70,
            "msgctl": 71,
            # extended attributes (would carry data on a reused directory)
            "setxattr": 188,
            "lsetxattr": 189,
            "fsetxattr": 190,
            "removexattr": 197,
            "lremovexattr": 198,
            "fremovexattr": 199,
            # POSIX message queues (outlive the sample in its worker's IPC namespace)
            "mq_open": 240,
            "mq_unlink": 241,
            "mq_timedsend": 242,
            "mq_timedreceive": 243,
            "mq_notify": 244,
            "mq_getsetattr": 245,
            # the host's page cache as a channel between samples: residency probes (mincore,
            # cachestat; asynchronous I/O, whose RWF_NOWAIT reads probe too) and eviction
            # (fadvise DONTNEED; madvise COLD/PAGEOUT, see _MADVISE_REFUSED; process_madvise)
            "mincore": 27,
            "cachestat": 451,
            "fadvise64": 221,
            "process_madvise": 440,
            "io_setup": 206,
            "io_destroy": 207,
            "io_getevents": 208,
            "io_submit": 209,
            "io_cancel": 210,
            "io_pgetevents": 333,
        },
    ),
}
# Further numbers the filters need (x86_64).
_SYSCALLS = {
    "x86_64": {
        "socket": 41,
        "socketpair": 53,
        "clone": 56,
        "fork": 57,
        "vfork": 58,
        "execve": 59,
        "execveat": 322,
        "clone3": 435,
        "kill": 62,
        "tkill": 200,
        "tgkill": 234,
        "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297,
        "pidfd_send_signal": 424,
        "pidfd_open": 434,
        "memfd_create": 319,
        "preadv2": 327,
        "pwritev2": 328,
        "madvise": 28,
        "pipe": 22,
        "pipe2": 293,
        "memfd_secret": 447,
        "setsid": 112,
        "sched_setaffinity": 203,
        "fcntl": 72,
        "inotify_init": 253,
        "inotify_init1": 294,
        "epoll_create": 213,
        "epoll_create1": 291,
        "epoll_ctl": 233,
    }
}
# fcntl's command that grows a pipe's buffer (up to fs.pipe-max-size, 1 MiB): refused where no
# memory cgroup counts what a pipe holds (issue 42); a pipe keeps the kernel's 16 pages.
_F_SETPIPE_SZ = 1031
# Kernel objects no sample needs whose memory no limit counts without a memory cgroup: an
# inotify instance (its queue holds up to fs.inotify.max_queued_events events) and its watches
# (each pins an inode). Refused to check candidates always, to script samples without a cgroup.
_INOTIFY = ("inotify_init", "inotify_init1")
# Likewise epoll (issue 42): an instance is a file, but each watch (~160 B) is bounded only by
# the per-user fs.epoll.max_user_watches (4% of low memory), which files shared between a
# sample's processes let it reach. Refused with ENOSYS, under the same conditions as inotify:
# a kernel built without epoll answers so, and CPython's ``selectors`` then picks
# ``PollSelector`` by itself (asyncio's loops too; see selfpipe.poll_if_no_epoll). Refusing
# ``epoll_ctl`` as well leaves no watch to add to an epoll file a sample might inherit.
_EPOLL = ("epoll_create", "epoll_create1", "epoll_ctl")
# preadv2/pwritev2 with this flag answer whether a page is cached without reading it: refused.
_RWF_NOWAIT = 0x8
# madvise advice that evicts a file's pages from the page cache (MADV_COLD, MADV_PAGEOUT).
_MADVISE_REFUSED = (20, 21)
# Index of the instruction whose constant a sample sets to its own PID before installing the
# ``no_processes`` filter (see :func:`seccomp_program`); -1 where there is none.
OWN_PID_SLOT: dict[str, int] = {}


_NAMESPACE_CALLS = ("unshare", "setns", "mount")  # the zygote needs them; each sample gives them up
# What no sample may call (issue 42): a sample's processes stay on its worker's CPU and in its
# zygote's session, so that however many processes it spins, it competes for one CPU and, where
# the kernel groups a session's processes for scheduling (autogroup), as one group: another
# worker's sample keeps its CPU (measured in tests/sandbox/test_sandbox_resources_round3.py).
_SAMPLE_REFUSED = ("sched_setaffinity", "setsid")
# What a ``check`` candidate may not call beyond the zygote's filter: no processes; and no file
# whose inode number a later sample could read, when it comes from a counter the candidate
# moves: pipes, sockets and secret memory files (the kernel's per-CPU ``get_next_ino``, which
# the worker's own pipes to the next sample show), memory files and pidfds (host-wide counters).
_CHECK_REFUSED = (
    "fork",
    "vfork",
    "pidfd_open",
    "memfd_create",
    "memfd_secret",
    "pipe",
    "pipe2",
    "socket",
    "socketpair",
    *_INOTIFY,
)


def seccomp_program(kind: str, refuse_memfd: bool = False) -> list[tuple[int, int, int, int]] | None:
    """A seccomp filter as classic BPF instructions ``(code, jt, jf, k)``.

    Filters stack: a zygote installs the large ``"zygote"`` filter once and every sample it
    forks inherits it; each sample then adds its small ``"check"`` or ``"script"`` filter
    (attaching a filter costs in proportion to its size, and this happens for every sample).

    ``"zygote"`` refuses with EPERM the calls listed in ``_ARCHES`` (keyrings, mounts, ptrace
    and other processes' memory, bpf, perf events, userfaultfd, io_uring, System V IPC,
    extended attributes, kernel modules and clocks) but ``unshare``, ``setns`` and ``mount``
    (the zygote makes each sample's PID namespace with them), every system call of another ABI
    (x32, i386), and sockets of any family but ``AF_UNIX``, ``AF_INET`` and ``AF_INET6``
    (EAFNOSUPPORT: no ``AF_VSOCK``, ``AF_NETLINK``, ``AF_PACKET``).

    It also closes the channels through which a sample could leave a note for a later one
    (issue 29): POSIX message queues, the page-cache probes ``mincore``, ``cachestat``,
    ``preadv2``/``pwritev2`` with ``RWF_NOWAIT`` and asynchronous I/O (``io_*``), and the
    evictions ``fadvise64``, ``madvise`` ``MADV_COLD``/``MADV_PAGEOUT`` and
    ``process_madvise``.

    Every per-sample filter (``"check"``, ``"script"``, ``"script_weak"``) refuses
    ``sched_setaffinity`` and ``setsid`` (issue 42): a sample's processes stay pinned to its
    worker's CPU and in its zygote's session (one scheduling group where the kernel has
    autogroups), so 32 spinners cannot take another worker's CPU.

    ``"script"`` refuses ``unshare``, ``setns`` and ``mount``, and, when ``refuse_memfd`` (no
    memory cgroup counts what a sample holds in the kernel), ``memfd_create`` (what a memory
    file holds) and ``AF_UNIX`` sockets (``socket(AF_UNIX, ...)`` and ``socketpair``: their
    buffers, up to twice ``net.core.wmem_max`` per socket, 8 MiB here, held 3.1 GiB for two
    processes; ``AF_INET``/``AF_INET6`` sockets stay, they reach nothing in the empty network
    namespace and so can queue nothing), ``inotify_init``/``inotify_init1`` and
    ``fcntl(F_SETPIPE_SZ)`` (a pipe keeps the kernel's default 16 pages: the bounds of
    docs/sandbox.md, "CPU and kernel memory"). ``"script_weak"`` (script
    samples in the weak fallback, where no PID namespace confines them and they run as
    evalcore's own user) refuses them too, and ``execve``/``execveat`` (no new programs:
    ``_posixsubprocess.fork_exec`` raises no audit event) and the signals ``"check"`` refuses
    (below); ``fork`` and threads stay allowed. ``"check"`` refuses them too,
    ``memfd_create`` (a memory file's inode number comes from a counter shared with every later
    sample) and ``pidfd_open`` (likewise: a pidfd's inode number counts the host's processes
    and threads), ``inotify_init``/``inotify_init1``, ``pipe``, ``pipe2``, ``socket``,
    ``socketpair`` and ``memfd_secret`` (their
    inode numbers come from the kernel's per-CPU ``get_next_ino`` counter, which the pipes the
    worker makes for the next sample on the same CPU show), and ``fork``, ``vfork``, ``execve``,
    ``execveat`` and every ``clone`` without ``CLONE_THREAD`` (threads stay possible); ``clone3``
    answers ENOSYS so that the C library falls back to ``clone``, whose flags the filter can
    read; and signals to any process but the sample itself (``kill``, ``tgkill``,
    ``rt_*sigqueueinfo`` only to its own PID or
    group, no ``tkill`` or ``pidfd_send_signal``): where no PID namespace confines it (the
    weak fallback), a candidate cannot signal the user's other processes. The instruction
    holding the sample's PID is at ``OWN_PID_SLOT[kind]`` (``"check"``, ``"script_weak"``); the
    sample writes its PID there. (A process a ``"script_weak"`` sample forks inherits the
    filter with the sample's PID: it may signal the sample and its process group, not itself
    by PID.)

    ``epoll_create``, ``epoll_create1`` and ``epoll_ctl`` answer ENOSYS (as on a kernel built
    without epoll) where inotify is refused: to every ``"check"`` candidate, and to script
    samples when ``refuse_memfd`` (each epoll watch is kernel memory that only the per-user
    ``fs.epoll.max_user_watches`` bounds). ``selectors`` and ``asyncio`` then use ``poll``.

    Returns:
        The instructions, or None on an architecture without a table here.
    """
    machine = os.uname().machine
    if machine not in _ARCHES:
        return None
    audit_arch, x32, blocked = _ARCHES[machine]
    asm = _Assembler()
    if kind == "zygote":
        _zygote_filter(asm, audit_arch, x32, blocked, _SYSCALLS[machine])
    else:
        _sample_filter(asm, kind, refuse_memfd, blocked, _SYSCALLS[machine])
    OWN_PID_SLOT.setdefault(kind, -1)
    asm.label("deny")
    asm.prog.append((_RET, 0, 0, _errno(_EPERM)))
    asm.label("allow")
    asm.prog.append((_RET, 0, 0, _ALLOW))
    return asm.resolve()


# Classic BPF opcodes (BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ/JGE/JSET|BPF_K, BPF_RET|BPF_K) and
# SECCOMP_RET_ALLOW.
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000


def _errno(e: int) -> int:
    """SECCOMP_RET_ERRNO with ``e``."""
    return 0x00050000 | e


class _Assembler:
    """A BPF program with symbolic forward jump targets (classic BPF jumps forward only)."""

    def __init__(self) -> None:
        self.prog: list[tuple[Any, ...]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        """Name the next instruction."""
        self.labels[name] = len(self.prog)

    def deny(self, numbers: Sequence[int], target: str = "deny") -> None:
        """Jump to ``target`` when the loaded value equals one of ``numbers``."""
        self.prog.extend((_JEQ, target, 0, number) for number in numbers)

    def resolve(self) -> list[tuple[int, int, int, int]]:
        """The instructions with every label turned into a relative jump."""
        out = []
        for i, (code, jt, jf, k) in enumerate(self.prog):
            jt = 0 if jt is None else (self.labels[jt] - i - 1 if isinstance(jt, str) else jt)
            jf = 0 if jf is None else (self.labels[jf] - i - 1 if isinstance(jf, str) else jf)
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("seccomp program too long for its jumps")
            out.append((code, jt, jf, k))
        return out


def _zygote_filter(asm: _Assembler, audit_arch: int, x32: bool, blocked: dict[str, int], nr: dict[str, int]) -> None:
    """The ``"zygote"`` filter of :func:`seccomp_program`, up to its shared deny/allow tail."""
    prog = asm.prog
    prog += [(_LD_ABS, None, None, 4), (_JEQ, 1, 0, audit_arch), (_RET, 0, 0, _errno(_EPERM)), (_LD_ABS, None, None, 0)]
    if x32:
        prog.append((_JGE, "deny", 0, 0x40000000))
    asm.deny([n for name, n in sorted(blocked.items(), key=lambda item: item[1]) if name not in _NAMESPACE_CALLS])
    prog.append((_JEQ, "socket", 0, nr["socket"]))
    prog.append((_JEQ, "socketpair", 0, nr["socketpair"]))
    prog.append((_JEQ, "rwf", 0, nr["preadv2"]))
    prog.append((_JEQ, "rwf", 0, nr["pwritev2"]))
    prog.append((_JEQ, "madvise", 0, nr["madvise"]))
    prog.append((_RET, 0, 0, _ALLOW))
    asm.label("rwf")  # the flags are the sixth argument (an int: the low half of args[5])
    prog += [(_LD_ABS, None, None, 56), (_JSET, "deny", 0, _RWF_NOWAIT), (_RET, 0, 0, _ALLOW)]
    asm.label("madvise")  # the advice is the third argument
    prog.append((_LD_ABS, None, None, 32))
    asm.deny(_MADVISE_REFUSED)
    prog.append((_RET, 0, 0, _ALLOW))
    asm.label("socket")
    prog += [
        (_LD_ABS, None, None, 16),
        (_JEQ, "allow", 0, _AF_UNIX),
        (_JEQ, "allow", 0, _AF_INET),
        (_JEQ, "allow", 0, _AF_INET6),
        (_RET, 0, 0, _errno(_EAFNOSUPPORT)),
    ]
    asm.label("socketpair")
    prog += [(_LD_ABS, None, None, 16), (_JEQ, "allow", 0, _AF_UNIX), (_RET, 0, 0, _errno(_EAFNOSUPPORT))]


def _sample_filter(asm: _Assembler, kind: str, refuse_memfd: bool, blocked: dict[str, int], nr: dict[str, int]) -> None:
    """A per-sample filter of :func:`seccomp_program`, up to its shared deny/allow tail."""
    prog = asm.prog
    prog.append((_LD_ABS, None, None, 0))  # (the zygote's filter refused other ABIs already)
    asm.deny([blocked[name] for name in _NAMESPACE_CALLS])
    signals = kind in ("check", "script_weak")  # signals confined to the sample itself
    asm.deny([nr[name] for name in _SAMPLE_REFUSED])
    unix = kind != "check" and refuse_memfd  # refuse AF_UNIX sockets (script samples without a memory cgroup)
    if kind == "check":
        asm.deny([nr[name] for name in _CHECK_REFUSED])
    elif refuse_memfd:
        asm.deny([nr["memfd_create"], nr["socketpair"]])  # Linux makes AF_UNIX pairs only
        prog.append((_JEQ, "unix", 0, nr["socket"]))
        asm.deny([nr[name] for name in _INOTIFY])
        prog.append((_JEQ, "fcntl", 0, nr["fcntl"]))
    no_epoll = kind == "check" or refuse_memfd  # the inotify rule's conditions
    if no_epoll:
        asm.deny([nr[name] for name in _EPOLL], "enosys")
    if signals:
        asm.deny([nr[name] for name in ("execve", "execveat", "tkill", "pidfd_send_signal")])
    if kind == "check":
        prog.append((_JEQ, "clone", 0, nr["clone"]))
        prog.append((_JEQ, "enosys", 0, nr["clone3"]))
    if signals:
        asm.deny([nr[name] for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")], "signal")
    prog.append((_RET, 0, 0, _ALLOW))
    if kind == "check":
        asm.label("clone")
        prog += [(_LD_ABS, None, None, 16), (_JSET, "allow", 0, CLONE_THREAD), (_RET, 0, 0, _errno(_EPERM))]
    if no_epoll:  # (every check filter: clone3 jumps here too)
        asm.label("enosys")
        prog.append((_RET, 0, 0, _errno(_ENOSYS)))
    if unix:
        asm.label("unix")
        prog += [(_LD_ABS, None, None, 16), (_JEQ, "deny", 0, _AF_UNIX), (_RET, 0, 0, _ALLOW)]
        asm.label("fcntl")  # the command is the second argument
        prog += [(_LD_ABS, None, None, 24), (_JEQ, "deny", 0, _F_SETPIPE_SZ), (_RET, 0, 0, _ALLOW)]
    if signals:
        asm.label("signal")
        prog += [(_LD_ABS, None, None, 16), (_JEQ, "allow", 0, 0)]
        OWN_PID_SLOT[kind] = len(prog)
        prog += [(_JEQ, "allow", 0, 0), (_RET, 0, 0, _errno(_EPERM))]


class Libc:
    """libc's namespace, mount, prctl and capability calls (worker and zygote side)."""

    def __init__(self) -> None:
        import ctypes

        self._ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        self.lib.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.unshare.argtypes = [ctypes.c_int]
        self.lib.setns.argtypes = [ctypes.c_int, ctypes.c_int]
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        self.lib.capset.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        # The same calls without argument conversion or errno capture, for the zygote's loop:
        # after each fork every page it writes is copied, and a converting call writes about
        # twice as many (measured: ~19 page faults against ~9). errno is read only on failure.
        self.raw = ctypes.CDLL(None)
        self._errno_location = getattr(self.raw, "__errno_location")  # (not mangled)
        self._errno_location.restype = ctypes.POINTER(ctypes.c_int)
        # capset's arguments (version 3, two 32-bit data words): all zero drops every capability.
        self._cap_header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        self._cap_data = (ctypes.c_uint32 * 6)()
        self.cap_header_address = ctypes.addressof(self._cap_header)
        self.cap_data_address = ctypes.addressof(self._cap_data)

    def seccomp_call(self, address: int) -> tuple[Any, ...]:
        """``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, address)`` as (function, arguments),
        the arguments already C values: a sample calls it without converting anything."""
        c = self._ctypes
        return self.raw.prctl, (
            c.c_int(PR_SET_SECCOMP),
            c.c_ulong(SECCOMP_MODE_FILTER),
            c.c_ulong(address),
            c.c_ulong(0),
            c.c_ulong(0),
        )

    def last_errno(self) -> int:
        """errno as the last call through :attr:`raw` left it (same thread)."""
        return int(self._errno_location()[0])

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            err = self._ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    def unshare(self, flags: int) -> None:
        self._check(self.lib.unshare(flags), "unshare")

    def setns(self, fd: int, nstype: int) -> None:
        self._check(self.lib.setns(fd, nstype), "setns")

    def mount(self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        enc = lambda s: None if s is None else s.encode()  # noqa: E731
        self._check(self.lib.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")

    def filter(self, kind: str, refuse_memfd: bool = False) -> Any:
        """The seccomp program of :func:`seccomp_program` as a ``sock_fprog`` (None if unsupported)."""
        insns = seccomp_program(kind, refuse_memfd)
        if insns is None:
            return None
        ctypes: Any = self._ctypes  # the module, bound in __init__

        class SockFilter(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

        filters = (SockFilter * len(insns))(*[SockFilter(*i) for i in insns])  # type: ignore[operator]
        prog = SockFprog(len(insns), ctypes.cast(filters, ctypes.POINTER(SockFilter)))
        prog._keep = filters
        return prog

    def address(self, obj: Any) -> int:
        """Address of a ctypes object (e.g. the ``prctl(PR_SET_SECCOMP, ...)`` argument)."""
        return int(self._ctypes.addressof(obj))

    def set_name(self, name: bytes) -> None:
        """The process name ``ps`` and ``top`` show (``PR_SET_NAME``)."""
        buf = self._ctypes.create_string_buffer(name[:15])
        self.lib.prctl(PR_SET_NAME, self.address(buf), 0, 0, 0)


PR_GET_DUMPABLE = 3
PR_SET_SECUREBITS = 28
SECBITS_NOROOT = 0x3  # SECBIT_NOROOT | SECBIT_NOROOT_LOCKED


def enter_user_namespace(libc: Libc, inside_uid: int | None = 0, inside_gid: int | None = 0) -> None:
    """Become a process of a new user namespace mapped to this user (unprivileged isolation).

    Args:
        libc: The calls.
        inside_uid: The uid this user has inside (0: root of the namespace; None: the same uid).
        inside_gid: Likewise for the gid.
    """
    uid, gid = os.getuid(), os.getgid()
    libc.unshare(CLONE_NEWUSER)
    inner_uid = uid if inside_uid is None else inside_uid
    inner_gid = gid if inside_gid is None else inside_gid
    for name, text in (("setgroups", "deny"), ("uid_map", f"{inner_uid} {uid} 1"), ("gid_map", f"{inner_gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def mount_points() -> list[tuple[str, list[str]]]:
    """The mount points of this mount namespace with their options (``/proc/self/mountinfo``)."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            parts = line.split()
            point = parts[4].replace("\\040", " ")
            out.append((point, parts[5].split(",")))
    return out


def _locked_flags(opts: Sequence[str]) -> int:
    """The flags a bind remount must repeat from a mount's options (a user namespace locks them)."""
    flags = 0
    for name, bit in MOUNT_OPTION_FLAGS:
        if name in opts:
            flags |= bit
    return flags


def remount_readonly(libc: Libc, skip: Sequence[str] = ()) -> list[str]:
    """Make every mount of this mount namespace read-only (a bind remount repeating the options
    a user namespace locks), except those of ``/proc`` and ``/dev`` and the mount points named
    in ``skip``.

    Returns:
        The mount points that could not be remounted.
    """
    failed = []
    for point, opts in mount_points():
        if point in skip or any(point == s or point.startswith(s + "/") for s in ("/proc", "/dev")):
            continue
        try:
            libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _locked_flags(opts))
        except OSError:
            failed.append(point)
    return failed


def remount_writable(libc: Libc, point: str) -> None:
    """Make the (bind) mount at ``point`` writable again, keeping its locked options; raises
    OSError when refused."""
    opts = [o for p, o in mount_points() if p == point]
    libc.mount(None, point, None, MS_REMOUNT | MS_BIND | _locked_flags(opts[-1] if opts else ()))


def drop_capabilities(libc: Libc) -> None:
    """Give up every capability (of the user namespace) for good: none regained by exec."""
    libc.lib.prctl(PR_SET_SECUREBITS, SECBITS_NOROOT, 0, 0, 0)
    if libc.lib.capset(libc.cap_header_address, libc.cap_data_address) != 0:
        err = libc._ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")
