"""What a failed Dask future tells the user: the remote exception's type and message, or, for a
task Dask cancelled or lost, what happened in plain words (never ``NoneType: None``).

``Future.exception()`` answers ``None`` for any status other than ``"error"``: a task the
scheduler cancelled (``"cancelled"``: e.g. *lost dependencies*, when data it needs was released
or lost with a worker) or whose result was lost has no exception of its own, and formatting that
``None`` gave ``NoneType: None``. Here a cancelled future's :class:`FutureCancelledError` (which
carries the scheduler's reason) is read through ``Future.result()``, and each case is named.
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["describe_exception", "future_exception", "future_error_text"]

_MAX_CHARS = 600  # of a remote message kept in the one-line error

# The scheduler's reasons for cancelling a task (``cancelled-keys`` messages), in words.
_REASONS = {
    "lost dependencies": (
        "data it needs is no longer on the cluster (released, or lost with a worker, before the task ran)"
    ),
    "already forgotten": "the scheduler had already forgotten it (released before it ran)",
}


def describe_exception(exc: BaseException | None) -> str:
    """``Type: message`` of an exception from the cluster, with the plain case for cancellations.

    Args:
        exc: What a future raised or held (``None``: Dask gave no exception at all).

    Returns:
        One line, e.g. ``ValueError: no third unit``, ``KilledWorker: …``, or ``cancelled by the
        Dask scheduler: data it needs is no longer on the cluster (…)``.
    """
    if exc is None:
        return "Dask reported the task as not finished without giving an exception"
    name = type(exc).__name__
    if name in {"FutureCancelledError", "CancelledError"}:
        reason = str(getattr(exc, "reason", "") or "")
        said = _REASONS.get(reason, f"reason: {reason}" if reason and reason != "unknown" else "no reason given")
        msg = getattr(exc, "msg", None)
        return f"cancelled by the Dask scheduler: {said}" + (f" ({msg})" if msg else "")
    text = str(exc).strip()
    if not text:
        args = getattr(exc, "args", ())
        text = repr(args[0]) if args else "(no message)"
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(line) > _MAX_CHARS:
        line = line[: _MAX_CHARS - 1] + "…"
    return f"{name}: {line}"


def future_exception(future: Any) -> BaseException | None:
    """The exception behind a done, unsuccessful future: the remote one (status ``"error"``) or
    the scheduler's cancellation (status ``"cancelled"``, read through ``result()``)."""
    if future.status == "error":
        return future.exception()
    if future.cancelled():
        try:
            future.result(timeout=5)
        except BaseException as exc:  # noqa: BLE001 - the cancellation, with its reason
            return exc
    return None


def future_error_text(future: Any) -> str:
    """One line saying why ``future`` failed (see :func:`describe_exception`); the status is named
    where Dask gave nothing else (e.g. ``lost``: its result was lost with a worker)."""
    exc = None
    with contextlib.suppress(Exception):
        exc = future_exception(future)
    if exc is None:
        status = getattr(future, "status", "unknown")
        if status == "lost":
            return "its result was lost with the worker that held it"
        return f"Dask reported the task as {status!r} without giving an exception"
    return describe_exception(exc)
