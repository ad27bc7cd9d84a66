"""Routing replay on a Dask cluster: each unit of :func:`evalcore.routing.replay` (one router over
one block of orderings) is one Dask task.

The replay environment (rewards, costs, orderings, features) is sent to every worker once; a
task returns the arms its router chose. Every unit has its own seeded generator, so the result is
the one-machine replay's, bit for bit, whichever worker ran which unit.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S
from evalcore.errors import EvalcoreError

__all__ = ["run_blocks_on_cluster"]


def _run_block(block: Callable[..., Any], task: Any, shared: Any, args: tuple, version: str) -> Any:
    """On a worker: check the client's evalcore version, then run one unit."""
    from evalcore.cluster._worker import _check_version

    _check_version(version)
    return block(task, shared, *args)


def run_blocks_on_cluster(
    block: Callable[..., Any],
    tasks: Sequence[Any],
    shared: Any,
    *,
    args: tuple = (),
    cluster: Any,
    wait_s: float = DEFAULT_WORKER_WAIT_S,
    on_done: Callable[[], Any] | None = None,
) -> list[Any]:
    """Run ``block(task, shared, *args)`` for every task on the workers of a cluster.

    Args:
        block: A module-level function (workers import it by name).
        tasks: The units of work (small, picklable).
        shared: Data every unit reads, sent to each worker once, under a key of this call (two
            calls on one client, even at the same time, never share or release each other's).
        args: Further (small) arguments of every unit.
        cluster: A scheduler address, a scheduler file, ``local:N``, a ``distributed.Client`` or
            an open :class:`~evalcore.cluster.ClusterSession` (left open).
        wait_s: Seconds to wait for the first worker.
        on_done: Called as each unit comes back (progress).

    Returns:
        The units' results, in the order of ``tasks``.

    Raises:
        EvalcoreError: An unreachable cluster, no worker, another evalcore version on a worker,
            a unit that failed (its error named) or that killed every worker that ran it.
    """
    from evalcore import __version__
    from evalcore.cluster._connect import open_cluster

    with open_cluster(cluster, wait_s=wait_s) as session:
        from distributed import as_completed

        from evalcore.cluster._errors import future_error_text

        client = session.client
        token = uuid.uuid4().hex
        # The shared data under a key of this call only: scattered as ``{key: shared}``, it is
        # one value whatever its type (a dict's own keys would otherwise become the Dask keys,
        # the same in every call with such a dict, and one call's release could drop another's).
        shared_key = f"evalcore-shared-{token}"
        data = client.scatter({shared_key: shared}, broadcast=True)[shared_key]
        futures = [
            client.submit(
                _run_block, block, task, data, args, __version__, key=f"evalcore-block-{token}-{n}", pure=False
            )
            for n, task in enumerate(tasks)
        ]
        index = {fut.key: n for n, fut in enumerate(futures)}
        out: list[Any] = [None] * len(futures)
        try:
            for fut in as_completed(futures):
                if fut.status != "finished":
                    exc = fut.exception() if fut.status == "error" else None
                    if isinstance(exc, EvalcoreError):
                        raise EvalcoreError(exc.reason, field="cluster")
                    raise EvalcoreError(
                        f"{tasks[index[fut.key]]!r} failed on the cluster {session.label}: {future_error_text(fut)}",
                        field="cluster",
                    )
                out[index[fut.key]] = fut.result()
                if on_done is not None:
                    on_done()
        except BaseException:
            if not session.owned:  # a user's own client outlives this call: drop this call's tasks
                with contextlib.suppress(Exception):
                    client.cancel(futures, force=True)
            raise
        finally:
            # release what this call made, and only that (its keys are its own)
            for fut in [*futures, data]:
                with contextlib.suppress(Exception):
                    fut.release()
    return out
