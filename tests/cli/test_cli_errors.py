"""The command line's last line of defence: OSError and a closed stdout give no traceback."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import main


def test_write_failure_is_one_message_exit_2(tmp_path, capsys, monkeypatch) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "#### 4", "answer": "4"}) + "\n")

    def full_disk(path, rows, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr("evalcore.evaluators._answer_files.write_jsonl_atomic", full_disk)
    assert main(["score", "gsm8k", str(answers)]) == 2
    err = capsys.readouterr().err
    assert err == f"evalcore: error: no space left on device: {tmp_path / 'a_results.jsonl'}\n"


def test_closed_stdout_no_traceback(tmp_path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "#### 4", "answer": "4"}) + "\n")
    evalcore = Path(sys.executable).with_name("evalcore")
    proc = subprocess.Popen(
        [str(evalcore), "score", "gsm8k", str(answers)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # the reader is gone before the command prints (as `| head -0`)
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 141
    assert (tmp_path / "a_results.jsonl").is_file()  # the work is kept


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["score", "run --pricing", "run --prompt", "notebooks --suite"])
def test_folder_given_for_a_file_says_folder(tmp_path, capsys, command) -> None:
    from evalcore.models import FakeChatServer

    folder = tmp_path / "SOMEFOLDER"
    folder.mkdir()
    with FakeChatServer() as srv:
        run = [
            "run",
            "gsm8k",
            "--model",
            f"openai-compatible:fake@{srv.url}",
            "--limit",
            "1",
            "--source",
            "sample",
            "--run-dir",
            str(tmp_path / "runs"),
            "--no-progress",
        ]
        argv = {
            "score": ["score", "gsm8k", str(folder)],
            "run --pricing": [*run, "--pricing", str(folder)],
            "run --prompt": [*run, "--prompt", str(folder)],
            "notebooks --suite": ["notebooks", "run", "--suite", str(folder), "--output", str(tmp_path / "out")],
        }[command]
        assert main(argv) == 2
        assert srv.counts["requests"] == 0
    err = capsys.readouterr().err
    assert err.startswith(f"evalcore: error: {folder}") and "is a folder, not a file" in err
    assert "not found" not in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SOMEFOLDER"]  # nothing written
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "gsm8k", "--model", "local:smollm2", "--limit", "-1"],
         "evalcore: error: field 'limit': must be a positive integer (leave it out for every item), got -1\n"),
        (["sweep", "--thresholds", "0.9:0.1:0.1"],
         "evalcore: error: field 'thresholds': the range runs down (0.9 > 0.1); write it upwards: 0.1:0.9:0.1\n"),
    ],
)  # fmt: skip
def test_wording_of_common_mistakes(argv, expected, capsys) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == expected
