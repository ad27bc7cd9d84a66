"""asyncio for check candidates: an event loop's self-pipe made of an eventfd (candidate side).

A check candidate may make no pipe or socket (their inode numbers come from a kernel counter
that a later sample reads, see docs/sandbox.md, "Channels between samples"), and asyncio's
selector event loop makes a socket pair at its start only to wake itself up (from another
thread, ``call_soon_threadsafe``, or a signal): ``asyncio.run`` failed with ``PermissionError``.
Here that pair is an eventfd (which takes no number from such a counter: every eventfd shares
one anonymous inode), for ``asyncio.selector_events`` alone; everything else of ``socket`` stays
as it is (and refused). Imported by :func:`.candidate.candidate_main` only for a program that
names ``asyncio``; standard library only.

Where a sample's filter refuses epoll (check candidates; script samples without a memory cgroup,
see :func:`.linux.seccomp_program`), ``selectors`` imported in the sample picks ``PollSelector``
by itself; :func:`poll_if_no_epoll` makes the same choice for a ``selectors`` imported before
the filter (in the worker), so that asyncio's loops and ``DefaultSelector()`` work there too.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _End:
    """One end of the wake-up pair, as much of a socket as asyncio's self-pipe uses: ``send``
    wakes the loop (adds 1 to the eventfd's counter), ``recv`` reads the counter back as one
    zero byte per wake-up batch (asyncio reads signal numbers from it; zero means none)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def setblocking(self, flag: bool) -> None:  # the eventfd is non-blocking from the start
        pass

    def send(self, data: bytes) -> int:
        os.eventfd_write(self._fd, 1)
        return len(data)

    def recv(self, n: int) -> bytes:
        os.eventfd_read(self._fd)  # BlockingIOError when nothing is pending, as a socket
        return b"\0"

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


class _SocketModule:
    """``socket`` as ``asyncio.selector_events`` sees it: ``socketpair`` gives the eventfd pair
    (called there for the self-pipe only), every other name is the real module's."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def socketpair(self, *args: Any) -> tuple[_End, _End]:
        fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        return _End(fd), _End(os.dup(fd))


def mentions_asyncio(code: Any) -> bool:
    """Whether a compiled program (or a function inside it) names ``asyncio``."""
    stack = [code]
    while stack:
        here = stack.pop()
        if "asyncio" in here.co_names:
            return True
        stack.extend(c for c in here.co_consts if type(c) is type(code))
    return False


def install() -> None:
    """Give asyncio's selector event loops the eventfd self-pipe (where ``os.eventfd`` exists)."""
    if not hasattr(os, "eventfd"):
        return
    import asyncio.selector_events as selector_events

    real = sys.modules["socket"]
    setattr(selector_events, "socket", _SocketModule(real))  # noqa: B010 - a module's global, for it alone


def poll_if_no_epoll() -> None:
    """``selectors.DefaultSelector`` as a fresh ``import selectors`` would choose it here.

    ``selectors`` picks its default once, at import: ``EpollSelector`` where ``select.epoll()``
    works. A module imported before the sample's filter refused epoll (in the worker, which
    does not import it today) would keep a default that fails with ENOSYS; it gets
    ``PollSelector``, as ``selectors._can_use`` would have chosen. asyncio's selector loops
    look the default up when made, so they follow. Where ``selectors`` was not imported this
    is one dictionary look-up (no per-sample cost worth the name).
    """
    selectors: Any = sys.modules.get("selectors")
    if selectors is None or getattr(selectors, "DefaultSelector", None) is not getattr(selectors, "EpollSelector", 0):
        return
    import select

    try:
        select.epoll().close()
    except OSError:  # refused by the sample's filter (ENOSYS)
        selectors.DefaultSelector = selectors.PollSelector
