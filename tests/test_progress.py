"""Where progress bars show (issue 39): a terminal and a notebook open in JupyterLab, never a
papermill run or a log (evalcore._progress)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from evalcore import _progress
from evalcore._progress import PROGRESS_ENV, in_live_notebook, progress_bar, progress_enabled


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


def test_explicit_choice_wins() -> None:
    assert progress_enabled(True, io.StringIO()) is True
    assert progress_enabled(False, _Tty()) is False


def test_none_shows_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert progress_enabled(None, _Tty()) is True
    assert progress_enabled(None, io.StringIO()) is False  # a log, CI, a pipe
    monkeypatch.setenv(PROGRESS_ENV, "0")
    assert progress_enabled(None, _Tty()) is False  # the notebook suite's kernels
    monkeypatch.setenv(PROGRESS_ENV, "on")
    assert progress_enabled(None, io.StringIO()) is True


def test_a_notebook_open_in_jupyterlab_shows_the_widget_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel") or type(sys)("ipykernel"))
    assert in_live_notebook() is False  # a kernel papermill started: no Jupyter server session
    monkeypatch.setenv("JPY_SESSION_NAME", "/lab/notebooks/benchmark.ipynb")
    monkeypatch.setattr(_progress.importlib.util, "find_spec", lambda name: object() if name == "ipywidgets" else None)
    assert in_live_notebook() is True
    assert progress_enabled(None, io.StringIO()) is True
    monkeypatch.setattr(_progress.importlib.util, "find_spec", lambda name: None)
    assert in_live_notebook() is False  # no ipywidgets: tqdm could not draw it


def test_progress_bar_counts_and_is_silent_when_off() -> None:
    out = io.StringIO()
    bar = progress_bar(total=4, desc="sweep", unit="request", progress=True, file=out, tick_s=0.01)
    bar.update(4)
    bar.close()
    assert "sweep" in out.getvalue() and "4/4" in out.getvalue() and "request" in out.getvalue()
    quiet = io.StringIO()
    assert list(progress_bar(range(3), desc="x", progress=False, file=quiet)) == [0, 1, 2]
    assert quiet.getvalue() == ""


def test_routing_bar_is_a_widget_in_jupyterlab_and_lines_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore.routing import _progress as routing_progress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    lines = routing_progress.bar(3, "item bootstrap", unit="resamples")
    assert lines._tqdm is None and lines._lines is not None
    monkeypatch.setattr(_progress, "in_live_notebook", lambda: True)
    shown = routing_progress.bar(3, "item bootstrap", unit="resamples")
    assert shown._tqdm is not None and shown._tqdm.total == 3
    shown.close()


def _humaneval_files(tmp_path: Path, n: int) -> tuple[Path, Path]:
    problem = {
        "task_id": "T/0",
        "prompt": 'def add(a, b):\n    """Add."""\n',
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        "entry_point": "add",
    }
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps(problem) + "\n")
    samples = tmp_path / "samples.jsonl"
    rows = [{"task_id": "T/0", "completion": "    return a + b\n" if i % 2 else "    return a - b\n"} for i in range(n)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return problems, samples


def test_score_humaneval_shows_a_bar_on_a_terminal_and_none_in_a_pipe(tmp_path: Path) -> None:
    """`evalcore score humaneval` (issue 39): a tqdm bar on stderr when it is a terminal (a pty
    here), counting every sample; nothing but the JSON when stderr is a pipe."""
    problems, samples = _humaneval_files(tmp_path, 6)
    cmd = [
        str(Path(sys.executable).with_name("evalcore")),
        "score",
        "humaneval",
        str(samples),
        "--problems",
        str(problems),
    ]
    cmd += ["--k", "1", "--workers", "1"]
    env = {k: v for k, v in os.environ.items() if k not in (PROGRESS_ENV, "JPY_SESSION_NAME")}
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # tqdm draws to the width
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=tmp_path)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, seen.decode(errors="replace")
    assert json.loads(stdout)["pass@1"] == pytest.approx(0.5)
    text = seen.decode(errors="replace")
    assert "score humaneval" in text and "6/6" in text and "sample" in text, text
    piped = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode == 0 and json.loads(piped.stdout)["pass@1"] == pytest.approx(0.5)
    assert "score humaneval" not in piped.stderr and "6/6" not in piped.stderr


def test_a_hidden_bar_counts_and_loads_no_tqdm() -> None:
    code = (
        "import sys\n"
        "from evalcore._progress import progress_bar\n"
        "with progress_bar(total=3, desc='x', progress=False) as bar:\n"
        "    bar.update(2); bar.set_postfix_str('y'); bar.refresh()\n"
        "seen = list(progress_bar(range(3), progress=False))\n"
        "print(bar.n, bar.disable, seen, 'tqdm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[0] == "2 True [0, 1, 2] False", done.stderr
