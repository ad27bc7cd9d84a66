"""epoll refused where no memory cgroup counts its watches, with asyncio and selectors on poll (issue 42).

Without a memory cgroup (unprivileged, ``EVALCORE_SANDBOX_CGROUP=0``, the weak fallback) each
epoll watch (~160 B of kernel memory) was bounded only by the per-user
``fs.epoll.max_user_watches`` (about 840 MiB here, for all of the user's samples). Now the
sample's filter answers ``epoll_create``/``epoll_create1``/``epoll_ctl`` with ENOSYS where it
refuses inotify: every check candidate, and script samples without a cgroup. CPython's
``selectors`` then picks ``PollSelector`` (``selectors._can_use`` treats the OSError as "no
epoll"), and ``selfpipe.poll_if_no_epoll`` makes the same choice for a ``selectors`` imported
before the filter. The attack, the correct asyncio/selectors/subprocess cases in both modes,
with and without a cgroup, and the filter itself are tested here; ``test_epoll_as_nobody``
reruns this file as ``nobody`` (user namespaces, no cgroup).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _as_nobody import blocking_ancestor, rerun_as_nobody
from _sandbox_jobs import probe_check, script_job
from _sandbox_target import SandboxPool, local_only

ENOSYS = 38
ROOT = Path(__file__).resolve().parents[2]


def _script(source: str, timeout_s: float = 30.0) -> dict:
    return script_job(source, timeout_s)


def _check(body: str, test: str, timeout_s: float = 30.0) -> dict:
    return probe_check(body, test, timeout_s)


def _last_json(stdout: str) -> object:
    lines = [line for line in stdout.splitlines() if line.startswith("{") or line.startswith("[")]
    assert lines, stdout
    return json.loads(lines[-1])


def _has_cgroup(pool: SandboxPool) -> bool:
    return "memory cgroup per sample" in pool.isolation.get("memory", "")


def _pool(cgroup_env: str | None, monkeypatch: pytest.MonkeyPatch, **kw: object) -> SandboxPool:
    """A pool as the default makes it, or with ``EVALCORE_SANDBOX_CGROUP`` set (local pools only)."""
    if cgroup_env is not None:
        monkeypatch.setenv("EVALCORE_SANDBOX_CGROUP", cgroup_env)
    pool = SandboxPool(1, **kw)
    if pool.isolation.get("seccomp", "unavailable") == "unavailable":
        pool.close()
        pytest.skip("no seccomp filter here")
    return pool


# ---------------------------------------------------------------- the filter itself

FILTER_PROBE = r"""
import asyncio, ctypes, json, os, select, selectors, sys
from evalcore.sandbox import selfpipe
from evalcore.sandbox.linux import Libc
kind, refuse = sys.argv[1], sys.argv[2] == "1"
libc = Libc()
before = select.epoll()  # made before the filter, as a file a sample might inherit
r, w = os.pipe()
prog = libc.filter(kind, refuse_memfd=refuse)
assert libc.lib.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
fn, args = libc.seccomp_call(libc.address(prog))
assert fn(*args) == 0, "seccomp"
out = {}
fd = libc.lib.epoll_create1(0)
out["epoll_create1"] = fd if fd >= 0 else -ctypes.get_errno()
fd = libc.lib.epoll_create(1)
out["epoll_create"] = fd if fd >= 0 else -ctypes.get_errno()
try:
    before.register(r, select.EPOLLIN)
    out["epoll_ctl"] = 0
except OSError as exc:
    out["epoll_ctl"] = -exc.errno
# selectors was imported before the filter: its default was chosen while epoll worked
out["default_before"] = selectors.DefaultSelector.__name__
selfpipe.poll_if_no_epoll()
out["default"] = selectors.DefaultSelector.__name__
sel = selectors.DefaultSelector()
sel.register(r, selectors.EVENT_READ, "r")
os.write(w, b"x")
out["selected"] = [key.data for key, _ in sel.select(timeout=5)]
sel.close()
selfpipe.install()  # the loop's self-pipe: an eventfd (no socket pair for check candidates)
async def main():
    await asyncio.sleep(0.01)
    return sum(await asyncio.gather(asyncio.sleep(0, 20), asyncio.sleep(0.005, 22)))
