"""The warm pool's machinery: the zygote that forks samples, and longest-first scheduling."""

from __future__ import annotations

import os
import signal
import time

from evalcore.evaluators._sandbox import SandboxPool, _cost_key, _to_result

PROMPT = "def add(a, b):\n    '''a + b'''\n"
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n"


def _job(body: str = "    return a + b\n", test: str = TEST) -> dict:
    return {
        "mode": "check",
        "source": PROMPT + body,
        "prompt": PROMPT,
        "test": test,
        "entry_point": "add",
        "timeout_s": 5.0,
        "memory_mb": 256,
    }


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def test_samples_are_forked_by_a_zygote_not_by_the_worker() -> None:
    pool = SandboxPool(1)
    try:
        (reply,) = pool.map([_job()])
        handle = pool._all[0]
        assert _to_result(reply).completed
        assert handle.zygote_pid > 0 and handle.zygote_pid != handle.proc.pid
        assert _ppid(handle.zygote_pid) == handle.proc.pid  # the worker's own child
    finally:
        pool.close()


def test_a_dead_zygote_costs_a_worker_not_a_result() -> None:
    pool = SandboxPool(1)
    try:
        pool.map([_job()])
        old = pool._all[0]
        os.kill(old.zygote_pid, signal.SIGKILL)
        time.sleep(0.1)
        replies = pool.map([_job(), _job("    return a - b\n")])
        results = [_to_result(r) for r in replies]
        assert [r.completed for r in results] == [True, False]
        assert pool._all[0] is not old and pool._all[0].zygote_pid not in (0, old.zygote_pid)
    finally:
        pool.close()


def test_known_slow_jobs_are_handed_out_first() -> None:
    pool = SandboxPool(1)
    try:
        fast, slow = _job(), _job(test=TEST + "\n# another task\n")
        assert pool._schedule([fast, slow, fast]) == [0, 1, 2]  # nothing known: as given
        pool._durations[_cost_key(slow)] = 0.5
        pool._durations[_cost_key(fast)] = 0.01
        assert pool._schedule([fast, slow, fast]) == [1, 0, 2]
        mid, unknown = _job(test=TEST + "\n# mid\n"), _job(test=TEST + "\n# never seen\n")
        pool._durations[_cost_key(mid)] = 0.1
        # A job never seen counts as the median of the known ones (ties keep their order).
        assert pool._schedule([fast, unknown, slow, mid]) == [2, 1, 3, 0]
    finally:
        pool.close()


def test_durations_are_learned_from_a_run() -> None:
    pool = SandboxPool(1)
    try:
        busy = "    import time\n    time.sleep(0.3)\n    return a + b\n"
        slow = _job(busy, test=TEST + "\n# slow task\n")
        fast = _job()
        pool.map([fast, slow])
        assert pool._durations[_cost_key(slow)] >= 0.3 > pool._durations[_cost_key(fast)]
        assert pool._schedule([fast, slow]) == [1, 0]
    finally:
        pool.close()
