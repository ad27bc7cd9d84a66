"""The ``.partial`` results file of a cluster run, authenticated so that a resume trusts only its own rows.

A resumed run adopts the verdicts already written instead of scoring those samples again, so the
file must not be a way in: an edited row (``passed`` false → true), a row copied from elsewhere or
a link planted at the path must change no verdict and no file outside the run.

- **A per-run secret key**: 32 random bytes (:func:`secrets.token_bytes`), made when a run starts
  afresh and kept outside the run's folder, in the user's private state folder
  (``$XDG_STATE_HOME`` or ``~/.local/state``, then ``evalcore/partial-keys/<sha256 of the
  partial's resolved path>``; folders 0700, the file 0600, written atomically). It is removed
  once the results file is in place.
- **A MAC per row**: HMAC-SHA256 (RFC 2104) under that key over the verdict settings' SHA-256,
  the row's index and the row's exact bytes; one hex line per row in ``<partial>.mac``, written
  and flushed *before* the row (a client killed between the two leaves a MAC without its row,
  which is dropped, never a row without its MAC).
- **On resume** rows are adopted only while their MAC verifies, ``passed`` is a JSON boolean and
  the row is the result of the samples file's row of that index; from the first row that fails,
  it and every row after it are scored again (one stderr line says how many were kept and why).
  No key (the state folder deleted, a ``.partial`` of an earlier evalcore): nothing is adopted.
  The kept prefix is written back atomically (a temporary file and a rename), never truncated in
  place.
- **No link followed**: the ``.partial`` and its sidecars are opened with ``O_NOFOLLOW``; a
  symbolic link at any of those paths is refused (one :class:`~evalcore.errors.EvalcoreError`
  line naming it) and its target is left untouched.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._io import atomic_path, read_jsonl
from evalcore.errors import EvalcoreError

__all__ = ["mac_path", "key_path", "refuse_links", "read_nofollow", "PartialWriter", "resume_partial", "forget_key"]

KEY_BYTES = 32


def mac_path(partial: Path) -> Path:
    """The sidecar holding one HMAC-SHA256 (hex) per row of ``partial``."""
    return partial.with_name(partial.name + ".mac")


def _resolved(partial: Path) -> Path:
    """``partial``'s absolute path, its folder resolved but not the file itself (never a link's target)."""
    return Path(partial).absolute().parent.resolve() / Path(partial).name


def key_path(partial: Path) -> Path:
    """Where the secret key of ``partial``'s run is kept (outside the run's folder)."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    name = hashlib.sha256(os.fsencode(str(_resolved(partial)))).hexdigest()
    return root / "evalcore" / "partial-keys" / name


def _link_error(path: Path) -> EvalcoreError:
    return EvalcoreError(
        "is a symbolic link: refused (evalcore never follows a link at the path of a results file or "
        "its sidecars; the link's target was not touched): remove the link and rerun",
        path=path,
    )


def refuse_links(paths: Sequence[Path]) -> None:
    """Refuse, before anything changes, where any of ``paths`` is a symbolic link."""
    for path in paths:
        if os.path.islink(path):
            raise _link_error(path)


