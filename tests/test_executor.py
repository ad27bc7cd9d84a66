"""The executor protocol (evalcore/_executor.py): the local default, a user's own executor, the
`cluster=` convenience through the entry point, and the `--cluster` options added by the CLI."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from evalcore._executor import Executor, LocalExecutor, as_executor
from evalcore.errors import EvalcoreError


def _square(unit: int, shared: Any, offset: int = 0) -> int:
    return unit * unit + (shared or 0) + offset


def _fail_on_three(unit: int, shared: Any) -> int:
    if unit == 3:
        raise ValueError("no three")
    return unit


class PickleExecutor:
    """A remote-looking executor of one's own: every unit crosses pickle, as on a cluster."""

    label = "pickled units"
    remote = True

    def __init__(self) -> None:
        self.units_run = 0
        self.sessions = 0

    @contextlib.contextmanager
    def session(self) -> Iterator[PickleExecutor]:
        self.sessions += 1
        yield self

    def stream(
        self, fn: Callable[..., Any], units: Sequence[Any], *, shared: Any = None, args: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Any]]:
        shared_copy = pickle.loads(pickle.dumps(shared))
        for n in reversed(range(len(units))):  # results come back in another order than asked
            f, unit, a = pickle.loads(pickle.dumps((fn, units[n], args)))
            self.units_run += 1
            yield n, pickle.loads(pickle.dumps(f(unit, shared_copy, *a)))

    def cancel(self) -> None:
        pass

    def model(
        self,
        model: Any,
        *,
        spec: str | None = None,
        options: Mapping[str, Any] | None = None,
        likelihood: bool = False,
    ) -> contextlib.AbstractContextManager[tuple[Any, int]]:
        return contextlib.nullcontext((model, 1))

    def notebooks(self, to_run: Sequence[tuple[Any, Any]], **options: Any) -> None:
        raise EvalcoreError("no notebooks here", field="executor")

    def code_verdicts(self, path: Any, **options: Any) -> dict[str, float]:
        raise EvalcoreError("no verdicts here", field="executor")


def test_local_executor_streams_every_unit_with_its_index():
    for workers in (1, 3):
        got = dict(LocalExecutor(workers).stream(_square, [1, 2, 3, 4], shared=10, args=(1,)))
        assert got == {0: 12, 1: 15, 2: 20, 3: 27}


def test_local_executor_with_one_worker_runs_in_order_in_the_calling_thread():
    seen: list[tuple[int, str]] = []

    def note(unit: int, shared: Any) -> int:
        seen.append((unit, threading.current_thread().name))
        return unit

    assert [n for n, _ in LocalExecutor(1).stream(note, [5, 6, 7])] == [0, 1, 2]
    assert seen == [(5, threading.current_thread().name), (6, threading.current_thread().name), (7, seen[0][1])]


def test_local_executor_raises_a_units_error_and_cancel_stops_the_rest():
    with pytest.raises(ValueError, match="no three"):
        list(LocalExecutor(2).stream(_fail_on_three, [1, 2, 3, 4]))
    ex = LocalExecutor(1)
    got = []
    for n, value in ex.stream(_square, [1, 2, 3, 4]):
        got.append(value)
        if n == 1:
            ex.cancel()
    assert got == [1, 4]


def test_local_executor_is_an_executor_and_keeps_the_model_unchanged():
    ex = LocalExecutor()
    assert isinstance(ex, Executor) and not ex.remote and ex.workers >= 1
    sentinel = object()
    with ex.model(sentinel, spec="x") as (model, slots):
        assert model is sentinel and slots == 1
    with ex.session() as opened:
        assert opened is ex
    with pytest.raises(EvalcoreError, match="workers"):
        LocalExecutor(0)


def test_as_executor_choices():
    own = PickleExecutor()
    assert as_executor() is None
    assert as_executor(own) is own
    assert as_executor(cluster=own) is own
    with pytest.raises(EvalcoreError, match="not both"):
        as_executor(own, cluster="local:2")
    with pytest.raises(EvalcoreError, match="Executor protocol"):
        as_executor(object())


def test_cluster_name_reaches_the_dask_executor_through_the_entry_point_without_dask():
    # in a fresh process: the entry point builds the executor, a bad name fails in one line,
    # and nothing of Dask is imported until the executor is used
    code = (
        "import sys\n"
        "from evalcore._executor import as_executor\n"
        "ex = as_executor(cluster='local:2', wait_s=5)\n"
        "print(type(ex).__name__, ex.label, ex.remote, ex.wait_s)\n"
        "try:\n    as_executor(cluster='local:0')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
        "print('distributed' in sys.modules, 'dask' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "DaskExecutor local:2 True 5.0",
        "EvalcoreError field 'cluster': local:N needs a whole number N >= 1 of worker processes, got 'local:0'",
        "False False",
    ]


def test_replay_on_ones_own_executor_equals_the_local_replay():
    from evalcore.routing import replay, simulate_outcomes

    outcomes = simulate_outcomes(n_items=30, seed=1)
    kw: dict[str, Any] = {"orderings": 6, "seed": 3, "progress": False, "chunk": 2}
    here = replay(outcomes, "all", workers=1, **kw)
    own = PickleExecutor()
    there = replay(outcomes, "all", executor=own, **kw)
    assert own.units_run >= len(here.traces)  # every unit crossed pickle, contextual ones in blocks
    for name, trace in here.traces.items():
        np.testing.assert_array_equal(trace.arm, there.traces[name].arm)
        np.testing.assert_array_equal(trace.reward, there.traces[name].reward)
    threads = replay(outcomes, "all", executor=LocalExecutor(3), **kw)
    for name, trace in here.traces.items():
        np.testing.assert_array_equal(trace.arm, threads.traces[name].arm)


def test_cli_adds_cluster_options_where_an_executor_is_taken():
    import argparse

    from evalcore.cli import build_parser, executor_from_args

    parser = build_parser()
    with_cluster: list[str] = []

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, f"{path} {name}".strip())
        if any("--cluster-wait" in a.option_strings for a in p._actions):
            with_cluster.append(path)

    walk(parser, "")
    assert sorted(with_cluster) == ["notebooks run", "route", "run", "score humaneval"]
    args = parser.parse_args(["score", "humaneval", "s.jsonl", "--cluster", "local:3", "--cluster-wait", "7"])
    ex = executor_from_args(args)
    assert ex is not None and ex.remote and ex.label == "local:3"
    assert executor_from_args(parser.parse_args(["score", "humaneval", "s.jsonl"])) is None
