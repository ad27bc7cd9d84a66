"""Where the sandbox test files run their jobs: this machine's pool, or a Dask worker's.

Unset (the default), the names below are evalcore's own (``SandboxPool``, ``get_pool``,
``run_python``). With ``EVALCORE_TEST_SANDBOX=cluster`` (set by
``tests/cluster/test_cluster_isolation.py`` when it reruns the isolation test files), every job
goes through :func:`evalcore.cluster.run_jobs_on_cluster` -- the path of the code verdicts on a
cluster -- to the sandbox pool of a real Dask ``LocalCluster`` worker: one worker process with
one thread, so one sandbox process, and a job meets the same sandbox worker as the job before
(as with ``SandboxPool(1)``). No sandbox pool may start in the test process then (starting one
fails the test), so a test that passes ran through the cluster.

Tests that inspect a local pool's internals are marked :func:`local_only` (skipped on the
cluster with the reason); ``SandboxPool(..., namespaces=False)`` (the weak fallback, a local
pool's option) skips on the cluster.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
from collections.abc import Sequence
from typing import Any

import pytest

ENV = "EVALCORE_TEST_SANDBOX"
REPORT_ENV = "EVALCORE_TEST_SANDBOX_REPORT"  # where the cluster mode writes what it sent (a JSON file)
TARGET = os.environ.get(ENV, "") or "local"
if TARGET not in ("local", "cluster"):
    raise ValueError(f"{ENV} must be 'local' or 'cluster', got {TARGET!r}")
ON_CLUSTER = TARGET == "cluster"


def local_only(reason: str) -> pytest.MarkDecorator:
    """Skip a test on the cluster: it needs a pool of this process (``reason`` says why)."""
    return pytest.mark.skipif(ON_CLUSTER, reason=f"local pool only: {reason}")


_CLIENT: list[Any] = []
_SENT = {"jobs": 0, "batches": 0}


def cluster_client() -> Any:
    """The client of the LocalCluster every job of this process goes to (started once)."""
    if not _CLIENT:
        distributed = pytest.importorskip("distributed")
        cluster = distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
        client = distributed.Client(cluster)
        _CLIENT.append(client)
        atexit.register(_close, client, cluster)
    return _CLIENT[0]


def _forbid_local_pools() -> None:
    """From now on a sandbox pool started in this (the test) process fails its test."""
    import evalcore.sandbox.pool as pool_module

    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"a sandbox pool was started in the test process under {ENV}=cluster: take the pool "
            "from _sandbox_target, or mark the test local_only"
        )

    pool_module.SandboxPool.__init__ = refuse  # type: ignore[method-assign]


def _close(client: Any, cluster: Any) -> None:
    out = os.environ.get(REPORT_ENV)
    if out:
        pids = sorted(client.run(os.getpid).values())
        uids = sorted(set(client.run(os.geteuid).values()))
        pools = list(client.run(_worker_isolation).values())
        report = {**_SENT, "worker_pids": pids, "client_pid": os.getpid(), "worker_uids": uids, "pools": pools}
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(report, fh)
    client.close()
    cluster.close()


def _worker_pool() -> Any:
    """On the worker: its sandbox pool as its jobs use it (``get_pool()`` without a size would
    grow it to one process per CPU)."""
    import evalcore.sandbox.pool as pool_module
    from evalcore.cluster._worker import pool_isolation

    if pool_module._POOL is None or pool_module._POOL._closed:
        pool_isolation()  # starts it at the worker's size
    return pool_module._POOL


def _worker_isolation() -> dict[str, Any] | None:
    """On the worker: its sandbox pool's isolation level, user namespace and memory bound (None
    when no job started the pool)."""
    import evalcore.sandbox.pool as pool_module

    pool = pool_module._POOL
    if pool is None or pool._closed:
        return None
    return {k: pool.isolation.get(k) for k in ("level", "user_namespace", "memory")}


def _worker_durations() -> dict[str, float]:
    """On the worker: what its pool remembers of each test's last sample (issue 42)."""
    return dict(_worker_pool()._durations)


def _worker_pool_pids() -> list[int]:
    """On the worker: the processes of its sandbox pool."""
    return [h.proc.pid for h in _worker_pool()._all]


def _worker_sandbox_uids() -> list[int]:
    """On the worker: the uids its sandbox processes run samples under."""
    return sorted({int(h.isolation["uid"]) for h in _worker_pool()._all})


