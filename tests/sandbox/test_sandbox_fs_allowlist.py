"""The candidate's file-system view is an allow-list (issue 29, item 2).

Before, the view was the host's, read-only, minus a list of known answer-key paths: any other
copy of a benchmark (a data set cache, a clone beside the project, a download folder) was
readable by the candidate, which then passed by looking up the canonical solution. Now a sample
sees the system's libraries, the interpreter and its libraries, a few files of /etc, /dev's
harmless devices, its own /proc and its scratch; nothing else exists there.

The planted answer key lies in a folder beside the project (or, where that cannot be written,
in /srv or /opt); ``EVALCORE_TEST_PLANTED`` names one made beforehand (the unprivileged rerun,
whose user cannot write there, gets it from the root side).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from _sandbox_target import SandboxPool, local_only
from evalcore.sandbox.pool import _to_result

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "def add(a, b):\n    return a + b  # the canonical solution\n"


def plant_answer_key() -> Path:
    """A folder with a copy of a benchmark's canonical solutions, outside every hidden path:
    beside the project, else in /srv or /opt (readable by everyone)."""
    for parent in (ROOT.parent, Path("/srv"), Path("/opt")):
        try:
            folder = Path(tempfile.mkdtemp(prefix="evalcore-benchmark-clone-", dir=parent))
        except OSError:
            continue
        folder.chmod(0o755)
        (folder / "HumanEval.jsonl").write_text(json.dumps({"task_id": "probe/0", "canonical_solution": ANSWER}) + "\n")
        (folder / "HumanEval.jsonl").chmod(0o644)
        return folder
    pytest.skip("no folder outside the hidden paths can be written here")


@pytest.fixture(scope="module")
def planted():
    given = os.environ.get("EVALCORE_TEST_PLANTED")
    if given:
        yield Path(given)
        return
    folder = plant_answer_key()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(1)
    if not p.isolation.get("namespaces"):
        p.close()
        pytest.skip("no namespaces here: the weak fallback has no file-system view (docs/sandbox.md)")
    yield p
    p.close()


def _run(pool: SandboxPool, source: str, test: str) -> object:
    job = {"mode": "check", "source": source, "prompt": "", "test": test, "entry_point": "f", "timeout_s": 10.0}
    (reply,) = pool.map([job])
    return _to_result(reply)


def test_a_benchmark_copy_outside_the_known_paths_is_not_readable(pool: SandboxPool, planted: Path) -> None:
    # The attack: look the canonical solution up in any copy of the benchmark the host holds.
    source = textwrap.dedent(
        f"""
        def f():
            try:
                with open({str(planted / "HumanEval.jsonl")!r}) as fh:
                    return fh.read()
            except OSError:
                return None
        """
    )
    result = _run(pool, source, "def check(candidate):\n    assert 'canonical' in (candidate() or '')\n")
    assert not result.completed, "the candidate read a copy of the answer key"


def test_parent_folders_home_and_other_trees_are_not_in_the_view(pool: SandboxPool, planted: Path) -> None:
    source = textwrap.dedent(
        f"""
        import os
        def f():
            seen = {{}}
            for d in ({str(planted.parent)!r}, {str(ROOT)!r}, "/", "/srv", "/opt", "/home", "/root", "/var", "/run", "/mnt"):
                try:
                    seen[d] = sorted(os.listdir(d))
                except OSError:
                    seen[d] = None
            return repr(seen)
        """
    )
    # The test sees the listing (a failing assertion carries it back).
    result = _run(pool, source, "def check(candidate):\n    assert False, candidate()\n")
    seen = eval(result.reason.split(": ", 1)[1])  # noqa: PGH001 - the dict printed above
    assert seen[str(planted.parent)] is None or planted.name not in seen[str(planted.parent)], seen
    # The project shows at most the directories that lead to the interpreter's (a virtual
    # environment inside it): none of its files.
    project = seen[str(ROOT)] or []
    assert "pyproject.toml" not in project and "evalcore" not in project and "tests" not in project, project
    # The top folders that lead to the project and the interpreter (a checkout under /check or
    # /home) show as a name; their contents were checked above.
    leading = {Path(os.path.realpath(p)).parts[1] for p in (ROOT, sys.prefix, sys.base_prefix)}
    assert set(seen["/"]) <= leading | {
        "bin",
        "sbin",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "usr",
        "etc",
        "dev",
        "proc",
        "sys",
        "tmp",
        "var",
        "root",
        "home",
        "opt",
        "srv",
        "mnt",
        ".evalcore-check-view",
    }, seen["/"]  # the last: empty for a check candidate
    for d in ("/srv", "/mnt", "/run"):
        assert not seen[d], (d, seen[d])
    assert seen["/var"] in (["tmp"], None) or set(seen["/var"]) <= {"tmp"}, seen["/var"]


def test_the_interpreter_and_its_libraries_still_work(pool: SandboxPool) -> None:
    source = textwrap.dedent(
        """
        import json, decimal, fractions, zoneinfo, ssl, sqlite3, os
        def f():
            return [json.dumps([1]), str(decimal.Decimal("1.5") + 1), os.path.exists("/dev/null"),
                    os.access("/tmp", os.W_OK), open("/dev/urandom", "rb").read(1) != b""]
        """
    )
    result = _run(pool, source, "def check(candidate):\n    assert candidate() == ['[1]', '2.5', True, True, True]\n")
    assert result.completed, result


@local_only("the command's report of this machine's sandbox (no job)")
def test_show_isolation_prints_the_view() -> None:
    command = [
        sys.executable,
        "-c",
        "import sys; from evalcore.cli import main; sys.exit(main())",
        "score",
        "--show-isolation",
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    if not any(line.startswith("file-system view") for line in lines):
        pytest.skip("no namespaces here: " + out.stdout[-300:])
    view = [line.strip() for line in lines if line.startswith("  ")]
    assert "/usr" in view and "/tmp (scratch)" in view, view
    assert str(ROOT) not in view and not any(v == str(Path.home()) for v in view), view
    assert any(
        v.startswith(os.path.realpath(sys.base_prefix)) or os.path.realpath(sys.base_prefix).startswith(v) for v in view
    ), view
    # Which view check candidates get (the tmpfs copy, or the host's with the channel open).
    check_view = [line for line in lines if line.startswith("check_view: check candidates: ")]
    assert len(check_view) == 1 and ("read-only copy in tmpfs" in check_view[0] or "same view" in check_view[0]), lines
