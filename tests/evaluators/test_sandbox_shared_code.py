"""Sandbox: prompts/tests compiled once per worker, and the pool's CPU accounting."""

from __future__ import annotations

import time

from evalcore.evaluators._sandbox import SandboxPool, _compile_check_job, _to_result

PROMPT = "def add(a, b):\n    '''a + b'''\n"
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"


def _job(body: str, test: str = TEST) -> dict:
    return {
        "mode": "check",
        "source": PROMPT + body,
        "prompt": PROMPT,
        "test": test,
        "entry_point": "add",
        "timeout_s": 5.0,
        "memory_mb": 256,
    }


def test_compile_check_job_shares_prompt_and_test_but_not_the_program() -> None:
    a = _compile_check_job(_job("    return a + b\n"))
    b = _compile_check_job(_job("    return a + b\n"))
    assert isinstance(a, tuple) and isinstance(b, tuple)
    assert a[0] is not b[0]  # each sample's program is its own
    assert a[1] is b[1] and a[2] is b[2]  # the task's prompt and test are compiled once
    bad = _compile_check_job(_job("    return a + b\n", test="def check(candidate):\n    assert (\n"))
    assert isinstance(bad, SyntaxError)


def test_samples_sharing_a_test_on_one_worker_are_judged_independently() -> None:
    # One worker runs them all in sequence: the shared (cached) test must not carry anything
    # from one sample to the next, including what a sample did to its own copy of the test.
    tamper = "    import builtins\n    builtins.AssertionError = None\n    builtins.abs = lambda x: 0\n    return 99\n"
    bodies = ["    return a + b\n", "    return a - b\n", tamper, "    return a + b\n", "    return 3\n"]
    pool = SandboxPool(1)
    try:
        results = [_to_result(r) for r in pool.map([_job(b) for b in bodies])]
    finally:
        pool.close()
    assert [r.completed for r in results] == [True, False, False, True, False]


def test_cpu_seconds_counts_the_samples_work() -> None:
    pool = SandboxPool(1)
    try:
        pool.map([_job("    return a + b\n")])  # warm up
        before = pool.cpu_seconds()
        busy = (
            "    import time\n"
            "    end = time.process_time() + 0.4\n"
            "    while time.process_time() < end:\n"
            "        pass\n"
            "    return a + b\n"
        )
        t = time.monotonic()
        (reply,) = pool.map([_job(busy)])
        wall = time.monotonic() - t
        used = pool.cpu_seconds() - before
    finally:
        pool.close()
    assert _to_result(reply).completed
    assert 0.35 <= used <= wall + 0.1
