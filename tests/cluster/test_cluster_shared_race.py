"""Issue 38: the shared data of :func:`run_blocks_on_cluster` belongs to the call that scattered it.

On a long-lived client, a second call used to share scattered data with the first (a dict's own
keys became the Dask keys, the same in every call), so the first call's release could drop the
second's data: "lost dependencies", reported as ``NoneType: None``. Now each call scatters under a
key of its own and releases only what it made; and a failed future is described by its remote
exception, or, when Dask cancelled it, in plain words.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from evalcore.errors import EvalcoreError

pytestmark = pytest.mark.timeout(600)

ROUNDS = 25


def _add(task: int, shared: dict, scale: int) -> int:
    """A unit run on a worker by name: reads the call's shared data."""
    return shared["base"] + scale * task + len(shared["pad"])


def _empty_error(task: int, shared: Any) -> None:
    raise RuntimeError()


def _call(client: object, base: int, tasks: list[int]) -> list[int]:
    from evalcore.cluster import run_blocks_on_cluster

    # every call's shared data is a dict with the same keys: the case that used to collide
    return run_blocks_on_cluster(_add, tasks, {"base": base, "pad": "x" * base}, args=(3,), cluster=client)


def _expected(base: int, tasks: list[int]) -> list[int]:
    return [base + 3 * t + base for t in tasks]


def test_overlapping_calls_on_one_client_each_get_their_own_shared_data(local_client: object) -> None:
    tasks = list(range(12))
    for round_ in range(ROUNDS):
        results: dict[int, Any] = {}

        def run(base: int, results: dict[int, Any] = results) -> None:
            try:
                results[base] = _call(local_client, base, tasks)
            except BaseException as exc:  # noqa: BLE001 - asserted below, with the round
                results[base] = exc

        bases = [1000 + 2 * round_, 1001 + 2 * round_]
        threads = [threading.Thread(target=run, args=(b,)) for b in bases]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for base in bases:
            assert results.get(base) == _expected(base, tasks), (round_, base, results.get(base))


def test_back_to_back_calls_on_one_client_never_lose_data(local_client: object) -> None:
    # the first call's release must not race the next call's identical-looking data
    for round_ in range(ROUNDS):
        base = 7 + round_ % 3
        assert _call(local_client, base, [0, 1, 2]) == _expected(base, [0, 1, 2]), round_
    # and nothing of these calls is left on the scheduler once their releases arrive (async)
    deadline = time.monotonic() + 30
    while True:
        left = [k for k in local_client.who_has() if str(k).startswith(("evalcore-shared-", "evalcore-block-"))]  # type: ignore[attr-defined]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == []


def test_a_remote_error_without_a_message_names_its_type(local_client: object) -> None:
    from evalcore.cluster import run_blocks_on_cluster

    with pytest.raises(EvalcoreError) as info:
        run_blocks_on_cluster(_empty_error, [1], None, cluster=local_client)
    text = str(info.value)
    assert "1 failed on the cluster" in text and "RuntimeError: (no message)" in text
    assert "NoneType" not in text


def test_a_cancelled_future_is_said_plainly(local_client: object) -> None:
    from distributed import Future

    from evalcore.cluster._errors import future_error_text

    gone = Future("evalcore-test-never-scattered", local_client)  # data the scheduler does not have
    fut = local_client.submit(_add, 1, gone, 1, pure=False)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while not fut.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fut.status == "cancelled"
    text = future_error_text(fut)
    assert text.startswith("cancelled by the Dask scheduler: data it needs is no longer on the cluster"), text
    assert "NoneType" not in text


def test_describe_exception_cases() -> None:
    from distributed.client import FutureCancelledError

    from evalcore.cluster._errors import describe_exception

    assert describe_exception(ValueError("bad\nvalue")) == "ValueError: bad value"
    assert describe_exception(KeyError("k")) == "KeyError: 'k'"
    assert describe_exception(RuntimeError()) == "RuntimeError: (no message)"
    assert describe_exception(FutureCancelledError("k", "lost dependencies")).startswith(
        "cancelled by the Dask scheduler: data it needs"
    )
    assert describe_exception(FutureCancelledError("k", "other")) == "cancelled by the Dask scheduler: reason: other"
    assert describe_exception(None) == "Dask reported the task as not finished without giving an exception"
    assert len(describe_exception(ValueError("x" * 5000))) < 700


LOOPS = 20
ITERATION_TIMEOUT_S = 120.0


def test_the_race_prone_case_passes_20_times_in_a_row(local_client: object) -> None:
    """Issue 38's "20 runs out of 20": the case that lost data (two calls on one long-lived client,
    one overlapping the other, then one right after the other's release), looped 20 times, each
    iteration bounded (a hang is reported with its iteration, not as the whole test's timeout)."""
    tasks = list(range(8))
    for i in range(LOOPS):
        results: dict[int, Any] = {}

        def run(base: int, results: dict[int, Any] = results) -> None:
            try:
                results[base] = _call(local_client, base, tasks)
                results[-base] = _call(local_client, base + 1, tasks)  # right after its own release
            except BaseException as exc:  # noqa: BLE001 - reported below with the iteration
                results[base] = exc

        bases = [3000 + 4 * i, 3002 + 4 * i]
        threads = [threading.Thread(target=run, args=(b,), daemon=True) for b in bases]
        deadline = time.monotonic() + ITERATION_TIMEOUT_S
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        hung = [b for b, t in zip(bases, threads) if t.is_alive()]
        assert not hung, f"iteration {i + 1} of {LOOPS}: calls {hung} did not finish within {ITERATION_TIMEOUT_S:g} s"
        for base in bases:
            got, then = results.get(base), results.get(-base)
            assert got == _expected(base, tasks), f"iteration {i + 1} of {LOOPS}, call {base}: got {got!r}"
            assert then == _expected(base + 1, tasks), f"iteration {i + 1} of {LOOPS}, call {base + 1}: got {then!r}"
