"""Run untrusted Python in an isolated, resource-limited process with an unforgeable proof of completion.

This module imports only the standard library, and at import time only modules that register
no fork handlers: the warm sandbox workers import it themselves (``python -I -S -c "import
_sandbox; _sandbox._worker_main()"``) and their zygotes fork it once per sample.

Process layout
--------------
The parent (:class:`SandboxPool`) keeps ``N`` warm worker processes (one per CPU by default,
each pinned to a CPU of its own with its zygotes and samples: a sample then runs where the
caches hold the pages it shares with its zygote, and the worker, zygote and sample hand over
to each other without crossing CPUs; measured ~10% less CPU per sample than two unpinned
workers per CPU) and keeps five jobs in flight per worker (two near the end of a batch); the
worker compiles queued programs together and answers a few at a time. It hands jobs out
longest-known-first (durations of earlier runs of the same test), and a job expected to take a
large share of the batch runs at
a higher CPU priority, so that one slow test does not finish alone at the end. A worker starts
with a scrubbed environment and, when it runs as root (as on the evalcore machines), moves
itself once into new network, mount, IPC and UTS namespaces: no network but a loopback that is
down; every mount of the host remounted read-only; private tmpfs on ``/tmp``, ``/var/tmp`` and
``/dev/shm``; empty tmpfs hiding ``/run``, ``/root`` and ``/home`` (the interpreter's own
directories are bound back read-only when they live there); a ``/proc`` mounted with
``hidepid=2``.

The worker never executes untrusted code and never forks a sample itself. Once set up, it
forks its *zygotes* (``evalcore-zygote`` in ``ps``): copies of itself that do nothing but fork
samples, kill them and reap them, one request each over a Unix socket, the sample's pipes
passed with ``SCM_RIGHTS``. After a fork every page of the forking process is copy-on-write;
the worker's bookkeeping (compiling, pipes, ``select``, output) would cost it hundreds of page
faults per sample, a zygote touches a few dozen. Each zygote is PID 1 of a PID namespace of its
own (when it dies, the kernel kills every sample) and holds what all its samples share:
``no_new_privs``, no supplementary groups, the file-size, open-file, process and core limits,
and, for the zygotes that run ``check`` samples, the seccomp filter (another zygote runs
``script`` samples, which may install signal handlers). A lean ``check`` zygote is forked before
the common modules are preloaded, for programs and tests that import nothing: its smaller image
makes every fork and exit cheaper. A zygote dies with its worker.

For every sample its zygote forks a child that is PID 1 of a *new PID namespace*, nested in the
zygote's. The child reads its job (compiled by the worker, in marshal form) from the head of
its standard-input pipe, starts a process group of its own (in the zygote's session, which has
no controlling terminal), closes every inherited file descriptor, works in
the empty directory ``/tmp/sandbox`` (``HOME`` and ``TMPDIR`` point there), applies the job's
``setrlimit`` limits (CPU seconds, address space), drops to an unprivileged uid/gid of its
worker's own (not dumpable, so ``/proc/self/mem`` and ``ptrace`` are closed), then runs the
program. With ``hidepid=2`` and a uid per worker, ``/proc`` shows the sample its own processes
only. When the sample ends, or the wall-clock timeout kills it, the kernel kills everything
else in its PID namespace, daemonized children included; the worker then empties the scratch
tmpfs. Output is read through pipes and truncated. Where namespaces are refused (not root),
the worker falls back to a process group and a temporary directory per sample with the same
rlimits and no network or file-system isolation; the sample then runs as evalcore's own user,
so its audit hook also refuses starting other programs and signalling processes outside its
process group (defence in depth, not a boundary), and a child that leaves the process group
survives the sample; :attr:`SandboxResult.isolation` says which applies.

Proof of completion (threat model)
----------------------------------
The program under test can do anything the interpreter allows: call ``sys.exit(0)``,
``os._exit(0)``, raise ``SystemExit`` or any ``BaseException``, rebind ``check``,
``AssertionError`` or any builtin, monkeypatch modules, print any "passed" text, choose its
exit status, try to kill its parent, install signal handlers, start processes and threads.
None of these produce a pass:

* For every sample the worker draws two random 128-bit nonces from the kernel and hands them
  to the sample's harness with its job, on the sample's standard input, which the harness
  reads to the job's last byte before any untrusted code runs (what the program can still
  read there is its own input). Success counts only when the line ``PASS <nonce>`` arrives on
  a result pipe (write-only in the sample); stdout, stderr and the exit status carry no
  weight, and the only other copy of the nonce is the worker's.
* An audit hook (installed before untrusted code; it cannot be removed) refuses the routes to
  another thread's frames and to raw memory: ``sys._current_frames``, ``gc.get_objects``/
  ``get_referrers``/``get_referents``, every ``ctypes`` event, creating code objects,
  assigning ``__code__``, adding audit hooks.
* ``check`` mode (HumanEval): the hook also refuses every way to obtain a frame
  (``sys._getframe``, ``tb_frame``/``gi_frame``/``cr_frame``/``ag_frame``, ``sys.settrace``,
  ``sys.setprofile``), and a seccomp filter makes ``rt_sigaction`` fail, so no signal handler
  (whose frame argument would be one) can be installed. The success message therefore sits in
  the harness's own frame, below the program, and is written only when the work returned
  normally and only by the sample process itself (a fork that kept the branch where every
  assertion held never reports). Without seccomp the program runs in a second thread,
  :func:`_check_runner`, where signal handlers cannot be installed at all. ``check`` runs in its own namespace (what the prompt alone
  defines, the candidate under its entry-point name, and a pristine copy of the builtins taken
  before the program ran), and the harness verifies that the ``check`` it calls is the one
  compiled from the test source. After the program starts, the runner uses only values bound
  before it started, so nothing the program rebinds is called while the message exists.
* ``script`` mode (:func:`run_python`): the program runs in the main thread with its frames,
  signals and threads available; the success message lives only in a watcher thread
  (:func:`_watch`) that the program cannot reach, and is written only if :func:`_runner`'s
  frame stopped on its final instruction (offset calibrated when the worker starts).

Not covered: a candidate may return objects with rigged comparison methods, or monkeypatch a
standard-library module that the test also uses (``math``); that changes what ``check``
computes, not whether it completed. CPython is not memory-safe against hand-crafted bytecode
(e.g. via ``marshal``); a program that corrupts the interpreter could forge the proof, but
it still runs inside the OS isolation above. In ``check`` mode, programs cannot use frame
introspection (``logging`` still works) and signal handlers; in ``script`` mode they can.
"""

from __future__ import annotations

# The worker imports this module: only modules that register no fork handlers (threading,
# random, tempfile, subprocess and queue do, and would run in every forked sample) are
# imported here; the parent-side code imports those lazily.
import builtins
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
import types
import _socket
import _thread
# typing is not imported at run time: the lean zygote (see _Worker) is forked before it is.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

if TYPE_CHECKING:
    # The class is made on first use (see _result_class); this name serves type checkers.
    SandboxResult = Any

