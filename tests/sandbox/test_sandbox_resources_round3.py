"""Resources of check candidates and script samples bounded (issue 42, round three).

Before: 2.35 million empty files in scratch cost the host 2.9 GiB of kernel memory (the tmpfs
``size=`` counts content only); two processes of one script held 3.1 GiB in Unix socket buffers
where no memory cgroup counts them (``SO_SNDBUF`` up to twice ``net.core.wmem_max`` a socket);
a script forking 32 spinners, each in a session of its own and allowed on every CPU, left
another worker's sample a fraction of its CPU. Now the scratch mounts have ``nr_inodes``,
``AF_UNIX`` sockets are refused to script samples where no memory cgroup counts them (and
counted by it where there is one), and no sample may call ``sched_setaffinity`` or ``setsid``.
Each attack is a test here, with the correct cases beside it; ``test_..._as_nobody`` reruns
this file as ``nobody`` (no memory cgroup there: the unprivileged bounds); the cluster rerun
(tests/cluster/test_cluster_isolation.py) sends the jobs to a Dask worker's pool.
"""

from __future__ import annotations

import json
import statistics
import threading
from pathlib import Path

import pytest

from _as_nobody import rerun_as_nobody
from _cpu_share import HONEST, MAX_ROUNDS, NEIGHBOUR, ROUNDS, SPINNERS, THREAD_SPINNERS, WINDOW
from _sandbox_jobs import probe_check, script_job
from _sandbox_target import SandboxPool, local_only
from evalcore.sandbox.scratch import SCRATCH_INODES

MIB = 1024 * 1024


def _script(source: str, timeout_s: float = 20.0, memory_mb: int = 512) -> dict:
    return script_job(source, timeout_s, memory_mb=memory_mb)


def _check(body: str, test: str, timeout_s: float = 20.0) -> dict:
    return probe_check(body, test, timeout_s)


def _require_full(pool: SandboxPool) -> None:
    if pool.isolation.get("level") != "full":
        pool.close()
        pytest.skip("the weak fallback has no scratch tmpfs, view or process limit (docs/sandbox.md)")


def _last_json(stdout: str) -> object:
    lines = [line for line in stdout.splitlines() if line.startswith("{") or line.startswith("[")]
    assert lines, stdout
    return json.loads(lines[-1])


# ---------------------------------------------------------------- files in scratch


FILL = r"""
import json, os
counts = {}
for d in ("/tmp", "/var/tmp", "/dev/shm"):
    n = 0
    try:
        while n < 3_000_000:
            os.close(os.open(f"{d}/f{n}", os.O_CREAT | os.O_WRONLY, 0o600))
            n += 1
    except OSError as exc:
        counts[d] = [n, exc.errno]
    else:
        counts[d] = [n, 0]
print(json.dumps(counts), flush=True)
"""


def test_empty_files_in_scratch_are_bounded_by_nr_inodes_and_gone_for_the_next_sample() -> None:
    pool = SandboxPool(1)
    _require_full(pool)
    try:
        fill, after = pool.map(
            [
                _script(FILL, timeout_s=60),
                _script(
                    "import json, os\nprint(json.dumps([len(os.listdir(d)) for d in ('/tmp', '/var/tmp', '/dev/shm')]))"
                ),
            ]
        )
    finally:
        pool.close()
    assert fill.get("completed"), fill
    counts = _last_json(fill["stdout"])
    assert isinstance(counts, dict)
    for d, (n, err) in counts.items():
        # ENOSPC (28) once the mount's inodes are spent: never millions of files.
        assert err == 28, (d, n, err)
        assert SCRATCH_INODES - 64 <= n <= SCRATCH_INODES, (d, n)
    assert after.get("completed"), after
    # The next sample's scratch is fresh (the working directory /tmp/sandbox alone in /tmp).
    assert _last_json(after["stdout"]) == [1, 0, 0], after


def test_a_check_candidate_meets_the_same_inode_bound() -> None:
    body = (
        "    import os\n    n = 0\n    try:\n        while n < 3_000_000:\n"
        "            os.close(os.open(f'/tmp/c{n}', os.O_CREAT | os.O_WRONLY, 0o600))\n            n += 1\n"
        "    except OSError as exc:\n        return [n, exc.errno]\n    return [n, 0]\n"
    )
    test = f"def check(candidate):\n    n, err = candidate()\n    assert err == 28 and {SCRATCH_INODES - 64} <= n <= {SCRATCH_INODES}, (n, err)\n"
    pool = SandboxPool(1)
    _require_full(pool)
    try:
        (reply,) = pool.map([_check(body, test, timeout_s=60)])
    finally:
        pool.close()
    assert reply.get("completed"), reply


