"""Framing: messages between the parent and its workers, and the plain-data encoding that is
the only thing crossing between a test and its candidate.

Parent <-> worker: length-prefixed ``marshal`` (both ends are evalcore's own trusted code;
samples never see these pipes).

Test <-> candidate (:func:`encode`, :func:`decode`): a small typed encoding of ``None``,
``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``,
``dict``, ``set``, ``frozenset``, ``range``, the standard library's value types (``Decimal``,
``Fraction``, ``deque``, ``OrderedDict``, ``Counter``, ``defaultdict``, dict views), named tuples
and dataclass instances (by class name and fields), numpy arrays and scalars (dtype, shape,
raw bytes: booleans, numbers, fixed-width strings), generators (a generator over the items the
candidate's generator yielded) and other iterators (a list iterator). The decoder is written
here in plain Python: it never calls ``pickle``/``marshal``/``eval`` on the bytes it is given,
builds only those types (a named tuple or dataclass as the test's own class of that name when
it has one with those fields, else as a class made here with them), and does bounded work: a
size, item and depth limit; every step linear in the bytes (no set or dict is built from more
than :data:`MAX_SAME_HASH` distinct values of one hash, so hash flooding is refused before it
costs quadratic time; a ``range`` longer than :data:`MAX_ITEMS`, which the test would
materialize, is refused). What cannot cross is refused with a reason that names its type.
"""

from __future__ import annotations

import builtins
import keyword
import marshal
import os
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Bytes of each of a sample's stdout and stderr kept by default (the rest is counted, not kept).
DEFAULT_MAX_OUTPUT = 64 * 1024

# ------------------------------------------------------------------ parent <-> worker


def read_exact(fd: int, n: int) -> bytes | None:
    """Read exactly ``n`` bytes from a blocking descriptor (None at end of file)."""
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def send(fd: int, obj: Any) -> None:
    send_many(fd, [obj])


def send_many(fd: int, objs: list[Any]) -> None:
    """Send each of ``objs`` (length-prefixed marshal) in one write, then empty the list."""
    if not objs:
        return
    frames = []
    for obj in objs:
        data = marshal.dumps(obj)
        frames.append(struct.pack("!I", len(data)))
        frames.append(data)
    write_all(fd, b"".join(frames))
    objs.clear()


def recv(fd: int) -> Any | None:
    head = read_exact(fd, 4)
    if head is None:
        return None
    (size,) = struct.unpack("!I", head)
    body = read_exact(fd, size)
    return None if body is None else marshal.loads(body)


# ------------------------------------------------------------------ test <-> candidate

MAX_VALUE_BYTES = 32 << 20  # one encoded value (a call's arguments, or its result)
MAX_ITEMS = 4_000_000  # values in one encoded value, containers included
MAX_DEPTH = 100  # nesting of containers
MAX_MESSAGE = 1000  # characters kept of an exception's message
# Hash-flooding guard: in a decoded container, at most this many distinct values may share one
# hash (checked where quadratic work could follow: containers of GUARD_ITEMS items or more, or
# of more than MAX_SAME_HASH items spanning GUARD_BYTES encoded bytes or more).
MAX_SAME_HASH = 32
GUARD_ITEMS = 1024
GUARD_BYTES = 1 << 16
# A Fraction's numerator and denominator are reduced (gcd: quadratic in their length) only up
# to this many bits; longer ones are taken as the candidate wrote them.
FRACTION_GCD_BITS = 100_000
MAX_ARRAY_DIMS = 32  # numpy arrays
# Classes the worker makes for a candidate's named tuples, dataclasses and exceptions that the
# prompt does not define: at most this many fields, names of at most this many characters.
MAX_CLASS_FIELDS = 256
MAX_NAME_CHARS = 200
# A defaultdict's factory of the candidate's own crosses as the value it returns, up to this size.
MAX_DEFAULT_BYTES = 1 << 16

