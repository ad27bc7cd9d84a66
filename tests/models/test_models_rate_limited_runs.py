"""Runs against the rate-limited fake server: --rpm/--tpm, results["rate"], a kill during a back-off."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.models import FakeChatServer
from evalcore.models._fakeserver import RateLimits


def _answers():
    items = load("gsm8k", source="sample")
    table = {it.fields["question"]: f"Working.\n#### {it.reference}" for it in items}

    def responder(messages) -> str:
        q = messages[-1]["content"]
        return next((a for k, a in table.items() if k in q), "no idea")

    return responder


def _argv(url: str, run_dir: Path, *extra: str) -> list[str]:
    return [
        "run",
        "gsm8k",
        "--model",
        f"openai-compatible:fake@{url}",
        "--limit",
        "12",
        "--source",
        "sample",
        "--run-dir",
        str(run_dir),
        "--run-id",
        "r",
        "--no-progress",
        "--no-cache",
        "--concurrency",
        "4",
        "--max-retries",
        "30",
        *extra,
    ]


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (["--rpm", "0"], "--rpm"),
        (["--rpm", "-5"], "--rpm"),
        (["--tpm", "0"], "--tpm"),
        (["--tpm", "-1"], "--tpm"),
        (["--rpm", "nan"], "--rpm"),
    ],
)
def test_bad_rate_settings_get_one_line_and_exit_2(tmp_path, capsys, flags, field) -> None:
    with FakeChatServer() as srv:
        code = main(_argv(srv.url, tmp_path, *flags))
        requests = srv.counts["requests"]
    err = capsys.readouterr().err.strip()
    assert code == 2 and requests == 0 and not (tmp_path / "r").exists()
    assert len(err.splitlines()) == 1 and field in err and "> 0" in err


def test_a_zero_rpm_in_the_spec_gets_one_line_and_exit_2(tmp_path, capsys) -> None:
    argv = _argv("URL", tmp_path)
    argv[3] = "openai-compatible:fake@http://127.0.0.1:9/v1?rpm=0"
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "requests_per_minute" in err


def test_kill_during_a_back_off_then_resume_paced(tmp_path) -> None:
    # five requests per 2.5 s: an unpaced client with 4 in flight meets 429s and backs off
    with FakeChatServer(responder=_answers(), limits=RateLimits(rpm=120, window_s=2.5)) as srv:
        script = f"import sys; from evalcore.cli import main; sys.exit(main({_argv(srv.url, tmp_path)!r}))"
        proc = subprocess.Popen([sys.executable, "-c", script])
        samples = tmp_path / "r" / "samples.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if srv.counts["limited"] >= 2 and samples.exists() and samples.read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # in the middle of a back-off: 429s seen, calls waiting
        proc.wait()
        before = samples.read_bytes().count(b"\n")
        limited_before = srv.counts["limited"]
        assert proc.returncode == -signal.SIGKILL and 2 <= before < 12 and limited_before >= 2
        time.sleep(2.6)  # the killed process's requests leave the server's window
        assert main(_argv(srv.url, tmp_path, "--rpm", "120")) == 0
        limited_after = srv.counts["limited"] - limited_before
        ok = srv.counts["ok"]
    recs = [json.loads(x) for x in samples.read_text().splitlines()]
    keys = [(r["item_id"], r["epoch"]) for r in recs]
    assert len(keys) == len(set(keys)) == 12 and not any(r["error"] for r in recs)  # nothing lost, no duplicate
    assert ok >= 12 and ok - before <= 12
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["complete"] and res["accuracy_flexible"]["mean"] == 1.0
    rate = res["rate"]
    assert rate["rpm"] == 120.0 and rate["concurrency_max"] == 4
    assert rate["n_429"] == limited_after <= 1  # paced: at most one 429 after the resume
    assert set(rate) >= {"tpm", "concurrency_final", "concurrency_min", "waits_s", "n_429"}