__all__ = ["SandboxResult", "SandboxPool", "run_python", "run_jobs", "get_pool", "shutdown_pool"]

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
# Jobs handed to a worker ahead: it never waits for the parent between samples, and compiles
# the queued programs together; near the end of a batch, two (the last jobs spread evenly).
_IN_FLIGHT = 5
_IN_FLIGHT_TAIL = 2
_REPLY_BATCH = 4
_REPLY_HOLD_S = 0.02
_WORKDIR_NAME = os.path.basename(_WORKDIR)
_TMPFS_EMPTY_DIR, _TMPFS_DIRENT = 40, 20  # tmpfs directory sizes: empty, and per entry

# Linux constants (sched.h, mount.h, prctl.h).
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SIGKILL = int(signal.SIGKILL)

# Audit events refused once untrusted code runs (both modes).
_BLOCKED_ALWAYS = frozenset(
    {
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "code.__new__",
        "sys.addaudithook",
    }
)
# Additionally refused in ``check`` mode: frame introspection and tracing.
_BLOCKED_CHECK = _BLOCKED_ALWAYS | frozenset({"sys.settrace", "sys.setprofile", "sys._getframemodulename"})


def _define_result_class() -> type:
    # Defined on first use: the worker processes never need it (nor the dataclasses import).
    from dataclasses import dataclass, field

    @dataclass
    class SandboxResult:
        """Outcome of one sandboxed program.

        Attributes:
            completed: True only if the program ran to its end (``run_python``) or ``check``
                returned normally (``check`` mode), proven through the per-run nonce.
            timed_out: The wall-clock timeout fired and everything the program started was killed.
            returncode: Exit status of the program's process (negative: killed by that signal).
            stdout: Captured standard output (truncated to the output limit).
            stderr: Captured standard error (truncated).
            duration_s: Wall-clock seconds from fork to the end of the process.
            reason: Why the program did not complete (exception, exit, timeout), or None.
            isolation: What the sandbox isolated on this machine (see module docstring).
        """

        completed: bool
        timed_out: bool
        returncode: int | None
        stdout: str
        stderr: str
        duration_s: float
        reason: str | None = None
        isolation: dict[str, Any] = field(default_factory=dict)

    SandboxResult.__qualname__ = "SandboxResult"
    return SandboxResult


def _result_class() -> type:
    cls = globals().get("SandboxResult")
    if cls is None:
        cls = globals()["SandboxResult"] = _define_result_class()
    return cls


def __getattr__(name: str) -> Any:
    if name == "SandboxResult":
        return _result_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# Linux system calls through ctypes (worker side only; Python 3.11 has no os.unshare/mount).
# --------------------------------------------------------------------------------------------


