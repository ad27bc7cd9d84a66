"""Rerun pytest files as the unprivileged user ``nobody`` (shared by the *_unprivileged tests).

Run as root, :func:`rerun_as_nobody` starts ``pytest`` under ``runuser -u nobody`` in a private
mount namespace. When the interpreter lies under a directory ``nobody`` cannot enter (pyenv in
``/root``, mode 700), that directory is covered by an empty tmpfs and the interpreter's own
folder bound back alone. It skips the calling test (with the reason) when not root, without
``runuser``/``unshare``/``nobody``, or without a private mount namespace, and fails it when the
rerun fails, with the end of its output.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def blocking_ancestor(path: Path) -> tuple[Path, Path] | None:
    """The outermost ancestor of ``path`` that others cannot enter, and its child on the way."""
    for here in reversed([path, *path.parents][:-1]):
        if not (os.stat(here.parent).st_mode & 0o001):
            return here.parent, here
    return None


def rerun_as_nobody(
    args: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 300, tail: int = 4000
) -> subprocess.CompletedProcess[str]:
    """Run ``pytest -m "" ARGS`` as nobody; assert it passed; return the finished process."""
    if os.geteuid() != 0:
        pytest.skip("needs root (to run the tests as nobody)")
    for tool in ("runuser", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    # nobody needs a home and a pytest base directory it can write.
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
        extra = [f"{k}={v}" for k, v in (env or {}).items()]
        command = [
            "runuser", "-u", "nobody", "--", "env", f"HOME={work}", "PYTHONDONTWRITEBYTECODE=1", *extra,
            str(python), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "",
            f"--basetemp={work / 'pytest'}", *args,
        ]  # fmt: skip
        script = " && ".join(setup) + " && cd " + q(str(ROOT)) + " && exec " + shlex.join(command)
        try:
            out = subprocess.run(
                ["unshare", "-m", "sh", "-c", script], check=False, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the unprivileged rerun took over {timeout:.0f} s: {exc.stdout!r}")
        end = (out.stdout + out.stderr)[-tail:]
        if out.returncode != 0 and "unshare failed" in out.stderr:
            pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
        assert out.returncode == 0, end
        assert " passed" in out.stdout and "failed" not in out.stdout, end
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)
