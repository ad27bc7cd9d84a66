"""Issue 29's value-crossing and bounded-decoding tests, rerun as an unprivileged user.

As ``test_sandbox_unprivileged.py`` does for the boundary subset: run as root (``pytest -m
integration``), this reruns ``test_sandbox_value_crossing.py`` and
``test_sandbox_bounded_decoding.py`` under ``runuser -u nobody`` (user-namespace isolation), in a
private mount namespace where an interpreter under a directory ``nobody`` cannot enter is bound
back alone. Skipped (with the reason) when not root, without ``runuser``/``unshare`` or ``nobody``.
"""

from __future__ import annotations

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
FILES = ("tests/evaluators/test_sandbox_value_crossing.py", "tests/evaluators/test_sandbox_bounded_decoding.py")


def _blocking_ancestor(path: Path) -> tuple[Path, Path] | None:
    """The outermost ancestor of ``path`` that others cannot enter, and its child on the way."""
    for here in reversed([path, *path.parents][:-1]):
        if not (os.stat(here.parent).st_mode & 0o001):
            return here.parent, here
    return None


def test_values_cross_and_decoding_is_bounded_as_nobody() -> None:
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
    work = Path(tempfile.mkdtemp(prefix="evalcore-nobody-"))
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    work.chmod(0o755)
    try:
        python = ROOT / ".venv" / "bin" / "python"
        if not python.exists():
            python = Path(sys.executable)
        q = shlex.quote
        setup = ["mount --make-rprivate /"]
        blocked = _blocking_ancestor(Path(os.path.realpath(sys.base_prefix)))
        if blocked is not None:
            hidden, inside = blocked
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
        tail = (out.stdout + out.stderr)[-4000:]
        if out.returncode != 0 and "unshare failed" in out.stderr:
            pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
        assert out.returncode == 0, tail
        assert " passed" in out.stdout and "failed" not in out.stdout, tail
    finally:
        shutil.rmtree(work, ignore_errors=True)
