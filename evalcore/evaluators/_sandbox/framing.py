"""Framing: messages between the parent and its workers, and the plain-data encoding that is
the only thing crossing between a test and its candidate.

Parent <-> worker: length-prefixed ``marshal`` (both ends are evalcore's own trusted code;
samples never see these pipes).

Test <-> candidate (:func:`encode`, :func:`decode`): a small typed encoding of ``None``, ``bool``,
``int``, ``float``, ``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set``,
``frozenset`` and ``range`` (plus an "iterator" tag, decoded as a list iterator, for a
candidate that returns a generator). The decoder is written here in plain Python: it builds
only exact builtin values, never calls ``pickle``/``marshal``/``eval`` on the bytes it is
given, and enforces a size, item and depth limit, so nothing a candidate sends can be more
than data once decoded.
"""

from __future__ import annotations

import marshal
import os
import struct

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


def send_many(fd: int, objs: list) -> None:
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

MAX_VALUE_BYTES = 8 << 20  # one encoded value (a call's arguments, or its result)
MAX_ITEMS = 1_000_000  # values in one encoded value, containers included
MAX_DEPTH = 100  # nesting of containers
MAX_MESSAGE = 1000  # characters kept of an exception's message

# Frame kinds on the call pipes (4-byte length, 1-byte kind, body).
CALL = b"C"  # test -> candidate: marshal (args tuple, kwargs dict), written by the trusted side
QUERY = b"Q"  # test -> candidate: did the program run? (only when the test made no call)
READY = b"K"  # candidate -> test: the program ran (the answer to QUERY); body: empty
PROGRAM_FAILED = b"P"  # the program itself raised: encoded (type name, message, base name)
RETURN = b"R"  # the call returned: encoded value
RAISE = b"X"  # the call raised an Exception: encoded (type name, message, builtin base name)
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
_ITERATOR_TYPES: tuple = ()


def _plain(value: Any) -> Any:
    """An exact-builtin copy of a value that is plain data in spirit (candidate side, lenient).

    Subclasses of the builtins (``IntEnum``, ``namedtuple``, ``OrderedDict``, ``Counter``...)
    become their base type, numpy scalars their Python value, generators and iterators a
    materialized iterator; anything else is refused. Runs in the candidate process: what it
    produces is whatever the candidate chose to send, checked again by :func:`decode`.
    """
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, complex):
        return complex(value.real, value.imag)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, tuple):
        return tuple(value)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value.items())
    if isinstance(value, frozenset):
        return frozenset(value)
    if isinstance(value, set):
        return set(value)
    cls = type(value)
    module = getattr(cls, "__module__", "")
    if module == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0 and cls.__name__ != "ndarray":
        return value.item()
    if hasattr(cls, "__next__") and hasattr(cls, "__iter__"):
        items = []
        for item in value:
            items.append(item)
            if len(items) > MAX_ITEMS:
                raise DataError("the candidate returned an iterator with too many items")
        return _Iterated(items)
    raise DataError(f"the candidate returned a {module + '.' if module not in ('', 'builtins') else ''}{cls.__name__}, which is not plain data")


class _Iterated(list):
    """Marks a materialized iterator while encoding (candidate side only)."""


