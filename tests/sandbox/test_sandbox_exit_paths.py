"""A sample is always killed and its scratch always wiped, whatever ends it (issue 29, item 3).

Every exit path of the worker, for ``check`` and ``script`` samples: the candidate first starts
a thread that keeps writing a file to its scratch (and, in the weak fallback, to a folder of the
host), then the sample ends one way or another. A probe sample run next on the same worker must
find no such file, and nothing may keep writing to the host folder. Before the fix a failure
message whose ``str()`` raises (an int over the 4,300-digit conversion limit) made the worker
report an error without ever killing the sample: its thread went on writing into the scratch of
every later sample of that worker.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from _sandbox_target import SandboxPool
from evalcore.sandbox.pool import _to_result

# The candidate's first act: a thread that keeps its marker file alive (in the scratch, and in
# the host folder named by HOST when the weak fallback runs it there).
LEAVE = textwrap.dedent(
    """
    import os, _thread, time  # (builtin modules: the weak fallback's private uid as root may not read the rest)
    HOST = {host!r}
    def _keep():
        while True:
            for path in ({scratch!r}, os.path.join(HOST, "alive")):
                try:
                    with open(path, "w") as fh:
                        fh.write("still here")
                except OSError:
                    pass
            time.sleep(0.005)
    _thread.start_new_thread(_keep, ())
    time.sleep(0.05)
    """
)

# How each check sample ends: (program after LEAVE, test).
CHECK_PATHS = {
    "passes": ("def f():\n    return 1\n", "def check(candidate):\n    assert candidate() == 1\n"),
    "assertion_fails": ("def f():\n    return 2\n", "def check(candidate):\n    assert candidate() == 1\n"),
    "message_str_raises": (
        "def f():\n    return 2\n",
        "def check(candidate):\n    assert candidate() == 1, 10 ** 5000\n",
    ),
    "candidate_value_in_message_str_raises": (
        "def f():\n    return 10 ** 5000\n",
        "def check(candidate):\n    r = candidate()\n    assert r == 1, r\n",
    ),
    "message_str_raises_base_exception": (
        "def f():\n    return 2\n",
        "class M:\n    def __str__(self):\n        raise KeyboardInterrupt\n"
        "def check(candidate):\n    assert candidate() == 1, M()\n",
    ),
    "test_raises_system_exit": (
        "def f():\n    return 1\n",
        "def check(candidate):\n    candidate()\n    raise SystemExit(3)\n",
    ),
    "candidate_raises": ("def f():\n    raise ValueError('no')\n", "def check(candidate):\n    candidate()\n"),
    "candidate_exits": ("def f():\n    os._exit(0)\n", "def check(candidate):\n    candidate()\n"),
    "candidate_system_exit": ("def f():\n    raise SystemExit(0)\n", "def check(candidate):\n    candidate()\n"),
    "program_fails": (
        "raise RuntimeError('at import')\ndef f():\n    return 1\n",
        "def check(candidate):\n    candidate()\n",
    ),
    "times_out": ("def f():\n    time.sleep(30)\n", "def check(candidate):\n    candidate()\n"),
    "test_loops": (
        "def f():\n    return 1\n",
        "def check(candidate):\n    candidate()\n    while True:\n        pass\n",
    ),
}

SCRIPT_PATHS = {
    "ends": "",
    "raises": "raise ValueError('no')\n",
    "exits": "os._exit(0)\n",
    "system_exit": "raise SystemExit(1)\n",
    "times_out": "time.sleep(30)\n",
}

PROBE = textwrap.dedent(
    """
    import os, time
    def f():
        time.sleep(0.1)
        return os.path.exists("/tmp/leftover") or os.path.exists("leftover")
    """
)


def _leave(pool: SandboxPool, host: Path) -> str:
    # In the weak fallback /tmp is the host's: the scratch is then the sample's own directory.
    scratch = "/tmp/leftover" if pool._namespaces else "leftover"
    return LEAVE.format(host=str(host), scratch=scratch)


def _check_job(source: str, test: str, timeout_s: float = 2.0) -> dict:
    return {"mode": "check", "source": source, "prompt": "", "test": test, "entry_point": "f", "timeout_s": timeout_s}


def _script_job(source: str, timeout_s: float = 2.0) -> dict:
    return {"mode": "script", "source": source, "timeout_s": timeout_s}


@pytest.fixture(scope="module", params=["namespaces", "weak"])
def pool(request):
    p = SandboxPool(1, namespaces=request.param == "namespaces")
    yield p
    p.close()


def _assert_gone(pool: SandboxPool, host: Path, what: str) -> None:
    probe = _check_job(PROBE, "def check(candidate):\n    assert candidate() is False\n")
    (reply,) = pool.map([probe])
    result = _to_result(reply)
    assert result.completed, f"{what}: the next sample found the scratch of the last one: {result}"
    marker = host / "alive"
    if marker.exists():
        marker.unlink()
    time.sleep(0.2)
    assert not marker.exists(), f"{what}: a thread of the last sample is still running"


@pytest.mark.parametrize("path", sorted(CHECK_PATHS))
def test_every_check_exit_path_kills_the_sample_and_wipes_its_scratch(
    pool: SandboxPool, path: str, tmp_path: Path
) -> None:
    os.chmod(tmp_path, 0o777)
    program, test = CHECK_PATHS[path]
    timeout = 1.0 if path in ("times_out", "test_loops") else 5.0
    (reply,) = pool.map([_check_job(_leave(pool, tmp_path) + program, test, timeout)])
    result = _to_result(reply)
    assert result.completed is (path == "passes"), result
    if path != "passes":
        assert result.reason, result
    _assert_gone(pool, tmp_path, path)


@pytest.mark.parametrize("path", sorted(SCRIPT_PATHS))
def test_every_script_exit_path_kills_the_sample_and_wipes_its_scratch(
    pool: SandboxPool, path: str, tmp_path: Path
) -> None:
    os.chmod(tmp_path, 0o777)
    timeout = 1.0 if path == "times_out" else 5.0
    (reply,) = pool.map([_script_job(_leave(pool, tmp_path) + SCRIPT_PATHS[path], timeout)])
    result = _to_result(reply)
    assert result.completed is (path == "ends"), result
    _assert_gone(pool, tmp_path, path)


def test_a_failure_message_that_cannot_be_shown_still_fails_the_sample(pool: SandboxPool) -> None:
    program, test = CHECK_PATHS["message_str_raises"]
    (reply,) = pool.map([_check_job(program, test)])
    result = _to_result(reply)
    assert "error" not in reply, reply
    assert result.completed is False
    assert "AssertionError" in (result.reason or "") or "ValueError" in (result.reason or ""), result
