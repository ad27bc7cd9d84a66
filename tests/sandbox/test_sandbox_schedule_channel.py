"""No bit through evalcore's own schedule (issue 42, part 1).

The pool remembers how long each test's last sample took (in memory between batches, and in the
durations file between runs) and hands the longest jobs out first. Before, a job expected to be
slow also started in a session of its own and at ``nice`` -5 (as root): a candidate that read
``os.getsid(0)`` and its priority learnt whether the previous sample of its problem was slow, one
bit carried 4 of 4 across batches and 3 of 3 across runs. Now every sample starts in the same
session layout, at the same priority, with the same limits; the durations order the work only.

Each test below lets a sender (the previous sample of the same problem) be fast or slow, then
runs a probe of that problem beside other jobs and compares what the probe sees: equal values
whatever the sender did. ``test_..._as_nobody`` reruns this file as ``nobody``;
tests/cluster/test_cluster_isolation.py reruns it with the jobs on a Dask worker's pool (the
batches of a training loop that evaluates on a cluster), where the tests marked ``local_only``
skip with their reason.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from _as_nobody import rerun_as_nobody
from _sandbox_target import SandboxPool, local_only
from evalcore.sandbox.pool import DURATIONS_ENV, _cost_key, _to_result

# What a sample can read about how it was started (never timing).
READ = """
def _observe():
    import os
    try:
        import resource  # not importable as a private uid of the fallback (pyenv under /root)
    except ImportError:
        resource = None
    def safe(f, *a):
        try:
            return f(*a)
        except Exception as exc:
            return type(exc).__name__
    pid = os.getpid()
    seen = {
        "sid_is_pid": safe(os.getsid, 0) == pid,
        "sid": safe(os.getsid, 0),
        "pgid_is_pid": safe(os.getpgid, 0) == pid,
        "pgrp": safe(os.getpgrp),
        "ppid": safe(os.getppid),
        "prio_process": safe(os.getpriority, os.PRIO_PROCESS, 0),
        "prio_pgrp": safe(os.getpriority, os.PRIO_PGRP, 0),
        "prio_user": safe(os.getpriority, os.PRIO_USER, 0),
        "nice": safe(os.nice, 0),
        "affinity": sorted(safe(os.sched_getaffinity, 0)),
        "scheduler": safe(os.sched_getscheduler, 0),
        "sched_priority": safe(lambda: os.sched_getparam(0).sched_priority),
        "uid": safe(os.getuid),
        "gid": safe(os.getgid),
        "groups": safe(os.getgroups),
        "cwd": safe(os.getcwd),
        "limits": resource and [safe(resource.getrlimit, r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS,
                   resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE)],
    }
    if pid != 1:  # without namespaces the pid and the temporary directory differ every sample
        for key in ("sid", "pgrp", "ppid", "cwd"):
            seen.pop(key)
    return repr(sorted(seen.items()))
