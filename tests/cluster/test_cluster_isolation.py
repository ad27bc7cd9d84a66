"""The sandbox's isolation holds on a Dask worker (issue 33): the isolation test files of
tests/sandbox/ run once more with every job sent through the cluster path
(``EVALCORE_TEST_SANDBOX=cluster``, see tests/_sandbox_target.py), and a sample cannot kill the
Dask worker that hosts its sandbox. Issue 42's round-three files (the schedule channel across
batches, the decoder's bounds, the crossing's faithfulness, scratch inodes, socket buffers,
process limits, setsid/sched_setaffinity refused) rerun the same way, their pool tests through
the worker's pool and their verdicts through the cluster's ``score_chunk``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from _isolation_rerun import FILES, assert_rerun_on_the_worker
from _sandbox_target import ENV, REPORT_ENV
from evalcore.cluster import run_jobs_on_cluster
from evalcore.errors import EvalcoreError

pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parents[2]


def _full_isolation() -> bool:
    from evalcore.sandbox import SandboxPool

    pool = SandboxPool(1)
    try:
        return pool.isolation.get("level") == "full"
    finally:
        pool.close()


def test_the_isolation_test_files_pass_with_their_jobs_on_a_dask_worker(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    if not _full_isolation():
        pytest.skip("the sandbox has no namespaces here (its isolation tests skip on one machine too)")
    junit, report = tmp_path / "junit.xml", tmp_path / "sent.json"
    python = ROOT / ".venv" / "bin" / "python"
    env = {**os.environ, ENV: "cluster", REPORT_ENV: str(report)}
    command = [
        str(python if python.exists() else sys.executable), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
        "-m", "", f"--junitxml={junit}", "-o", "junit_family=xunit1", f"--basetemp={tmp_path / 'rerun'}", *FILES,
    ]  # fmt: skip
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=840)
    end = (out.stdout + out.stderr)[-6000:]
    assert out.returncode == 0, end
    assert_rerun_on_the_worker(junit, report, FILES, min_ran=100, end=end)


def _pool_pids() -> list[int]:
    """On a worker: the processes of its sandbox pool."""
    from evalcore.sandbox import get_pool

    return [h.proc.pid for h in get_pool()._all]


def test_a_sample_cannot_kill_the_dask_worker_nor_its_sandbox_pool(local_client: object) -> None:
    """The Dask worker is the sandbox's parent here: a sample's kill(ppid), kill(-1), killpg and
    kills of the workers', the nanny's and the client's pids reach none of them."""
    client = local_client
    warm = run_jobs_on_cluster([{"mode": "script", "source": "print(1)"}] * 4, cluster=client, chunk_size=1)
    assert [r.stdout for r in warm] == ["1\n"] * 4
    if warm[0].isolation.get("level") != "full":
        pytest.skip("without namespaces a sample runs as evalcore's own user and may signal it")
    workers = client.run(os.getpid)  # type: ignore[attr-defined]
    nannies = client.run(os.getppid)  # type: ignore[attr-defined]
    pools = client.run(_pool_pids)  # type: ignore[attr-defined]
    assert len(workers) == 2 and all(pools.values())
    targets = sorted({*workers.values(), *nannies.values(), os.getpid()})
    sources = [
        "import os\nos.kill(os.getppid(), 9)\nprint('alive')\n",
        "import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('alive')\n",
        "import os, signal\nos.killpg(0, signal.SIGKILL)\nprint('alive')\n",
        *(f"import os, signal\nos.kill({pid}, signal.SIGKILL)\n" for pid in targets),
    ]
    jobs = [{"mode": "script", "source": s, "timeout_s": 5.0} for s in sources * 2]  # on both workers
    results = run_jobs_on_cluster(jobs, cluster=client, chunk_size=1)
    assert len(results) == len(jobs) and all(r.returncode is not None for r in results), results
    assert client.run(os.getpid) == workers  # type: ignore[attr-defined]  # no worker died (the nanny restarts one)
    assert client.run(_pool_pids) == pools  # type: ignore[attr-defined]  # nor a process of their pools
    after = run_jobs_on_cluster([{"mode": "script", "source": "print('still here')"}] * 2, cluster=client, chunk_size=1)
    assert [r.stdout for r in after] == ["still here\n"] * 2


def test_jobs_on_the_cluster_come_back_in_order_with_the_one_machine_results(local_client: object) -> None:
    from evalcore.sandbox import run_jobs

    check = {"mode": "check", "prompt": "", "entry_point": "f", "timeout_s": 5.0}
    jobs = [{"mode": "script", "source": f"print({i} * {i})"} for i in range(7)] + [
        {**check, "source": "def f():\n    return 2\n", "test": "def check(candidate):\n    assert candidate() == 2\n"},
        {**check, "source": "def f():\n    return 3\n", "test": "def check(candidate):\n    assert candidate() == 2\n"},
        {"mode": "script", "source": "raise SystemExit(0)\n"},
    ]
    got = run_jobs_on_cluster(jobs, cluster=local_client, chunk_size=3)  # 4 tasks over 2 workers
    assert [r.stdout for r in got[:7]] == [f"{i * i}\n" for i in range(7)]
    one = run_jobs(jobs, workers=1)

    def fields(r: object) -> tuple:
        return (r.completed, r.timed_out, r.returncode, r.stdout, r.reason)  # type: ignore[attr-defined]

    assert [fields(r) for r in got] == [fields(r) for r in one]
    assert [r.completed for r in got[7:]] == [True, False, False]
    assert run_jobs_on_cluster([], cluster=local_client) == []
    with pytest.raises(EvalcoreError, match="chunk_size.*must be a whole number >= 1, got 0"):
        run_jobs_on_cluster(jobs, cluster=local_client, chunk_size=0)