# Frame kinds on the call pipes (4-byte length, 1-byte kind, body).
CALL = b"C"  # test -> candidate: marshal (args tuple, kwargs dict), written by the trusted side
CALL_TYPED = b"V"  # the same in this module's encoding: arguments marshal cannot write (Decimal, numpy...)
NEXT = b"N"  # test -> candidate: the next items of a generator the candidate returned (marshal: its handle)
QUERY = b"Q"  # test -> candidate: did the program run? (only when the test made no call)
READY = b"K"  # candidate -> test: the program ran (the answer to QUERY); body: empty
PROGRAM_FAILED = b"P"  # the program itself raised: encoded (type name, message, base name)
RETURN = b"R"  # the call returned: encoded value
RAISE = b"X"  # the call raised an Exception: encoded (type name, message, base name, args, attributes)
ESCAPE = b"B"  # a BaseException that is no Exception (SystemExit, KeyboardInterrupt...)
NOT_DATA = b"E"  # the call returned something that is not plain data: encoded message
FRAME_HEAD = struct.Struct("!Ic")


class DataError(ValueError):
    """A value that is not plain data, or bytes that are no valid encoding within the limits."""


_Q = struct.Struct("!q")
_I = struct.Struct("!I")
_D = struct.Struct("!d")
_DD = struct.Struct("!dd")
_QMIN, _QMAX = -(1 << 63), (1 << 63) - 1
_REFERABLE = (float, complex, str, bytes, range, tuple)  # argrefs.REFERABLE

# numpy dtypes that cross (as raw bytes): booleans, integers, floats, complex, fixed strings.
_DTYPES = frozenset({"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"})


# numpy datetime64 / timedelta64 units (``M8[D]``, ``m8[ns]``...; 8 bytes each, as raw bytes too).
_TIME_UNITS = frozenset({"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"})


def _dtype_ok(text: str) -> bool:
    """``[<>|=]?`` then one of _DTYPES, ``U``/``S`` and 1-7 digits, or ``M8``/``m8`` with an
    optional unit (no ``re``: the lean zygote, which imports this module, must not carry it)."""
    if text[:1] in ("<", ">", "|", "="):
        text = text[1:]
    if text in _DTYPES:
        return True
    if text[:2] in ("M8", "m8"):
        unit = text[2:]
        return unit == "" or (unit[:1] == "[" and unit[-1:] == "]" and unit[1:-1] in _TIME_UNITS)
    digits = text[1:]
    return text[:1] in ("U", "S") and 1 <= len(digits) <= 7 and digits.isascii() and digits.isdigit()


def _type_name(cls: type) -> str:
    module = getattr(cls, "__module__", "")
    name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")
    return f"{module}.{name}" if module not in ("", "builtins", "__candidate__") else str(name)


def _module_attr(module: str, name: str) -> Any:
    """A class of a module the program has imported (None if it has not: then no value is one)."""
    mod = sys.modules.get(module)
    return getattr(mod, name, None) if mod is not None else None


def _identifier(name: Any) -> bool:
    return type(name) is str and name.isidentifier() and not keyword.iskeyword(name)


def encode(
    value: Any, lenient: bool = False, nans: dict[int, Any] | None = None, refs: dict[int, int] | None = None
) -> bytes:
    """Encode plain data (see module docstring).

    Args:
        value: The value.
        lenient: Convert what has no encoding of its own (subclasses of the builtins become
            their base, e.g. a ``str`` subclass a ``str``) instead of refusing it (the
            candidate's results).
        nans: The NaN objects numbered so far, shared by values decoded as one (the items of
            a generator's chunk); a fresh numbering when None.
        refs: ``id(argument) -> number`` for the call's arguments (the candidate's return
            value, :func:`evalcore.sandbox.argrefs.candidate_refs`): a value that is one of
            them is marked with its number, so the test gets its own object back.

    Returns:
        The encoding.

    Raises:
        DataError: Not plain data, nested too deep, or over the size or item limit.
    """
    t = type(value)
    if t is int and _QMIN <= value <= _QMAX:  # the common answers, without the general walk
        return b"i" + _Q.pack(value)
    if t is bool or value is None:
        return b"T" if value is True else b"F" if value is False else b"N"
    parts: list[bytes] = []
    count: list[Any] = [0, nans, refs or None]  # values so far; the NaN objects met so far (see _enc_nan); refs
    _enc(value, parts, 0, count, lenient)
    data = b"".join(parts)
    if len(data) > MAX_VALUE_BYTES:
        raise DataError(f"the value is larger than {MAX_VALUE_BYTES} bytes encoded")
    return data


