"""The sandbox: proof of completion, isolation, limits (evalcore.evaluators.sandbox)."""

from __future__ import annotations

import json
import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import pytest

from _sandbox_target import SandboxPool, get_pool, local_only, run_python, sandbox_uids
from evalcore.evaluators.sandbox import SandboxResult
from evalcore.sandbox.pool import _to_result

TIMEOUT = 3.0
SLACK = 4.0  # kill, drain, reap and scheduling on a loaded 2-core machine


@pytest.fixture(scope="module")
def isolation() -> dict:
    return get_pool().isolation


@pytest.fixture(scope="module")
def namespaces(isolation: dict) -> bool:
    return bool(isolation.get("namespaces"))


def run(source: str, **kw) -> SandboxResult:
    kw.setdefault("timeout_s", TIMEOUT)
    return run_python(textwrap.dedent(source), **kw)


def _sandbox_processes() -> list[int]:
    """Host processes running under any worker's sandbox uid (should be none between samples)."""
    uids = sandbox_uids()
    assert uids and 0 not in uids
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid in uids:
                    pids.append(int(name))
            except FileNotFoundError:
                pass
    return pids


# ---------------------------------------------------------------- completion proof


def test_normal_program_completes_with_output_and_stdin() -> None:
    res = run("import sys\nname = sys.stdin.read().strip()\nprint('hello', name)\n", stdin="world\n")
    assert res.completed and not res.timed_out
    assert res.returncode == 0
    assert res.stdout == "hello world\n"
    assert res.reason is None


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.exit(0)\nprint('never')\n",
        "import os\nos._exit(0)\n",
        "raise SystemExit\n",
        "raise SystemExit(0)\n",
        "class Escape(BaseException):\n    pass\nraise Escape()\n",
        "raise KeyboardInterrupt\n",
        "import os\nos.abort()\n",
        "import _thread\n_thread.exit()\n",
        "print('passed')\nprint('PASS ' + '0' * 32)\nimport os\nos._exit(0)\n",
        # forge the result pipe: guessed nonces, then leave before the end
        "import os\nfor fd in range(3, 10):\n    try:\n        os.write(fd, b'\\nPASS ' + b'0' * 32 + b'\\n')\n    except OSError:\n        pass\nos._exit(0)\n",
        "import atexit, os\natexit.register(lambda: None)\nraise ValueError('boom')\n",
        # the nonces came with the job on standard input: what is left there is the input
        "import os, re\nfor tok in re.findall(rb'[0-9a-f]{32}', os.read(0, 1 << 20)):\n"
        "    os.write(3, b'\\nPASS ' + tok + b'\\n')\nos._exit(0)\n",
    ],
)
def test_early_exits_and_forgeries_do_not_complete(source: str) -> None:
    res = run(source)
    assert not res.completed, (source, res)


def test_exit_status_is_reported_but_does_not_prove_completion() -> None:
    res = run("import sys\nsys.exit(3)\n")
    assert not res.completed and res.returncode == 3
    res = run("raise ValueError('bad input')\n")
    assert not res.completed and res.returncode == 1
    assert "ValueError: bad input" in res.stderr
    assert res.reason == "ValueError: bad input"


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys._current_frames()\n",
        "import gc\ngc.get_objects()\n",
        "import gc\ngc.get_referrers(print)\n",
        "import ctypes\nctypes.string_at(id(1), 8)\n",
        "(lambda: 0).__code__.replace(co_name='x')\n",
    ],
)
def test_routes_to_the_harness_memory_are_refused(source: str) -> None:
    res = run(source)
    assert not res.completed
    assert "not permitted" in (res.reason or ""), res


FRAME_WALK = """
import os, sys
def leak(frame):
    found = []
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, (bytes, bytearray)):
                found.append(bytes(value))
            if isinstance(value, (list, tuple)):
                found.extend(bytes(v) for v in value if isinstance(v, (bytes, bytearray)))
        frame = frame.f_back
    for blob in found:
        for fd in range(3, 16):
            try:
                os.write(fd, blob + b'\\n' + b'\\nPASS ' + blob[-32:] + b'\\n')
            except OSError:
                pass
"""


def test_walking_the_programs_frames_finds_no_proof() -> None:
    res = run(FRAME_WALK + "leak(sys._getframe())\nos._exit(0)\n")
    assert not res.completed, res


def test_signal_handler_frames_find_no_proof() -> None:
    source = FRAME_WALK + (
        "import signal\n"
        "signal.signal(signal.SIGUSR1, lambda n, f: (leak(f), os._exit(0)))\n"
        "os.kill(os.getpid(), signal.SIGUSR1)\n"
        "import time\ntime.sleep(1)\n"
    )
    res = run(source)
    assert not res.completed, res


def test_signals_work_in_programs() -> None:
    res = run(
        "import signal\nsignal.signal(signal.SIGALRM, lambda *a: print('tick'))\nsignal.alarm(1)\nsignal.pause()\n"
    )
    assert res.completed and res.stdout == "tick\n", res


