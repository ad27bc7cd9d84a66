"""Prepared sandbox jobs on a Dask cluster: :func:`evalcore.sandbox.run_jobs`, on the workers.

The jobs run in the sandbox pool each worker starts once (the worker plugin of the code
verdicts, :mod:`evalcore.cluster._worker`), with the same isolation as on one machine. Jobs
are sent in chunks of consecutive jobs, one Dask task each; the results come back in order.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.sandbox import SandboxJob, SandboxResult

__all__ = ["run_jobs_on_cluster"]


def run_jobs_on_cluster(
    jobs: Sequence[SandboxJob],
    *,
    cluster: Any,
    hide: Sequence[str | os.PathLike[str]] = (),
    chunk_size: int = 64,
    wait_s: float = DEFAULT_WORKER_WAIT_S,
) -> list[SandboxResult]:
    """Run prepared sandbox jobs in the sandbox pools of a Dask cluster's workers.

    Args:
        jobs: :class:`~evalcore.sandbox.SandboxJob` dicts (``mode`` ``"script"`` or ``"check"``).
        cluster: A scheduler address, a scheduler file, ``local:N`` or a ``distributed.Client``.
        hide: Further paths the samples must not see (those that exist on a worker are hidden there).
        chunk_size: Consecutive jobs per Dask task (the jobs of one task run on one worker).
        wait_s: Seconds to wait for the first worker.

    Returns:
        One :class:`~evalcore.sandbox.SandboxResult` per job, in the order of ``jobs``.

    Raises:
        EvalcoreError: An unreachable cluster, no worker, another evalcore version on a worker,
            a task lost with every worker that ran it.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise EvalcoreError(f"must be a whole number >= 1, got {chunk_size!r}", field="chunk_size")
    batch = list(jobs)
    paths = tuple(os.path.abspath(os.fspath(p)) for p in hide)
    from evalcore import __version__
    from evalcore.cluster._connect import open_cluster

    with open_cluster(cluster, wait_s=wait_s) as session:
        from evalcore.cluster._worker import PLUGIN_NAME, SandboxPlugin, run_jobs

        client = session.client
        plugin = SandboxPlugin(paths)
        plugin.idempotent = True  # keep the pool a worker already runs (no teardown and restart)
        client.register_plugin(plugin, name=PLUGIN_NAME)
        token = uuid.uuid4().hex[:12]
        starts = range(0, len(batch), chunk_size)
        futures = [
            client.submit(
                run_jobs,
                batch[i : i + chunk_size],
                __version__,
                paths,
                key=f"evalcore-jobs-{token}-{n}",
                pure=False,
            )
            for n, i in enumerate(starts)
        ]
        out: list[SandboxResult] = []
        try:
            for i, fut in zip(starts, futures):
                try:
                    out.extend(fut.result())
                except EvalcoreError as exc:
                    raise EvalcoreError(exc.reason, field="cluster") from None
                except Exception as exc:  # noqa: BLE001 - a worker lost too often, a broken task
                    from evalcore.cluster._errors import describe_exception

                    raise EvalcoreError(
                        f"sandbox jobs {i + 1}-{min(len(batch), i + chunk_size)} failed on the cluster "
                        f"{session.label}: {describe_exception(exc)}",
                        field="cluster",
                    ) from None
        except BaseException:
            if not session.owned:  # a user's own client outlives this call
                with contextlib.suppress(Exception):
                    client.cancel(futures, force=True)
            raise
    return out
