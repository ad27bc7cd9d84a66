"""Runs against the fault-injecting server, and a real process killed with SIGKILL mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from evalcore.benchmarks import load
from evalcore.models import FakeChatServer, FaultRates, RetryPolicy, from_spec
from evalcore.runs import load_run, run_benchmark


def _answers() -> tuple:
    items = load("gsm8k", source="sample")
    table = {it.fields["question"]: f"Working.\n#### {it.reference}" for it in items}

    def responder(messages) -> str:
        q = messages[-1]["content"]
        return next((a for k, a in table.items() if k in q), "no idea")

    return responder


def test_run_completes_through_faults_and_counts_them(tmp_path) -> None:
    rates = FaultRates(rate_limit=0.15, server_error=0.1, stall=0.1, malformed=0.1, persistent=0.1)
    retry = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05)
    with FakeChatServer(rates=rates, seed=7, responder=_answers(), retry_after=0.02, stall_s=2.0) as srv:
        model = from_spec(f"openai-compatible:fake@{srv.url}", timeout=1.2, retry=retry)
        path = run_benchmark(
            "gsm8k",
            model,
            limit=30,
            source="sample",
            progress=False,
            run_dir=tmp_path,
            run_id="faults",
            cache=False,
            concurrency=8,
        )
        counts = dict(srv.counts)
        log = list(srv.log)
    run = load_run(path)
    res = run.results
    assert res["n_samples"] == 30 and res["complete"]
    # every transient fault was retried: each request beyond a sample's first is a retry
    assert res["retries"] == counts["requests"] - 30
    assert counts["rate_limit"] and counts["server_error"] and counts["stall"] and counts["malformed"]
    # each sample's attempts as the server saw them (keyed by the prompt it was sent)
    attempts: dict[str, list[str]] = {}
    for content, outcome in log:
        attempts.setdefault(content, []).append(outcome)
    assert len(attempts) == 30
    errors = [s for s in run.samples if s["error"]]
    assert res["errors"] == len(errors) > 0
    for s in run.samples:
        seen = attempts[s["request"]["messages"][-1]["content"]]
        assert s["completion"]["retries"] == len(seen) - 1
        if s["error"]:  # every attempt failed: all retries spent, recorded as an error
            assert len(seen) == retry.max_retries + 1 and "ok" not in seen
        else:
            assert seen[-1] == "ok" and seen.count("ok") == 1
    persistent = sum(1 for seen in attempts.values() if seen[0] == "persistent")
    assert persistent and res["error_types"].get("HTTP500", 0) >= persistent
    assert res["n_scored"] == 30 - len(errors)
    assert res["accuracy_flexible"]["mean"] == 1.0  # the fake server answers right when it answers
    assert res["accuracy_flexible"]["n"] == 30 - len(errors)


def test_kill_9_mid_run_then_resume_has_no_duplicates(tmp_path) -> None:
    with FakeChatServer(responder=_answers(), latency_s=0.08) as srv:
        script = textwrap.dedent(f"""
            from evalcore.runs import run_benchmark
            run_benchmark("gsm8k", "openai-compatible:fake@{srv.url}", limit=40, source="sample",
                          progress=False, run_dir={str(tmp_path)!r}, run_id="k", cache=False,
                          concurrency=2)
        """)
        proc = subprocess.Popen([sys.executable, "-c", script])
        samples = tmp_path / "k" / "samples.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if samples.exists() and samples.read_bytes().count(b"\n") >= 8:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        before = samples.read_bytes().count(b"\n")
        assert 8 <= before < 40
        assert not (tmp_path / "k" / "results.json").exists()
        asked_before = srv.counts["requests"]
        run_benchmark(
            "gsm8k",
            f"openai-compatible:fake@{srv.url}",
            limit=40,
            source="sample",
            progress=False,
            run_dir=tmp_path,
            run_id="k",
            cache=False,
            concurrency=2,
        )
        asked = srv.counts["requests"]
    lines = samples.read_text().splitlines()
    recs = [json.loads(x) for x in lines]  # every line is whole JSON
    keys = [(r["item_id"], r["epoch"]) for r in recs]
    assert len(keys) == len(set(keys)) == 40
    # the resumed run asked only for what was not recorded; the kill lost at most the in-flight calls
    assert asked - asked_before == 40 - before
    assert asked_before - before <= 2 + 1
    res = load_run(tmp_path / "k").results
    assert res["n_samples"] == 40 and res["accuracy_flexible"]["mean"] == 1.0