class ClusterPool:
    """``SandboxPool``'s ``map``/``isolation``/``close`` for tests, run on the Dask worker.

    ``map`` returns the replies ``SandboxPool.map`` would (the fields of each
    :class:`~evalcore.sandbox.SandboxResult`, which ``_to_result`` reads back unchanged).
    """

    def __init__(self, workers: int | None = None, *, namespaces: bool | None = None, hide: Sequence[str] = ()) -> None:
        if namespaces is False:
            pytest.skip("the weak fallback (namespaces=False) is a local pool's option; a Dask worker runs the default")
        self.size = 1
        self._namespaces = os.environ.get("EVALCORE_SANDBOX_NAMESPACES", "1") != "0"  # as the worker's pool
        self._hide = tuple(hide)

    @property
    def isolation(self) -> dict[str, Any]:
        from evalcore.cluster._worker import pool_isolation

        (info,) = cluster_client().run(pool_isolation).values()
        return dict(info)

    def map(self, jobs: Sequence[dict], concurrency: int | None = None) -> list[dict]:
        from evalcore.cluster import run_jobs_on_cluster

        results = run_jobs_on_cluster(list(jobs), cluster=cluster_client(), hide=self._hide)
        _SENT["jobs"] += len(results)
        _SENT["batches"] += 1
        return [dataclasses.asdict(r) for r in results]

    def submit(self, job: dict) -> dict:
        return self.map([job])[0]

    @property
    def _durations(self) -> dict[str, float]:
        """The worker's pool's durations (a copy: what the schedule of its next batch reads)."""
        (durations,) = cluster_client().run(_worker_durations).values()
        return dict(durations)

    def pids(self) -> list[int]:
        """The processes of the worker's sandbox pool (same machine: readable in /proc here)."""
        (pids,) = cluster_client().run(_worker_pool_pids).values()
        return list(pids)

    def close(self) -> None:
        """Nothing: the worker's pool lives as long as the worker."""


if ON_CLUSTER:
    from evalcore.sandbox import DEFAULT_MAX_OUTPUT, SandboxResult
    from evalcore.sandbox.report import _to_result

    SandboxPool: Any = ClusterPool

    def get_pool(workers: int | None = None, hide: Sequence[str] = ()) -> ClusterPool:
        return ClusterPool(workers, hide=hide)

    def run_python(
        source: str,
        *,
        timeout_s: float = 10.0,
        memory_mb: int = 512,
        stdin: str | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> SandboxResult:
        """:func:`evalcore.sandbox.run_python`'s job, run on the worker."""
        job = {
            "mode": "script",
            "source": source,
            "timeout_s": float(timeout_s),
            "memory_mb": int(memory_mb),
            "stdin": stdin,
            "max_output": int(max_output),
        }
        return _to_result(ClusterPool().map([job])[0])

    def sandbox_uids() -> set[int]:
        """The uids the worker's sandbox runs samples under."""
        (uids,) = cluster_client().run(_worker_sandbox_uids).values()
        return set(uids)

    def pool_pids(pool: Any) -> list[int]:
        """The processes of ``pool`` (here: the worker's sandbox pool)."""
        return list(pool.pids())

    def evaluate_code_batch(samples: Sequence[Any], *, timeout_s: float = 10.0) -> list[Any]:
        """:func:`evalcore.evaluators.evaluate_code_batch`'s verdicts through the cluster's code
        verdict path: one chunk scored by :func:`evalcore.cluster._worker.score_chunk` on the
        worker (what ``score_samples_file_on_cluster`` sends), read back as ``CodeResult``s."""
        from evalcore import __version__
        from evalcore.cluster._worker import score_chunk
        from evalcore.evaluators import CodeResult

        problems = {
            f"p{i}": {"prompt": s.prompt, "test": s.test, "entry_point": s.entry_point} for i, s in enumerate(samples)
        }
        chunk = {"problems": problems, "samples": [[s.id, f"p{i}", s.completion] for i, s in enumerate(samples)]}
        reply = cluster_client().submit(score_chunk, chunk, float(timeout_s), __version__, pure=False).result()
        _SENT["jobs"] += len(samples)
        _SENT["batches"] += 1
        return [
            CodeResult(id=s.id, passed=bool(passed), result=str(result), duration_s=0.0)
            for s, (passed, result) in zip(samples, reply["verdicts"])
        ]

    import multiprocessing

    if multiprocessing.parent_process() is None:  # the test process (the Dask worker imports this module too)
        _forbid_local_pools()
else:
    from evalcore.evaluators import evaluate_code_batch  # noqa: F401 - re-exported
    from evalcore.sandbox import SandboxPool, get_pool, run_python  # noqa: F401 - re-exported

    def sandbox_uids() -> set[int]:
        """The uids this process's sandbox pool runs samples under."""
        return {int(h.isolation["uid"]) for h in get_pool()._all}

    def pool_pids(pool: Any) -> list[int]:
        """The processes of ``pool`` (a pool of this process)."""
        return [h.proc.pid for h in pool._all]


__all__ = [
    "ON_CLUSTER",
    "SandboxPool",
    "evaluate_code_batch",
    "get_pool",
    "local_only",
    "pool_pids",
    "run_python",
    "sandbox_uids",
]
