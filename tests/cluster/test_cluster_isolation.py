"""The sandbox's isolation holds on a Dask worker (issue 33): the isolation test files of
tests/sandbox/ run once more with every job sent through the cluster path
(``EVALCORE_TEST_SANDBOX=cluster``, see tests/_sandbox_target.py), and a sample cannot kill the
Dask worker that hosts its sandbox. Issue 42's round-three files (the schedule channel across
batches, the decoder's bounds, the crossing's faithfulness, scratch inodes, socket buffers,
process limits, setsid/sched_setaffinity refused) rerun the same way, their pool tests through
the worker's pool and their verdicts through the cluster's ``score_chunk``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from _sandbox_target import ENV, REPORT_ENV
from evalcore.cluster import run_jobs_on_cluster
from evalcore.errors import EvalcoreError

pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parents[2]
FILES = (
    "tests/sandbox/test_sandbox_isolation.py",  # no network, no host write, nothing outlives the sample
    "tests/sandbox/test_sandbox_fs_allowlist.py",  # the file-system view is an allow-list
    "tests/sandbox/test_sandbox_channels.py",  # no note from one sample to the next
    "tests/sandbox/test_sandbox_exit_paths.py",  # every exit kills the sample and wipes its scratch
    "tests/sandbox/test_sandbox_memory_limits.py",  # the limits
    # issue 42, round three
    "tests/sandbox/test_sandbox_schedule_channel.py",  # no bit through the schedule across batches
    "tests/sandbox/test_sandbox_decoder_bounds.py",  # the worker's decoding bounded
    "tests/sandbox/test_sandbox_crossing_faithful.py",  # correct code passes (NaN identity...)
    "tests/sandbox/test_sandbox_resources_round3.py",  # inodes, sockets, processes, setsid/affinity
)
# Tests that need a pool of the test process (each skipped on the cluster with its reason).
LOCAL_ONLY = {
    "test_sandbox_isolation.py::test_environment_secret_does_not_reach_the_program",
    "test_sandbox_isolation.py::test_killing_the_parent_cannot_reach_it",  # here: the test below
    "test_sandbox_isolation.py::test_a_dead_worker_is_replaced",
    "test_sandbox_fs_allowlist.py::test_show_isolation_prints_the_view",
    "test_sandbox_channels.py::test_a_folder_hidden_after_start_is_hidden_and_read_only_in_the_check_candidates_view",
    "test_sandbox_channels.py::test_the_channel_is_there_on_the_host_view",
    # round three (each reason in its marker): a pool per run reading this process's durations
    # file, durations set in a local pool's memory, two workers of one pool, an environment
    # variable for a local pool, and the reruns as nobody (pools of their own)
    "test_sandbox_schedule_channel.py::test_across_runs_through_the_durations_file[namespaces]",
    "test_sandbox_schedule_channel.py::test_across_runs_through_the_durations_file[fallback]",
    "test_sandbox_schedule_channel.py::test_script_samples_expected_to_be_slow_start_like_the_others",
    "test_sandbox_schedule_channel.py::test_the_worker_that_starts_first_is_drawn_not_picked_by_the_order",
    "test_sandbox_schedule_channel.py::test_no_bit_through_the_schedule_as_nobody",
    "test_sandbox_decoder_bounds.py::test_decoder_bounds_as_nobody",
    "test_sandbox_crossing_faithful.py::test_crossing_faithful_as_nobody",
    "test_sandbox_resources_round3.py::test_spinners_cannot_take_another_workers_cpu[script]",
    "test_sandbox_resources_round3.py::test_spinners_cannot_take_another_workers_cpu[check]",
    "test_sandbox_resources_round3.py::test_zoneinfo_utc_without_the_tzdata_package",
    "test_sandbox_resources_round3.py::test_resources_round3_as_nobody",
}
_PASSES = "test_sandbox_crossing_faithful.py::test_correct_code_passes_as_in_one_process"
_REFUSED = "test_sandbox_crossing_faithful.py::test_what_does_not_cross_fails_with_a_reason_naming_the_limit"
# What the issue names, each of which must pass through the worker (not be skipped).
MUST_PASS = {
    "test_sandbox_isolation.py::test_network_is_unreachable",
    "test_sandbox_isolation.py::test_writes_outside_the_workdir_never_reach_the_machine",
    "test_sandbox_isolation.py::test_fork_bomb_ends_within_timeout_and_leaves_nothing",
    "test_sandbox_isolation.py::test_daemonized_child_is_killed",
    "test_sandbox_isolation.py::test_tmp_files_do_not_leak_to_the_next_sample",
    "test_sandbox_isolation.py::test_other_processes_are_invisible",
    "test_sandbox_fs_allowlist.py::test_a_benchmark_copy_outside_the_known_paths_is_not_readable",
    "test_sandbox_channels.py::test_a_message_queue_carries_no_note_to_the_next_sample",
    "test_sandbox_exit_paths.py::test_every_check_exit_path_kills_the_sample_and_wipes_its_scratch[namespaces-times_out]",
    "test_sandbox_exit_paths.py::test_every_script_exit_path_kills_the_sample_and_wipes_its_scratch[namespaces-exits]",
    # issue 42, round three (the resume-file cases are in tests/cluster/)
    "test_sandbox_schedule_channel.py::test_a_slow_previous_sample_changes_nothing_the_next_one_sees_across_batches[namespaces]",
    "test_sandbox_decoder_bounds.py::test_a_dataclass_of_60000_fields_fails_within_the_timeout_with_a_reason",
    "test_sandbox_decoder_bounds.py::test_named_tuples_of_200000_fields_over_16_samples_leave_the_worker_bounded",
    "test_sandbox_decoder_bounds.py::test_an_exception_with_a_huge_class_name_fails_nothing_and_is_not_kept",
    *(f"{_PASSES}[{case}]" for case in ("math.nan in a list", "a NaN the test built, returned inside its list")),
    f"{_PASSES}[an immutable argument returned is the test's object]",
    f"{_REFUSED}[a numpy structured array]",
    "test_sandbox_resources_round3.py::test_empty_files_in_scratch_are_bounded_by_nr_inodes_and_gone_for_the_next_sample",
    "test_sandbox_resources_round3.py::test_a_check_candidate_meets_the_same_inode_bound",
    "test_sandbox_resources_round3.py::test_unix_socket_buffers_are_refused_or_counted_by_the_memory_cgroup",
    "test_sandbox_resources_round3.py::test_a_script_sample_forks_a_bounded_number_of_processes",
    "test_sandbox_resources_round3.py::test_setsid_and_sched_setaffinity_are_refused_in_every_sample",
    "test_sandbox_resources_round3.py::test_correct_code_keeps_working",
}
WEAK = ("[weak", "[fallback")  # the weak fallback's parameters (namespaces=False: a local pool's option)


def _full_isolation() -> bool:
    from evalcore.sandbox import SandboxPool

    pool = SandboxPool(1)
    try:
        return pool.isolation.get("level") == "full"
    finally:
        pool.close()


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """``file.py::test[id]`` -> (``passed``/``skipped``/``failed``, the skip or failure message)."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.py::{case.get('name')}"
        state, message = "passed", ""
        for child in case:
            if child.tag in ("skipped", "failure", "error"):
                state = {"skipped": "skipped"}.get(child.tag, "failed")
                message = child.get("message") or ""
        out[name] = (state, message)
    return out


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
    got = _outcomes(junit)
    failed = {k: v for k, v in got.items() if v[0] == "failed"}
    assert not failed, failed
    skipped = {k: v[1] for k, v in got.items() if v[0] == "skipped"}
    local = {k for k, why in skipped.items() if why.startswith("local pool only: ")}
    weak = {k for k, why in skipped.items() if "weak fallback (namespaces=False)" in why}
    # only what needs a local pool was skipped: the tests marked so and the weak-fallback
    # parameters (of the exit paths and the schedule channel; their namespaces parameters ran)
    assert local == LOCAL_ONLY, (local ^ LOCAL_ONLY, end)
    assert set(skipped) == local | weak, {k: skipped[k] for k in set(skipped) - local - weak}
    assert weak and all(any(w in k for w in WEAK) for k in weak), weak
    ran = {k for k, v in got.items() if v[0] == "passed"}
    assert {k.replace("[weak", "[namespaces").replace("[fallback", "[namespaces") for k in weak} <= ran
    assert MUST_PASS <= ran, MUST_PASS - ran
    assert len(ran) == len(got) - len(LOCAL_ONLY) - len(weak) >= 100, (len(ran), len(got))
    # and their jobs went to the worker: at least one job a test, from a process of its own
    sent = json.loads(report.read_text(encoding="utf-8"))
    assert sent["jobs"] >= len(ran), sent
    assert len(sent["worker_pids"]) == 1 and sent["client_pid"] not in sent["worker_pids"], sent


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