"""
PROMPT = "def probe(x):\n    '''x'''\n"
TEST = "def check(candidate):\n    assert candidate(1) == 1\n"
PROBE = PROMPT + READ + "    \ndef probe(x):\n    print(_observe())\n    return x\n"
SLOW = PROMPT + "    import time\n    time.sleep(0.4)\n    return x\n"
FAST = PROMPT + "    return x\n"


def _check(source: str, test: str = TEST) -> dict:
    return {
        "mode": "check",
        "source": source,
        "prompt": PROMPT,
        "test": test,
        "entry_point": "probe",
        "timeout_s": 10.0,
        "memory_mb": 256,
    }


def _others(n: int = 3) -> list[dict]:
    # Other problems of the batch, a little slower than a fast sender (0.05 s each).
    body = PROMPT + "    import time\n    time.sleep(0.05)\n    return x\n"
    return [_check(body, TEST + f"# other problem {i}\n") for i in range(n)]


def _seen(pool: SandboxPool) -> dict:
    replies = pool.map([*_others(), _check(PROBE)])
    result = _to_result(replies[-1])
    assert result.completed, (result.reason, result.stderr)
    return dict(ast.literal_eval(result.stdout.strip().splitlines()[-1]))


def _across_batches(namespaces: bool) -> list[tuple[str, dict]]:
    out = []
    pool = SandboxPool(1, namespaces=namespaces)  # one process's pool, as a training loop keeps it
    try:
        for previous in (SLOW, FAST, SLOW, FAST):  # 4 batches, each after a sender
            pool.map([*_others(), _check(previous)])  # the sender: the previous sample of the problem
            assert (pool._durations[_cost_key(_check(PROBE))] > 0.3) == (previous is SLOW)
            out.append(("slow" if previous is SLOW else "fast", _seen(pool)))
    finally:
        pool.close()
    return out


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "fallback"])
def test_a_slow_previous_sample_changes_nothing_the_next_one_sees_across_batches(namespaces: bool) -> None:
    seen = _across_batches(namespaces)
    first = seen[0][1]
    for label, values in seen:
        assert values == first, (label, values, first)
    # The layout itself: a group of its own; with namespaces in the zygote's session (which lies
    # outside the sample's PID namespace), without them a session of its own; nobody reniced.
    assert first["pgid_is_pid"] is True
    assert first["sid_is_pid"] is (not namespaces)
    assert first["prio_process"] == first["nice"]


@local_only(
    "a new pool per run reads the durations file this process names; a Dask worker's pool lives as long as the worker"
)
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "fallback"])
def test_across_runs_through_the_durations_file(
    namespaces: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = []
    for run, previous in enumerate((SLOW, FAST, SLOW)):
        path = tmp_path / f"run{run}.json"
        monkeypatch.setenv(DURATIONS_ENV, str(path))
        sender = SandboxPool(1, namespaces=namespaces)
        try:
            sender.map([*_others(), _check(previous)])
        finally:
            sender.close()
        saved = json.loads(path.read_text())["durations"]
        assert (saved[_cost_key(_check(PROBE))] > 0.3) == (previous is SLOW)
        receiver = SandboxPool(1, namespaces=namespaces)  # a later run reading the file
        try:
            values = _seen(receiver)
            # A new pool's worker has a uid of its own (drawn when it starts, whatever the file says).
            values.pop("uid"), values.pop("gid")
            seen.append(values)
            assert receiver._durations_loaded and _cost_key(_check(PROBE)) in receiver._durations
        finally:
            receiver.close()
    assert seen[0] == seen[1] == seen[2], seen


@local_only("sets the durations a pool of this process remembers")
def test_script_samples_expected_to_be_slow_start_like_the_others() -> None:
    probe = READ + "print(_observe())\n"
    slow = {"mode": "script", "source": probe + "print('slow')\n", "timeout_s": 5.0}
    fast = {"mode": "script", "source": probe, "timeout_s": 5.0}
    pool = SandboxPool(1)
    try:
        pool._durations[_cost_key(slow)] = 5.0  # as if it had taken most of an earlier batch
        pool._durations[_cost_key(fast)] = 0.01
        jobs = [fast, slow, fast]
        assert pool._schedule(jobs) == [1, 0, 2]  # still handed out first
        assert jobs == [fast, slow, fast]  # and nothing added to any job
        results = [_to_result(r) for r in pool.map(jobs)]
    finally:
        pool.close()
    assert all(r.completed for r in results), results
    values = [dict(ast.literal_eval(r.stdout.splitlines()[0])) for r in results]
    assert values[1] == values[0] == values[2]
    assert results[1].stdout.splitlines()[1] == "slow"


@local_only("two workers of one pool; the Dask worker's pool has one")
def test_the_worker_that_starts_first_is_drawn_not_picked_by_the_order() -> None:
    # With two workers, the longest job goes to whichever worker starts first: drawn at random
    # per batch, so the durations do not choose a worker (its uid, its CPU) for a problem.
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: both workers would be pinned alike")
    probe = "import os\nprint(os.getuid(), sorted(os.sched_getaffinity(0)))\n"
    slow = {"mode": "script", "source": probe + "print('slow')\n", "timeout_s": 5.0}
    fast = {"mode": "script", "source": "import time\ntime.sleep(0.02)\n", "timeout_s": 5.0}
    pool = SandboxPool(2)
    try:
        pool._durations[_cost_key(slow)] = 5.0
        pool._durations[_cost_key(fast)] = 0.01
        where = set()
        for _ in range(12):
            reply = _to_result(pool.map([fast, fast, slow, fast])[2])
            assert reply.completed, reply
            where.add(reply.stdout.splitlines()[0])
    finally:
        pool.close()
    assert len(where) == 2, where  # both workers took it (the chance of one alone: 2 in 4096)


@pytest.mark.integration
@local_only("reruns this file as nobody with pools of its own")
def test_no_bit_through_the_schedule_as_nobody() -> None:
    rerun_as_nobody([str(Path(__file__).resolve())], timeout=600)
