"""`evalcore run` / `rescore`: bad input is refused with one message, exit 2, nothing created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.models import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]
GSM8K_TEMPLATE = ROOT / "evalcore" / "benchmarks" / "gsm8k" / "template.yaml"  # the packaged default


def _run(srv, run_dir, *extra: str) -> int:
    return main(
        [
            "run",
            "gsm8k",
            "--model",
            f"openai-compatible:fake@{srv.url}",
            "--limit",
            "2",
            "--source",
            "sample",
            "--run-dir",
            str(run_dir),
            "--run-id",
            "r",
            "--no-progress",
            *extra,
        ]
    )


@pytest.mark.parametrize(
    "edit", [("{question}", "{questoin}"), ("{question}", "{question"), ("{question}", "{question.__class__}")]
)
def test_bad_template_creates_nothing(tmp_path, capsys, edit) -> None:
    prompt = tmp_path / "p.yaml"
    prompt.write_text(GSM8K_TEMPLATE.read_text().replace(*edit))
    runs = tmp_path / "runs"
    with FakeChatServer() as srv:
        assert _run(srv, runs, "--prompt", str(prompt)) == 2
        err = capsys.readouterr().err
        assert "p.yaml" in err and "field 'user'" in err and "Traceback" not in err
        assert not runs.exists()  # no run dir, no lock, no cache: the retry starts clean
        prompt.write_text(GSM8K_TEMPLATE.read_text())
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
        main(
            [
                "run",
                "gsm8k",
                "--model",
                "openai-compatible:x@http://127.0.0.1:9/v1",
                "--run-dir",
                str(tmp_path / "runs"),
                "--timeout",
                value,
            ]
        )
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


# --- a model that errors on every call: the run is kept, the command says so and exits 2 -------


def _run3(srv, run_dir, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(
        [
            "run",
            "gsm8k",
            "--model",
            f"openai-compatible:fake@{srv.url}",
            "--limit",
            "3",
            "--source",
            "sample",
            "--run-dir",
            str(run_dir),
            "--run-id",
            "r",
            "--no-progress",
            "--max-retries",
            "0",
        ]
    )
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.timeout(120)
def test_every_call_failed_exits_2_keeps_the_run_and_resumes(tmp_path, capsys) -> None:
    from evalcore.models import FaultRates

    with FakeChatServer(rates=FaultRates(persistent=1.0)) as srv:  # HTTP 500 on every call
        status, out, err = _run3(srv, tmp_path, capsys)
        assert status == 2
        assert "accuracy" not in out  # no accuracy printed as if it were a result
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("evalcore: error: ")
        assert "failed for all 3 samples" in err and "nothing was scored" in err
        assert "HTTP 500" in err and "internal error" in err  # the first error's text
        assert str(tmp_path / "r") in err  # the run directory
        assert "--run-id r" in err and "evalcore run gsm8k" in err  # how to resume
        assert "Traceback" not in err
        # nothing lost: the run directory holds the three failed samples and its results
        rows = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
        assert len(rows) == 3 and all(r["error"] for r in rows)
        assert json.loads((tmp_path / "r" / "results.json").read_text())["errors"] == 3
        assert srv.counts["requests"] == 3  # --max-retries 0: one request per sample

        srv.rates = FaultRates()  # the endpoint recovers: the same command asks them again
        status, out, err = _run3(srv, tmp_path, capsys)
    assert status == 0 and err == ""
    assert "samples: 3 (resumed 0, asked 3, from cache 0)  errors: 0" in out
    rows = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and not any(r["error"] for r in rows)


@pytest.mark.timeout(120)
def test_some_calls_failed_warns_in_one_line_exit_0(tmp_path, capsys) -> None:
    import itertools

    with FakeChatServer() as srv:
        plain, attempts = srv.decide, itertools.count()
        srv.decide = lambda body: "server_error" if next(attempts) == 0 else plain(body)
        status, out, err = _run3(srv, tmp_path, capsys)
    assert status == 0
    assert "errors: 1" in out and "accuracy strict:" in out and "n=2" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalcore: warning: ")
    assert "failed for 1 of 3 samples" in err and "HTTP 500" in err and "--run-id r" in err
    rows = (tmp_path / "r" / "samples.jsonl").read_text().splitlines()
    assert len(rows) == 3 and sum(json.loads(r)["error"] for r in rows) == 1


@pytest.mark.timeout(120)
def test_no_failed_call_no_warning(tmp_path, capsys) -> None:
    with FakeChatServer() as srv:
        status, out, err = _run3(srv, tmp_path, capsys)
    assert status == 0 and err == "" and "errors: 0" in out
