"""A suite that talks and resumes: the runner is killed mid-suite, ``--resume`` re-executes only
the notebooks that did not finish; progress lines are printed to a pipe (not a terminal)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalcore.reporting._notebooks import _Progress, _step, find_suite_dir, progress_line

PARAMS = (
    "name: str = 'x'  # this run's name\nlog: str = ''  # file the notebook appends to\n"
    "block: str = ''  # wait while this file exists"
)
START = (
    "import os, time\nopen(log, 'a').write(f'start {name} {os.getpid()}\\n')\n"
    "while block and os.path.exists(block):\n    time.sleep(0.05)"
)
DONE = "import evalcore\nevalcore.record('done', name)\nopen(log, 'a').write(f'done {name}\\n')"
RUN = "import sys\nfrom evalcore.cli import main\nsys.exit(main(sys.argv[1:]))"
LIMIT_S = 240  # per runner call: kernel start-ups on a loaded 2-core machine


@pytest.fixture
def repo(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(tmp_path / "nbs" / "step.ipynb", PARAMS, START, DONE)
    (tmp_path / "suite.yaml").write_text(
        "runs:\n"
        "  - {name: a, notebook: nbs/step.ipynb, overrides: {name: a, log: '{root}/log.txt'}}\n"
        "  - {name: b, notebook: nbs/step.ipynb, overrides: {name: b, log: '{root}/log.txt', block: '{root}/block'}}\n"
        "  - {name: c, notebook: nbs/step.ipynb, overrides: {name: c, log: '{root}/log.txt'}}\n"
    )
    return tmp_path


def _runner(repo: Path, *args: str, output) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", RUN, "notebooks", "run", "--output", "out", "--no-pdf", *args],
        cwd=repo,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _log(repo: Path) -> list[str]:
    path = repo / "log.txt"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.notebooks
def test_killed_suite_resumes_only_the_unfinished_notebooks(repo):
    (repo / "block").write_text("")
    first_out = repo / "first.txt"
    with open(first_out, "w") as out:
        proc = _runner(repo, "--suite", "suite.yaml", "--progress-every", "1", output=out)
    kernel_pid = None
    try:
        deadline = time.monotonic() + LIMIT_S
        while not any(line.startswith("start b") for line in _log(repo)):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"the runner did not reach notebook b within {LIMIT_S} s "
                    f"(exit {proc.poll()}); its output:\n{first_out.read_text()}"
                )
            time.sleep(0.2)
        kernel_pid = int(next(line for line in _log(repo) if line.startswith("start b")).split()[2])
        # b is blocked in its first cell: wait for a progress line, then kill the whole runner
        while "b: running, cell" not in first_out.read_text():
            if time.monotonic() > deadline:
                pytest.fail(f"no progress line while b ran; runner output:\n{first_out.read_text()}")
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if kernel_pid is not None:  # b's kernel (its own session) would exit by itself within a second
            try:
                os.kill(kernel_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    said = first_out.read_text()
    assert "[2/3] b: running, cell 4/5 [step] (for" in said
    assert (
        "time left unknown (no earlier run to estimate from)" in said
    )  # the first run: nothing to go on  # md, parameters, injected parameters, start and "elapsed" in said
    assert _log(repo)[0].startswith("start a") and _log(repo)[1] == "done a"

    suite_dir = find_suite_dir(repo / "out")
    manifest = json.loads((suite_dir / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "running", "pending"]
    a_notebook = suite_dir / "a" / "a.ipynb"
    a_mtime = a_notebook.stat().st_mtime_ns

    (repo / "block").unlink()
    before = len(_log(repo))
    second_out = repo / "second.txt"
    with open(second_out, "w") as out:
        proc = _runner(repo, "--resume", output=out)
        try:
            status = proc.wait(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"--resume did not finish within {LIMIT_S} s; output:\n{second_out.read_text()}")
    said = second_out.read_text()
    assert status == 0, said
    new = [" ".join(line.split()[:2]) for line in _log(repo)[before:]]
    assert new == ["start b", "done b", "start c", "done c"]  # a was not executed again
    assert a_notebook.stat().st_mtime_ns == a_mtime
    assert f"resuming suite {suite_dir.name}" in said and "1 notebook(s) finished before, 2 to run" in said
    assert [p.name for p in (repo / "out").iterdir() if not p.is_symlink()] == [suite_dir.name]
    manifest = json.loads((suite_dir / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "ok", "ok"]
    assert [r["records"] for r in manifest["runs"]] == [{"done": "a"}, {"done": "b"}, {"done": "c"}]
    assert manifest["meta"]["resumed"]
    assert (repo / "out" / "latest").resolve() == suite_dir
    assert said.strip().splitlines()[-1] == "out/latest/index.html"
    assert "KeyboardInterrupt caught in kernel" not in said

    # nothing left to do: a second resume runs nothing and says so
    again = subprocess.run(
        [sys.executable, "-c", RUN, "notebooks", "run", "--output", "out", "--no-pdf", "--resume", suite_dir.name],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "3 notebook(s) finished before, 0 to run" in again.stdout
    assert len(_log(repo)) == before + 4


def test_progress_line_names_notebook_cell_elapsed_and_samples(tmp_path):
    runs = tmp_path / "runs"
    (runs / "gsm8k-zeroshot").mkdir(parents=True)
    (runs / "gsm8k-zeroshot" / "samples.jsonl").write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    start = time.perf_counter() - 5  # the samples file was written after the notebook started
    progress = _Progress(
        "benchmark_gsm8k",
        2,
        17,
        start,
        watch=runs,
        expected={"gsm8k-zeroshot": 8},
        cell=3,
        n_cells=16,
        cell_started=start + 60,
        step="Accuracy",
    )
    line = progress_line(progress, now=start + 65)
    # a total and an estimate of the time left on every line (issue 31): 65 s for 3 samples, 5 to go
    assert line == (
        "[2/17] benchmark_gsm8k: running, cell 3/16 [Accuracy] (for 5 s), 1 min 05 s elapsed, "
        "gsm8k-zeroshot: 3/8 samples, about 1 min 48 s left in this notebook (suite: unknown)"
    )
    # with the durations of an earlier run: the notebooks after this one add up to the suite's
    progress.after_s, progress.estimate_from = 300.0, "the run of 20261128T060000Z"
    assert progress_line(progress, now=start + 65).endswith(
        "3/8 samples, about 1 min 48 s left (suite: about 6 min 48 s, from the run of 20261128T060000Z)"
    )
    # every sample written and no expected duration: nothing to say how long its tables and
    # figures take, so it says so (never a bare "finishing", issue 39)
    progress.expected = {"gsm8k-zeroshot": 3}
    line = progress_line(progress, now=start + 65)
    assert line.endswith(" 3/3 samples, time left unknown (no earlier run to estimate from)")
    assert "finishing" not in line
    # with it: the rest of its expected duration (here a 70 s notebook at 65 s)
    progress.expected_s = 70.0
    assert " 3/3 samples, about 5 s left (suite: about 5 min 05 s" in progress_line(progress, now=start + 65)
    progress.expected_s = None
    progress.expected = {}
    progress.expected_s = 90.0  # no sample total: the notebook's expected duration
    assert progress_line(progress, now=start + 65).endswith(
        "gsm8k-zeroshot: 3 samples, about 25 s left (suite: about 5 min 25 s, from the run of 20261128T060000Z)"
    )
    progress.watch = tmp_path / "nothing"
    progress.expected_s = progress.after_s = None
    assert progress_line(progress, now=start + 65).endswith(
        "1 min 05 s elapsed, time left unknown (no earlier run to estimate from)"
    )


def test_step_is_the_heading_above_the_cell():
    cells = [
        {"cell_type": "markdown", "source": "# Benchmark run\ntext"},
        {"cell_type": "code", "source": "x"},
        {"cell_type": "markdown", "source": "Some text\n## Accuracy by subject"},
        {"cell_type": "code", "source": "y"},
    ]
    assert _step(cells, 1) == "Benchmark run"
    assert _step(cells, 3) == "Accuracy by subject"
    assert _step(cells, 0) is None


@pytest.mark.notebooks
def test_ctrl_c_marks_the_notebook_interrupted_and_says_how_to_resume(repo):
    (repo / "block").write_text("")
    out_file = repo / "out.txt"
    kernel_pid = None
    with open(out_file, "w") as out:
        proc = _runner(repo, "--suite", "suite.yaml", "--progress-every", "0", output=out)
    try:
        deadline = time.monotonic() + LIMIT_S
        while not any(line.startswith("start b") for line in _log(repo)):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the runner did not reach notebook b within {LIMIT_S} s; output:\n{out_file.read_text()}")
            time.sleep(0.2)
        kernel_pid = int(next(line for line in _log(repo) if line.startswith("start b")).split()[2])
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        try:
            status = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the runner did not stop within 60 s of SIGINT; output:\n{out_file.read_text()}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if kernel_pid is not None:
            try:
                os.kill(kernel_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    said = out_file.read_text()
    suite_dir = find_suite_dir(repo / "out")
    assert status == 130, said
    assert "interrupted during b" in said
    assert f"evalcore notebooks run --resume {suite_dir.name} --output out" in said
    manifest = json.loads((suite_dir / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "interrupted", "pending"]
    assert 'class="interrupted">interrupted' in (suite_dir / "index.html").read_text()
    assert not any(line.startswith("start c") for line in _log(repo))


@pytest.mark.notebooks
def test_sigterm_is_handled_like_ctrl_c_and_leaves_no_kernel_connection_file(repo):
    (repo / "block").write_text("")
    runtime = repo / "runtime"
    runtime.mkdir()
    out_file = repo / "out.txt"
    kernel_pid = None
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "JUPYTER_RUNTIME_DIR": str(runtime), "TMPDIR": str(runtime)}
    with open(out_file, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN, "notebooks", "run", "--output", "out", "--no-pdf", "--suite", "suite.yaml",
             "--progress-every", "0"],
            cwd=repo, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + LIMIT_S
        while not any(line.startswith("start b") for line in _log(repo)):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the runner did not reach notebook b within {LIMIT_S} s; output:\n{out_file.read_text()}")
            time.sleep(0.2)
        kernel_pid = int(next(line for line in _log(repo) if line.startswith("start b")).split()[2])
        argv = Path(f"/proc/{kernel_pid}/cmdline").read_bytes().split(b"\0")
        connection = Path(os.fsdecode(argv[argv.index(b"-f") + 1]))
        assert connection.is_file(), "the kernel's connection file should exist while it runs"
        proc.send_signal(signal.SIGTERM)  # what a supervisor (systemd, a batch system) sends
        try:
            status = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the runner did not stop within 60 s of SIGTERM; output:\n{out_file.read_text()}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    said = out_file.read_text()
    assert status == 143, said
    assert "evalcore: terminated (SIGTERM)" in said and "Traceback" not in said
    assert not connection.exists()  # its HMAC key is not left behind
    assert not list(runtime.glob("*.json"))
    deadline = time.monotonic() + 10
    while kernel_pid is not None and time.monotonic() < deadline:
        try:
            os.kill(kernel_pid, 0)
        except ProcessLookupError:
            kernel_pid = None
        time.sleep(0.1)
    assert kernel_pid is None, "the kernel outlived the runner"
    manifest = json.loads((find_suite_dir(repo / "out") / "suite.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["ok", "interrupted", "pending"]
