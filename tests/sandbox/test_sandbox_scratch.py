"""Wiping the scratch directories between samples never empties what the worker mounted there.

Where a scratch directory cannot be replaced by a fresh tmpfs (a path kept visible lies below it:
a project or virtual environment under /tmp), the worker empties it instead; the mount points
below it (the kept interpreter, hidden paths) must be left alone: emptying them walked a whole
read-only virtual environment after every sample (minutes each) and would delete what a writable
one holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or not sys.platform.startswith("linux"),
    reason="needs root and unshare(1) for a private mount namespace",
)

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, os, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from sandbox.scratch import Scratch  # before /tmp is covered (the project may lie below it)

    # Everything below happens in this private mount namespace: fresh tmpfs over the scratch dirs.
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", d], check=True)
    os.makedirs("/tmp/kept")
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/tmp/kept"], check=True)
    open("/tmp/kept/precious", "w").write("x")
    os.makedirs("/tmp/project/deep")
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/tmp/project/deep"], check=True)
    open("/tmp/project/deep/precious", "w").write("x")
    os.makedirs("/tmp/sandbox/a/b")
    open("/tmp/sandbox/a/b/left.txt", "w").write("x")
    open("/tmp/junk.txt", "w").write("x")
    open("/var/tmp/junk.txt", "w").write("x")
    os.makedirs("/dev/shm/tree/x")

    class Worker(Scratch):
        namespaces, is_root, uid, libc = True, True, 0, None
        _fresh_tmpfs, _scratch_marks, _workdir_ready = set(), {}, True

    Worker()._wipe_scratch()
    paths = ["/tmp/kept/precious", "/tmp/project/deep/precious", "/tmp/project", "/tmp/sandbox",
             "/tmp/junk.txt", "/var/tmp/junk.txt", "/dev/shm/tree"]
    print(json.dumps({p: os.path.exists(p) for p in paths}))
    """
)


def _in_private_mount_namespace(script_text: str, tmp_path: Path) -> dict:
    """Run a script in a private mount namespace; the JSON object it printed last."""
    script = tmp_path / "script.py"
    script.write_text(script_text)
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, str(script), str(ROOT / "evalcore")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if out.returncode != 0 and "unshare failed" in out.stderr:
        pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_wipe_keeps_mount_points_below_a_scratch_directory(tmp_path: Path) -> None:
    exists = _in_private_mount_namespace(SCRIPT, tmp_path)
    assert exists == {
        "/tmp/kept/precious": True,  # a mount point below /tmp: never emptied
        "/tmp/project/deep/precious": True,  # a directory holding a mount point: left alone
        "/tmp/project": True,
        "/tmp/sandbox": False,  # what samples wrote is gone
        "/tmp/junk.txt": False,
        "/var/tmp/junk.txt": False,
        "/dev/shm/tree": False,
    }


SKIP_SCRIPT = textwrap.dedent(
    """
    import json, os, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from sandbox.scratch import Scratch

    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", d], check=True)
    # As the worker leaves /tmp when a virtual environment lies below it: directories it made
    # to hold the mount point (/tmp/work, /tmp/work/main), and the mount itself.
    os.makedirs("/tmp/work/main/venv", mode=0o755)
    os.chmod("/tmp/work", 0o755)
    os.chmod("/tmp/work/main", 0o755)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/tmp/work/main/venv"], check=True)
    open("/tmp/work/main/venv/precious", "w").write("x")

    class Worker(Scratch):
        namespaces, is_root, uid, libc = True, True, 0, None
        _fresh_tmpfs, _scratch_marks, _workdir_ready = set(), {}, False

    w = Worker()
    w._workdir()  # makes /tmp/sandbox and marks the scratch directories clean
    out = {}
    ino = os.stat("/tmp/sandbox").st_ino
    w._wipe_scratch()  # a sample that changed nothing
    out["untouched_kept"] = w._workdir_ready and os.stat("/tmp/sandbox").st_ino == ino

    # A sample that owns the holding directories (root of a user namespace) writes into one
    # and opens it to everyone.
    open("/tmp/work/leak.txt", "w").write("for the next sample")
    os.chmod("/tmp/work", 0o777)
    w._wipe_scratch()
    out["holder_emptied"] = not os.path.exists("/tmp/work/leak.txt")
    out["holder_mode"] = oct(os.stat("/tmp/work").st_mode & 0o7777)
    out["mount_kept"] = os.path.exists("/tmp/work/main/venv/precious")
    out["workdir_renewed"] = not w._workdir_ready and not os.path.exists("/tmp/sandbox")

    w._workdir()
    os.makedirs("/tmp/sandbox/a/b")
    open("/tmp/sandbox/a/b/left.txt", "w").write("x")
    w._wipe_scratch()
    out["workdir_emptied"] = not os.path.exists("/tmp/sandbox/a")

    w._workdir()
    open("/var/tmp/junk.txt", "w").write("x")
    w._wipe_scratch()
    out["other_scratch_emptied"] = not os.path.exists("/var/tmp/junk.txt")
    out["intact_worker_stays"] = not w.scratch_broken

    # Renamed, a directory takes the mount point along: later samples would miss the kept path.
    w._workdir()
    os.rename("/tmp/work", "/tmp/moved")
    w._wipe_scratch()
    out["renamed_holder_retires_the_worker"] = w.scratch_broken
    print(json.dumps(out))
    """
)


def test_unchanged_scratch_directories_are_kept_and_holders_of_mount_points_emptied(tmp_path: Path) -> None:
    """A scratch directory that cannot be replaced (a path kept visible below it) is kept as is
    when no sample changed it (a few ``lstat`` calls instead of emptying it and making the
    working directory again after every sample); after a change, what a sample wrote inside the
    directories that hold the mount points is removed too, and their modes are restored; a
    sample that renamed one of them (moving the kept path away) retires the worker."""
    result = _in_private_mount_namespace(SKIP_SCRIPT, tmp_path)
    assert result == {
        "untouched_kept": True,
        "holder_emptied": True,
        "holder_mode": "0o755",
        "mount_kept": True,
        "workdir_renewed": True,
        "workdir_emptied": True,
        "other_scratch_emptied": True,
        "intact_worker_stays": True,
        "renamed_holder_retires_the_worker": True,
    }
