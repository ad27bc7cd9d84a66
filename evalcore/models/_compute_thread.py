"""One thread of this process runs every OpenMP computation of the embedded models.

llama.cpp (built with OpenMP, libgomp) computes each graph in a team of threads that belongs to
the thread that started it: every Python thread that calls the model gets a team of its own,
which lives as long as that thread does. libgomp counts every team's threads of the process,
and once they outnumber the CPUs it stops letting idle workers spin between graphs: each
barrier then puts them to sleep and wakes them (90,000 context switches a thread in 15 s
instead of 800). Two ways got there: a run inside Jupyter calls the model from the pool threads
of an event loop (``asyncio.to_thread``), where consecutive calls land on different pool
threads; and torch (sentence-transformers' MiniLM, the reference agent's tool search, until
MiniLM was computed with NumPy) ran its own team, in the same libgomp: llama-cpp's
``libgomp.so.1`` resolves to the copy torch loaded first (a user's code that imports torch
beside the model still does). Two llama threads then generated 28 tokens/s where one team of
two generates 72, and the notebook suite's model notebooks ran about 1.3x slower with two
threads than with one.

Here every such computation (llama.cpp's calls, MiniLM's ``encode`` with one BLAS thread) is
handed to one long-lived daemon thread, so the process has one team whatever thread asks; the results do not
depend on it (the same model, inputs and thread count). A caller that stops waiting (Ctrl-C)
leaves the thread to finish its call, as a call in the caller's own thread would have to; a
forked child starts its own thread.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple["concurrent.futures.Future[Any]", Callable[..., Any], tuple[Any, ...]]

_start_lock = threading.Lock()
_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_thread: threading.Thread | None = None


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        future, fn, args = jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            result = fn(*args)
        except BaseException as exc:  # handed to the waiting caller
            future.set_exception(exc)
        else:
            future.set_result(result)


def _worker() -> threading.Thread:
    global _thread
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, args=(_jobs,), name="evalcore-compute", daemon=True)
            _thread.start()
        return _thread


def on_compute_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` on the compute thread and return its result (its exception is raised here).

    Called on the compute thread itself, ``fn`` runs at once (no queue, so nesting cannot deadlock).
    ``fn`` must not wait for a lock that the caller holds: the caller keeps holding it meanwhile.

    Args:
        fn: The computation.
        *args: Its arguments.

    Returns:
        What ``fn`` returned.
    """
    worker = _worker()
    if threading.current_thread() is worker:
        return fn(*args)
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    _jobs.put((future, fn, args))
    return future.result()


def start_on_compute_thread(fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
    """Queue ``fn(*args)`` for the compute thread and return at once (its future holds the outcome).

    Args:
        fn: The computation.
        *args: Its arguments.

    Returns:
        The future of ``fn``'s result.
    """
    _worker()
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    _jobs.put((future, fn, args))
    return future


def _after_fork_in_child() -> None:
    global _jobs, _thread, _start_lock
    _jobs = queue.SimpleQueue()
    _thread = None
    _start_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
