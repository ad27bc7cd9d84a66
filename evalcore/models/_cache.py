"""Request hashes and the SQLite response cache."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._io import json_text
from evalcore.errors import EvalcoreError
from evalcore.models._types import Completion, GenerationParams, Message

CACHE_ENV = "EVALCORE_CACHE"
#: Seconds a write waits for another process's lock on the cache (``$EVALCORE_CACHE_LOCK_TIMEOUT``).
LOCK_TIMEOUT_ENV = "EVALCORE_CACHE_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 10.0


def _canonical(obj: Any) -> str:
    # json_text: a lone surrogate is escaped (UTF-8 cannot encode it); other text is unchanged.
    return json_text(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(messages: Sequence[Message], params: GenerationParams) -> str:
    """SHA-256 of the exact request: messages and generation parameters.

    ``hash = sha256(canonical_json({"messages": messages, "params": params}))``

    Args:
        messages: Chat messages.
        params: Generation parameters.

    Returns:
        64 hex digits.
    """
    body = {"messages": [dict(m) for m in messages], "params": params.to_dict()}
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def cache_key(model: str, endpoint: str, messages: Sequence[Message], params: GenerationParams, epoch: int) -> str:
    """The response-cache key: model, endpoint, messages, generation parameters and epoch.

    Args:
        model: Model name (``ChatModel.name``).
        endpoint: Where the model answers (base URL or model file).
        messages: Chat messages.
        params: Generation parameters.
        epoch: Repetition index of the item.

    Returns:
        64 hex digits.
    """
    body = {"model": model, "endpoint": endpoint, "epoch": int(epoch), "request": request_hash(messages, params)}
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


_ADVICE = "delete the file (it only saves model calls) or run with --no-cache"


def _lock_timeout() -> float:
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None or raw == "":
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value > 3600:
        raise EvalcoreError(f"must be seconds in [0, 3600], got {raw[:40]!r}", field=LOCK_TIMEOUT_ENV)
    return value


def _holders(path: Path) -> list[str]:
    """``pid (command)`` of the other processes that have the cache (or its WAL) open.

    Read from ``/proc/*/fd``; processes of other users are not visible to an unprivileged one.
    """
    targets = {str(path.resolve()), str(path.resolve()) + "-wal", str(path.resolve()) + "-shm"}
    found: list[str] = []
    me = os.getpid()
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if not any(os.readlink(f"/proc/{pid}/fd/{fd}") in targets for fd in fds):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                # one line: a command line may hold newlines (``python -c "..."``)
                cmd = " ".join(fh.read(200).replace(b"\0", b" ").decode("utf-8", "replace").split())
        except OSError:
            continue
        found.append(f"{pid} ({cmd[:80] or '?'})")
        if len(found) >= 5:
            break
    return found


def _runs_using(path: Path) -> str:
    """The run folders beside a shared cache (``<base>/.cache/responses.sqlite``), named for a message."""
    base = path.parent.parent if path.parent.name == ".cache" else None
    if base is None:
        return ""
    try:
        runs = sorted(p.name for p in base.iterdir() if (p / "config.json").is_file())
    except OSError:
        return ""
    if not runs:
        return ""
    shown = ", ".join(runs[:5]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")
    return f" (it serves every run in {base}: {shown})"


def _no_room(path: Path) -> bool:
    """Whether the cache's file system has (next to) no room left for this process.

    SQLite in WAL mode reports a write that found no room as a disk I/O error
    (``SQLITE_IOERR_WRITE``, ``_SHMSIZE``…), not as ``SQLITE_FULL``; the free space tells them apart.
    """
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    free = st.f_bfree if os.geteuid() == 0 else st.f_bavail  # root may use the reserved blocks
    return free * st.f_frsize < 1 << 20


def cache_error(path: Path, exc: BaseException) -> EvalcoreError:
    """One line for a failure of the cache: damaged, locked, full, or unreadable, told apart.

    Only a damaged file is worth deleting, and the message says which runs share it; a lock
    names who holds it; a full disk says so with the path.
    """
    code = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    errno_ = getattr(exc, "errno", None)
    full = code == "SQLITE_FULL" or "database or disk is full" in text or errno_ == 28
    if full or (code.startswith("SQLITE_IOERR") and _no_room(path)):
        error = EvalcoreError(f"no space left on device: {path} (the response cache could not be written)")
        error.path = str(path)  # named once, in the message, as every "no space" line does
        return error
    if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED") or "database is locked" in text:
        who = _holders(path)
        held = f"held by {', '.join(who)}" if who else "held by another process"
        return EvalcoreError(
            f"the response cache is locked ({held}) and stayed locked for {_lock_timeout():g} s; wait for it, "
            f"raise ${LOCK_TIMEOUT_ENV}, or run with --no-cache",
            path=path,
        )
    if code in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in text or "not a database" in text:
        return EvalcoreError(f"the response cache is damaged: {text}; {_ADVICE}{_runs_using(path)}", path=path)
    if code.startswith("SQLITE_READONLY") or code.startswith("SQLITE_PERM") or code.startswith("SQLITE_CANTOPEN"):
        return EvalcoreError(f"cannot use the response cache: {text} (permissions?), or run with --no-cache", path=path)
    if code.startswith("SQLITE_IOERR"):
        return EvalcoreError(f"input/output error on the response cache: {text}; run with --no-cache", path=path)
    return EvalcoreError(f"cannot use the response cache: {text}; run with --no-cache", path=path)


def _decode(text: Any) -> Completion | None:
    """The completion a cache entry holds, or None when the entry is not one (damaged)."""
    try:
        d = json.loads(text)
        if not isinstance(d, dict) or not isinstance(d.get("text"), str) or d.get("error"):
            return None
        usage = d.get("usage") or {}
        if not isinstance(usage, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in usage.values()
        ):
            return None
        return Completion.from_dict(d)
    except (TypeError, ValueError, KeyError):  # JSONDecodeError is a ValueError
        return None


def cacheable(params: GenerationParams) -> bool:
    """Whether a request's answer may be cached and served again: greedy (temperature 0) or
    seeded. A sampled request without a seed is a fresh random draw each time; serving the
    first draw again would make a second run repeat the first one's samples (zero variance
    between runs), so such a request is neither looked up nor stored."""
    return params.temperature == 0 or params.seed is not None


class ResponseCache:
    """Successful completions in SQLite, so an identical request never calls the model twice.

    Errors are never cached (a retry later may succeed), nor is a sampled request without a
    seed (:func:`cacheable`; the runner checks it). Safe to share between threads of one
    process; several processes may share the file (WAL journal).

    Args:
        path: The SQLite file (its folder is created).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=_lock_timeout())
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                "completion TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise cache_error(self.path, exc) from exc
        self.hits = 0
        self.misses = 0
        self.unreadable = 0
        """Entries found but not decodable as a completion (treated as misses, then replaced)."""

    def _db_error(self, exc: sqlite3.DatabaseError) -> EvalcoreError:
        return cache_error(self.path, exc)

    def get(self, key: str) -> Completion | None:
        """The cached completion for ``key``, or None."""
        try:
            with self._lock:
                row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._db_error(exc) from exc
        comp = _decode(row[0]) if row is not None else None
        if comp is None:
            if row is not None:  # a damaged entry is never served: asked again, then replaced
                self.unreadable += 1
                if self.unreadable == 1:
                    import warnings

                    warnings.warn(
                        f"{self.path}: a cached response could not be read; the "
                        "request is asked again and its entry replaced",
                        stacklevel=2,
                    )
            self.misses += 1
            return None
        self.hits += 1
        return comp

    def put(self, key: str, model: str, completion: Completion) -> None:
        """Store a successful completion (failed ones are ignored)."""
        if not completion.ok:
            return
        data = json_text(completion.to_dict(), ensure_ascii=False)  # SQLite text must be UTF-8
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", (key, model, data, time.time())
                )
                self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise self._db_error(exc) from exc

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
