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
    from _sandbox.scratch import Scratch  # before /tmp is covered (the project may lie below it)

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


def test_wipe_keeps_mount_points_below_a_scratch_directory(tmp_path: Path) -> None:
    script = tmp_path / "wipe.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, str(script),
         str(ROOT / "evalcore" / "evaluators")],
        capture_output=True, text=True, timeout=120,
    )
    if out.returncode != 0 and "unshare failed" in out.stderr:
        pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    exists = json.loads(out.stdout.strip().splitlines()[-1])
    assert exists == {
        "/tmp/kept/precious": True,  # a mount point below /tmp: never emptied
        "/tmp/project/deep/precious": True,  # a directory holding a mount point: left alone
        "/tmp/project": True,
        "/tmp/sandbox": False,  # what samples wrote is gone
        "/tmp/junk.txt": False,
        "/var/tmp/junk.txt": False,
        "/dev/shm/tree": False,
    }
