"""Routing replay on a real Dask LocalCluster (2 worker processes): each router over a block of
orderings is one Dask task, and the result is the one-machine replay's exactly (issue 33, item 5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import EvalcoreError
from evalcore.routing import ALGORITHMS, item_bootstrap, lambda_sweep, replay, simulate_outcomes

pytestmark = pytest.mark.timeout(300)


def _same_traces(a: object, b: object) -> None:
    assert list(a.traces) == list(b.traces)  # type: ignore[attr-defined]
    for name, ta in a.traces.items():  # type: ignore[attr-defined]
        tb = b.traces[name]  # type: ignore[attr-defined]
        for field in ("arm", "arm2", "quality", "cost", "reward"):
            x, y = getattr(ta, field), getattr(tb, field)
            assert (x is None) == (y is None), (name, field)
            if x is not None:
                assert x.dtype == y.dtype and np.array_equal(x, y), (name, field)
        assert ta.params == tb.params, name


def test_replay_on_the_cluster_equals_one_machine(local_client: object) -> None:
    outcomes = simulate_outcomes(n_items=120, binary=False, seed=3)
    # chunk=7: the contextual routers' 30 orderings split into blocks of their own seeds
    kw = {"orderings": 30, "seed": 5, "lam": 0.3, "chunk": 7, "progress": False}
    one = replay(outcomes, "all", **kw)
    from distributed import get_task_stream

    with get_task_stream(local_client) as stream:  # type: ignore[arg-type]
        many = replay(outcomes, "all", cluster=local_client, **kw)
    assert list(many.traces) == list(ALGORITHMS)
    _same_traces(one, many)
    cols = [c for c in one.summary().columns if c != "seconds"]
    pd.testing.assert_frame_equal(one.summary()[cols], many.summary()[cols])
    assert one.design() == many.design()
    # the units ran as Dask tasks on both workers: 11 routers, the 3 contextual ones in 5 blocks
    units = [t for t in stream.data if str(t["key"]).startswith("evalcore-block-")]
    assert len(units) == 8 + 3 * 5, len(units)
    assert len({t["worker"] for t in units}) == 2


def test_bootstrap_and_sweep_on_the_cluster_equal_one_machine(local_client: object) -> None:
    outcomes = simulate_outcomes(n_items=60, seed=1)
    names = ["ucb1", "thompson_sampling", "linucb", "dueling_bandit", "random"]
    one = item_bootstrap(outcomes, names, n_boot=3, orderings=4, seed=2, progress=False)
    many = item_bootstrap(outcomes, names, n_boot=3, orderings=4, seed=2, progress=False, cluster=local_client)
    pd.testing.assert_frame_equal(one.summary(), many.summary())
    assert all(np.array_equal(one.values[n][m], many.values[n][m]) for n in names for m in one.values[n])
    sweep_one = lambda_sweep(outcomes, names, (0.0, 1.0), orderings=4, progress=False)
    sweep_many = lambda_sweep(outcomes, names, (0.0, 1.0), orderings=4, progress=False, cluster=local_client)
    pd.testing.assert_frame_equal(sweep_one, sweep_many)


def test_a_bad_cluster_name_is_refused_before_the_replay() -> None:
    outcomes = simulate_outcomes(n_items=20, seed=0)
    with pytest.raises(EvalcoreError, match=r"local:N needs a whole number N >= 1 of worker processes, got 'local:0'"):
        replay(outcomes, "ucb1", orderings=2, cluster="local:0")


def test_route_command_with_cluster_writes_the_same_tables(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    table = simulate_outcomes(n_items=50, seed=4).save(tmp_path / "outcomes.csv")
    common = ["--outcomes", str(table), "--orderings", "6", "--bootstrap", "2", "--bootstrap-orderings", "3"]
    common += ["--algorithms", "ucb1,linucb,epsilon_greedy,random", "--sweep", "0,0.5"]

    def route(*extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "evalcore.cli", "route", *common, *extra]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=240)

    here, there = tmp_path / "here", tmp_path / "there"
    a = route("--output", str(here))
    assert a.returncode == 0, a.stderr[-3000:]
    b = route("--output", str(there), "--cluster", "local:2")
    assert b.returncode == 0, b.stderr[-3000:]
    written = sorted(p.name for p in here.iterdir() if p.is_file())
    assert "summary.csv" in written and "bootstrap.csv" in written and "sweep.csv" in written
    assert written == sorted(p.name for p in there.iterdir() if p.is_file())
    for name in written:
        if name.endswith(".csv"):
            x, y = pd.read_csv(here / name), pd.read_csv(there / name)
            keep = [c for c in x.columns if c != "seconds"]
            pd.testing.assert_frame_equal(x[keep], y[keep], obj=name)
    bad = route("--output", str(tmp_path / "bad"), "--cluster", "local:0")
    assert bad.returncode == 2 and "local:N needs a whole number" in bad.stderr
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


def _unit(task: int, shared: dict, scale: int) -> int:
    """A unit of work run on a worker (by name); the third one fails."""
    if task == 3:
        raise ValueError("no third unit")
    return shared["base"] + scale * task


def test_units_come_back_in_order_and_a_failing_one_is_named(local_client: object) -> None:
    from evalcore.cluster import run_blocks_on_cluster

    seen: list[int] = []
    tasks = [5, 0, 2, 1, 4]
    out = run_blocks_on_cluster(
        _unit, tasks, {"base": 100}, args=(10,), cluster=local_client, on_done=lambda: seen.append(1)
    )
    assert out == [150, 100, 120, 110, 140] and len(seen) == len(tasks)
    with pytest.raises(EvalcoreError, match=r"3 failed on the cluster .*ValueError: no third unit"):
        run_blocks_on_cluster(_unit, [1, 3], {"base": 0}, args=(1,), cluster=local_client)