class _Libc:
    def __init__(self) -> None:
        import ctypes

        self._ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        self.lib.unshare.argtypes = [ctypes.c_int]
        self.lib.setns.argtypes = [ctypes.c_int, ctypes.c_int]
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        # The same calls without argument conversion or errno capture, for the zygote's loop:
        # after each fork every page it writes is copied, and a converting call writes about
        # twice as many (measured: ~19 page faults against ~9). errno is read only on failure.
        self.raw = ctypes.CDLL(None)
        self._errno_location = getattr(self.raw, "__errno_location")  # (not mangled)
        self._errno_location.restype = ctypes.POINTER(ctypes.c_int)

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

    def signal_filter(self) -> Any:
        """A seccomp program making ``rt_sigaction`` fail with EPERM (None if unsupported).

        With it, a program cannot install signal handlers, whose frame argument would be a
        route to the harness's frames.
        """
        arch = {"x86_64": (0xC000003E, 13), "aarch64": (0xC00000B7, 134)}.get(os.uname().machine)
        if arch is None:
            return None
        audit_arch, nr_rt_sigaction = arch
        ctypes = self._ctypes

        class SockFilter(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

        ld_abs, jeq_k, ret_k = 0x20, 0x15, 0x06
        allow, errno_eperm = 0x7FFF0000, 0x00050000 | 1
        insns = [
            (ld_abs, 0, 0, 4),  # seccomp_data.arch
            (jeq_k, 1, 0, audit_arch),
            (ret_k, 0, 0, allow),  # another ABI: not reachable from Python
            (ld_abs, 0, 0, 0),  # seccomp_data.nr
            (jeq_k, 0, 1, nr_rt_sigaction),
            (ret_k, 0, 0, errno_eperm),
            (ret_k, 0, 0, allow),
        ]
        filters = (SockFilter * len(insns))(*[SockFilter(*i) for i in insns])
        prog = SockFprog(len(insns), ctypes.cast(filters, ctypes.POINTER(SockFilter)))
        prog._keep = filters  # type: ignore[attr-defined]
        return prog

    def address(self, prog: Any) -> int:
        """Address of a seccomp program (the ``prctl(PR_SET_SECCOMP, ...)`` argument)."""
        return int(self._ctypes.addressof(prog))


# --------------------------------------------------------------------------------------------
# Code that runs inside the sample process (after isolation is set up).
# --------------------------------------------------------------------------------------------


def _runner(getframe: Callable[[], Any], start_watch: Callable[[Any], None], install_hook: Callable[[], None], work: Callable[[], Any]) -> bool:
    """Run the untrusted work; this frame's final instruction is the proof witness."""
    start_watch(getframe())
    install_hook()
    work()
    return True


def _watch(
    body: bytes,
    write: Callable[[int, bytes], int],
    fd: int,
    exit_: Callable[[int], None],
    wait_done: Callable[[], bool],
    release_back: Callable[[], None],
    frame: Any,
    lasti_true: int,
) -> None:
    """The watcher thread: the only holder of the success message.

    Everything it uses arrives as an argument (no global or builtin lookup the program could
    patch), it allocates no container (no garbage collection, hence no finalizer of the
    program's objects, can run on its stack) and it calls nothing the program defined.
    """
    msg = b"\nPASS " + body + b"\n"
    body = b""
    wait_done()
    if frame.f_lasti == lasti_true:
        write(fd, msg)
        exit_(0)
    msg = b""
    release_back()


def _check_runner(
    msg: bytes,
    fail_prefix: bytes,
    write: Callable[[int, bytes], int],
    fd: int,
    exit_: Callable[[int], None],
    encode: Callable[..., bytes],
    type_: type,
    str_: type,
    list_: type,
    base: type,
    fn: Callable[..., None],
    args: tuple,
    getpid: Callable[[], int],
    pid: int,
) -> None:
    """Thread that runs the untrusted ``check`` work and reports (check mode).

    The success message sits in this frame's locals while the program runs deeper on the
    same stack: in check mode the audit hook refuses every route to a frame, and signal
    handlers (whose frame argument would be one) cannot be installed off the main thread.
    Everything used after the program started arrives as an argument, so nothing the program
    rebinds (builtins, module globals) is called while the message exists. Only the sample
    process itself reports: forks of it inherit this frame but never the right pid.
    """
    try:
        fn(*args)
    except base:  # noqa: BLE001 - any way out but a normal return is a failure
        msg = b""
    else:
        # Only the sample process itself: a fork of it (e.g. one branch per possible answer,
        # the wrong ones dying on assertions) never reports a pass.
        if getpid() == pid:
            write(fd, msg)
            exit_(0)
        msg = b""
    for item in list_(args[2]):
        if type_(item) is str_:
            write(fd, fail_prefix + encode(item, "utf-8", "replace") + b"\n")
    exit_(1)


def _describe(exc: BaseException) -> str:
    """Short, plain-``str`` description of an exception (runs in the untrusted thread)."""
    try:
        name = str(type.__getattribute__(type(exc), "__name__"))
    except BaseException:  # noqa: BLE001
        name = "exception"
    try:
        msg = str(exc)
    except BaseException:  # noqa: BLE001
        msg = ""
    text = f"{name}: {msg}" if msg else name
    return str(text[:500])


# The builtins as they are before any program ran: copied once in the worker and inherited by
# every sample (a fork), so ``check`` gets them without a copy per sample.
_PRISTINE_BUILTINS: dict | None = None

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes defined in Python code


def _plain_data_checker() -> Callable[[Any], None]:
    """A checker refusing values (at any depth of builtin containers) of Python-written classes.

    A candidate's answer must be plain data: an object with a rigged ``__eq__`` (or
    ``__len__``, ``__iter__``, ...) would otherwise make every assertion of ``check`` hold.
    Classes written in C (builtins, numpy scalars) cannot be defined by the program. The
    checker is a closure made before the program runs, over builtins bound at that moment,
    and is reachable only from the wrapper that calls it.
    """
    type_, dict_, containers, heap = type, dict, (list, tuple, set, frozenset), _HEAPTYPE
    type_error = TypeError

    def check(value: Any, depth: int = 0) -> None:
        cls = type_(value)
        if cls.__flags__ & heap:
            raise type_error(f"the candidate returned an instance of the Python class {cls.__name__!r}")
        if depth >= 50:
            return
        if cls in containers:
            for item in value:
                check(item, depth + 1)
        elif cls is dict_:
            for key, item in value.items():
                check(key, depth + 1)
                check(item, depth + 1)

    return check


# Compiled prompts and tests, keyed by their text: many samples of one task share them. Code
# objects are immutable and each sample gets them through its own fork, so sharing is safe.
_SHARED_CODE: dict[tuple[str, str], types.CodeType] = {}
_SHARED_CODE_MAX = 1024


def _compile_shared(text: str, filename: str) -> types.CodeType:
    """``compile(text, filename, "exec")``, remembered across the worker's samples."""
    key = (text, filename)
    code = _SHARED_CODE.get(key)
    if code is None:
        code = compile(text, filename, "exec")
        if len(_SHARED_CODE) >= _SHARED_CODE_MAX:
            _SHARED_CODE.clear()
        _SHARED_CODE[key] = code
    return code


def _shared_code(job: dict, key: str, filename: str) -> types.CodeType:
    """The job's prompt or test as code: from the parent's compiled form, else compiled here."""
    blob = job.get(f"_{key}_code")
    if type(blob) is bytes:
        code = marshal.loads(blob)
        if type(code) is types.CodeType:
            return code
    return _compile_shared(job.get(key, ""), filename)


def _imports(job: dict) -> bool:
    """Whether a job's program or test may import a module (then its sample starts from the
    zygote with the common modules preloaded; any mention of ``import`` counts)."""
    return "import" in job.get("source", "") or "import" in job.get("test", "")


def _compile_check_job(job: dict) -> tuple | BaseException:
    """Compile program, prompt and test (done by the worker, before the fork).

    The program (prompt + completion, untrusted) is compiled for every sample, here. The
    prompt and the test come from the problem set, which all samples of a task share: the
    parent compiles them once per process and sends them along (:func:`_attach_shared_code`);
    without that they are compiled once per worker (:func:`_compile_shared`).
    """
    try:
        return (
            compile(job["source"], "<program>", "exec"),
            _shared_code(job, "prompt", "<prompt>"),
            _shared_code(job, "test", "<test>"),
        )
    except Exception as exc:  # noqa: BLE001 - SyntaxError, ValueError (NUL bytes), RecursionError ...
        return exc


# Parent side: the problem set's prompts and tests in marshal form, keyed by their text.
_PARENT_CODE: dict[tuple[str, str], bytes | None] = {}


def _attach_shared_code(job: dict) -> dict:
    """A ``check`` job with its prompt and test compiled (parent side, remembered by text).

    They are the problem set's text, not the completion under test: compiling them here once
    saves every worker compiling them again (a worker that has not seen a task yet would,
    for each of its samples). Text that does not compile is left to the worker, which
    reports the error as before.
    """
    if job.get("mode") != "check":
        return job
    extra = {}
    for key, filename in (("prompt", "<prompt>"), ("test", "<test>")):
        text = job.get(key)
        if not isinstance(text, str):
            continue
        cache_key = (text, filename)
        if cache_key not in _PARENT_CODE:
            if len(_PARENT_CODE) >= _SHARED_CODE_MAX:
                _PARENT_CODE.clear()
            try:
                _PARENT_CODE[cache_key] = marshal.dumps(compile(text, filename, "exec"))
            except Exception:  # noqa: BLE001 - the worker compiles it again and reports the error
                _PARENT_CODE[cache_key] = None
        blob = _PARENT_CODE[cache_key]
        if blob is not None:
            extra[f"_{key}_code"] = blob
    return dict(job, **extra) if extra else job


def _check_work(job: dict, pristine: dict, box: list, flush: Callable[[], None]) -> None:
    """Execute prompt+completion, then the test, then ``check(candidate)`` (untrusted thread).

    The test does not share the program's globals: it runs in a namespace holding only what
    the *prompt* defines (executed on its own), the candidate under its entry-point name, and
    a pristine copy of the builtins, so the completion cannot shadow ``abs``, ``check`` or the
    prompt's helpers for the test.
    """
    exec_, type_ = exec, type
    functype, codetype = types.FunctionType, types.CodeType
    describe, require_plain = _describe, _plain_data_checker()
    try:
        codes = job.get("_codes")
        if codes is None:
            codes = _compile_check_job(job)
        if type_(codes) is not tuple:
            raise codes  # the compile error found by the worker
        program, prompt, test = codes
        entry = job["entry_point"]
        check_code = None
        for const in test.co_consts:
            if type_(const) is codetype and const.co_name == "check":
                check_code = const
        if check_code is None:
            raise RuntimeError("the test defines no check function")
        g: dict = {"__name__": "__main__", "__builtins__": builtins}
        exec_(program, g)
        if entry not in g:
            raise NameError(f"entry point {entry!r} is not defined")
        program_candidate = g[entry]

        def candidate(*args: Any, **kwargs: Any) -> Any:
            result = program_candidate(*args, **kwargs)
            require_plain(result)
            return result

        t: dict = {"__name__": "__test__", "__builtins__": pristine}
        exec_(prompt, t)
        t[entry] = candidate  # some tests name the function directly (HumanEval/33)
        exec_(test, t)
        check = t.get("check")
        if type_(check) is not functype or check.__code__ is not check_code:
            raise RuntimeError("check was redefined")
        check(candidate)
    except BaseException as exc:  # noqa: BLE001
        box.append(describe(exc))
        raise
    finally:
        flush()


def _script_work(job: dict, box: list, flush: Callable[[], None], excepthook: Callable[..., Any]) -> None:
    """Execute a whole program as ``__main__`` (untrusted thread)."""
    exec_, compile_, type_, int_ = exec, compile, type, int
    try:
        code = compile_(job["source"], "<program>", "exec")
        g: dict = {"__name__": "__main__", "__builtins__": builtins}
        exec_(code, g)
    except SystemExit as exc:
        status = exc.code
        if status is None:
            box.append(0)
        elif type_(status) is int_:
            box.append(int_(status))
        else:
            try:
                sys.stderr.write(f"{status}\n")
            except BaseException:  # noqa: BLE001
                pass
            box.append(1)
        box.append(f"SystemExit: {status!s}"[:500] if status is not None else "SystemExit")
        raise
    except BaseException as exc:  # noqa: BLE001
        try:
            excepthook(type(exc), exc, exc.__traceback__)
        except BaseException:  # noqa: BLE001
            pass
        box.append(1)
        box.append(_describe(exc))
        raise
    finally:
        flush()


# Without namespaces the sample runs as evalcore's own user: the hook then also refuses
# starting other programs and signalling processes outside the sample's own process group, so
# that a stray ``os.kill(-1, 9)`` does not end the user's session. Defence in depth only (the
# README says what the fallback does not isolate).
_CONFINED_EVENTS = frozenset(
    {"os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile", "subprocess.Popen", "pty.spawn"}
)


def _make_audit_hook(blocked: frozenset, blocked_attrs: bool, group: int = 0) -> Callable[[str, tuple], None]:
    """The audit hook of a sample; ``group`` (the sample's process group) confines it (fallback)."""
    getpgid, error, confined = os.getpgid, OSError, _CONFINED_EVENTS  # bound now: the program may patch globals

    def hook(event: str, args: tuple) -> None:
        if event in blocked or event[:7] == "ctypes.":
            raise RuntimeError(f"evalcore sandbox: {event} is not permitted")
        if group:
            if event in confined:
                raise RuntimeError(f"evalcore sandbox: {event} is not permitted without namespaces")
            if event == "os.kill" or event == "os.killpg":
                target = args[0] if args else -1
                if event == "os.kill" and target > 0:
                    try:
                        ok = getpgid(target) == group
                    except error:
                        ok = True  # no such process: let the call fail on its own
                else:
                    ok = target == 0 or target == group or target == -group
                if not ok:
                    raise PermissionError(f"evalcore sandbox: signalling {target} is not permitted without namespaces")
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            raise RuntimeError("evalcore sandbox: assigning __code__ is not permitted")
        if blocked_attrs:
            if event == "sys._getframe":
                # ValueError: what callers such as namedtuple/TypeVar expect when frames are absent.
                raise ValueError("evalcore sandbox: frame introspection is not permitted")
            if event == "object.__getattr__" and len(args) > 1 and args[1] != "__code__":
                raise RuntimeError(f"evalcore sandbox: reading {args[1]} is not permitted")

    return hook


def _sample_main(job: dict, result_fd: int, lasti_true: int, no_signal_handlers: bool = False) -> None:
    """Trusted harness of the sample process; never returns.

    Its two nonces (drawn from the kernel by the worker for this sample alone) came with the
    job, read from standard input to the job's last byte before any untrusted code runs; the
    harness takes them out of the job, so they live only in its own locals and the worker.

    ``check`` mode: the program cannot obtain any frame (the audit hook refuses every route,
    and a seccomp filter makes the kernel refuse signal handlers, whose frame argument would
    be one), so the success message sits in this function's locals and is written only when
    :func:`_check_work` returned normally, by the sample process itself (not a fork). Where
    seccomp is unavailable the program runs in a second thread (:func:`_check_runner`) instead:
    off the main thread, signal handlers cannot be installed at all.

    ``script`` mode: frames and signals stay available to the program, so the success message
    lives only in the watcher thread (:func:`_watch`), which writes it only if
    :func:`_runner`'s frame ended on its final instruction.
    """
    write = os.write
    raw = job.pop("_nonces")  # two 128-bit nonces, 32 hex digits each
    holder = [raw[:32]]
    fail_prefix = b"\nFAIL " + raw[32:] + b" "
    del raw
    check_mode = job["mode"] == "check"
    pristine = _PRISTINE_BUILTINS if _PRISTINE_BUILTINS is not None else dict(builtins.__dict__)
    base_exception = BaseException
    out, err = sys.stdout, sys.stderr
    out_flush, err_flush = type(out).flush, type(err).flush

    def flush() -> None:
        for stream, fl in ((out, out_flush), (err, err_flush)):
            try:
                fl(stream)
            except BaseException:  # noqa: BLE001
                pass

    box: list = []
    type_, str_, int_, encode, exit_ = type, str, int, str.encode, os._exit
    if check_mode and no_signal_handlers:
        # The kernel refuses signal handlers (seccomp), so the program cannot obtain a frame
        # by any route: it runs on this thread, below the success message.
        msg = b"\nPASS " + holder.pop() + b"\n"
        getpid, pid = os.getpid, os.getpid()
        check_work = _check_work
        sys.addaudithook(_make_audit_hook(_BLOCKED_CHECK, True, job.get("_group", 0)))
        # ---- untrusted code runs from here on; only locals are used below ----
        try:
            check_work(job, pristine, box, flush)
        except base_exception:  # noqa: BLE001
            msg = b""
        else:
            if getpid() == pid:  # never from a fork of the sample
                write(result_fd, msg)
                exit_(0)
            msg = b""
        for item in list(box):
            if type_(item) is str_:
                write(result_fd, fail_prefix + encode(item, "utf-8", "replace") + b"\n")
        exit_(1)
    if check_mode:
        sys.addaudithook(_make_audit_hook(_BLOCKED_CHECK, True, job.get("_group", 0)))
        args = (
            b"\nPASS " + holder.pop() + b"\n", fail_prefix, write, result_fd, exit_, encode,
            type_, str_, list, base_exception, _check_work, (job, pristine, box, flush),
            os.getpid, os.getpid(),
        )
        _thread.start_new_thread(_check_runner, args)
        del args
        # The runner thread ends the process; this thread only parks (no untrusted code ever
        # runs on it, and none can: signal handlers cannot be installed from the runner).
        park = _thread.allocate_lock()
        park.acquire()
        park.acquire()

    done = _thread.allocate_lock()
    done.acquire()
    back = _thread.allocate_lock()
    back.acquire()

    def start_watch(frame: Any) -> None:
        args = (holder.pop(), write, result_fd, os._exit, done.acquire, back.release, frame, lasti_true)
        _thread.start_new_thread(_watch, args)

    work = lambda: _script_work(job, box, flush, sys.__excepthook__)  # noqa: E731
    hook = _make_audit_hook(_BLOCKED_ALWAYS, False, job.get("_group", 0))
    try:
        _runner(sys._getframe, start_watch, lambda: sys.addaudithook(hook), work)
        if not check_mode:
            # Like the interpreter at exit: wait for the program's non-daemon threads.
            threading_module = sys.modules.get("threading")
            if threading_module is not None:
                threading_module._shutdown()
            flush()
    except base_exception:  # noqa: BLE001 - the reason is in ``box``
        pass
    # Nothing secret is left on this thread: hand over to the watcher.
    try:
        done.release()
    except RuntimeError:
        pass
    back.acquire()  # the watcher found no normal return (it exits the process otherwise)
    code = 1
    for item in list(box):
        if type_(item) is str_:
            write(result_fd, fail_prefix + encode(item, "utf-8", "replace") + b"\n")
        elif type_(item) is int_ and 0 <= item < 256:
            code = int_(item)
    exit_(code)


def _calibrate() -> tuple[int, int]:
    """Offsets of ``_runner``'s frame after a normal return and after an exception."""

    def once(work: Callable[[], None]) -> int:
        frames: list = []
        try:
            _runner(sys._getframe, frames.append, lambda: None, work)
        except BaseException:  # noqa: BLE001
            pass
        return int(frames[0].f_lasti)

    def fail() -> None:
        raise SystemExit(0)

    good, bad = once(lambda: None), once(fail)
    if good == bad:
        raise RuntimeError("cannot tell a normal return from an exception in this interpreter")
    return good, bad


# --------------------------------------------------------------------------------------------
# The worker process.
# --------------------------------------------------------------------------------------------


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _send(fd: int, obj: Any) -> None:
    _send_many(fd, [obj])


def _send_many(fd: int, objs: list) -> None:
    """Send each of ``objs`` (length-prefixed marshal) in one write, then empty the list.

    Both ends are evalcore's own code; samples never see these pipes.
    """
    if not objs:
        return
    frames = []
    for obj in objs:
        data = marshal.dumps(obj)
        frames.append(struct.pack("!I", len(data)))
        frames.append(data)
    view = memoryview(b"".join(frames))
    while view:
        n = os.write(fd, view)
        view = view[n:]
    objs.clear()


def _recv(fd: int) -> Any | None:
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (size,) = struct.unpack("!I", head)
    body = _read_exact(fd, size)
    return None if body is None else marshal.loads(body)


class _Worker:
    """State of one worker process (runs in the worker)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.uid = 100000 + os.getpid()
        self.is_root = os.geteuid() == 0
        self.libc: _Libc | None = None
        self.namespaces = False
        self.notes: list[str] = []
        self.readonly_ok = False
        try:
            self.libc = _Libc()
        except (OSError, AttributeError) as exc:
            self.notes.append(f"libc unavailable: {exc}")
            self.libc = None
        self.lasti_true, _ = _calibrate()
        self._workdir_ready = False
        self._fresh_tmpfs: set[str] = set()  # scratch directories that are tmpfs mounts of ours
        self.signal_filter = None
        if self.libc is not None:
            try:
                self.signal_filter = self.libc.signal_filter()
            except (OSError, AttributeError, ValueError) as exc:
                self.notes.append(f"no seccomp signal filter: {exc}")
        # What each sample's set-up calls, bound once here (samples inherit them).
        self.prctl = self.libc.lib.prctl if self.libc is not None else None
        self.filter_address = self.libc.address(self.signal_filter) if self.signal_filter is not None else 0
        self._env_workdir: str | None = None
        if self.is_root and self.libc is not None and sys.platform.startswith("linux"):
            try:
                self._enter_namespaces()
                self.namespaces = True
            except OSError as exc:
                self.notes.append(f"namespaces refused: {exc}")
        elif not self.is_root:
            self.notes.append("not running as root: no namespaces, no uid switch")
        if self.namespaces:
            _scrub_environment(_WORKDIR)
            self._env_workdir = _WORKDIR
        global _PRISTINE_BUILTINS
        _PRISTINE_BUILTINS = dict(builtins.__dict__)
        # Where fs.suid_dumpable is 0, the uid switch alone makes a sample non-dumpable.
        try:
            with open("/proc/sys/fs/suid_dumpable") as fh:
                self.set_dumpable = fh.read().strip() != "0"
        except OSError:
            self.set_dumpable = True
        self.seccomp_active = False
        # The lean zygote: forked before the modules below are imported, it forks the ``check``
        # samples whose program and test import nothing (most HumanEval tasks). Its image is
        # ≈1 MB smaller, and every fork copies, and every exit tears down, each resident page.
        self._lean: tuple[Any, int] | None = None
        if self.filter_address:
            self._lean = self._fork_zygote(True)
        # Pre-import what programs commonly import, so samples forked after this start warm.
        for name in _PRELOAD:
            try:
                __import__(name)
            except ImportError:
                pass
        self._set_name(b"evalcore-worker")
        self._start_zygotes()

    def _release_free_memory(self) -> None:
        """Give the C heap's free pages back before the zygotes are forked.

        Every fork copies the page-table entries of every resident page, and every exit tears
        them down again (≈0.15 µs per page per sample on the evalcore machines). Start-up
        garbage would otherwise ride along in every sample: compiling this module from source
        (no usable ``.pyc``, e.g. in a fresh checkout) leaves ≈3 MB of freed but resident heap,
        ≈60% more than the zygote's ≈5.5 MB. ``malloc_trim`` is glibc's; elsewhere this does
        nothing.
        """
        if self.libc is None:
            return
        try:
            self.libc.lib.malloc_trim(0)
        except (AttributeError, OSError):
            pass

    def _enter_namespaces(self) -> None:
        libc = self.libc
        assert libc is not None
        libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS)
        libc.mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        # Samples get a new PID namespace each; this handle resets the namespace of the
        # worker's next child after each fork.
        self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        # The interpreter and evalcore must stay reachable even when they live under a hidden
        # directory (e.g. pyenv in /root): they are bound back, read-only, into the tmpfs.
        keep = {
            os.path.realpath(p)
            for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(__file__)))
        }
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
            for name, bit in (("nosuid", _MS_NOSUID), ("nodev", _MS_NODEV), ("noexec", _MS_NOEXEC)):
                if name in opts:
                    flags |= bit
            try:
                libc.mount(None, point, None, flags)
            except OSError:
                failed.append(point)
        self.readonly_ok = "/" not in failed
        if failed:
            self.notes.append("could not remount read-only: " + ", ".join(failed))
        for d in _HIDDEN_DIRS:
            if not os.path.isdir(d) or os.path.islink(d) or any(k == d or d.startswith(k + "/") for k in keep):
                continue
            inside = sorted(k for k in keep if k.startswith(d + "/"))
            handles = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in inside]
            libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=0755")
            if not inside:
                self._fresh_tmpfs.add(d)
            for k, fd in handles:
                os.makedirs(k, mode=0o755, exist_ok=True)
                libc.mount(f"/proc/self/fd/{fd}", k, None, _MS_BIND | _MS_REC)
                libc.mount(None, k, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
                os.close(fd)
        for d in _SCRATCH_DIRS:
            if os.path.isdir(d) and not os.path.islink(d):
                if d not in _HIDDEN_DIRS:
                    libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=64m,mode=1777")
                    self._fresh_tmpfs.add(d)
                os.chmod(d, 0o1777)
        # A /proc that shows a process only to its own uid: each worker's samples run under
        # a uid of their own, so they see their own processes and nothing else.
        libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hidepid=2")

    def isolation(self) -> dict[str, Any]:
        ns = self.namespaces
        return {
            "namespaces": ns,
            "network": "new network namespace, loopback down: no network" if ns else "not isolated",
            "pid": (
                "new PID namespace per sample; /proc shows only the sample's own processes"
                if ns
                else "own process group per sample"
            ),
            "filesystem": (
                "read-only view of the host; private tmpfs /tmp, /var/tmp, /dev/shm wiped after "
                "every sample; /run, /root, /home hidden"
                if ns and self.readonly_ok
                else "temporary working directory only; the rest of the file system is reachable"
            ),
            "user": f"unprivileged uid {self.uid}" if self.is_root else f"same user as evalcore (uid {os.getuid()})",
            "uid": self.uid if self.is_root else os.getuid(),
            "environment": "scrubbed (PATH, HOME, TMPDIR, LANG only)",
            "rlimits": ["cpu", "address_space", "file_size", "nproc", "nofile", "core"],
            "kill_on_timeout": "whole PID namespace" if ns else "process group",
            "seccomp_no_signal_handlers": self.signal_filter is not None,
            "notes": list(self.notes),
        }

    # ---------------------------------------------------------------- the zygote

    def _start_zygotes(self) -> None:
        """Fork the zygotes: the processes that fork every sample, and do nothing else.

        After a fork every page of the forking process is copy-on-write, and each page it
        then writes costs it a page fault (several microseconds on a virtual machine). The
        worker's bookkeeping (pipes, ``select``, reading output, compiling, the protocol)
        touches hundreds of pages per sample; a zygote touches a few dozen. The zygotes are
        forked once, after the worker set up the namespaces and preloaded modules, so samples
        start from the same warm interpreter; the worker itself never forks a sample.

        Two zygotes where seccomp is available: one with the signal-handler filter installed
        for ``check`` samples (they inherit it instead of compiling it each), one without for
        ``script`` samples, which may install signal handlers; plus the lean ``check`` zygote
        forked earlier (see ``__init__``). With namespaces each zygote is PID 1 of a PID
        namespace of its own: when it dies, the kernel kills every sample.
        """
        self._zygotes: dict[bool, tuple[Any, int]] = {}
        kinds = (False, True) if self.filter_address else (False,)
        for seccomp in kinds:
            self._zygotes[seccomp] = self._fork_zygote(seccomp)
        self.zygote_pids = [pid for _sock, pid in self._zygotes.values()]
        if self._lean is not None:
            self.zygote_pids.append(self._lean[1])

    def _fork_zygote(self, seccomp: bool) -> tuple[Any, int]:
        gc.collect()
        gc.freeze()  # forked samples then leave the worker's objects (and their pages) alone
        self._release_free_memory()
        mine, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        keep = {theirs.fileno()}
        if self.namespaces:
            self.libc.unshare(_CLONE_NEWPID)  # type: ignore[union-attr]
        try:
            pid = os.fork()
        except BaseException:
            if self.namespaces:
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
                self._zygote_setup(seccomp)
                gc.collect()
                gc.freeze()
                _zygote_loop(self, theirs)
            finally:
                os._exit(0)
        if self.namespaces:
            self.libc.setns(self.own_pidns, _CLONE_NEWPID)  # type: ignore[union-attr]
        theirs.close()
        return mine, pid

    def _set_name(self, name: bytes) -> None:
        """The process name ``ps`` and ``top`` show (``PR_SET_NAME``; samples keep their zygote's)."""
        if self.libc is not None:
            buf = self.libc._ctypes.create_string_buffer(name[:15])
            self.libc.lib.prctl(_PR_SET_NAME, self.libc.address(buf), 0, 0, 0)

    def _zygote_setup(self, seccomp: bool) -> None:
        """What every sample inherits instead of setting it up itself (zygote side)."""
        self._set_name(b"evalcore-zygote")
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
            if seccomp and self.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.filter_address, 0, 0) == 0:
                self.seccomp_active = True
        if self.is_root:
            os.setgroups([])  # the zygote stays root; samples inherit no supplementary groups
        for which, value in _FIXED_RLIMITS + (_ROOT_RLIMITS if self.is_root else ()):  # root ignores NPROC
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
        """What the sample reads from its standard input before the program runs.

        A 4-byte length, then the job in marshal form with the check code compiled here
        (program per sample, prompt and test once per worker, see :func:`_compile_check_job`),
        then the program's own standard input. A compile error is left for the sample to find
        again, so it is reported exactly as before.
        """
        child = {key: job[key] for key in _CHILD_KEYS if key in job}
        child["_workdir"] = workdir
        child["_nonces"] = nonces
        child["_limits"] = self._rlimits(job)  # computed here: fewer pages for the sample to touch
        if job.get("mode") == "check":
            codes = job["_compiled"] if "_compiled" in job else _compile_check_job(job)
            if type(codes) is tuple:
                child["_codes"] = codes
                for key in ("source", "prompt", "test"):
                    child.pop(key, None)
        data = marshal.dumps(child)
        return struct.pack("!I", len(data)) + data + stdin_data

    def run(self, job: dict) -> dict:
        timeout = float(job.get("timeout_s", 10.0))
        max_out = int(job.get("max_output", DEFAULT_MAX_OUTPUT))
        stdin_data = (job.get("stdin") or "").encode()
        tmpdir = None
        if self.namespaces:
            workdir = _WORKDIR
            if not self._workdir_ready:
                os.mkdir(_WORKDIR, 0o700)
                os.chown(_WORKDIR, self.uid, self.uid)
                self._workdir_ready = True
        else:
            import tempfile

            tmpdir = workdir = tempfile.mkdtemp(prefix="evalcore-sandbox-")
            if self.is_root:
                os.chown(tmpdir, self.uid, self.uid)
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
        zygote = self._zygotes[bool(job.get("mode") == "check" and job.get("_seccomp", True) and True in self._zygotes)]
        if self._lean is not None and zygote is self._zygotes.get(True) and not _imports(job):
            zygote = self._lean
        start = time.monotonic()
        # With namespaces nothing here needs the sample's PID (the zygote kills and reaps its
        # current sample), so the fork is not answered: a failed one shows as pipes closed at
        # once and is reported by the reap (W). Without them the PID is needed for a pidfd.
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
            for fd in (out_r, err_r, res_r, *pending):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise OSError(err, f"fork: {os.strerror(err)}")
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
                room = max_out - len(bufs[fd]) if fd in (out_r, err_r) else 1 << 20
                bufs[fd] += chunk[:room]
                dropped[fd] += max(0, len(chunk) - room)
            if exited and killed_at is None:
                # The sample ended: what it left running dies now; drain for 0.2 s.
                self._kill(zygote)
                killed_at = time.monotonic() - 1.8
        if held:  # the drain ended first (streams held open in the fallback): what is there now
            os.set_blocking(res_r, False)
            try:
                while len(bufs[res_r]) < 1 << 20 and (chunk := os.read(res_r, 65536)):
                    bufs[res_r] += chunk
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

    def _wipe_scratch(self) -> None:
        """Empty the worker-private tmpfs scratch directories after a sample.

        The empty working directory is kept for the next sample when the sample left it
        exactly as it found it (same owner and mode, no entries); anything else is removed.
        """
        for d in _SCRATCH_DIRS:
            if d in self._fresh_tmpfs and self._tmpfs_clean(d):
                continue
            try:
                names = os.listdir(d)
            except OSError:
                continue
            if not names:
                continue
            if d == "/tmp" and self._workdir_ready and names == [_WORKDIR_NAME]:
                try:
                    st = os.lstat(_WORKDIR)
                    if st.st_uid == self.uid and st.st_mode == 0o40700 and not os.listdir(_WORKDIR):
                        continue
                except OSError:
                    pass
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

    def _tmpfs_clean(self, d: str) -> bool:
        """Whether a tmpfs scratch directory is as a sample found it, read from sizes alone.

        On tmpfs a directory's size is 40 bytes plus 20 per entry, so one ``stat`` tells an
        empty directory (or ``/tmp`` holding nothing but the untouched working directory)
        without listing it.
        """
        try:
            size = os.stat(d).st_size
            if size == _TMPFS_EMPTY_DIR:
                return True
            if d != "/tmp" or not self._workdir_ready or size != _TMPFS_EMPTY_DIR + _TMPFS_DIRENT:
                return False
            st = os.lstat(_WORKDIR)  # the one entry is the working directory, still pristine
            return st.st_uid == self.uid and st.st_mode == 0o40700 and st.st_size == _TMPFS_EMPTY_DIR
        except OSError:
            return False

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
        if not self.namespaces:
            job["_group"] = os.getpgid(0)  # confine the audit hook to this sample's group
        # sys.stdin/stdout/stderr are the worker's own (UTF-8) text streams on fds 0-2, which
        # now lead to the sample's pipes; the worker never buffered anything in them. sys.argv
        # was set by the zygote. The zygote froze everything it inherited into the permanent
        # generation: the sample's collections scan its own objects only, not the worker's
        # (whose pages a scan would copy, one page fault each).
        _sample_main(job, 3, self.lasti_true, self.seccomp_active and job["mode"] == "check")

    def _rlimits(self, job: dict) -> tuple:
        """The job's own ``setrlimit`` calls (CPU seconds, address space); the rest are the zygote's."""
        cpu = int(math.ceil(float(job.get("timeout_s", 10.0)))) + 1
        mem = int(job.get("memory_mb", 512)) * 1024 * 1024
        return ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_AS, (mem, mem)))