def test_frames_of_the_program_itself_stay_usable() -> None:
    # logging and traceback need the program's own frames; they keep working.
    res = run(
        """
        import logging, sys, traceback
        logging.basicConfig(stream=sys.stdout, format='%(funcName)s %(message)s', level=logging.INFO)
        def f():
            logging.info('hi')
        f()
        try:
            1 / 0
        except ZeroDivisionError:
            print(traceback.format_exc().splitlines()[-1])
        """
    )
    assert res.completed, res
    assert res.stdout.splitlines() == ["f hi", "ZeroDivisionError: division by zero"]


# ---------------------------------------------------------------- limits and timeout


def test_infinite_loop_times_out_within_the_limit() -> None:
    t = time.monotonic()
    res = run("while True:\n    pass\n", timeout_s=2.0)
    assert res.timed_out and not res.completed
    assert res.reason == "timed out"
    assert time.monotonic() - t < 2.0 + SLACK


def test_sleeping_program_times_out() -> None:
    t = time.monotonic()
    res = run("import time\ntime.sleep(60)\n", timeout_s=1.0)
    assert res.timed_out and not res.completed
    assert time.monotonic() - t < 1.0 + SLACK


def test_memory_bomb_fails() -> None:
    res = run("blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))\n", memory_mb=256)
    assert not res.completed
    assert "MemoryError" in (res.reason or "") or res.returncode != 0


def test_fork_bomb_ends_within_timeout_and_leaves_nothing(isolation: dict) -> None:
    t = time.monotonic()
    res = run(
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        timeout_s=2.0,
    )
    assert not res.completed
    assert time.monotonic() - t < 2.0 + SLACK
    if os.geteuid() == 0:
        time.sleep(0.2)
        assert _sandbox_processes() == []


