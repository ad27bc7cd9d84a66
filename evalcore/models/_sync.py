"""Run coroutines from blocking code, also inside Jupyter where a loop already runs."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from evalcore.models._types import ChatModel

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="evalcore-sync-loop", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a long-lived background event loop and return its result.

    One loop for all blocking calls lets async clients (and their connection pools) be reused
    between calls, and works whether or not the caller's thread already runs a loop.

    Args:
        coro: The coroutine to run.

    Returns:
        Whatever the coroutine returns (its exception is raised here).

    Raises:
        KeyboardInterrupt: The caller was interrupted (Ctrl-C, a Jupyter interrupt) while
            waiting; the coroutine is cancelled on the background loop first (it would run on
            there otherwise), and its cleanup is given up to 2 s to finish.
    """
    loop = _background_loop()
    ctx = contextvars.copy_context()
    finished = threading.Event()

    async def _in_caller_context() -> T:
        try:
            for var, value in ctx.items():  # the caller's context variables travel with the call
                var.set(value)
            return await coro
        finally:
            finished.set()

    future = asyncio.run_coroutine_threadsafe(_in_caller_context(), loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        finished.wait(timeout=2.0)
        raise


def check_reachable(model: ChatModel) -> None:
    """Ask a remote endpoint whether it answers (a model without ``acheck`` is not asked).

    Raises:
        EvalcoreError: The endpoint does not answer.
    """
    check = getattr(model, "acheck", None)
    if check is not None:
        run_sync(check())
