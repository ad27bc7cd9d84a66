"""File helpers shared by every area: atomic writes and strict JSONL reading.

Atomic writes go to a temporary file in the target's directory (so ``os.replace`` is a rename
on one file system) and replace the target only when everything was written; on any exception
the temporary file is removed and the target is left as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import gzip
import hashlib
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from evalcore.errors import EvalcoreError

__all__ = [
    "BOUNDS",
    "atomic_open",
    "bounded",
    "excerpt",
    "terminal_safe",
    "atomic_path",
    "json_text",
    "not_a_file_reason",
    "open_text",
    "read_json",
    "read_jsonl",
    "first_undecodable_line",
    "to_json_native",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]


# Integers longer than this many bits do not fit what ``json``/``str()`` write by default
# (Python's 4,300-digit limit); they are written as a ``"<int of N bits>"`` string.
_MAX_INT_BITS = 13_000


def to_json_native(value: Any, *, strict: bool = False, path: str = "value") -> Any:
    """Convert a value to native JSON types (dict, list, str, int, float, bool, None).

    The one converter evalcore writes JSON through (run store, agent-evaluation results, notebook
    records, comparison tables). Rules:

    * NaN and infinities become ``None`` (strict JSON has no NaN);
    * numpy scalars and arrays, pandas DataFrames (a list of row dicts), Series (a dict keyed by
      the index as strings), Index, ``NA``/``NaT`` (``None``) and Timestamps, dataclasses, paths,
      dates and times are converted; numpy and pandas are only looked for when already imported;
    * tuples become lists, sets and frozensets sorted lists (sorted by ``repr``: stable output);
    * mapping keys become strings; integers over 13,000 bits become ``"<int of N bits>"``;
    * objects with a ``to_dict()`` are converted through it.

    Args:
        value: Any nested structure.
        strict: Raise on a value of another type (and on mapping keys that are not strings or
            numbers); otherwise such a value becomes its ``str``.
        path: How error messages name the value (e.g. a record's name); parts are appended
            (``acc.rows[2]``).

    Returns:
        The value built only from JSON-native types.

    Raises:
        EvalcoreError: ``strict`` and a part of the value has a type JSON cannot represent
            (the message names where, e.g. ``value.rows[2]``).
    """
    if value is None or value is True or value is False or type(value) is str:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        v = int(value)
        return f"<int of {v.bit_length()} bits>" if v.bit_length() > _MAX_INT_BITS else v
    if isinstance(value, float):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        return str(value)
    np = sys.modules.get("numpy")
    converted = _library_native(value, np, strict, path)
    if converted is not _UNHANDLED:
        return converted
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json_native(dataclasses.asdict(value), strict=strict, path=path)
    if isinstance(value, Mapping):
        return _mapping_native(value, np, strict, path)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_json_native(item, strict=strict, path=f"{path}[{i}]") for i, item in enumerate(items)]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_json_native(value.to_dict(), strict=strict, path=path)
    if strict:
        raise EvalcoreError(
            f"cannot write a value of type {type(value).__name__} as JSON; use numbers, strings, "
            "lists, dicts, numpy or pandas values",
            field=path,
        )
    return str(value)


_UNHANDLED = object()


def _library_native(value: Any, np: Any, strict: bool, path: str) -> Any:
    """A numpy or pandas value (those already imported) as JSON types; ``_UNHANDLED`` for others."""
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, (np.integer, np.floating)):
            return to_json_native(value.item(), strict=strict, path=path)
        if isinstance(value, np.ndarray):
            return to_json_native(value.tolist(), strict=strict, path=path)
    pd = sys.modules.get("pandas")
    if pd is not None:
        if isinstance(value, pd.DataFrame):
            return to_json_native(value.to_dict(orient="records"), strict=strict, path=path)
        if isinstance(value, pd.Series):
            return to_json_native({str(k): v for k, v in value.items()}, strict=strict, path=path)
        if isinstance(value, pd.Index):
            return to_json_native(list(value), strict=strict, path=path)
        if value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
    return _UNHANDLED


def _mapping_native(value: Mapping[Any, Any], np: Any, strict: bool, path: str) -> dict[str, Any]:
    """A mapping with its keys as strings and its values converted (``strict``: keys must be numbers or text)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if (
            strict
            and not isinstance(key, (str, int, float))
            and not (np is not None and isinstance(key, (np.integer, np.floating, np.str_)))
        ):
            raise EvalcoreError(f"keys must be strings or numbers, got {type(key).__name__}", field=path)
        if type(key) is str:
            name = key
        elif isinstance(key, (int, float)) or (np is not None and isinstance(key, np.generic)):
            name = str(to_json_native(key))
        else:
            name = str(key)
        out[name] = to_json_native(item, strict=strict, path=f"{path}.{key}")
    return out


def current_umask() -> int:
    """The process's file-mode creation mask, read without changing it (Linux ``/proc``).

    ``os.umask`` can only be read by setting it, which races with other threads creating
    files; ``/proc/self/status`` reports it directly. Elsewhere the set-and-restore fallback runs.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(
    target: str | os.PathLike[str],
    *,
    suffix: str = ".tmp",
    chmod: int | None = None,
    mkdir: bool = True,
) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; ``os.replace`` it onto ``target`` on success.

    The temporary file (``.<name>.<random><suffix>``, created empty) may be written by anything
    that takes a path (``DataFrame.to_parquet``, ``Figure.savefig``, a subprocess). When the
    ``with`` block raises, the temporary file is deleted and ``target`` is untouched.

    Args:
        target: The final path.
        suffix: Ending of the temporary name (some writers infer the format from it).
        chmod: Permission bits given to the file (default: ``0o666`` less the umask, the mode
            ``open()`` would give; ``mkstemp`` alone would leave ``0o600``).
        mkdir: Create the target's parent folders first.

    Returns:
        A context manager yielding the temporary path.
    """
    target = Path(target)
    if mkdir:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
    except OSError as exc:
        _name_target(exc, target, None)
        raise
    os.close(fd)
    tmp = Path(name)
    try:
        # mkstemp makes the file 0600; a written file gets the mode the user's umask gives
        # (as open() would), unless the caller asks for other bits
        os.chmod(tmp, chmod if chmod is not None else 0o666 & ~current_umask())
        yield tmp
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            _name_target(exc, target, tmp)
        raise


def _name_target(exc: OSError, target: Path, tmp: Path | None) -> None:
    """Make a failed write name the file the user asked for (a write on a full disk names no
    file; a failed rename or mkstemp names the hidden temporary one)."""
    if exc.filename is None or (tmp is not None and str(exc.filename) == str(tmp)) or tmp is None:
        exc.filename = str(target)
        exc.filename2 = None


@contextmanager
def atomic_open(
    target: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str = "utf-8",
    fsync: bool = False,
    chmod: int | None = None,
    mkdir: bool = True,
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``target`` for writing; it replaces ``target`` on success.

    Args:
        target: The final path.
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: Text encoding (ignored for binary modes).
        fsync: Flush and ``os.fsync`` the file before the rename (durable across a crash).
        chmod: Permission bits given to the file (default: ``0o666`` less the umask).
        mkdir: Create the target's parent folders first.

    Returns:
        A context manager yielding the open file.
    """
    with (
        atomic_path(target, chmod=chmod, mkdir=mkdir) as tmp,
        open(tmp, mode, encoding=None if "b" in mode else encoding) as fh,
    ):
        yield fh
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())


def write_bytes_atomic(
    path: str | os.PathLike[str], data: bytes, *, chmod: int | None = None, mkdir: bool = True
) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_open(path, "wb", chmod=chmod, mkdir=mkdir) as fh:
        fh.write(data)


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", chmod: int | None = None, mkdir: bool = True
) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_open(path, "w", encoding=encoding, chmod=chmod, mkdir=mkdir) as fh:
        fh.write(text)


def json_text(obj: Any, **json_kwargs: Any) -> str:
    """``json.dumps`` whose text UTF-8 can always encode (files here are written as UTF-8).

    With ``ensure_ascii=False`` a string holding a lone surrogate (JSON's ``"\\ud800"`` escape
    decodes to one, so any JSON input can carry it) gives text that UTF-8 refuses, and the write
    would fail after all the work was done. Such a value is written with
    ASCII escapes instead, which :func:`json.loads` reads back to the very same string.

    Args:
        obj: JSON-serializable data.
        **json_kwargs: Passed to :func:`json.dumps`.

    Returns:
        The JSON text.
    """
    text = json.dumps(obj, **json_kwargs)
    if not json_kwargs.get("ensure_ascii", True):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(obj, **{**json_kwargs, "ensure_ascii": True})
    return text


def write_json_atomic(
    path: str | os.PathLike[str],
    obj: Any,
    *,
    fsync: bool = False,
    chmod: int | None = None,
    mkdir: bool = True,
    **json_kwargs: Any,
) -> None:
    """Write ``obj`` as one JSON document plus a final newline, atomically.

    Args:
        path: Destination.
        obj: JSON-serializable data.
        fsync: Flush to disk before the rename.
        chmod: Permission bits of the written file.
        mkdir: Create the parent folders first.
        **json_kwargs: Passed to :func:`json.dumps` (``indent``, ``allow_nan``...).
    """
    text = json_text(obj, **json_kwargs)
    with atomic_open(path, "w", fsync=fsync, chmod=chmod, mkdir=mkdir) as fh:
        fh.write(text + "\n")


def write_jsonl_atomic(
    path: str | os.PathLike[str],
    rows: Iterable[Any],
    *,
    fsync: bool = False,
    chmod: int | None = None,
    mkdir: bool = True,
    **json_kwargs: Any,
) -> None:
    """Write ``rows`` as JSON lines (``ensure_ascii=False`` unless given), atomically.

    A row holding a lone surrogate is written with ASCII escapes (see :func:`json_text`).

    Args:
        path: Destination.
        rows: One JSON-serializable value per line.
        fsync: Flush to disk before the rename.
        chmod: Permission bits of the written file.
        mkdir: Create the parent folders first.
        **json_kwargs: Passed to :func:`json.dumps` (``allow_nan``...).
    """
    json_kwargs.setdefault("ensure_ascii", False)
    with atomic_open(path, "w", fsync=fsync, chmod=chmod, mkdir=mkdir) as fh:
        for row in rows:
            fh.write(json_text(row, **json_kwargs) + "\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse a UTF-8 JSON file.

    Args:
        path: The file (a missing file raises ``FileNotFoundError``; callers word that error).

    Returns:
        The decoded value.

    Raises:
        EvalcoreError: The text is not UTF-8 or not valid JSON (message names the file and line).
    """
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise EvalcoreError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", path=path, line=line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalcoreError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None


def not_a_file_reason(path: str | os.PathLike[str], what: str = "file") -> str:
    """Why ``path`` cannot be read as a file, for a message naming it: a folder in its place
    (``"is a folder, not a file"``), or nothing there (``"<what> not found"``).

    Args:
        path: The path that was given for a file.
        what: What the file is (``"pricing file"``, ``"prompt template"``).

    Returns:
        The reason, without the path (:class:`~evalcore.errors.EvalcoreError` adds it).
    """
    if Path(path).is_dir():
        return "is a folder, not a file" + ("" if what == "file" else f" (expected a {what})")
    return f"{what} not found"


def open_text(path: Path) -> IO[str]:
    """Open a text file for reading (UTF-8, a BOM skipped), transparently decompressing ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig", newline="")


def first_undecodable_line(path: str | os.PathLike[str]) -> int | None:
    """The 1-based line of the first bytes of ``path`` that are not UTF-8 (None if all are)."""
    try:
        with open(path, "rb") as fh:
            for line_no, raw in enumerate(fh, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    return line_no
    except OSError:
        return None
    return None


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL (or .jsonl.gz) file.

    Args:
        path: The file.

    Yields:
        The 1-based line number and the decoded JSON object.

    Raises:
        EvalcoreError: When the file is missing (or a folder) or unreadable, a line is not
            valid JSON, or a line is not a JSON object (message names the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise EvalcoreError(not_a_file_reason(path), path=path)
    try:
        # read bytes and decode each line: a line that is not UTF-8 is named by its number
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            for line_no, raw in enumerate(fh, start=1):
                if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise EvalcoreError(
                        f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                        path=path,
                        line=line_no,
                    ) from None
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EvalcoreError(
                        f"invalid JSON ({exc.msg} at column {exc.colno})", path=path, line=line_no
                    ) from None
                if not isinstance(obj, dict):
                    raise EvalcoreError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line_no)
                yield line_no, obj
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise EvalcoreError(f"cannot read file: {exc}", path=path) from None


def check_output_dir(path: str | os.PathLike[str], field: str | None = None) -> Path:
    """Refuse an output folder that cannot be one, before any work is done.

    The folder may be missing (it is created later); then its nearest existing ancestor must
    be a writable folder. A file in the way, or a folder that cannot be written, is refused.

    Args:
        path: The output folder.
        field: The option or parameter that named it (for the message).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        EvalcoreError: A file where the folder (or one of its parents) should be, or a
            folder that cannot be written.
    """
    from evalcore.errors import EvalcoreError

    target = Path(path)
    probe = target
    while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        what = "is a file, not a folder" if probe == target else f"cannot be created: {probe} is a file"
        raise EvalcoreError(what, path=target, field=field)
    if probe.is_symlink() and not probe.exists():
        raise EvalcoreError(f"cannot be created: {probe} is a broken symbolic link", path=target, field=field)
    check = probe if probe.exists() else Path(".")
    if not os.access(check, os.W_OK | os.X_OK):
        where = "" if check == target else f" ({check} is not writable)"
        raise EvalcoreError(f"cannot write here: permission denied{where}", path=target, field=field)
    return target


def check_output_file(path: str | os.PathLike[str], field: str | None = None) -> Path:
    """Refuse an output file that cannot be written (a folder in its place, a read-only or
    missing-and-uncreatable folder), before any work is done.

    Raises:
        EvalcoreError: As :func:`check_output_dir`, or a folder where the file should be.
    """
    from evalcore.errors import EvalcoreError

    target = Path(path)
    if target.is_dir():
        raise EvalcoreError("is a folder, not a file", path=target, field=field)
    check_output_dir(target.parent if str(target.parent) else Path("."), field=field)
    return target


# ------------------------------------------------------------------ bounded values, safe text
BOUNDS = {"depth": 32, "chars": 2000, "items": 1000, "nodes": 20_000, "key_chars": 200, "total_chars": 500_000}
"""Default caps of :func:`bounded` (nesting, one string, one list or dict, values and string
characters in all, one dict key)."""


_EXCERPT_END = re.compile(r" … \[\d+ characters in all, sha256 [0-9a-f]{64}\]\Z")


def excerpt(text: str, limit: int = BOUNDS["chars"]) -> str:
    """``text`` when at most ``limit`` characters long, else its first ``limit`` characters and
    ``… [N characters in all, sha256 HEX]`` (SHA-256 of the whole text as UTF-8); an excerpt
    is its own excerpt (its text within ``limit``), so the hash stays the original's."""
    if len(text) <= limit or (len(text) <= limit + 120 and _EXCERPT_END.search(text[-110:])):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{text[:limit]} … [{len(text)} characters in all, sha256 {digest}]"


def bounded(value: Any, **caps: int) -> Any:
    """``value`` as native JSON values (:func:`to_json_native`) within hard caps (:data:`BOUNDS`,
    ``caps`` override them), whatever it holds: the one bound on values that reach results.

    A list or dict deeper than ``depth`` becomes ``"<list nested deeper than N levels>"`` (the
    walk never goes deeper); a string (a key) longer than ``chars`` (``key_chars``) becomes its
    :func:`excerpt`; a list or dict keeps ``items`` entries and a ``"… N more items"`` marker;
    past ``nodes`` values or ``total_chars`` string characters in all, a value is ``"<cut: …>"``.
    So the JSON has at most about ``total_chars + 110 · nodes`` characters (long integers aside).
    """
    cap = {**BOUNDS, **caps}
    left = [cap["nodes"], cap["total_chars"]]
    cut = "<cut: the value's size cap was reached>"

    def text(v: str, limit: int) -> str:
        room = min(limit, left[1])
        out = excerpt(v, room) if room > 0 or not v else cut
        left[1] -= len(out)
        return out

    def walk(v: Any, level: int) -> Any:
        if left[0] <= 0:
            return cut
        left[0] -= 1
        if v is None or isinstance(v, (bool, int, float)):
            return to_json_native(v)
        if isinstance(v, str):
            return text(str(v), cap["chars"])
        if isinstance(v, (Mapping, list, tuple, set, frozenset)):
            if level >= cap["depth"]:
                return f"<{'dict' if isinstance(v, Mapping) else 'list'} nested deeper than {cap['depth']} levels>"
            n, more = len(v), f"{len(v) - cap['items']} more items"
            if isinstance(v, Mapping):
                pairs = [
                    (k if isinstance(k, str) else str(to_json_native(k)), x) for k, x in list(v.items())[: cap["items"]]
                ]
                out = {text(k, cap["key_chars"]): walk(x, level + 1) for k, x in pairs}
                return {**out, "…": more} if n > cap["items"] else out
            seq = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v[: cap["items"]])
            kept = [walk(x, level + 1) for x in seq[: cap["items"]]]
            return [*kept, f"… {more}"] if n > cap["items"] else kept
        try:  # numpy, pandas, dataclasses …: converted, then bounded like the rest
            native = to_json_native(v)
        except (RecursionError, MemoryError, ValueError, TypeError) as exc:
            return f"<a {type(v).__name__} that could not be converted: {type(exc).__name__}>"
        left[0] += 1
        return walk(native, level) if isinstance(native, (dict, list, str)) else native

    return walk(value, 0)


_BIDI = (0x2028, 0x2029, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROL.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", **{c: f"\\u{c:04x}" for c in _BIDI}})


def terminal_safe(text: Any, *, keep_newlines: bool = False) -> str:
    """``str(text)`` with every control character (bidirectional ones included) and lone
    surrogate shown as its escape (``\\x1b``, ``\\u202e``, ``\\udcff``), so that what an agent
    wrote cannot drive a terminal (clear it, write the clipboard, forge a line of its own);
    ``keep_newlines`` keeps line breaks in text the caller composed line by line."""
    s = (text if isinstance(text, str) else str(text)).translate(
        _CONTROL if not keep_newlines else {**_CONTROL, 0x0A: "\n"}
    )
    return s.encode("utf-8", "backslashreplace").decode("utf-8")