# ---------------------------------------------------------------- socket buffers


SOCKETS = r"""
import json, os, socket, sys
# As in the attack: 120 socket pairs, each end with the largest send buffer it may ask for,
# filled both ways without blocking; the bytes queued so far are printed every 32 MiB, so that
# what was held is known even when the memory cgroup kills the sample.
try:
    socket.socketpair()
except OSError as exc:
    print(json.dumps({"refused": exc.errno}), flush=True)
    sys.exit(0)
held, mark, ends = 0, 0, []
for _ in range(120):
    try:
        a, b = socket.socketpair()
    except OSError:
        break
    ends += [a, b]
    for s in (a, b):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
        s.setblocking(False)
    for s in (a, b):
        try:
            while True:
                held += s.send(b"x" * 65536)
                if held - mark >= 32 << 20:
                    mark = held
                    print(json.dumps({"held": held}), flush=True)
        except OSError:
            pass
print(json.dumps({"held": held, "done": True}), flush=True)
"""


def test_unix_socket_buffers_are_refused_or_counted_by_the_memory_cgroup() -> None:
    pool = SandboxPool(1)
    try:
        cgroup = "memory cgroup per sample" in pool.isolation.get("memory", "")
        first, probe = pool.map(
            [
                _script(SOCKETS, timeout_s=60, memory_mb=256),
                _script("print('alive')"),
            ]
        )
    finally:
        pool.close()
    report = _last_json(first["stdout"]) if first["stdout"].strip() else {"held": 0}
    assert isinstance(report, dict)
    print("socket buffers:", report, "cgroup:", cgroup, "returncode:", first.get("returncode"))
    if cgroup:
        # Counted: the sample queues at most its memory_mb plus the cgroup's headroom (64 MiB),
        # then the kernel refuses the buffers or kills it; before, 120 pairs held ~1.9 GiB.
        assert "refused" not in report, report
        assert report["held"] <= (256 + 64) * MIB, report
    else:
        # No memory cgroup: AF_UNIX sockets are refused (EPERM).
        assert report == {"refused": 1}, report
    assert probe.get("completed") and probe["stdout"] == "alive\n", probe


# ---------------------------------------------------------------- other kernel memory

KERNEL = r"""
import fcntl, json, os, threading
out = {}
r, w = os.pipe()
try:
    out["setpipe"] = fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MiB
except OSError as exc:
    out["setpipe"] = -exc.errno
os.set_blocking(w, False)
held = 0
try:
    while True:
        held += os.write(w, b"x" * 65536)
except BlockingIOError:
    pass
out["one_pipe"] = held
os.close(r), os.close(w)
# Pipes until the open-file limit, each filled, its write end closed: what one process can hold.
reads, total = [], 0
try:
    while True:
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            while True:
                total += os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
        os.close(w)
        reads.append(r)
except OSError as exc:
    out["pipes"] = [len(reads), total, exc.errno]
for r in reads:
    os.close(r)
stop = threading.Event()
threads = []
try:
    while len(threads) < 1000:
        t = threading.Thread(target=stop.wait)
        t.start()
        threads.append(t)
except RuntimeError:
    pass
out["threads"] = len(threads)
stop.set()
print(json.dumps(out), flush=True)
"""


