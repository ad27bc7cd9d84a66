"""Issue 42's round-three tests as ``nobody`` on the cluster path.

``test_cluster_isolation.py`` reruns the round-three sandbox files with their jobs on a Dask
worker as root; each of those files reruns itself as ``nobody`` with pools of its own (the
one-machine path). Here the two meet: as root, the round-three files rerun under ``runuser -u
nobody`` (``tests/_as_nobody.py``) with ``EVALCORE_TEST_SANDBOX=cluster``, so the LocalCluster,
its Dask worker and the worker's sandbox pool are all started by ``nobody``: the pool takes the
unprivileged path (user namespaces, or the weak fallback; no memory cgroup). The classes covered:
the schedule channel across batches, the decoder's bounds (time and the worker's memory), the
kernel resources (scratch inodes, socket buffers, the process limit, ``setsid`` and
``sched_setaffinity`` refused) and the correct-code crossing (NaN identity and the documented
refusals, scored by the cluster's ``score_chunk``); and, in a rerun of their own (their
LocalCluster of two workers started by ``nobody`` too), the resume files of a cluster run
(``test_cluster_resume_trust.py``) and the CPU share an honest sample keeps beside spinners on
another worker (``test_cluster_cpu_share.py``).

What is asserted from the rerun's junit is what the root rerun asserts
(``tests/_isolation_rerun.py``): nothing failed; only the documented skips (``local_only`` and
the weak fallback's parameters, each with its reason); the must-pass cases ran and passed; the
jobs went to the one worker, a process other than the test's; and here also that the worker
ran as ``nobody``. Skipped (with the reason) when not root, without ``runuser``/``unshare`` or
without a user ``nobody``; a rerun that runs past its timeout fails with the output it had.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from _as_nobody import rerun_as_nobody
from _isolation_rerun import ROUND_THREE, assert_rerun_on_the_worker, junit_outcomes
from _sandbox_target import ENV, REPORT_ENV

pytestmark = pytest.mark.timeout(900)

RESUME = "tests/cluster/test_cluster_resume_trust.py"  # the resume files: a LocalCluster of its own
CPU_SHARE = "tests/cluster/test_cluster_cpu_share.py"  # spinners on one worker, an honest sample on another
JUNIT = ("-o", "junit_family=xunit1")


@pytest.fixture
def nobodys_folder() -> Iterator[Path]:
    """A folder ``nobody`` can write (the test's ``tmp_path`` lies in root's, mode 700)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (to run the tests as nobody)")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    folder = Path(tempfile.mkdtemp(prefix="evalcore-nobody-cluster-"))
    os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_round_three_files_pass_as_nobody_with_their_jobs_on_a_dask_worker(nobodys_folder: Path) -> None:
    pytest.importorskip("distributed")
    junit, report = nobodys_folder / "junit.xml", nobodys_folder / "sent.json"
    env = {ENV: "cluster", REPORT_ENV: str(report)}
    out = rerun_as_nobody([f"--junitxml={junit}", *JUNIT, *ROUND_THREE], env=env, timeout=600, tail=6000)
    end = (out.stdout + out.stderr)[-6000:]
    sent = json.loads(report.read_text(encoding="utf-8"))
    # the worker (and so its sandbox pool) ran as nobody: the unprivileged path
    assert sent["worker_uids"] == [pwd.getpwnam("nobody").pw_uid], sent
    (pool,) = sent["pools"]
    if pool["level"] != "full":  # no user namespaces for nobody here: the weak fallback
        failed = {k: v for k, v in junit_outcomes(junit).items() if v[0] == "failed"}
        assert not failed, (failed, end)
        pytest.skip(f"nobody's sandbox pool took the weak fallback here ({pool}): the round-three tests skip there")
    assert pool["user_namespace"] is True and pool["memory"].startswith("address-space limit only"), pool
    assert_rerun_on_the_worker(junit, report, ROUND_THREE, min_ran=40, end=end)


@pytest.mark.serial  # reruns test_cluster_cpu_share.py: alone (pyproject: serial)
def test_resume_files_and_cpu_share_hold_as_nobody_on_the_cluster(nobodys_folder: Path) -> None:
    """Tampered, string-``passed``, keyless and linked ``.partial`` files, and the spinners beside
    an honest sample of another worker: one rerun as nobody, its LocalCluster nobody's."""
    pytest.importorskip("distributed")
    junit = nobodys_folder / "junit.xml"
    out = rerun_as_nobody([f"--junitxml={junit}", *JUNIT, RESUME, CPU_SHARE], timeout=500, tail=6000)
    got = junit_outcomes(junit)
    not_passed = {k: v for k, v in got.items() if v[0] != "passed"}
    assert not not_passed, (not_passed, out.stdout[-3000:])
    names = {k.split("[")[0] for k in got}
    assert {
        "test_cluster_resume_trust.py::test_interrupted_run_adopts_its_own_rows",
        "test_cluster_resume_trust.py::test_edited_row_is_scored_again",
        "test_cluster_resume_trust.py::test_passed_as_a_string_never_counts",
        "test_cluster_resume_trust.py::test_missing_key_scores_everything_again",
        "test_cluster_resume_trust.py::test_link_at_the_partial_path_is_refused",
        "test_cluster_cpu_share.py::test_spinners_on_one_worker_leave_another_workers_sample_its_cpu",
    } <= names, names
    assert len(got) >= 11, sorted(got)
