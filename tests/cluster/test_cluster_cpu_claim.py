"""Issue 38: each Dask worker's sandbox pool is pinned to the CPU the fewest evalcore workers hold.

Before, a worker that found every CPU's lock taken (another evalcore cluster on the same
machine: another user's, or a second ``local:N``) left its pool unpinned, and the pool pinned its
first process to the first CPU: both workers of ``local:2`` then ran their sandboxes on CPU 0 and
the cluster scored at about half the one-machine pool's rate. The locks now have slots: a worker
takes the free slot of lowest rank, so the sandboxes spread over the CPUs whoever else runs.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalcore.cluster import _worker

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The lock files of this test in a folder of its own; this process's claims released after."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        yield tmp_path
    finally:
        _worker._release_cpus()


def _hold(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another open file: conflicts with ours
    return fd


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def test_a_free_cpu_is_taken_first(lock_dir: Path) -> None:
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs")
    other = _hold(_worker._cpu_lock_path(cpus[0], 0))  # another cluster's worker on the first CPU
    try:
        assert _worker._claim_cpus(1) == [cpus[1]]
    finally:
        os.close(other)


def test_every_cpu_taken_spreads_over_the_next_slot(lock_dir: Path) -> None:
    cpus = _cpus()
    held = [_hold(_worker._cpu_lock_path(cpu, 0)) for cpu in cpus]  # another cluster on every CPU
    try:
        first = _worker._claim_cpus(1)
        second = _worker._claim_cpus(1)
        assert first == [cpus[0]], first
        # The second claim (a second worker) goes to the next CPU, not to the first one again.
        assert second == [cpus[1 % len(cpus)]], second
        assert (lock_dir / Path(_worker._cpu_lock_path(cpus[0], 1)).name).exists()
    finally:
        for fd in held:
            os.close(fd)


def test_workers_of_one_cluster_take_distinct_cpus_while_another_holds_some(lock_dir: Path) -> None:
    """Seen in the 20-run loop (two test runs side by side): another cluster held slot 0 of CPU 1
    only; the first worker of local:2 took CPU 0 (slot 0), its sibling the lowest free slot, slot 1
    of CPU 0, and both sandboxes ran on CPU 0. Siblings now avoid each other's CPUs first."""
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs")
    held = [_hold(_worker._cpu_lock_path(cpu, 0)) for cpu in cpus[1:]]  # another cluster: all but CPU 0
    try:
        first = _worker._claim_cpus(1, "tcp://127.0.0.1:1111")
        second = _worker._claim_cpus(1, "tcp://127.0.0.1:1111")  # its sibling
        third = _worker._claim_cpus(1, "tcp://127.0.0.1:2222")  # a third cluster's worker
    finally:
        for fd in held:
            os.close(fd)
    assert first == [cpus[0]], first
    assert second == [cpus[1]], f"the sibling took {second}, the first worker {first}"
    assert third == [cpus[0]], third  # the CPU the fewest workers hold (CPU 1: two)
    assert len(list(lock_dir.glob("evalcore-dask-cluster-*.lock"))) == 3
    _worker._release_cpus()
    assert not list(lock_dir.glob("evalcore-dask-cluster-*.lock"))  # removed with the claims


def test_a_claim_takes_distinct_cpus_and_no_more_than_usable(lock_dir: Path) -> None:
    cpus = _cpus()
    got = _worker._claim_cpus(len(cpus) + 3)
    assert got == cpus  # each CPU once, even when the worker has more threads than CPUs


def _pool_cpus(dask_worker: object = None) -> list[int]:
    from evalcore import __version__
    from evalcore.cluster._worker import ready_pool
    from evalcore.sandbox import pool

    ready_pool(__version__)
    assert pool._POOL is not None
    return [os.sched_getaffinity(h.proc.pid) for h in pool._POOL._all]  # type: ignore[misc]


@pytest.mark.parametrize("others_on", ["every CPU", "every CPU but the first"])
def test_two_workers_never_share_a_cpu_while_another_cluster_holds_them(others_on: str) -> None:
    """A real ``local:2`` started while every CPU's first lock is held elsewhere (or every CPU's
    but the first): its two workers' sandbox processes are pinned to two different CPUs (both were
    on CPU 0 before: the slots alone, and then the slots without the siblings' locks)."""
    distributed = pytest.importorskip("distributed")
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs")
    held = []
    for cpu in cpus if others_on == "every CPU" else cpus[1:]:
        try:
            held.append(_hold(_worker._cpu_lock_path(cpu, 0)))
        except OSError:
            pass  # held by another cluster on this machine already: the same situation
    try:
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            pinned = client.run(_pool_cpus)
    finally:
        for fd in held:
            os.close(fd)
    sets = [frozenset(s) for per_worker in pinned.values() for s in per_worker]
    assert len(sets) == 2 and all(len(s) == 1 for s in sets), pinned
    assert sets[0] != sets[1], f"both workers' sandboxes on one CPU: {pinned}"
