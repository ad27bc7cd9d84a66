"""The replies of one :meth:`~evalcore.sandbox.pool.SandboxPool.map` call, with a hook called as
each arrives (a progress bar's: ``evalcore score humaneval`` counts the samples checked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Hook = Callable[[], None]
"""Called with no arguments, from the pool's threads, each time a reply is stored."""
Msg = dict[str, Any]
"""A job or a reply between the pool and its workers (marshal-able fields)."""


class Replies(list[Any]):
    """``n`` replies in the order of the jobs (``None`` until stored); ``done()`` runs each time
    one is stored.

    Args:
        n: How many jobs.
        done: The hook (``None``: a plain list).
    """

    def __init__(self, n: int, done: Hook | None = None) -> None:
        super().__init__([None] * n)
        self._done = done

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        if self._done is not None:
            self._done()