def test_kernel_memory_without_a_cgroup_has_bounds() -> None:
    """What no limit counted without a memory cgroup, bounded (docs/sandbox.md, "CPU and kernel
    memory"): a pipe keeps 64 KiB (``F_SETPIPE_SZ`` refused), one process holds at most
    ``RLIMIT_NOFILE`` pipes of it, threads within the process limit (inotify: the filter's
    test below; a sample cannot reach ``inotify_init`` but through ctypes, which it may not load)."""
    pool = SandboxPool(1)
    _require_full(pool)
    try:
        cgroup = "memory cgroup per sample" in pool.isolation.get("memory", "")
        (reply,) = pool.map([_script(KERNEL, timeout_s=30)])
    finally:
        pool.close()
    assert reply.get("completed"), reply
    out = _last_json(reply["stdout"])
    assert isinstance(out, dict)
    print("kernel objects:", out, "cgroup:", cgroup)
    n, total, err = out["pipes"]
    assert err == 24 and n <= 256, out  # EMFILE at RLIMIT_NOFILE
    assert out["threads"] < 128, out  # RLIMIT_NPROC counts threads too (a kernel stack each)
    if cgroup:
        return  # counted by the cgroup: F_SETPIPE_SZ and inotify allowed
    assert out["setpipe"] == -1, out  # EPERM
    assert out["one_pipe"] == 65536, out  # the kernel's 16 pages
    assert total <= n * 65536 <= 256 * 65536, out  # 16 MiB a process at most


FILTER_PROBE = r"""
import ctypes, fcntl, json, os, sys
from evalcore.sandbox.linux import Libc
kind, refuse = sys.argv[1], sys.argv[2] == "1"
libc = Libc()
r, w = os.pipe()
prog = libc.filter(kind, refuse_memfd=refuse)
assert libc.lib.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
fn, args = libc.seccomp_call(libc.address(prog))
assert fn(*args) == 0, "seccomp"
out = {}
fd = libc.lib.inotify_init1(0)
out["inotify_init1"] = fd if fd >= 0 else -ctypes.get_errno()
fd = libc.lib.inotify_init()
out["inotify_init"] = fd if fd >= 0 else -ctypes.get_errno()
try:
    out["setpipe"] = fcntl.fcntl(w, 1031, 1 << 20)
except OSError as exc:
    out["setpipe"] = -exc.errno
out["getpipe"] = fcntl.fcntl(w, 1032)  # F_GETPIPE_SZ stays
out["getfl"] = fcntl.fcntl(w, fcntl.F_GETFL) >= 0  # other fcntl commands stay
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("kind", "refuse"), [("script", True), ("script_weak", True), ("check", False), ("script", False)]
)
def test_the_filter_refuses_inotify_and_growing_a_pipe_where_no_cgroup_counts_them(
    kind: str, refuse: bool, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    from evalcore.sandbox.linux import seccomp_program

    if seccomp_program(kind) is None:
        pytest.skip("no seccomp filter on this architecture")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", FILTER_PROBE, kind, "1" if refuse else "0"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if refuse or kind == "check":  # no cgroup counts them (check candidates: never needed)
        assert got["inotify_init1"] == got["inotify_init"] == -1, got  # EPERM
    else:
        assert got["inotify_init1"] >= 0, got  # a memory cgroup counts them
    if refuse:
        assert got["setpipe"] == -1 and got["getpipe"] == 65536, got  # EPERM; the kernel's 16 pages
    else:
        assert got["setpipe"] == 1 << 20, got
    assert got["getfl"] is True


# ---------------------------------------------------------------- processes


FORKS = r"""
import json, os, time
n = 0
pids = []
try:
    while n < 10_000:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
        n += 1
except OSError as exc:
    print(json.dumps([n, exc.errno]), flush=True)
else:
    print(json.dumps([n, 0]), flush=True)
