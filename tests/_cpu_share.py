"""The CPU-share attack of issue 42 (shared by tests/sandbox/test_sandbox_resources_round3.py and
tests/cluster/test_cluster_cpu_share.py): a sample forking 32 spinners in 32 sessions on every
CPU (or a check candidate spinning 32 threads) beside an honest sample of another worker, which
measures the CPU seconds it gets per wall second over a fixed window. Compared with the same
honest sample beside an honest neighbour (one spinning process) and beside an idle worker.
"""

from __future__ import annotations

import json

HONEST = r"""
import json, os, time
time.sleep(%(delay)s)
t0, c0 = time.monotonic(), time.process_time()
x = 0
while time.monotonic() - t0 < %(window)s:
    x += 1
print(json.dumps([time.process_time() - c0, time.monotonic() - t0]), flush=True)
"""

SPINNERS = r"""
import os, time
end = time.monotonic() + %(spin)s
for _ in range(31):
    if os.fork() == 0:
        break
for call in (os.setsid, lambda: os.sched_setaffinity(0, range(os.cpu_count() or 1))):
    try:
        call()
    except OSError:
        pass
while time.monotonic() < end:
    pass
"""

THREAD_SPINNERS = r"""
    import hashlib, os, threading, time
    end = time.monotonic() + %(spin)s
    data = b'x' * (1 << 20)
    def spin():
        try:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
        except OSError:
            pass
        while time.monotonic() < end:
            hashlib.sha256(data).digest()  # releases the GIL: every thread spins a CPU
    threads = [threading.Thread(target=spin) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 1
"""

WINDOW = 1.5
ROUNDS = 5
MAX_ROUNDS = 12
"""While the median ratio is under its bound, a CPU-share test takes more rounds, up to this many."""


NEIGHBOUR = r"""
import time
end = time.monotonic() + %(spin)s
while time.monotonic() < end:
    pass
"""


CHECK_TEST = "def check(candidate):\n    assert candidate() == 1\n"
CHECK_PROMPT = "def f():\n    '''probe'''\n"


def cpu_jobs(mode: str) -> dict[str, dict]:
    """The ``honest`` sample, the ``attacker`` (``mode``: a ``script`` of forked spinners or a
    ``check`` candidate of spinning threads) and the honest ``neighbour``, as sandbox jobs."""
    spin = 0.5 + WINDOW + 1.0
    if mode == "script":
        attacker = {"mode": "script", "source": SPINNERS % {"spin": spin}, "timeout_s": spin + 5}
    else:
        body = THREAD_SPINNERS % {"spin": spin}
        attacker = {
            "mode": "check",
            "source": CHECK_PROMPT + body,
            "prompt": CHECK_PROMPT,
            "test": CHECK_TEST,
            "entry_point": "f",
            "timeout_s": spin + 5,
        }
    return {
        "honest": {"mode": "script", "source": HONEST % {"delay": 0.5, "window": WINDOW}, "timeout_s": 20.0},
        "attacker": attacker,
        "neighbour": {"mode": "script", "source": NEIGHBOUR % {"spin": spin}, "timeout_s": spin + 5},
    }


def cpu_share(stdout: str) -> float:
    """The honest sample's CPU seconds per wall second, from its last output line."""
    cpu, wall = json.loads(stdout.strip().splitlines()[-1])
    return float(cpu) / float(wall)
