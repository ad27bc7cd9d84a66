"""Routing replay on a Dask cluster: each unit of :func:`evalcore.routing.replay` (one router over
one block of orderings) is one Dask task.

The replay environment (rewards, costs, orderings, features) is sent to every worker once; a
task returns the arms its router chose. Every unit has its own seeded generator, so the result is
the one-machine replay's, bit for bit, whichever worker ran which unit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S

__all__ = ["run_blocks_on_cluster"]


def _run_block(block: Callable[..., Any], task: Any, shared: Any, args: tuple[Any, ...], version: str) -> Any:
    """On a worker: check the client's evalcore version, then run one unit."""
    from evalcore.cluster._worker import _check_version

    _check_version(version)
    return block(task, shared, *args)


def run_blocks_on_cluster(
    block: Callable[..., Any],
    tasks: Sequence[Any],
    shared: Any,
    *,
    args: tuple[Any, ...] = (),
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
    from evalcore.cluster._executor import DaskExecutor

    out: list[Any] = [None] * len(tasks)
    for n, result in DaskExecutor(cluster, wait_s=wait_s).stream(block, tasks, shared=shared, args=args):
        out[n] = result
        if on_done is not None:
            on_done()
    return out