def _open(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` with ``O_NOFOLLOW``: a link at ``path`` is refused, not followed."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise _link_error(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EvalcoreError("is not a regular file: refused", path=path)
    return fd


def read_nofollow(path: Path) -> bytes:
    """The bytes of ``path``, refusing a link at it."""
    with os.fdopen(_open(path, os.O_RDONLY), "rb") as fh:
        return fh.read()


def _load_key(partial: Path) -> bytes | None:
    """The run's key, or None where there is none to trust (missing, not ours, readable by others)."""
    path = key_path(partial)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return None
        try:
            key = bytes.fromhex(fh.read(4 * KEY_BYTES).decode("ascii").strip())
        except ValueError:
            return None
    return key if len(key) == KEY_BYTES else None


def _new_key(partial: Path) -> bytes:
    """A fresh random key for ``partial``'s run, written atomically (folder 0700, file 0600)."""
    path = key_path(partial)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for folder in (path.parent.parent, path.parent):
            os.chmod(folder, 0o700)
        with atomic_path(path, chmod=0o600, mkdir=False) as tmp, open(tmp, "w", encoding="ascii") as fh:
            fh.write(key.hex() + "\n")
    except OSError as exc:
        raise EvalcoreError(
            f"cannot keep the key of a resumable run there ({exc.strerror or exc}): set XDG_STATE_HOME to a "
            "private folder you can write",
            path=path.parent,
        ) from None
    return key


def forget_key(partial: Path) -> None:
    """Remove the run's key (its results file is in place: nothing is left to resume)."""
    key_path(partial).unlink(missing_ok=True)


def row_mac(key: bytes, context: bytes, index: int, raw: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) of row ``index`` (0-based) with exact bytes ``raw``, bound to the
    verdict settings' digest ``context``: its hex text."""
    msg = context + b"\n" + str(index).encode("ascii") + b"\n" + raw
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def settings_context(settings: dict[str, Any]) -> bytes:
    """The SHA-256 of the verdict settings a MAC is bound to (a row scored with another
    ``--timeout`` or other problems does not verify)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest().encode("ascii")


class PartialWriter:
    """Appends rows to ``partial`` and their MACs to ``<partial>.mac`` (each opened ``O_NOFOLLOW``).

    Args:
        partial: The ``.partial`` file (made by :func:`resume_partial`).
        key: The run's key.
        context: :func:`settings_context` of the run.
        start: The index of the next row (rows already in the file).
    """

    def __init__(self, partial: Path, key: bytes, context: bytes, start: int) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        self._macs = os.fdopen(_open(mac_path(partial), flags), "ab")
        try:
            self._rows = os.fdopen(_open(partial, flags), "ab")
        except BaseException:
            self._macs.close()
            raise
        self._key, self._context, self.index = key, context, start

    def write_rows(self, lines: Sequence[str]) -> None:
        """Append whole JSON lines (each ending in a newline): their MACs first, then the rows."""
        raws = [line.encode("utf-8") for line in lines]
        macs = [row_mac(self._key, self._context, self.index + i, raw) + "\n" for i, raw in enumerate(raws)]
        self._macs.write("".join(macs).encode("ascii"))
        self._macs.flush()
        self._rows.write(b"".join(raws))
        self._rows.flush()
        self.index += len(raws)

    def close(self) -> None:
        """Close both files."""
        self._rows.close()
        self._macs.close()

    def __enter__(self) -> PartialWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _say(text: str) -> None:
    print(f"evalcore: {text}", file=sys.stderr, flush=True)


def resume_partial(
    partial: Path, samples: Path, settings: dict[str, Any], counts: dict[str, list[int]]
) -> tuple[int, PartialWriter]:
    """Keep the rows of an earlier run of ``partial`` that verify; open it for the rest.

    Rows are adopted in order while their MAC verifies, ``passed`` is a JSON boolean and the row
    is the result of the samples file's row of that index; the first that fails and every row
    after it are dropped (scored again). The kept prefix (possibly empty) is written back
    atomically to ``partial`` and its ``.mac``; on a fresh start (or no key) a new key is made.
    Fills ``counts`` with the kept rows' (n, passed) per task.

    Returns:
        The number of rows kept, and the writer for the next ones.

    Raises:
        EvalcoreError: A link at the partial or its sidecar; a verified row that is not the
            result of the samples file's row (another samples file), or more verified rows than
            samples.
    """
    refuse_links([partial, mac_path(partial)])
    context = settings_context(settings)
    key = _load_key(partial) if os.path.lexists(partial) else None
    kept_rows: list[bytes] = []
    kept_macs: list[bytes] = []
    if os.path.lexists(partial):
        data = read_nofollow(partial)
        lines = data.splitlines(keepends=True)
        if key is None:
            if lines:
                _say(
                    f"{partial}: no key to check its {len(lines):,} rows ({key_path(partial)} is missing: its state "
                    "folder was deleted, or an earlier evalcore wrote it): none is trusted, all are scored again"
                )
        else:
            macs = read_nofollow(mac_path(partial)).splitlines() if os.path.lexists(mac_path(partial)) else []
            why = _verify(partial, lines, macs, (key, context), samples, counts, kept_rows)
            kept_macs = [m + b"\n" for m in macs[: len(kept_rows)]]
            if why:
                _say(
                    f"{partial}: kept its first {len(kept_rows):,} rows; row {len(kept_rows) + 1} {why}: it and the "
                    f"{len(lines) - len(kept_rows) - 1:,} rows after it are scored again"
                )
    if key is None:
        key = _new_key(partial)
    for path, parts in ((mac_path(partial), kept_macs), (partial, kept_rows)):
        with atomic_path(path, mkdir=False) as tmp, open(tmp, "wb") as fh:
            fh.write(b"".join(parts))
    return len(kept_rows), PartialWriter(partial, key, context, len(kept_rows))


def _verify(
    partial: Path,
    lines: list[bytes],
    macs: list[bytes],
    secret: tuple[bytes, bytes],
    samples: Path,
    counts: dict[str, list[int]],
    kept: list[bytes],
) -> str | None:
    """Append to ``kept`` the rows that verify, in order; the reason the first other row fails (None: all kept)."""
    key, context = secret
    rows = read_jsonl(samples)
    for index, raw in enumerate(lines):
        if not raw.endswith(b"\n"):
            return "is torn (the client stopped while writing it)"
        if index >= len(macs) or not hmac.compare_digest(
            macs[index].strip(), row_mac(key, context, index, raw).encode("ascii")
        ):
            return "does not carry this run's MAC (edited, copied, or scored with other settings)"
        try:
            row = json.loads(raw)
        except ValueError:
            return "is not JSON"
        if not isinstance(row, dict) or not isinstance(row.get("passed"), bool):
            return "has no JSON boolean 'passed'"
        try:
            number, sample = next(rows)
        except StopIteration:
            raise EvalcoreError(f"holds more rows than {samples}: delete it to start over", path=partial) from None
        if row.get("task_id") != sample["task_id"] or row.get("completion") != sample["completion"]:
            raise EvalcoreError(
                f"row {index + 1} is not the result of {samples} line {number} (another samples file?): "
                "delete it to start over",
                path=partial,
            )
        counts[sample["task_id"]][0] += 1
        counts[sample["task_id"]][1] += int(row["passed"] is True)
        kept.append(raw)
    return None