out["asyncio"] = asyncio.run(main())
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("kind", "refuse"),
    [
        ("script", True),
        ("script_weak", True),
        ("check", False),
        ("check", True),
        ("script", False),
        ("script_weak", False),
    ],
)
def test_the_filter_refuses_epoll_where_it_refuses_inotify(kind: str, refuse: bool, tmp_path: Path) -> None:
    from evalcore.sandbox.linux import seccomp_program

    if seccomp_program(kind) is None:
        pytest.skip("no seccomp filter on this architecture")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", FILTER_PROBE, kind, "1" if refuse else "0"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["default_before"] == "EpollSelector", got
    assert got["selected"] == ["r"] and got["asyncio"] == 42, got
    if refuse or kind == "check":  # the inotify rule: no cgroup counts them (check candidates: never)
        assert got["epoll_create1"] == got["epoll_create"] == got["epoll_ctl"] == -ENOSYS, got
        assert got["default"] == "PollSelector", got
    else:  # a memory cgroup counts the watches
        assert got["epoll_create1"] >= 0 and got["epoll_create"] >= 0 and got["epoll_ctl"] == 0, got
        assert got["default"] == "EpollSelector", got


# ---------------------------------------------------------------- the attack

WATCHES = r"""
import json, os, select
out = {}
try:
    ep = select.epoll()
except OSError as exc:
    out["epoll"] = exc.errno
else:
    out["epoll"] = 0
    r, w = os.pipe()
    n = 0
    try:
        for _ in range(200):  # a watch per (file, descriptor): each dup is one more
            ep.register(os.dup(r), select.EPOLLIN)
            n += 1
    except OSError as exc:
        out["stopped"] = exc.errno
    out["watches"] = n
print(json.dumps(out), flush=True)
"""

WATCHES_CHECK = (
    "    import select\n    try:\n        select.epoll()\n    except OSError as exc:\n"
    "        return exc.errno\n    return 0\n"
)