"""


def test_a_script_sample_forks_a_bounded_number_of_processes() -> None:
    pool = SandboxPool(1)
    _require_full(pool)
    try:
        reply, probe = pool.map([_script(FORKS, timeout_s=20), _script("print('alive')")])
    finally:
        pool.close()
    n, err = _last_json(reply["stdout"])  # type: ignore[misc]
    assert err == 11 and n < 128, (n, err)  # EAGAIN at RLIMIT_NPROC (128 with the sample itself)
    assert probe.get("completed") and probe["stdout"] == "alive\n", probe


# ---------------------------------------------------------------- CPU


REFUSALS = r"""
import json, os, errno
def errors():
    out = []
    for call in (os.setsid, lambda: os.sched_setaffinity(0, range(os.cpu_count() or 1))):
        try:
            call()
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    return out + [len(os.sched_getaffinity(0))]
"""


def test_setsid_and_sched_setaffinity_are_refused_in_every_sample() -> None:
    # What the spinners tried, in a script sample, a child it forks, and a check candidate's
    # thread: EPERM for both calls; the CPUs a sample may use can still be read.
    fork = (
        "r, w = os.pipe()\nif os.fork() == 0:\n    os.write(w, json.dumps(errors()).encode())\n    os._exit(0)\n"
        "os.wait()\nprint(json.dumps([errors(), json.loads(os.read(r, 100))]))\n"
    )
    body = "    import threading\n    box = []\n    t = threading.Thread(target=lambda: box.append(_e()))\n"
    body += "    t.start(); t.join()\n    return [_e(), box[0]]\n"
    candidate = REFUSALS.replace("def errors", "def _e").replace("import json, os, errno", "import os")
    test = "def check(candidate):\n    r = candidate()\n    assert [x[:2] for x in r] == [[1, 1], [1, 1]], r\n"
    job = _check(body, test)
    job["source"] = job["prompt"] + body + candidate
    pool = SandboxPool(1)
    try:
        script, check = pool.map([_script(REFUSALS + fork), job])
    finally:
        pool.close()
    assert script.get("completed"), script
    parent, child = _last_json(script["stdout"])  # type: ignore[misc]
    assert parent[:2] == child[:2] == [1, 1], (parent, child)  # EPERM
    assert parent[2] >= 1 and child[2] == parent[2], (parent, child)
    assert check.get("completed"), check


def _honest_share(pool: SandboxPool, attacker: dict | None) -> float:
    """CPU seconds per wall second the honest sample got over its window, with an attacker
    running at the same time on the pool's other worker (or none)."""
    replies: dict[str, dict] = {}

    def run(name: str, job: dict) -> None:
        (replies[name],) = pool.map([job])

    threads = [threading.Thread(target=run, args=("honest", _script(HONEST % {"delay": 0.5, "window": WINDOW})))]
    if attacker is not None:
        threads.insert(0, threading.Thread(target=run, args=("attacker", attacker)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    honest = replies["honest"]
    assert honest.get("completed"), honest
    cpu, wall = _last_json(honest["stdout"])  # type: ignore[misc]
    return float(cpu) / float(wall)


@pytest.mark.slow
@pytest.mark.serial  # a CPU share: make test runs it alone (pyproject: serial)
@local_only("two workers of one pool, each pinned to its own CPU; the Dask worker's pool has one")
@pytest.mark.parametrize("mode", ["script", "check"])
def test_spinners_cannot_take_another_workers_cpu(mode: str) -> None:
    """The honest sample's CPU over a fixed wall window beside the attacker, against the same
    beside an honest neighbour (one spinning process: what a full pool's other worker runs)
    and with the other worker idle, rounds alternated so that the machine's other load weighs
    on all three. On a machine with other load, any busy neighbour costs the honest sample a
    share (the kernel moves the other load's tasks to its CPU: (G+1)/(G+2) for G busy
    foreign groups, about 0.87 here), so the bound is asserted against the honest neighbour
    and the share against an idle worker is printed; on an idle machine both are 1."""
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs (one worker each)")
    spin = 0.5 + WINDOW + 1.0
    if mode == "script":
        attacker = _script(SPINNERS % {"spin": spin}, timeout_s=spin + 5)
    else:
        attacker = _check(
            THREAD_SPINNERS % {"spin": spin}, "def check(candidate):\n    assert candidate() == 1\n", spin + 5
        )
    neighbour = _script(NEIGHBOUR % {"spin": spin}, timeout_s=spin + 5)
    pool = SandboxPool(2)  # one worker per CPU, each pinned to its own
    try:
        pool.map([_script("pass"), _script("pass")])  # both workers warm
        alone, beside, attacked = [], [], []
        ratio = 0.0
        # medians, and more rounds (up to MAX_ROUNDS) while the median ratio is under the bound:
        # the machine's other load comes in bursts and drifts (make test beside two cluster test
        # loops: alone 0.82 -> 0.39 within one test, ratio of sums 0.73); a share the spinners
        # took lowers every round beside them, and so the median of any number of rounds
        while len(attacked) < ROUNDS or (ratio < 0.8 and len(attacked) < MAX_ROUNDS):
            alone.append(_honest_share(pool, None))
            beside.append(_honest_share(pool, neighbour))
            attacked.append(_honest_share(pool, attacker))
            ratio = statistics.median(attacked) / statistics.median(beside)
    finally:
        pool.close()
    print(
        f"{mode}: honest CPU share alone {alone}, beside an honest neighbour {beside}, beside 32 spinners "
        f"{attacked}; medians attacked / neighbour {ratio:.2f}, attacked / alone "
        f"{statistics.median(attacked) / statistics.median(alone):.2f} ({len(attacked)} rounds)"
    )
    assert ratio >= 0.8, (alone, beside, attacked)


# ---------------------------------------------------------------- correct code


def test_correct_code_keeps_working() -> None:
    script = r"""
import json, os, subprocess, sys, threading, zoneinfo
out = {}
out["utc"] = str(zoneinfo.ZoneInfo("UTC"))
out["paris"] = str(zoneinfo.ZoneInfo("Europe/Paris"))
for i in range(500):
    with open(f"/tmp/f{i}", "w") as fh:
        fh.write("x")
out["files"] = len(os.listdir("/tmp"))
r, w = os.pipe()
os.write(w, b"pipe"); out["pipe"] = os.read(r, 4).decode()
out["child"] = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True).stdout.strip()
results = []
ts = [threading.Thread(target=lambda: results.append(sum(range(1000)))) for _ in range(32)]
[t.start() for t in ts]; [t.join() for t in ts]
out["threads"] = len(results)
out["affinity"] = len(os.sched_getaffinity(0))
import asyncio  # its self-pipe: an eventfd where a script may make no Unix socket (no cgroup)
async def _main():
    await asyncio.sleep(0)
    return 7
out["asyncio"] = asyncio.run(_main())
print(json.dumps(out))
"""
    body = (
        "    import zoneinfo, datetime, threading\n"
        "    utc = zoneinfo.ZoneInfo('UTC')\n"
        "    d = datetime.datetime(2024, 1, 1, 12, tzinfo=utc).astimezone(zoneinfo.ZoneInfo('Asia/Tokyo'))\n"
        "    r = []\n"
        "    ts = [threading.Thread(target=lambda: r.append(1)) for _ in range(64)]\n"
        "    [t.start() for t in ts]; [t.join() for t in ts]\n"
        "    return [str(utc), d.hour, len(r)]\n"
    )
    test = "def check(candidate):\n    assert candidate() == ['UTC', 21, 64]\n"
    pool = SandboxPool(1)
    _require_full(pool)
    try:
        s, c = pool.map([_script(script), _check(body, test)])
    finally:
        pool.close()
    assert s.get("completed"), s
    assert _last_json(s["stdout"]) == {
        "utc": "UTC",
        "paris": "Europe/Paris",
        "files": 501,
        "pipe": "pipe",
        "child": "42",
        "threads": 32,
        "affinity": 1,
        "asyncio": 7,
    }, s
    assert c.get("completed"), c


@local_only("sets EVALCORE_SANDBOX_SITE_PACKAGES for a pool of this process")
def test_zoneinfo_utc_without_the_tzdata_package(monkeypatch: pytest.MonkeyPatch) -> None:
    # EVALCORE_SANDBOX_SITE_PACKAGES=0: the check candidates' view is the copy alone, where no
    # tzdata package is importable: the time-zone database must come from /usr/share/zoneinfo.
    monkeypatch.setenv("EVALCORE_SANDBOX_SITE_PACKAGES", "0")
    body = (
        "    import importlib.util, zoneinfo\n"
        "    return [importlib.util.find_spec('tzdata') is None, str(zoneinfo.ZoneInfo('UTC')),\n"
        "            str(zoneinfo.ZoneInfo('America/New_York'))]\n"
    )
    test = "def check(candidate):\n    assert candidate() == [True, 'UTC', 'America/New_York'], candidate()\n"
    pool = SandboxPool(1)
    _require_full(pool)  # the weak fallback has no copy: the host's files
    try:
        (reply,) = pool.map([_check(body, test)])
        view = pool.isolation.get("check_view", "")
    finally:
        pool.close()
    assert reply.get("completed"), reply
    assert "/usr/share/zoneinfo" in view, view


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.serial  # reruns the CPU-share test above: alone (pyproject: serial)
@local_only("reruns this file as nobody with pools of its own")
def test_resources_round3_as_nobody() -> None:
    rerun_as_nobody([str(Path(__file__).resolve())], timeout=600)