def _enc(v: Any, out: list[Any], depth: int, count: list[Any], lenient: bool) -> None:
    count[0] += 1
    if count[0] > MAX_ITEMS:
        raise DataError(f"the value holds more than {MAX_ITEMS} items")
    t = type(v)
    if count[2] is not None and t in _REFERABLE and id(v) in count[2]:  # one of the call's arguments
        out.append(b"@" + _I.pack(count[2][id(v)]))
    if v is None:
        out.append(b"N")
    elif v is True:
        out.append(b"T")
    elif v is False:
        out.append(b"F")
    elif t is int:
        out.append(b"i" + _Q.pack(v) if _QMIN <= v <= _QMAX else _large_int(v))
    elif t is float and v == v:  # (a NaN: _enc_less_common)
        out.append(b"f" + _D.pack(v))
    elif t is str:
        raw = v.encode("utf-8", "surrogatepass")
        out.append(b"s" + _I.pack(len(raw)) + raw)
    elif t is list or t is tuple or t is set or t is frozenset:  # _enc_items, inline: the common case
        if depth >= MAX_DEPTH:
            raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
        out.append((b"l" if t is list else b"t" if t is tuple else b"S" if t is set else b"Z") + _I.pack(len(v)))
        append, pack_q = out.append, _Q.pack
        for item in v:
            if type(item) is int and _QMIN <= item <= _QMAX:  # inline: most items are small ints
                count[0] += 1
                append(b"i" + pack_q(item))
            else:
                _enc(item, out, depth + 1, count, lenient)
        if count[0] > MAX_ITEMS:
            raise DataError(f"the value holds more than {MAX_ITEMS} items")
    elif t is dict:
        _enc_pairs(b"d", v.items(), len(v), out, depth, count, lenient)
    else:
        _enc_less_common(v, t, out, depth, count, lenient)


def _large_int(v: int) -> bytes:
    """An int beyond 64 bits: its two's-complement bytes."""
    raw = v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True)
    return b"I" + _I.pack(len(raw)) + raw


