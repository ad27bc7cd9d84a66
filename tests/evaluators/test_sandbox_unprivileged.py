"""The sandbox as an unprivileged user: a few boundary tests rerun as ``nobody`` (issue 12).

Run as root (``pytest -m integration``), this reruns a subset of ``test_sandbox_boundary.py``
under ``runuser -u nobody``: the user-namespace isolation, and the weak fallback's seccomp
filters where the sample runs as the same user as evalcore. Where the interpreter lies under a
directory ``nobody`` cannot enter (pyenv in ``/root``, mode 700), the rerun gets a private
mount namespace (``unshare -m``) in which that directory is an empty tmpfs with only the
interpreter's directory bound back: nothing on the host changes. Skipped (with the reason)
when not root, without ``runuser``/``unshare``, or without a ``nobody`` user.
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
# A few boundary tests: a forged-pass route, hiding the project, correct code (numpy,
# dataclasses), capabilities and filters, and the fallback's signal and exec confinement.
SUBSET = (
    "rebinding_the_harness_globals or project_and_working_directory_are_hidden"
    " or (correct_code_passes and (numpy or dataclass))"
    " or samples_hold_no_capabilities or signals_nothing_but_itself"
    " or script_samples_without_namespaces"
)


def _blocking_ancestor(path: Path) -> tuple[Path, Path] | None:
    """The outermost ancestor of ``path`` that others cannot enter, and its child on the way."""
    for here in reversed([path, *path.parents][:-1]):  # from the top, '/' left out
        if not (os.stat(here.parent).st_mode & 0o001):
            return here.parent, here
    return None


def test_boundary_subset_passes_as_nobody(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (to run the subset as nobody)")
    for tool in ("runuser", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    try:
        import pwd

        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    nobody = pwd.getpwnam("nobody")
    # nobody needs a home and a pytest base directory it can write.
    work = Path(tempfile.mkdtemp(prefix="evalcore-nobody-"))
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    work.chmod(0o755)
    try:
        python = ROOT / ".venv" / "bin" / "python"
        if not python.exists():
            python = Path(sys.executable)
        setup = ["mount --make-rprivate /"]
        blocked = _blocking_ancestor(Path(os.path.realpath(sys.base_prefix)))
        if blocked is not None:
            hidden, inside = blocked  # e.g. /root and /root/.pyenv
            view = work / "view"
            view.mkdir()
            q = shlex.quote
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
            "tests/evaluators/test_sandbox_boundary.py",
            "-k",
            SUBSET,
        ]
        script = " && ".join(setup) + " && cd " + shlex.quote(str(ROOT)) + " && exec " + shlex.join(command)
        try:
            out = subprocess.run(
                ["unshare", "-m", "sh", "-c", script], check=False, capture_output=True, text=True, timeout=150
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the unprivileged rerun took over 150 s: {exc.stdout}")
        tail = (out.stdout + out.stderr)[-4000:]
        if out.returncode != 0 and "unshare failed" in out.stderr:
            pytest.skip(f"no private mount namespace here: {out.stderr.strip()}")
        assert out.returncode == 0, tail
        assert " passed" in out.stdout and "failed" not in out.stdout, tail
    finally:
        shutil.rmtree(work, ignore_errors=True)
