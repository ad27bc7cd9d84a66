"""`evalcore run` / `rescore`: bad input is refused with one message, exit 2, nothing created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.models import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]


def _run(srv, run_dir, *extra: str) -> int:
    return main(["run", "gsm8k", "--model", f"openai-compatible:fake@{srv.url}", "--limit", "2",
                 "--source", "sample", "--run-dir", str(run_dir), "--run-id", "r", "--no-progress",
                 *extra])


@pytest.mark.parametrize("edit", [("{question}", "{questoin}"), ("{question}", "{question"),
                                  ("{question}", "{question.__class__}")])
def test_bad_template_creates_nothing(tmp_path, capsys, edit) -> None:
    prompt = tmp_path / "p.yaml"
    prompt.write_text((ROOT / "params" / "prompts" / "gsm8k.yaml").read_text().replace(*edit))
    runs = tmp_path / "runs"
    with FakeChatServer() as srv:
        assert _run(srv, runs, "--prompt", str(prompt)) == 2
        err = capsys.readouterr().err
        assert "p.yaml" in err and "field 'user'" in err and "Traceback" not in err
        assert not runs.exists()  # no run dir, no lock, no cache: the retry starts clean
        prompt.write_text((ROOT / "params" / "prompts" / "gsm8k.yaml").read_text())
        assert _run(srv, runs, "--prompt", str(prompt)) == 0


def test_run_dir_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "runs").write_text("")
    with FakeChatServer() as srv:
        assert _run(srv, tmp_path / "runs") == 2
    err = capsys.readouterr().err
    assert "runs" in err and "is a file" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["results.json", "samples.jsonl"])
def test_run_file_is_a_folder(tmp_path, capsys, name) -> None:
    with FakeChatServer() as srv:
        assert _run(srv, tmp_path) == 0
        (tmp_path / "r" / name).unlink()
        (tmp_path / "r" / name).mkdir()
        capsys.readouterr()
        assert _run(srv, tmp_path) == 2  # before any call, not after them
    err = capsys.readouterr().err
    assert name in err and "is a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-3"])
def test_run_timeout_refused(tmp_path, capsys, value) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "gsm8k", "--model", "openai-compatible:x@http://127.0.0.1:9/v1",
              "--run-dir", str(tmp_path / "runs"), "--timeout", value])
    assert stop.value.code == 2 and "argument --timeout" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_wrong_typed_epoch_is_a_corrupted_store(tmp_path, capsys) -> None:
    with FakeChatServer() as srv:
        assert _run(srv, tmp_path) == 0
    path = tmp_path / "r" / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    row["epoch"] = "zero"
    lines[1] = json.dumps(row) + "\n"
    path.write_text("".join(lines))
    capsys.readouterr()
    assert main(["rescore", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "samples.jsonl, line 2, field 'epoch'" in err and "corrupted run store" in err


def test_rescore_empty_store_keeps_results(tmp_path, capsys) -> None:
    with FakeChatServer() as srv:
        assert _run(srv, tmp_path) == 0
    results = (tmp_path / "r" / "results.json").read_text()
    (tmp_path / "r" / "samples.jsonl").write_text("")
    capsys.readouterr()
    assert main(["rescore", str(tmp_path / "r")]) == 2
    assert "no recorded samples" in capsys.readouterr().err
    assert (tmp_path / "r" / "results.json").read_text() == results
