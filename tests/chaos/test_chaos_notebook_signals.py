"""Chaos: Ctrl-C (SIGINT) and a supervisor's SIGTERM while `evalcore notebooks run` executes a
notebook. The runner shuts the kernel down and removes its connection file (it holds the HMAC key),
says so in one line, exits 130 or 143, and `--resume` runs only the notebooks that did not finish."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from _chaos import EVALCORE

LIMIT_S = 240  # kernel start-ups on a loaded 2-core machine

PARAMS = (
    "name: str = 'x'  # this run's name\nlog: str = ''  # the file each notebook appends to\n"
    "block: str = ''  # wait while this file exists"
)
START = (
    "import os, time\nopen(log, 'a').write(f'start {name} {os.getpid()}\\n')\n"
    "while block and os.path.exists(block):\n    time.sleep(0.05)"
)
DONE = "open(log, 'a').write(f'done {name}\\n')"


def _suite(root: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(PARAMS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(START), nbformat.v4.new_code_cell(DONE)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "nbs").mkdir()
    nbformat.write(nb, root / "nbs" / "step.ipynb")
    (root / "pyproject.toml").write_text("")
    (root / "suite.yaml").write_text(
        "runs:\n"
        "  - {name: a, notebook: nbs/step.ipynb, overrides: {name: a, log: '{root}/log.txt'}}\n"
        "  - {name: b, notebook: nbs/step.ipynb, overrides: {name: b, log: '{root}/log.txt', block: '{root}/block'}}\n"
        "  - {name: c, notebook: nbs/step.ipynb, overrides: {name: c, log: '{root}/log.txt'}}\n"
    )


def _log(root: Path) -> list[str]:
    path = root / "log.txt"
    return path.read_text().splitlines() if path.exists() else []


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.notebooks
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_notebook_suite_removes_the_kernel_files_and_resume_runs_the_rest(tmp_path, sig, status):
    _suite(tmp_path)
    (tmp_path / "block").write_text("")
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "JUPYTER_RUNTIME_DIR": str(runtime), "TMPDIR": str(runtime)}
    args = ["notebooks", "run", "--output", "out", "--no-pdf", "--progress-every", "0"]
    out_file, err_file = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with open(out_file, "w") as out, open(err_file, "w") as err:
        proc = subprocess.Popen(
            [*EVALCORE, *args, "--suite", "suite.yaml"], cwd=tmp_path, env=env, start_new_session=True,
            stdout=out, stderr=err,
        )  # fmt: skip
    kernel_pid = None
    try:
        deadline = time.monotonic() + LIMIT_S
        while not any(line.startswith("start b") for line in _log(tmp_path)):
            said = out_file.read_text() + err_file.read_text()
            assert proc.poll() is None and time.monotonic() < deadline, f"the runner did not reach b:\n{said}"
            time.sleep(0.2)
        kernel_pid = int(next(ln for ln in _log(tmp_path) if ln.startswith("start b")).split()[2])
        argv = Path(f"/proc/{kernel_pid}/cmdline").read_bytes().split(b"\0")
        connection = Path(os.fsdecode(argv[argv.index(b"-f") + 1]))
        assert connection.is_file()  # the kernel's connection file, with its HMAC key, while it runs
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out, err = out_file.read_text(), err_file.read_text()
    assert proc.returncode == status, out + err
    said = "evalcore: interrupted" if sig == signal.SIGINT else "evalcore: terminated (SIGTERM)"
    assert "Traceback" not in out + err and [ln for ln in err.splitlines() if ln.startswith("evalcore:")] == [said]
    assert not connection.exists() and not list(runtime.glob("*.json"))  # no key left behind
    assert _gone(kernel_pid, 10), "the kernel outlived the runner"
    (suite_dir,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((suite_dir / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "interrupted", "pending"]
    for nb in suite_dir.rglob("*.ipynb"):  # every notebook left is whole
        json.loads(nb.read_bytes())

    (tmp_path / "block").unlink()
    before = len(_log(tmp_path))
    again = subprocess.run(
        [*EVALCORE, *args, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=LIMIT_S
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert [" ".join(ln.split()[:2]) for ln in _log(tmp_path)[before:]] == ["start b", "done b", "start c", "done c"]
    manifest = json.loads((suite_dir / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "ok", "ok"]
