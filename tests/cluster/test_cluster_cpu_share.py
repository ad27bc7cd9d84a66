"""An honest sample keeps its CPU beside spinners on another Dask worker (issue 42, round three).

The one-machine test (``test_sandbox_resources_round3.py::test_spinners_cannot_take_another_workers_cpu``)
runs the attack on two workers of one local pool. On a cluster the neighbours are two Dask
workers of one machine, each with its sandbox pool pinned to a CPU of its own
(``evalcore.cluster._worker._claim_cpus``): here the honest sample runs on one worker while the
attacker (32 forked spinners in sessions of their own asking for every CPU, or a check
candidate's 32 spinning threads) runs on the other, sent to each worker by address. The honest
sample's CPU per wall second beside the attacker (the median of the rounds) must be at least 80%
of what it gets beside an honest neighbour (one spinning process on the other worker), rounds alternated so that the
machine's other load weighs on all; the share with the other worker idle is printed.
``test_cluster_unprivileged.py`` reruns this file as ``nobody`` (no memory cgroup, user
namespaces).
"""

from __future__ import annotations

import os
import statistics

import pytest

from _cpu_share import MAX_ROUNDS, cpu_jobs, cpu_share
from evalcore import __version__
from evalcore.cluster import run_jobs_on_cluster
from evalcore.cluster._worker import run_jobs

pytestmark = [pytest.mark.timeout(600), pytest.mark.serial]  # make test runs it alone (pyproject: serial)
ROUNDS = 4


def _on(client: object, address: str, job: dict) -> object:
    """``job`` run in the sandbox pool of the worker at ``address`` (and nowhere else)."""
    return client.submit(  # type: ignore[attr-defined]
        run_jobs, [job], __version__, (), workers=[address], allow_other_workers=False, pure=False
    )


def _honest_share(client: object, honest_at: str, other_at: str, honest: dict, other: dict | None) -> float:
    """The honest sample's CPU share on one worker while ``other`` runs on the other (or nothing)."""
    futures = [] if other is None else [_on(client, other_at, other)]
    (reply,) = _on(client, honest_at, honest).result(timeout=120)  # type: ignore[attr-defined]
    for future in futures:
        future.result(timeout=120)  # type: ignore[attr-defined]
    assert reply.completed, reply
    return cpu_share(reply.stdout)


def _pool_cpus() -> list[int]:
    """On a worker: the CPUs its sandbox pool's processes may use (``get_pool()`` without a size
    would grow the pool to one process per CPU: the pool the jobs started is read as it is)."""
    import evalcore.sandbox.pool as pool_module

    pool = pool_module._POOL
    assert pool is not None and not pool._closed
    return sorted({cpu for h in pool._all for cpu in os.sched_getaffinity(h.proc.pid)})


@pytest.mark.parametrize("mode", ["script", "check"])
def test_spinners_on_one_worker_leave_another_workers_sample_its_cpu(local_client: object, mode: str) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs (one worker's pool on each)")
    client = local_client
    warm = run_jobs_on_cluster([{"mode": "script", "source": "pass"}] * 2, cluster=client, chunk_size=1)
    assert all(r.completed for r in warm), warm
    honest_at, other_at = sorted(client.scheduler_info()["workers"])  # type: ignore[attr-defined]
    cpus = client.run(_pool_cpus)  # type: ignore[attr-defined]
    assert not set(cpus[honest_at]) & set(cpus[other_at]), cpus  # each pool on a CPU of its own
    jobs = cpu_jobs(mode)
    alone, beside, attacked = [], [], []
    ratio = 0.0
    # medians: the machine's other load comes in bursts (one round of 4% beside the spinners at
    # load 19 on 2 cores, the other three as beside the neighbour), and it drifts within a test
    # (alone 0.96 in the first round, 0.62 in the fourth, three other test loops beside it): so
    # ROUNDS rounds, and while the median is under the bound up to MAX_ROUNDS. A share the
    # spinners took would lower every round beside them, and so the median of any number of
    # rounds (the fault this guards against left the honest sample 6%).
    while len(attacked) < ROUNDS or (ratio < 0.8 and len(attacked) < MAX_ROUNDS):
        alone.append(_honest_share(client, honest_at, other_at, jobs["honest"], None))
        beside.append(_honest_share(client, honest_at, other_at, jobs["honest"], jobs["neighbour"]))
        attacked.append(_honest_share(client, honest_at, other_at, jobs["honest"], jobs["attacker"]))
        ratio = statistics.median(attacked) / statistics.median(beside)
    print(
        f"{mode} (uid {os.geteuid()}): honest CPU share alone {alone}, beside an honest neighbour {beside}, "
        f"beside the spinners {attacked}; medians attacked / neighbour {ratio:.2f}, attacked / alone "
        f"{statistics.median(attacked) / statistics.median(alone):.2f} ({len(attacked)} rounds)"
    )
    assert ratio >= 0.8, (alone, beside, attacked)