def test_daemonized_child_is_killed(isolation: dict) -> None:
    if os.geteuid() != 0:
        pytest.skip("killing daemonized children needs the PID namespace / uid switch (root)")
    res = run(
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(120)
            os._exit(0)
        time.sleep(0.2)
        print('parent done')
        """
    )
    assert res.completed and res.stdout == "parent done\n"
    time.sleep(0.2)
    assert _sandbox_processes() == []


def test_output_is_truncated() -> None:
    res = run("import sys\nsys.stdout.write('x' * 1_000_000)\n", max_output=10_000)
    assert res.completed
    assert res.stdout.startswith("x" * 10_000)
    assert len(res.stdout) < 10_100
    assert "truncated" in res.stdout


# ---------------------------------------------------------------- isolation


def test_isolation_is_reported(isolation: dict) -> None:
    for key in ("namespaces", "network", "pid", "filesystem", "user", "environment", "rlimits"):
        assert key in isolation
    res = run("print(1)")
    same = {k: v for k, v in res.isolation.items() if k not in ("uid", "user")}
    assert same == {k: v for k, v in isolation.items() if k not in ("uid", "user")}


def test_runs_in_an_empty_private_working_directory() -> None:
    res = run("import os\nprint(os.getcwd(), os.listdir('.'), os.environ['HOME'] == os.getcwd())\n")
    assert res.completed
    cwd, rest = res.stdout.split(" ", 1)
    assert rest.strip() == "[] True"
    assert cwd != os.getcwd()


@local_only("the secret is put in this process's environment before its own pool starts")
def test_environment_secret_does_not_reach_the_program() -> None:
    secret = "evalcore-test-secret-9f2c1e"
    os.environ["EVALCORE_TEST_SECRET"] = secret
    pool = SandboxPool(1)  # workers started while the secret is in this process's environment
    try:
        source = textwrap.dedent(
            f"""
            import os
            seen = [repr(dict(os.environ))]
            for pid in os.listdir('/proc'):
                for name in ('environ', 'cmdline'):
                    try:
                        with open(f'/proc/{{pid}}/{{name}}', 'rb') as fh:
                            seen.append(fh.read().decode('latin-1'))
                    except OSError:
                        pass
            for pid in ({os.getpid()}, {os.getppid()}, 1):
                try:
                    with open(f'/proc/{{pid}}/environ', 'rb') as fh:
                        seen.append(fh.read().decode('latin-1'))
                except OSError as exc:
                    seen.append('denied')
            print('\\n'.join(seen))
            """
        )
        reply = pool.map([{"mode": "script", "source": source, "timeout_s": TIMEOUT}])[0]
        res = _to_result(reply)
    finally:
        pool.close()
        del os.environ["EVALCORE_TEST_SECRET"]
    assert res.completed, res
    assert secret not in res.stdout
    assert "EVALCORE_TEST_SECRET" not in res.stdout


def test_other_processes_are_invisible(namespaces: bool) -> None:
    if not namespaces:
        pytest.skip("needs the PID namespace")
    res = run(
        f"""
        import os
        pids = [p for p in os.listdir('/proc') if p.isdigit()]
        print(os.getpid(), len(pids), os.path.exists('/proc/{os.getpid()}'))
        """
    )
    assert res.completed
    pid, count, visible = res.stdout.split()
    assert pid == "1"
    assert int(count) <= 2  # itself (and at most a thread-group artefact), nothing else
    assert visible == "False"


def test_network_is_unreachable(namespaces: bool) -> None:
    if not namespaces:
        pytest.skip("needs the network namespace")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    try:
        res = run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')\n")
        server.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing reached the listen queue
            server.accept()
    finally:
        server.close()
    assert not res.completed
    assert "connected" not in res.stdout
    assert "Network is unreachable" in (res.reason or "")


def test_writes_outside_the_workdir_never_reach_the_machine(tmp_path: Path, namespaces: bool) -> None:
    if not namespaces:
        pytest.skip("needs the mount namespace")
    repo_target = Path(__file__).resolve().parent / f"sandbox_escape_{os.getpid()}.txt"
    tmp_target = tmp_path / "escape.txt"
    res = run(
        f"""
        import os
        results = []
        for target in ({str(repo_target)!r}, {str(tmp_target)!r}, '/etc/evalcore_escape', '/root/escape'):
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, 'w') as fh:
                    fh.write('escaped')
                results.append('wrote')
            except OSError as exc:
                results.append(type(exc).__name__)
        print(results)
        """
    )
    assert res.completed, res
    assert not repo_target.exists()
    assert not tmp_target.exists()
    assert not Path("/etc/evalcore_escape").exists()
    assert not Path("/root/escape").exists()


def test_tmp_files_do_not_leak_to_the_next_sample(namespaces: bool) -> None:
    if not namespaces:
        pytest.skip("needs the private tmpfs")
    pool = SandboxPool(1)
    try:
        first = {
            "mode": "script",
            "source": "open('/tmp/leak', 'w').write('x')\nopen('/dev/shm/leak', 'w').write('x')\n",
        }
        second = {
            "mode": "script",
            "source": "import os, json\nprint(json.dumps([sorted(os.listdir('/tmp')), sorted(os.listdir('/dev/shm'))]))\n",
        }
        a, b = (_to_result(r) for r in pool.map([first, second]))
    finally:
        pool.close()
    assert a.completed and b.completed
    tmp_entries, shm_entries = json.loads(b.stdout)
    # /tmp may hold mount points of the sandbox itself (its work dir, or the checkout when the
    # repository lives under the host's /tmp); what the first sample wrote must be gone.
    assert "leak" not in tmp_entries and "sandbox" in tmp_entries
    assert shm_entries == []


@local_only("inspects the local pool's processes (tests/cluster/test_cluster_isolation.py: the Dask worker's)")
def test_killing_the_parent_cannot_reach_it(namespaces: bool) -> None:
    # The program is PID 1 of its own namespace: its "parent" is outside (getppid() == 0), and
    # kill(-1)/killpg reach only the sample's own processes. The pool and this process survive.
    if not namespaces:
        pytest.skip("without namespaces the sample runs as evalcore's own user and may signal it")
    pool = get_pool()
    before = [h.proc.pid for h in pool._all]
    for source in (
        "import os\nos.kill(os.getppid(), 9)\nprint('alive')\n",
        "import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('alive')\n",
        "import os, signal\nos.killpg(0, signal.SIGKILL)\nprint('alive')\n",
        f"import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)\n",
    ):
        res = run(source)
        assert res.returncode is not None, source
    assert [h.proc.pid for h in pool._all] == before
    assert all(h.alive() for h in pool._all)
    after = run("print('still here')")
    assert after.completed and after.stdout == "still here\n"


def test_runs_in_parallel_on_the_pool() -> None:
    pool = get_pool(2)
    jobs = [{"mode": "script", "source": f"print({i} * {i})", "timeout_s": TIMEOUT} for i in range(20)]
    results = [_to_result(r) for r in pool.map(jobs)]
    assert [r.stdout.strip() for r in results] == [str(i * i) for i in range(20)]
    assert all(r.completed for r in results)


def test_concurrent_callers_share_the_pool() -> None:
    results: dict = {}

    def call(k: int) -> None:
        jobs = [{"mode": "script", "source": f"print({k} + {i})", "timeout_s": TIMEOUT} for i in range(6)]
        results[k] = [_to_result(r).stdout.strip() for r in get_pool().map(jobs)]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert results == {k: [str(k + i) for i in range(6)] for k in range(4)}


@local_only("kills a process of a local pool")
def test_a_dead_worker_is_replaced() -> None:
    pool = SandboxPool(1)
    try:
        (first,) = pool._all
        first.ready()
        first.proc.kill()
        first.proc.wait()
        replies = pool.map([{"mode": "script", "source": "print('a')"}, {"mode": "script", "source": "print('b')"}])
        assert [_to_result(r).stdout for r in replies] == ["a\n", "b\n"]  # retried on a fresh worker
        later = _to_result(pool.map([{"mode": "script", "source": "print('c')"}])[0])
        assert later.completed and later.stdout == "c\n"
        assert pool._all[0] is not first
    finally:
        pool.close()
