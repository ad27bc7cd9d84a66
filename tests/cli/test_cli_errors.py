"""The command line's last line of defence: OSError and a closed stdout give no traceback."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

from evalcore.cli import main


def test_write_failure_is_one_message_exit_2(tmp_path, capsys, monkeypatch) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "#### 4", "answer": "4"}) + "\n")

    def full_disk(path, rows, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr("evalcore.evaluators._answer_files.write_jsonl_atomic", full_disk)
    assert main(["score", "gsm8k", str(answers)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalcore: error: cannot use ") and "a_results.jsonl" in err
    assert "No space left on device" in err and "Traceback" not in err


def test_closed_stdout_no_traceback(tmp_path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "#### 4", "answer": "4"}) + "\n")
    evalcore = Path(sys.executable).with_name("evalcore")
    proc = subprocess.Popen([str(evalcore), "score", "gsm8k", str(answers)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the command prints (as `| head -0`)
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 141
    assert (tmp_path / "a_results.jsonl").is_file()  # the work is kept