def _enc_less_common(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> None:
    """A NaN, bytes, a complex, a range, or (see :func:`_enc_other`) the rest."""
    if t is float:
        _enc_nan(v, out, count)
    elif t is bytes:
        out.append(b"b" + _I.pack(len(v)) + v)
    elif t is complex:
        out.append(b"c" + _DD.pack(v.real, v.imag))
    elif t is range:
        out.append(b"r")
        for x in (v.start, v.stop, v.step):
            _enc(x, out, depth + 1, count, lenient)
    else:
        _enc_other(v, t, out, depth, count, lenient)


def _enc_items(tag: bytes, items: Any, out: list[Any], depth: int, count: list[Any], lenient: bool) -> None:
    if depth >= MAX_DEPTH:
        raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
    out.append(tag + _I.pack(len(items)))
    append, pack_q = out.append, _Q.pack
    for item in items:
        if type(item) is int and _QMIN <= item <= _QMAX:  # inline: most items are small ints
            count[0] += 1
            append(b"i" + pack_q(item))
        else:
            _enc(item, out, depth + 1, count, lenient)
    if count[0] > MAX_ITEMS:
        raise DataError(f"the value holds more than {MAX_ITEMS} items")


def _enc_pairs(tag: bytes, pairs: Any, n: int, out: list[Any], depth: int, count: list[Any], lenient: bool) -> None:
    if depth >= MAX_DEPTH:
        raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
    out.append(tag + _I.pack(n))
    for key, item in pairs:
        _enc(key, out, depth + 1, count, lenient)
        _enc(item, out, depth + 1, count, lenient)


def _enc_str(text: str, out: list[Any]) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    out.append(b"s" + _I.pack(len(raw)) + raw)


def _enc_nan(v: float, out: list[Any], count: list[Any]) -> None:
    """A NaN as the object it is (issue 42): ``math.nan`` or ``numpy.nan`` themselves, whose
    identity the other side restores (``[math.nan] == [math.nan]`` holds by identity, as in one
    process), else a NaN numbered within this value (the same object twice decodes as one)."""
    if v is _module_attr("math", "nan"):
        kind, index = 0, 0
    elif v is _module_attr("numpy", "nan"):
        kind, index = 1, 0
    else:
        seen = count[1]
        if seen is None:
            seen = count[1] = {}
        kind, index = 2, seen.setdefault(id(v), (len(seen), v))[0]  # v kept: its id stays its own
    out.append(b"j" + bytes((kind,)) + _D.pack(v) + _I.pack(index))


def _enum_member(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> bool:
    """An ``Enum`` member as its class's name, its own name and value, and (for a member that
    is also an ``int``, ``str``...: ``IntEnum``, ``StrEnum``) that plain value to fall back on;
    the other side returns its own class's member of that name (the prompt's)."""
    enum = sys.modules.get("enum")
    if enum is None or not isinstance(v, enum.Enum):
        return False
    name = getattr(v, "_name_", None)
    if type(name) is not str:
        return False  # a combination of flags without a name of its own: its plain value
    out.append(b"e")
    _enc_str(str(getattr(t, "__name__", "")), out)
    _enc_str(name, out)
    _enc(v._value_, out, depth + 1, count, lenient)
    out.append(b"T" if isinstance(v, (int, float, complex, str, bytes)) else b"F")
    return True


def _constant_default(factory: Any) -> bytes | None:
    """A defaultdict factory of the candidate's own (a lambda) whose two calls return equal plain
    data of at most :data:`MAX_DEFAULT_BYTES` encoded: that value, encoded; else None."""
    try:
        first, second = factory(), factory()
        if first != second:
            return None
        data = encode(first, lenient=True)
        return data if len(data) <= MAX_DEFAULT_BYTES and data == encode(second, lenient=True) else None
    except Exception:  # noqa: BLE001 - not a constant: it stays behind (looking a key up fails)
        return None


def _enc_other(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> None:
    """The standard library's value types, named tuples, dataclass instances, numpy values,
    generators and iterators; with ``lenient``, other subclasses of the builtins as their base.
    Tried in this order; the first that knows ``v`` encodes it."""
    for encoder in (_enc_mapping_or_record, _enc_std_value, _enc_view_or_dataclass, _enc_numpy, _enum_member):
        if encoder(v, t, out, depth, count, lenient):
            return
    if lenient and _enc_lenient(v, t, out, depth, count):
        return
    if lenient:
        raise DataError(
            f"the candidate returned a {_type_name(t)}, which is not plain data (functions, classes and"
            " other objects cannot cross to the test's process; see docs/sandbox.md, What crosses the boundary)"
        )
    raise DataError(f"a {_type_name(t)} is not plain data")


def _enc_mapping_or_record(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> bool:
    """A defaultdict, Counter or OrderedDict, or a named tuple; False for anything else."""
    if isinstance(v, dict):
        if isinstance(v, _module_attr("collections", "defaultdict") or ()):
            factory = v.default_factory
            name = "" if factory is None else getattr(factory, "__name__", "")
            default = None
            if factory is not None and getattr(builtins, name, None) is not factory:
                # A function of the candidate: its code does not cross; what it returns does
                # when it returns the same plain data every time (lambda: 0, lambda: []).
                default = _constant_default(factory) if lenient else None
                name = ("=" if default is not None else "?") + _type_name(type(factory))
            out.append(b"y")
            _enc_str(name, out)
            _enc_pairs(b"d", dict.items(v), len(v), out, depth, count, lenient)
            if default is not None:
                out.append(default)
            return True
        if isinstance(v, _module_attr("collections", "Counter") or ()):
            _enc_pairs(b"C", dict.items(v), len(v), out, depth, count, lenient)
            return True
        if isinstance(v, _module_attr("collections", "OrderedDict") or ()):
            _enc_pairs(b"O", v.items(), len(v), out, depth, count, lenient)
            return True
    if isinstance(v, tuple):
        fields = getattr(t, "_fields", None)
        if type(fields) is tuple and len(fields) == len(v) and all(type(f) is str for f in fields):
            out.append(b"n")
            _enc_str(str(getattr(t, "__name__", "")), out)
            _enc_items(b"t", fields, out, depth, count, lenient)
            _enc_items(b"t", tuple(v), out, depth, count, lenient)
            return True
    return False


def _enc_std_value(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> bool:
    """A Decimal, Fraction, deque or bytearray; False for anything else."""
    decimal = _module_attr("decimal", "Decimal")
    if decimal is not None and isinstance(v, decimal):
        out.append(b"D")
        _enc_str(str(decimal.__str__(v)), out)
        return True
    fraction = _module_attr("fractions", "Fraction")
    if fraction is not None and isinstance(v, fraction):
        out.append(b"Q")
        _enc(int(v.numerator), out, depth + 1, count, lenient)
        _enc(int(v.denominator), out, depth + 1, count, lenient)
        return True
    deque = _module_attr("collections", "deque")
    if deque is not None and isinstance(v, deque):
        out.append(b"q")
        _enc(v.maxlen, out, depth + 1, count, lenient)
        _enc_items(b"l", list(v), out, depth, count, lenient)
        return True
    if t is bytearray:
        out.append(b"B" + _I.pack(len(v)) + bytes(v))
        return True
    return False


def _enc_view_or_dataclass(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> bool:
    """A dict's keys, values or items, or a dataclass instance; False for anything else."""
    if t is _KEYS or t is _VALUES or t is _ITEMS:
        if t is _ITEMS:
            _enc_pairs(b"W", v, len(v), out, depth, count, lenient)
        else:
            _enc_items(b"K" if t is _KEYS else b"V", list(v), out, depth, count, lenient)
        return True
    if hasattr(t, "__dataclass_fields__") and not isinstance(v, type):
        dataclasses = sys.modules.get("dataclasses")
        if dataclasses is not None:
            names = tuple(f.name for f in dataclasses.fields(v))
            out.append(b"a")
            _enc_str(str(getattr(t, "__name__", "")), out)
            _enc_items(b"t", names, out, depth, count, lenient)
            _enc_items(b"t", tuple(getattr(v, name) for name in names), out, depth, count, lenient)
            return True
    return False


def _enc_numpy(v: Any, t: type, out: list[Any], depth: int, count: list[Any], lenient: bool) -> bool:
    """A numpy array or scalar of a dtype that crosses; False for anything not numpy's."""
    module = getattr(t, "__module__", "")
    if module == "numpy" and hasattr(v, "dtype"):
        dtype = v.dtype
        if not _dtype_ok(str(dtype.str)):
            raise DataError(
                f"a numpy {t.__name__} of dtype {dtype} cannot cross "
                "(only booleans, numbers, datetime64, timedelta64 and fixed-width strings do)"
            )
        if t.__name__ == "ndarray":
            if v.ndim > MAX_ARRAY_DIMS:
                raise DataError(f"a numpy array of more than {MAX_ARRAY_DIMS} dimensions cannot cross")
            raw = v.tobytes(order="C")
            out.append(b"A")
            _enc_str(str(dtype.str), out)
            _enc_items(b"t", tuple(int(n) for n in v.shape), out, depth, count, lenient)
            out.append(b"b" + _I.pack(len(raw)) + raw)
            return True
        if getattr(v, "ndim", None) == 0 and hasattr(v, "tobytes"):  # a numpy scalar
            raw = v.tobytes()
            out.append(b"z")
            _enc_str(str(dtype.str), out)
            out.append(b"b" + _I.pack(len(raw)) + raw)
            return True
    return False


def _enc_lenient(v: Any, t: type, out: list[Any], depth: int, count: list[Any]) -> bool:
    """(``lenient``) A subclass of a builtin as its base, a memoryview as bytes, a generator or
    other iterator as the items it yields; False for anything else."""
    base: Any  # one of the classes below (a subclass of it is encoded as it)
    for base in (int, float, complex, str, bytes, tuple, list, dict, frozenset, set):
        if isinstance(v, base):
            count[0] -= 1
            if base is int:
                _enc(int.__index__(v), out, depth, count, True)
            elif base is float:
                _enc(float.__float__(v), out, depth, count, True)
            elif base is complex:
                _enc(complex(v.real, v.imag), out, depth, count, True)
            elif base is str:
                _enc(str.__str__(v), out, depth, count, True)
            elif base is bytes:
                _enc(bytes(v), out, depth, count, True)
            elif base is dict:
                _enc(dict(dict.items(v)), out, depth, count, True)
            else:
                _enc(base(v), out, depth, count, True)
            return True
    if isinstance(v, memoryview):
        count[0] -= 1
        _enc(bytes(v), out, depth, count, True)
        return True
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):  # generators and other iterators
        items = []
        for item in v:
            items.append(item)
            if len(items) > MAX_ITEMS:
                raise DataError(f"the candidate returned a {_type_name(t)} that yields more than {MAX_ITEMS} items")
        _enc_items(b"G" if t is _GENERATOR else b"g", items, out, depth, count, True)
        return True
    return False


_KEYS: type
_VALUES: type
_ITEMS: type
_KEYS, _VALUES, _ITEMS = type({}.keys()), type({}.values()), type({}.items())


def _generator_type() -> type:
    def gen() -> Any:
        yield None

    return type(gen())


_GENERATOR = _generator_type()
# A generator returned by a call crosses lazily, a chunk of items at a time: at most this many
# items, or what it yields in LAZY_CHUNK_S seconds (at least one), per chunk.
LAZY_CHUNK_ITEMS = 4096
LAZY_CHUNK_S = 0.02


class Lazy:
    """A chunk of a generator's items as decoded (a reply's top level only): the worker turns
    it into a generator that asks the candidate for the next chunk (:data:`NEXT`) when these run
    out. ``error``: the exception the generator raised after them (an exception's 5-tuple)."""

    __slots__ = ("handle", "done", "items", "error")

    def __init__(self, handle: int, done: bool, items: list[Any], error: tuple[Any, ...] | None) -> None:
        self.handle, self.done, self.items, self.error = handle, done, items, error


LAZY_CHUNK_BYTES = MAX_VALUE_BYTES // 4  # and the items encoded so far


def encode_lazy(handle: int, done: bool, items: list[Any], error: bytes | None) -> bytes:
    """A chunk of a generator (candidate side): ``items`` each already encoded; ``error``: an
    encoded exception 5-tuple."""
    head = b"L" + encode(handle) + encode(bool(done)) + b"l" + _I.pack(len(items))
    data = head + b"".join(items) + (error if error is not None else b"N")
    if len(data) > MAX_VALUE_BYTES:
        raise DataError(f"the value is larger than {MAX_VALUE_BYTES} bytes encoded")
    return data


def frame(kind: bytes, body: bytes = b"") -> bytes:
    """One message on a call pipe."""
    return FRAME_HEAD.pack(len(body), kind) + body


# The decoder (split into decoding.py, which imports this module's limits and helpers).
from .decoding import decode as decode  # noqa: E402