class _ZygoteDied(RuntimeError):
    """The zygote is gone: the worker exits and the pool replaces it."""


# Job fields the sample process needs (the rest stay with the worker).
_CHILD_KEYS = ("mode", "entry_point", "timeout_s", "memory_mb", "source", "prompt", "test", "_seccomp", "_nice")
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


def _rmtree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``, importing shutil on first need.

    shutil loads zlib, bz2 and lzma: imported at start-up, their libraries would be mapped
    into every forked sample, and copied and torn down with it, for nothing.
    """
    import shutil

    shutil.rmtree(path, ignore_errors=True)


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
        worker = _Worker(index)
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
                    queued["_compiled"] = _compile_check_job(queued)
        job = queue.pop(0)
        try:
            reply = worker.run(job)
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


# --------------------------------------------------------------------------------------------
# Parent side: the warm pool.
# --------------------------------------------------------------------------------------------


class _WorkerDied(RuntimeError):
    pass


# Imported as a module (not run as a script) so that its cached bytecode is used.
_WORKER_BOOT = (
    "import sys; sys.path.insert(0, {here!r}); import _sandbox; del sys.path[0]; _sandbox._worker_main()"
).format(here=os.path.dirname(os.path.abspath(__file__)))


def _site_dirs() -> list[str]:
    """This interpreter's site-packages, put on the worker's path without running .pth files."""
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    return [d for d in dirs if os.path.isdir(d)]


class _WorkerHandle:
    def __init__(self, index: int, cpu: int | None = None) -> None:
        import subprocess

        # LD_BIND_NOW: every symbol is resolved when the worker starts, so samples never write
        # the dynamic linker's tables (a copy-on-write fault per page, per sample).
        env = {"PATH": _SAFE_PATH, "LANG": "C.UTF-8", "LD_BIND_NOW": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-X", "utf8", "-c", _WORKER_BOOT, f"{index}:{'' if cpu is None else cpu}", *_site_dirs()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
            cwd="/",
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.cpu = cpu
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self._hello_lock = _thread.allocate_lock()
        self.zygote_pids: list[int] = []  # the worker's zygotes (fork the samples), after the handshake
        self._isolation: dict[str, Any] | None = None

    def ready(self) -> dict[str, Any]:
        """Wait for the worker's handshake (once); returns its isolation report."""
        with self._hello_lock:
            if self._isolation is None:
                hello = self._recv(60.0)
                if "error" in hello:
                    raise _WorkerDied(hello["error"])
                self.zygote_pids = [int(p) for p in hello.get("zygotes") or ()]
                self._isolation = hello["isolation"]
        return self._isolation

    @property
    def isolation(self) -> dict[str, Any]:
        return self.ready()

    def _recv(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.rfd], [], [], timeout)
        if not ready:
            raise _WorkerDied("sandbox worker did not answer")
        msg = _recv(self.rfd)
        if msg is None:
            raise _WorkerDied("sandbox worker exited")
        return msg

    def send(self, job: dict) -> None:
        try:
            _send(self.wfd, job)
        except OSError as exc:
            raise _WorkerDied(str(exc)) from exc

    def recv(self, timeout: float) -> dict:
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


