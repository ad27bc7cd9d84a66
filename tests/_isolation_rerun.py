"""What the cluster reruns of the sandbox isolation test files expect (issues 33 and 42).

``tests/cluster/test_cluster_isolation.py`` reruns ``FILES`` as root with
``EVALCORE_TEST_SANDBOX=cluster`` (their jobs on a Dask worker, see ``tests/_sandbox_target.py``);
``tests/cluster/test_cluster_unprivileged.py`` reruns the round-three files among them the same
way as ``nobody``. Both read the rerun's junit with :func:`junit_outcomes` and check it with
:func:`assert_rerun_on_the_worker`: nothing failed; only the documented skips (``LOCAL_ONLY``,
each with its reason, and the weak fallback's parameters); ``MUST_PASS`` ran and passed; the
jobs went to one worker process, not the test's.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

# issue 42, round three (the resume files' tests are tests/cluster/test_cluster_resume_trust.py)
ROUND_THREE = (
    "tests/sandbox/test_sandbox_schedule_channel.py",  # no bit through the schedule across batches
    "tests/sandbox/test_sandbox_decoder_bounds.py",  # the worker's decoding bounded
    "tests/sandbox/test_sandbox_crossing_faithful.py",  # correct code passes (NaN identity...)
    "tests/sandbox/test_sandbox_resources_round3.py",  # inodes, sockets, processes, setsid/affinity
    "tests/sandbox/test_sandbox_epoll.py",  # no epoll watch where no cgroup counts it; asyncio on poll
)
FILES = (
    "tests/sandbox/test_sandbox_isolation.py",  # no network, no host write, nothing outlives the sample
    "tests/sandbox/test_sandbox_fs_allowlist.py",  # the file-system view is an allow-list
    "tests/sandbox/test_sandbox_channels.py",  # no note from one sample to the next
    "tests/sandbox/test_sandbox_exit_paths.py",  # every exit kills the sample and wipes its scratch
    "tests/sandbox/test_sandbox_memory_limits.py",  # the limits
    *ROUND_THREE,
)
# Tests that need a pool of the test process (each skipped on the cluster with its reason).
LOCAL_ONLY = {
    "test_sandbox_isolation.py::test_environment_secret_does_not_reach_the_program",
    "test_sandbox_isolation.py::test_killing_the_parent_cannot_reach_it",  # test_cluster_isolation.py has its own
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
    # epoll: the cgroup switch and the weak fallback are a local pool's options; the rerun as nobody
    "test_sandbox_epoll.py::test_a_sample_makes_no_epoll_watch_where_no_cgroup_counts_it[0]",
    "test_sandbox_epoll.py::test_asyncio_selectors_and_subprocess_work_in_both_modes[0]",
    "test_sandbox_epoll.py::test_the_weak_fallback_runs_asyncio_on_poll",
    "test_sandbox_epoll.py::test_epoll_as_nobody",
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
    "test_sandbox_epoll.py::test_a_sample_makes_no_epoll_watch_where_no_cgroup_counts_it[None]",
    "test_sandbox_epoll.py::test_asyncio_selectors_and_subprocess_work_in_both_modes[None]",
}
WEAK = ("[weak", "[fallback")  # the weak fallback's parameters (namespaces=False: a local pool's option)


def junit_outcomes(junit: Path) -> dict[str, tuple[str, str]]:
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


def _of(names: set[str], files: Sequence[str]) -> set[str]:
    """The ``file.py::test`` names among ``names`` whose file is one of ``files``."""
    stems = {Path(f).name for f in files}
    return {k for k in names if k.split("::")[0] in stems}


def assert_rerun_on_the_worker(
    junit: Path, report: Path, files: Sequence[str], *, min_ran: int, end: str = ""
) -> dict[str, set[str]]:
    """Assert what a cluster rerun of ``files`` must show; return its ``ran``/``local``/``weak`` names.

    ``report`` is what ``_sandbox_target`` wrote (``REPORT_ENV``); ``end`` the end of the
    rerun's output, for the failure messages.
    """
    got = junit_outcomes(junit)
    failed = {k: v for k, v in got.items() if v[0] == "failed"}
    assert not failed, (failed, end)
    skipped = {k: v[1] for k, v in got.items() if v[0] == "skipped"}
    local = {k for k, why in skipped.items() if why.startswith("local pool only: ")}
    weak = {k for k, why in skipped.items() if "weak fallback (namespaces=False)" in why}
    # only what needs a local pool was skipped: the tests marked so and the weak-fallback
    # parameters (of the exit paths and the schedule channel; their namespaces parameters ran)
    expected_local = _of(LOCAL_ONLY, files)
    assert local == expected_local, (local ^ expected_local, end)
    assert set(skipped) == local | weak, {k: skipped[k] for k in set(skipped) - local - weak}
    assert weak and all(any(w in k for w in WEAK) for k in weak), weak
    ran = {k for k, v in got.items() if v[0] == "passed"}
    assert {k.replace("[weak", "[namespaces").replace("[fallback", "[namespaces") for k in weak} <= ran
    must = _of(MUST_PASS, files)
    assert must <= ran, must - ran
    assert len(ran) == len(got) - len(local) - len(weak) >= min_ran, (len(ran), len(got))
    # and their jobs went to the worker: at least one job a test, from a process of its own
    sent = json.loads(report.read_text(encoding="utf-8"))
    assert sent["jobs"] >= len(ran), sent
    assert len(sent["worker_pids"]) == 1 and sent["client_pid"] not in sent["worker_pids"], sent
    return {"ran": ran, "local": local, "weak": weak}