@pytest.mark.parametrize("cgroup_env", [None, pytest.param("0", marks=local_only("sets EVALCORE_SANDBOX_CGROUP"))])
def test_a_sample_makes_no_epoll_watch_where_no_cgroup_counts_it(
    cgroup_env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    test = f"def check(candidate):\n    assert candidate() == {ENOSYS}, candidate()\n"  # every check candidate
    pool = _pool(cgroup_env, monkeypatch)
    try:
        cgroup = _has_cgroup(pool)
        script, check = pool.map([_script(WATCHES), _check(WATCHES_CHECK, test)])
    finally:
        pool.close()
    assert cgroup_env != "0" or not cgroup, pool.isolation
    assert script.get("completed"), script
    out = _last_json(script["stdout"])
    if cgroup:  # counted against the sample's memory_mb: allowed (docs/sandbox.md, the table)
        assert out == {"epoll": 0, "watches": 200}, out
    else:
        assert out == {"epoll": ENOSYS}, out
    assert check.get("completed"), check  # the test passed (no reason)


# ---------------------------------------------------------------- correct code

CORRECT_SCRIPT = r"""
import asyncio, json, os, select, selectors, subprocess, sys
EXEC = EXEC_ALLOWED  # script_weak (the fallback) refuses execve: no child programs there
out = {"default": selectors.DefaultSelector.__name__}
try:
    select.epoll().close()
    out["epoll"] = 0
except OSError as exc:
    out["epoll"] = exc.errno
async def main():
    await asyncio.sleep(0.01)
    r, w = os.pipe()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(r, "rb", 0))
    os.write(w, b"piped\n")
    os.close(w)
    got = [(await reader.readline()).decode().strip()]
    if EXEC:
        p = await asyncio.create_subprocess_exec(sys.executable, "-c", "print(6 * 7)", stdout=asyncio.subprocess.PIPE)
        o, _ = await p.communicate()
        got.append(o.decode().strip())
    return got
out["asyncio"] = asyncio.run(main())
sel = selectors.DefaultSelector()
r, w = os.pipe()
sel.register(r, selectors.EVENT_READ, "r")
os.write(w, b"x")
out["selected"] = [key.data for key, _ in sel.select(timeout=5)]
sel.close()
if EXEC:
    done = subprocess.run([sys.executable, "-c", "print('out')"], capture_output=True, text=True, timeout=20)
    out["run"] = done.stdout.strip()
print(json.dumps(out), flush=True)
"""


def _correct_script(execs: bool) -> dict:
    return _script(CORRECT_SCRIPT.replace("EXEC_ALLOWED", repr(execs)))


CORRECT_CHECK = (
    "    import asyncio, os, select, selectors\n"
    "    async def twice(x):\n"
    "        await asyncio.sleep(0.01)\n"
    "        a, b = await asyncio.gather(asyncio.sleep(0, x), asyncio.sleep(0.005, x))\n"
    "        return a + b\n"
    "    value = asyncio.run(twice(21))\n"
    "    sel = selectors.DefaultSelector()\n"
    "    fd = os.eventfd(0, os.EFD_NONBLOCK)\n"
    "    sel.register(fd, selectors.EVENT_READ, 'e')\n"
    "    os.eventfd_write(fd, 1)\n"
    "    ready = [key.data for key, _ in sel.select(timeout=5)]\n"
    "    sel.close()\n"
    "    os.close(fd)\n"
    "    try:\n"
    "        select.epoll().close()\n"
    "        err = 0\n"
    "    except OSError as exc:\n"
    "        err = exc.errno\n"
    "    return [value, ready, selectors.DefaultSelector.__name__, err]\n"
)
CORRECT_TEST = f"def check(candidate):\n    assert candidate() == [42, ['e'], 'PollSelector', {ENOSYS}], candidate()\n"


def _assert_script(reply: dict, cgroup: bool, execs: bool) -> None:
    assert reply.get("completed"), reply
    out = _last_json(reply["stdout"])
    expected: dict[str, object] = {
        "default": "EpollSelector" if cgroup else "PollSelector",
        "epoll": 0 if cgroup else ENOSYS,
        "asyncio": ["piped", "42"] if execs else ["piped"],
        "selected": ["r"],
    }
    if execs:
        expected["run"] = "out"
    assert out == expected, out


@pytest.mark.parametrize("cgroup_env", [None, pytest.param("0", marks=local_only("sets EVALCORE_SANDBOX_CGROUP"))])
def test_asyncio_selectors_and_subprocess_work_in_both_modes(
    cgroup_env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = _pool(cgroup_env, monkeypatch)
    try:
        cgroup = _has_cgroup(pool)
        if pool.isolation.get("level") != "full":
            pytest.skip("no namespaces here: test_the_weak_fallback_runs_asyncio_on_poll")
        script, check = pool.map([_correct_script(True), _check(CORRECT_CHECK, CORRECT_TEST)])
    finally:
        pool.close()
    _assert_script(script, cgroup, execs=True)
    assert check.get("completed"), check  # the test passed (no reason)


@local_only("the weak fallback is a local pool's option")
def test_the_weak_fallback_runs_asyncio_on_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    # No namespaces: samples run as this user (nobody in the rerun) or, as root, as a uid of
    # their own that must be able to read the interpreter's files.
    if os.geteuid() == 0 and blocking_ancestor(Path(os.path.realpath(sys.base_prefix))) is not None:
        pytest.skip("as root the weak fallback's uid cannot read this interpreter (test_epoll_as_nobody runs it)")
    pool = _pool(None, monkeypatch, namespaces=False)
    try:
        cgroup = _has_cgroup(pool)
        script, check, attack = pool.map(
            [_correct_script(False), _check(CORRECT_CHECK, CORRECT_TEST), _script(WATCHES)]
        )
    finally:
        pool.close()
    _assert_script(script, cgroup, execs=False)
    assert check.get("completed"), check  # the test passed (no reason)
    assert attack.get("completed"), attack
    assert _last_json(attack["stdout"]) == ({"epoll": 0, "watches": 200} if cgroup else {"epoll": ENOSYS}), attack


@pytest.mark.integration
@pytest.mark.slow
@local_only("reruns this file as nobody with pools of its own")
def test_epoll_as_nobody() -> None:
    out = rerun_as_nobody([str(Path(__file__).resolve()), "-k", "not as_nobody"], timeout=400)
    # As nobody: no memory cgroup; user namespaces (full) and the weak fallback both run, none skipped.
    assert "skipped" not in out.stdout, out.stdout[-2000:]