def encode(value: Any, lenient: bool = False) -> bytes:
    """Encode plain data (see module docstring).

    Args:
        value: The value.
        lenient: Convert subclasses, numpy scalars and iterators (the candidate's results)
            instead of refusing them.

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
    count = [0]
    _enc(value, parts, 0, count, lenient)
    data = b"".join(parts)
    if len(data) > MAX_VALUE_BYTES:
        raise DataError(f"the value is larger than {MAX_VALUE_BYTES} bytes encoded")
    return data


def _enc(v: Any, out: list, depth: int, count: list, lenient: bool) -> None:
    count[0] += 1
    if count[0] > MAX_ITEMS:
        raise DataError(f"the value holds more than {MAX_ITEMS} items")
    t = type(v)
    if v is None:
        out.append(b"N")
    elif v is True:
        out.append(b"T")
    elif v is False:
        out.append(b"F")
    elif t is int:
        if _QMIN <= v <= _QMAX:
            out.append(b"i" + _Q.pack(v))
        else:
            raw = v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True)
            out.append(b"I" + _I.pack(len(raw)) + raw)
    elif t is float:
        out.append(b"f" + _D.pack(v))
    elif t is str:
        raw = v.encode("utf-8", "surrogatepass")
        out.append(b"s" + _I.pack(len(raw)) + raw)
    elif t is list or t is tuple or t is set or t is frozenset or t is _Iterated:
        if depth >= MAX_DEPTH:
            raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
        tag = b"l" if t is list else b"t" if t is tuple else b"S" if t is set else b"Z" if t is frozenset else b"g"
        out.append(tag + _I.pack(len(v)))
        append, pack_q = out.append, _Q.pack
        for item in v:
            it = type(item)
            if it is int and _QMIN <= item <= _QMAX:  # inline: most items are small ints
                count[0] += 1
                append(b"i" + pack_q(item))
            else:
                _enc(item, out, depth + 1, count, lenient)
        if count[0] > MAX_ITEMS:
            raise DataError(f"the value holds more than {MAX_ITEMS} items")
    elif t is dict:
        if depth >= MAX_DEPTH:
            raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
        out.append(b"d" + _I.pack(len(v)))
        for key, item in v.items():
            _enc(key, out, depth + 1, count, lenient)
            _enc(item, out, depth + 1, count, lenient)
    elif t is bytes:
        out.append(b"b" + _I.pack(len(v)) + v)
    elif t is complex:
        out.append(b"c" + _DD.pack(v.real, v.imag))
    elif t is range:
        out.append(b"r")
        for x in (v.start, v.stop, v.step):
            _enc(x, out, depth + 1, count, lenient)
    elif lenient:
        count[0] -= 1
        _enc(_plain(v), out, depth, count, lenient)
    else:
        raise DataError(f"a {t.__name__} is not plain data")


def decode(data: bytes) -> Any:
    """Decode what :func:`encode` wrote, building exact builtin values only.

    Raises:
        DataError: Bytes that are not one valid encoding within the limits.
    """
    if len(data) > MAX_VALUE_BYTES:
        raise DataError(f"the value is larger than {MAX_VALUE_BYTES} bytes encoded")
    if len(data) == 9 and data[0] == 0x69:  # an int, the most common answer
        return _Q.unpack_from(data, 1)[0]
    count = [0]
    try:
        value, pos = _dec(data, 0, 0, count)
    except DataError:
        raise
    except (IndexError, struct.error, UnicodeDecodeError, TypeError, ValueError, OverflowError) as exc:
        # TypeError: an unhashable key; ValueError: a range step of 0
        raise DataError(f"invalid encoding: {type(exc).__name__}") from None
    if pos != len(data):
        raise DataError("invalid encoding: trailing bytes")
    return value


def _dec(data: bytes, pos: int, depth: int, count: list) -> tuple:
    count[0] += 1
    if count[0] > MAX_ITEMS:
        raise DataError(f"the value holds more than {MAX_ITEMS} items")
    tag = data[pos]
    pos += 1
    if tag == 0x69:  # i
        return _Q.unpack_from(data, pos)[0], pos + 8
    if tag == 0x4E:  # N
        return None, pos
    if tag == 0x54:  # T
        return True, pos
    if tag == 0x46:  # F
        return False, pos
    if tag == 0x66:  # f
        return _D.unpack_from(data, pos)[0], pos + 8
    if tag == 0x73 or tag == 0x62 or tag == 0x49:  # s b I
        (n,) = _I.unpack_from(data, pos)
        pos += 4
        end = pos + n
        if end > len(data):
            raise DataError("invalid encoding: truncated")
        raw = data[pos:end]
        if tag == 0x73:
            return raw.decode("utf-8", "surrogatepass"), end
        if tag == 0x62:
            return bytes(raw), end
        return int.from_bytes(raw, "big", signed=True), end
    if tag in _CONTAINER_TAGS:
        if depth >= MAX_DEPTH:
            raise DataError(f"the value is nested deeper than {MAX_DEPTH}")
        (n,) = _I.unpack_from(data, pos)
        pos += 4
        if n > len(data) - pos:  # every item takes at least one byte
            raise DataError("invalid encoding: truncated")
        if tag == 0x64:  # d
            d = {}
            for _ in range(n):
                key, pos = _dec(data, pos, depth + 1, count)
                d[key], pos = _dec(data, pos, depth + 1, count)
            return d, pos
        items = []
        append = items.append
        unpack_q = _Q.unpack_from
        for _ in range(n):
            if data[pos] == 0x69:  # inline: an int item
                count[0] += 1
                append(unpack_q(data, pos + 1)[0])
                pos += 9
                continue
            item, pos = _dec(data, pos, depth + 1, count)
            append(item)
        if count[0] > MAX_ITEMS:
            raise DataError(f"the value holds more than {MAX_ITEMS} items")
        if tag == 0x6C:  # l
            return items, pos
        if tag == 0x74:  # t
            return tuple(items), pos
        if tag == 0x53:  # S
            return set(items), pos
        if tag == 0x5A:  # Z
            return frozenset(items), pos
        return iter(items), pos  # g
    if tag == 0x63:  # c
        re, im = _DD.unpack_from(data, pos)
        return complex(re, im), pos + 16
    if tag == 0x72:  # r
        bounds = []
        for _ in range(3):
            x, pos = _dec(data, pos, depth + 1, count)
            if type(x) is not int:
                raise DataError("invalid encoding: range bounds")
            bounds.append(x)
        return range(*bounds), pos
    raise DataError(f"invalid encoding: tag {tag}")


_CONTAINER_TAGS = frozenset(b"ltSZgd")


def frame(kind: bytes, body: bytes = b"") -> bytes:
    """One message on a call pipe."""
    return FRAME_HEAD.pack(len(body), kind) + body
