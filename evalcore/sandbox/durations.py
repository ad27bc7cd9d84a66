"""How long each test took, remembered so that the pool hands the longest-known jobs out first:
the key a job's duration is kept under, and the file that keeps them between processes
(:func:`durations_file`).

Split from :mod:`.pool`, which re-exports these names. The parent's side.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_DURATIONS = 100_000
# Durations kept on disk between processes (see durations_file): at most this many, the
# newest first.
_MAX_SAVED_DURATIONS = 20_000
_MAX_DURATIONS_FILE = 4 * 1024 * 1024
DURATIONS_ENV = "EVALCORE_SANDBOX_DURATIONS"


def _cost_key(job: dict[str, Any]) -> str:
    """What a job's duration is remembered under: a checksum of its test and entry point, or
    of its program and input. The same in every process (it is saved, see
    :func:`durations_file`); a collision only changes the order jobs are handed out in."""
    import zlib

    if job.get("mode") == "check":
        parts = ("check", job.get("test"), job.get("entry_point"))
    else:
        parts = (str(job.get("mode")), job.get("source"), job.get("stdin"))
    data = "\0".join("" if p is None else str(p) for p in parts).encode("utf-8", "surrogatepass")
    kind = "c" if parts[0] == "check" else "s"  # only "c" keys are saved
    return f"{kind}{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def durations_file() -> str | None:
    """Where the pool keeps how long each test took, for the next process to hand out the
    longest first (a fresh ``evalcore score humaneval`` otherwise meets HumanEval/75, a
    quarter of the batch's work, wherever the file puts it, and one worker finishes alone).

    ``$EVALCORE_SANDBOX_DURATIONS`` names the file (empty: keep nothing on disk); else
    ``$XDG_CACHE_HOME/evalcore/sandbox-durations.json`` (``~/.cache`` without it). It holds
    checksums of tests and seconds, nothing else: never a verdict, a test or a program. A
    missing, unreadable or malformed file is ignored (it only orders the work).

    Returns:
        The path, or None when nothing is to be kept.
    """
    given = os.environ.get(DURATIONS_ENV)
    if given is not None:
        return given or None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (which the XDG spec says to ignore)
        base = os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(base):
            return None
    return os.path.join(base, "evalcore", "sandbox-durations.json")


def _load_durations(path: str | None) -> dict[str, float]:
    """The durations saved at ``path`` (empty when there are none or the file is not ours)."""
    if not path:
        return {}
    import json
    import math

    try:
        with open(path, encoding="utf-8") as fh:
            if os.fstat(fh.fileno()).st_size > _MAX_DURATIONS_FILE:
                return {}  # not one of ours (ours stay under a megabyte)
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    rows = (
        data.get("durations") if isinstance(data, dict) and data.get("format") == "evalcore-sandbox-durations" else None
    )
    if not isinstance(rows, dict):
        return {}
    out: dict[str, float] = {}
    for key, value in list(rows.items())[:_MAX_SAVED_DURATIONS]:
        if (
            isinstance(key, str)
            and key.startswith("c")
            and type(value) in (int, float)
            and math.isfinite(value)
            and value >= 0
        ):
            out[key] = float(value)
    return out


def _save_durations(path: str | None, durations: dict[str, float]) -> None:
    """Write the newest durations to ``path`` atomically; any failure is ignored."""
    if not path:
        return
    import json

    from evalcore._io import write_text_atomic

    rows = [(k, v) for k, v in durations.items() if k.startswith("c")][-_MAX_SAVED_DURATIONS:]
    text = json.dumps(
        {"format": "evalcore-sandbox-durations", "version": 1, "durations": {k: round(v, 6) for k, v in rows}}
    )
    try:
        write_text_atomic(path, text)
    except OSError:
        pass
