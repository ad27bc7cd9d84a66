"""Dask as one implementation of the executor protocol (:class:`evalcore._executor.Executor`).

``DaskExecutor(cluster)`` names a cluster (a scheduler address, a scheduler file, ``local:N``, a
``distributed.Client`` or an open :class:`~evalcore.cluster.ClusterSession`); nothing of Dask is
imported until it is used. Each call connects, waits for a worker and checks versions, unless it
runs inside :meth:`DaskExecutor.session`, which does that once for several calls. The job types
are the cluster's existing paths: units (:meth:`~DaskExecutor.stream`, one Dask task each), model
calls (:func:`~evalcore.cluster._runs.cluster_model`), notebooks
(:func:`~evalcore.cluster._notebooks.run_on_cluster`) and code verdicts
(:func:`~evalcore.cluster.score_samples_file_on_cluster`).

The packages that take an executor never import this module: ``evalcore.cli`` builds it from
``--cluster``, a Python user passes ``executor=DaskExecutor(client)``, and a ``cluster=``
argument reaches :func:`dask_executor` through the ``evalcore.executors`` entry point.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from evalcore._checks import check_timeout
from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S, parse_cluster
from evalcore.errors import EvalcoreError

__all__ = ["DaskExecutor", "dask_executor"]


class DaskExecutor:
    """The executor protocol on a Dask cluster (docs/cluster.md).

    Args:
        cluster: A scheduler address (``tcp://host:8786``), a scheduler file, ``local:N`` (a
            ``LocalCluster`` evalcore starts and closes), a ``distributed.Client`` (left open) or
            an open ``ClusterSession``. A name is checked here, before any work.
        wait_s: Seconds to wait for the cluster's first worker.
        field: The option named in errors about the name (``--cluster`` on the command line).
    """

    remote = True

    def __init__(self, cluster: Any, *, wait_s: float = DEFAULT_WORKER_WAIT_S, field: str = "cluster") -> None:
        self._target: Any = parse_cluster(cluster, field=field) if isinstance(cluster, str) else cluster
        self.wait_s = float(check_timeout(wait_s, "cluster_wait_s", allow_zero=True))
        self._futures: list[Any] = []
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """The cluster's name (address, scheduler file, ``local:N``)."""
        label = getattr(self._target, "label", None)
        return str(label) if label is not None else str(self._target)

    @property
    def target(self) -> Any:
        """What the cluster functions receive as ``cluster=`` (a spec, a client or a session)."""
        return self._target

    @contextlib.contextmanager
    def session(self) -> Iterator[DaskExecutor]:
        """Connect once (wait for a worker, check versions); yields an executor on that session."""
        from evalcore.cluster._connect import ClusterSession, open_cluster

        if isinstance(self._target, ClusterSession):
            yield self
            return
        with open_cluster(self._target, wait_s=self.wait_s) as opened:
            inner = DaskExecutor(opened, wait_s=self.wait_s)
            inner._futures, inner._lock = self._futures, self._lock  # cancel() here reaches its tasks
            yield inner

    def stream(
        self, fn: Callable[..., Any], units: Sequence[Any], *, shared: Any = None, args: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Any]]:
        """Run ``fn(unit, shared, *args)`` as one Dask task per unit; yield ``(index, result)`` as
        each finishes. ``fn`` must be a module-level function (workers import it by name);
        ``shared`` is sent to each worker once, under a key of this call.

        Raises:
            EvalcoreError: An unreachable cluster, no worker, another evalcore version on a
                worker, a unit that failed (its error named) or killed every worker that ran it.
        """
        with self.session() as opened:
            assert isinstance(opened, DaskExecutor)
            yield from opened._stream(fn, list(units), shared, args)

    def _stream(
        self, fn: Callable[..., Any], units: list[Any], shared: Any, args: tuple[Any, ...]
    ) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        from evalcore import __version__
        from evalcore.cluster._errors import future_error_text
        from evalcore.cluster._routing import _run_block

        session = self._target
        client = session.client
        token = uuid.uuid4().hex
        # the shared data under a key of this call only: scattered as ``{key: shared}``, it is one
        # value whatever its type (two calls on one client never share or release each other's)
        shared_key = f"evalcore-shared-{token}"
        data = client.scatter({shared_key: shared}, broadcast=True)[shared_key]
        futures = [
            client.submit(_run_block, fn, unit, data, args, __version__, key=f"evalcore-block-{token}-{n}", pure=False)
            for n, unit in enumerate(units)
        ]
        index = {fut.key: n for n, fut in enumerate(futures)}
        with self._lock:
            self._futures.extend(futures)
        try:
            for fut in as_completed(futures):
                n = index[fut.key]
                if fut.status != "finished":
                    exc = fut.exception() if fut.status == "error" else None
                    if isinstance(exc, EvalcoreError):
                        raise EvalcoreError(exc.reason, field="cluster")
                    raise EvalcoreError(
                        f"{units[n]!r} failed on the cluster {session.label}: {future_error_text(fut)}",
                        field="cluster",
                    )
                yield n, fut.result()
        except BaseException:
            if not session.owned:  # a user's own client outlives this call: drop this call's tasks
                with contextlib.suppress(Exception):
                    client.cancel(futures, force=True)
            raise
        finally:
            with self._lock:
                self._futures[:] = [f for f in self._futures if f.key not in index]
            for fut in [*futures, data]:  # release what this call made, and only that
                with contextlib.suppress(Exception):
                    fut.release()

    def cancel(self) -> None:
        """Cancel the tasks of this executor's streams still queued or running."""
        with self._lock:
            futures = list(self._futures)
            self._futures.clear()
        for fut in futures:
            with contextlib.suppress(Exception):
                fut.cancel(force=True)

    @contextlib.contextmanager
    def model(
        self,
        model: Any,
        *,
        spec: str | None = None,
        options: Mapping[str, Any] | None = None,
        likelihood: bool = False,
    ) -> Iterator[tuple[Any, int]]:
        """The model wrapped so each call is a Dask task (every worker builds it once); yields it
        and the cluster's worker threads (``concurrency`` applies per thread)."""
        from evalcore.cluster._runs import cluster_model

        with cluster_model(self._target, model, spec, options, wait_s=self.wait_s, likelihood=likelihood) as wrapped:
            yield wrapped

    def notebooks(self, to_run: Sequence[tuple[Any, Any]], **options: Any) -> None:
        """Each notebook-suite entry on a worker; the files come back (``run_on_cluster``'s options)."""
        from evalcore.cluster._notebooks import run_on_cluster

        run_on_cluster(self._target, to_run, wait_s=self.wait_s, **options)

    def code_verdicts(self, path: str | os.PathLike[str], **options: Any) -> dict[str, float]:
        """``score_samples_file_on_cluster``: the samples file's verdicts and pass@k on the workers."""
        from evalcore.cluster._verdicts import score_samples_file_on_cluster

        return score_samples_file_on_cluster(path, cluster=self._target, wait_s=self.wait_s, **options)


def dask_executor(cluster: Any, *, wait_s: float = DEFAULT_WORKER_WAIT_S, field: str = "cluster") -> DaskExecutor:
    """The ``cluster`` entry point of ``evalcore.executors``: a :class:`DaskExecutor` for ``cluster``.

    Raises:
        EvalcoreError: A bad cluster name (``local:0``, a missing scheduler file), in one line.
    """
    if isinstance(cluster, DaskExecutor):
        return cluster
    return DaskExecutor(cluster, wait_s=wait_s, field=field)
