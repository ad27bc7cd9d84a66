"""The sandbox's channel, allow-list, exit-path and memory-limit tests rerun as an unprivileged user.

As in ``test_sandbox_unprivileged.py`` (whose set-up this reuses): run as root with
``pytest -m integration``, the new test files rerun under ``runuser -u nobody`` in a private
mount namespace, where the sandbox isolates through a user namespace (and, for the weak
fallback's cases, without one). The answer key that the allow-list test plants is made here,
as root, in a folder ``nobody`` can read but not write, and named to the rerun.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FILES = (
    "tests/evaluators/test_sandbox_channels.py",
    "tests/evaluators/test_sandbox_fs_allowlist.py",
    "tests/evaluators/test_sandbox_exit_paths.py",
    "tests/evaluators/test_sandbox_memory_limits.py",
)


def _module(name: str):  # noqa: ANN202 - a test module beside this one
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_channel_allowlist_exit_and_memory_attacks_fail_as_nobody() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (to run the tests as nobody)")
    for tool in ("runuser", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    try:
        import pwd

        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    blocking_ancestor = _module("test_sandbox_unprivileged")._blocking_ancestor
    planted = _module("test_sandbox_fs_allowlist").plant_answer_key()
    work = Path(tempfile.mkdtemp(prefix="evalcore-nobody-"))
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    work.chmod(0o755)
    try:
        python = ROOT / ".venv" / "bin" / "python"
        if not python.exists():
            python = Path(sys.executable)
        q = shlex.quote
        setup = ["mount --make-rprivate /"]
        blocked = blocking_ancestor(Path(os.path.realpath(sys.base_prefix)))
        if blocked is not None:
            hidden, inside = blocked  # e.g. /root and /root/.pyenv
            view = work / "view"
            view.mkdir()
            setup += [
                f"mount --bind {q(str(inside))} {q(str(view))}",
                f"mount -t tmpfs -o mode=755,size=1m tmpfs {q(str(hidden))}",
                f"mkdir -p {q(str(inside))}",
                f"mount --bind {q(str(view))} {q(str(inside))}",
            ]
        command = [
            "runuser",
            "-u",
            "nobody",
            "--",
            "env",
            f"HOME={work}",
            "PYTHONDONTWRITEBYTECODE=1",
            f"EVALCORE_TEST_PLANTED={planted}",
            str(python),
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-m",
            "",
            f"--basetemp={work / 'pytest'}",
            *FILES,
        ]
        script = " && ".join(setup) + " && cd " + q(str(ROOT)) + " && exec " + shlex.join(command)
        try:
            out = subprocess.run(
                ["unshare", "-m", "sh", "-c", script], check=False, capture_output=True, text=True, timeout=300
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the unprivileged rerun took over 300 s: {exc.stdout}")
        tail = (out.stdout + out.stderr)[-6000:]
        if out.returncode != 0 and "unshare failed" in out.stderr:
            pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
        assert out.returncode == 0, tail
        assert " passed" in out.stdout and "failed" not in out.stdout, tail
        # As nobody the attacks must meet the same sandbox, not a skip: only the tmpfs case
        # (no memory cgroup for an unprivileged user) may be skipped.
        skipped = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
        assert all("memory cgroup" in line for line in skipped), tail
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(planted, ignore_errors=True)