_MAX_DURATIONS = 100_000


def _cost_key(job: dict) -> int:
    """What a job's duration is remembered under: a hash of its test and entry point, or of
    its program and input (a collision only changes the order jobs are handed out in)."""
    if job.get("mode") == "check":
        return hash(("check", job.get("test"), job.get("entry_point")))
    return hash((job.get("mode"), job.get("source"), job.get("stdin")))


class SandboxPool:
    """A set of warm sandbox workers; each request forks a fresh isolated sample process.

    Worker ``i`` is pinned to the ``i``-th CPU this process may use (round robin when there are
    more workers than CPUs); its zygotes and samples inherit the CPU. A worker runs one sample
    at a time, so the default (one worker per CPU) suits CPU-bound tests such as HumanEval's;
    for samples that mostly sleep or wait, ask for more workers.

    Args:
        workers: Number of worker processes (default: :func:`default_workers`).
    """

    def __init__(self, workers: int | None = None) -> None:
        self.size = max(1, int(workers or default_workers()))
        import queue
        import threading

        self._lock = threading.Lock()
        self._idle: queue.Queue = queue.Queue()
        self._all: list[_WorkerHandle] = []
        self._closed = False
        self._durations: dict[int, float] = {}
        self._cpus = _usable_cpus()
        self._grow(self.size)

    def _grow(self, n: int) -> None:
        # Workers start in parallel; each takes jobs as soon as its own handshake arrives.
        for _ in range(n):
            h = _WorkerHandle(len(self._all), self._cpus[len(self._all) % len(self._cpus)])
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
            fresh = _WorkerHandle(len(self._all), dead.cpu)
            self._all.append(fresh)
        return fresh

    def _drive(
        self,
        handle: _WorkerHandle,
        jobs: Sequence[dict],
        take: Callable[[], int | None],
        out: list,
        depth: Callable[[], int],
    ) -> None:
        """Feed one worker, keeping ``depth()`` jobs in flight so it never waits for this process.

        A worker that dies (never because of a sample: samples cannot reach it) is replaced,
        up to three times per call; the jobs it had in flight are retried once on the fresh
        worker, then reported as sandbox failures.
        """
        replacements = 0
        retry: list[int] = []
        tried: set[int] = set()
        while True:
            inflight: list[int] = []
            try:
                handle.ready()
                while True:
                    while len(inflight) < depth():
                        i = retry.pop(0) if retry else take()
                        if i is None:
                            break
                        inflight.append(i)
                        handle.send(jobs[i])
                    if not inflight:
                        break
                    i = inflight[0]
                    reply = handle.recv(float(jobs[i].get("timeout_s", 10.0)) + 60.0)
                    reply["isolation"] = handle.isolation
                    out[i] = reply
                    inflight.pop(0)
            except _WorkerDied as exc:
                for i in inflight:
                    if i in tried:
                        out[i] = {"error": f"sandbox worker failed: {exc}"}
                    else:
                        tried.add(i)
                        retry.append(i)
                try:
                    handle = self._replace(handle)
                except OSError:
                    return
                replacements += 1
                if replacements <= 3:
                    continue
                for i in retry:
                    out[i] = {"error": f"sandbox worker failed: {exc}"}
            self._idle.put(handle)
            return

    def map(self, jobs: Sequence[dict], concurrency: int | None = None) -> list[dict]:
        """Run many jobs on the pool in parallel; replies in the order of ``jobs``."""
        jobs = [_attach_shared_code(job) for job in jobs]
        if not jobs:
            return []
        n = max(1, min(concurrency or self.size, len(jobs), self.size))
        out: list = [None] * len(jobs)
        import threading

        lock = threading.Lock()
        counter = [0]
        order = self._schedule(jobs)

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
        if n == 1:
            self._drive(handles[0], jobs, take, out, depth)
        else:
            threads = [threading.Thread(target=self._drive, args=(h, jobs, take, out, depth)) for h in handles]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self._learn(jobs, out)
        return [r if r is not None else {"error": "sandbox job was not run"} for r in out]

    def _schedule(self, jobs: Sequence[dict]) -> list[int]:
        """The order to hand out jobs: longest expected first (LPT), else as given.

        A job's expected duration is the last one measured for the same test (``check`` mode)
        or the same program (``script`` mode) on this pool; jobs never seen count as the
        median of those seen. Starting the long jobs first keeps one slow test from
        finishing alone at the end of a batch. With nothing known, the order is unchanged.

        With more jobs than workers, a job expected to take at least a quarter of the batch's
        share per CPU is also marked to run at a higher priority (``nice`` -5, where evalcore
        may raise it): on a busy machine it would otherwise get a fraction of a CPU and still
        finish last.
        """
        known = self._durations
        if not known:
            return list(range(len(jobs)))
        expected = [known.get(_cost_key(job)) for job in jobs]
        seen = sorted(e for e in expected if e is not None)
        if not seen:
            return list(range(len(jobs)))
        default = seen[len(seen) // 2]
        guess = [e if e is not None else default for e in expected]
        if len(jobs) > self.size:  # with fewer jobs than workers every job starts at once
            critical = 0.25 * sum(guess) / max(1, os.cpu_count() or 1)
            for i, e in enumerate(guess):
                if e >= critical:
                    jobs[i] = dict(jobs[i], _nice=-5)  # type: ignore[index]
        return sorted(range(len(jobs)), key=lambda i: -guess[i])

    def _learn(self, jobs: Sequence[dict], replies: Sequence[dict | None]) -> None:
        """Remember each job's measured duration for :meth:`_schedule` (bounded memory)."""
        known = self._durations
        for job, reply in zip(jobs, replies):
            if reply is None or "duration_s" not in reply:
                continue
            if len(known) >= _MAX_DURATIONS:
                known.clear()
            known[_cost_key(job)] = float(reply["duration_s"])

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

    def submit(self, job: dict) -> dict:
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


def get_pool(workers: int | None = None) -> SandboxPool:
    """The process-wide warm pool, started on first use and grown to ``workers``."""
    global _POOL
    want = max(1, int(workers or default_workers()))
    with _POOL_LOCK:
        if _POOL is None or _POOL._closed:
            _POOL = SandboxPool(want)
            import atexit

            atexit.register(_POOL.close)
        else:
            _POOL.ensure(want)
        return _POOL


def shutdown_pool() -> None:
    """Stop the process-wide pool (a later call starts a fresh one)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.close()
            _POOL = None


def _to_result(reply: dict) -> SandboxResult:
    SandboxResult = _result_class()  # noqa: N806
    if "error" in reply:
        return SandboxResult(False, False, None, "", "", 0.0, reply["error"], reply.get("isolation", {}))
    return SandboxResult(
        completed=bool(reply["completed"]),
        timed_out=bool(reply["timed_out"]),
        returncode=reply["returncode"],
        stdout=reply["stdout"],
        stderr=reply["stderr"],
        duration_s=float(reply["duration_s"]),
        reason=reply["reason"],
        isolation=reply.get("isolation", {}),
    )


def run_jobs(jobs: Sequence[dict], workers: int | None = None) -> list[SandboxResult]:
    """Run prepared jobs (``mode`` ``"script"`` or ``"check"``) on the warm pool."""
    pool = get_pool(workers)
    return [_to_result(r) for r in pool.map(list(jobs), workers)]


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
    job = {
        "mode": "script",
        "source": source,
        "timeout_s": float(timeout_s),
        "memory_mb": int(memory_mb),
        "stdin": stdin,
        "max_output": int(max_output),
    }
    return run_jobs([job], workers=None)[0]


if __name__ == "__main__":
    _worker_main()
