"""Chaos: a misbehaving endpoint, signals and a power cut, met through the real `evalcore run`.

Each case ends as an operator needs: exit 2 (130/143 for signals) with one line on stderr that
says what failed and where (the run directory, the endpoint), no traceback, every line of
samples.jsonl a whole record, and a rerun with the same --run-id that asks the endpoint only for
what is missing (counted per prompt by the server).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from _chaos import EVALCORE, ChaosServer, capital_of, cli, one_line, records, write_bench

pytestmark = pytest.mark.slow  # every case runs the CLI two or three times (about 5 s each)

N = 5  # items of the benchmark


def _run(srv: ChaosServer, root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    bench = root / "caps.yaml"
    spec = f"openai-compatible:fake@{srv.url}"
    args = ("run", str(bench), "--model", spec, "--run-dir", str(root / "runs"), "--run-id", "r", "--no-progress")
    return cli(*args, "--timeout", "2", "--max-retries", "1", "--no-cache", *extra, cwd=root)


def _asked(srv: ChaosServer) -> dict[str, int]:
    return dict(srv.asked)


def _delta(before: dict[str, int], srv: ChaosServer) -> dict[str, int]:
    return {p: n - before.get(p, 0) for p, n in srv.asked.items() if n - before.get(p, 0)}


# (the fault every attempt gets, a text the one line must hold)
FAULTS = [
    ("server_error", "HTTP 500"),
    ("stall", "timeout"),
    ("no_message", "choice has no message"),
    ("no_content", "unreadable response"),
    ("malformed", "unreadable response"),
    ("drop", "not completed"),
    ("rate_limit", "429"),
]


@pytest.mark.parametrize(("fault", "said"), FAULTS, ids=[f for f, _ in FAULTS])
def test_an_endpoint_fault_is_one_line_and_a_resume_asks_only_the_failed_items(chaos_server, tmp_path, fault, said):
    srv = chaos_server
    write_bench(tmp_path, N)
    run = tmp_path / "runs" / "r"

    srv.plan = lambda rank, attempt: fault  # every call fails
    first = _run(srv, tmp_path)
    assert first.returncode == 2, first.stderr
    line = one_line(first.stderr, "evalcore: error: ", str(run), f"failed for all {N} samples", said, srv.url)
    assert "--run-id r" in line  # says how to ask them again
    kept = records(run)
    assert len(kept) == N and all(r["error"] for r in kept)  # recorded as errors, never as answers
    assert all(n == 2 for n in srv.asked.values()) and srv.prompts() == N  # one retry each, as asked

    srv.plan = lambda rank, attempt: fault if rank < 2 else "ok"  # two items still fail
    before = _asked(srv)
    second = _run(srv, tmp_path)
    assert second.returncode == 0, second.stderr
    one_line(second.stderr, "evalcore: warning: ", f"failed for 2 of {N} samples", said)
    assert sorted(_delta(before, srv).values()) == [1, 1, 1, 2, 2]  # every failed item asked again

    srv.plan = lambda rank, attempt: "ok"  # the endpoint heals
    before = _asked(srv)
    third = _run(srv, tmp_path)
    assert third.returncode == 0 and third.stderr == "", third.stderr
    assert sorted(_delta(before, srv).values()) == [1, 1]  # only the two still missing
    final = records(run)
    assert sorted(r["item_id"] for r in final if not r["error"]) == [f"caps/{i}" for i in range(N)]
    results = json.loads((run / "results.json").read_text())
    assert results["n_samples"] == N and results["errors"] == 0 and results["accuracy_strict"]["mean"] == 1.0


def test_429_with_retry_after_is_waited_out_and_every_item_answered(chaos_server, tmp_path):
    srv = chaos_server
    write_bench(tmp_path, N)
    srv.plan = lambda rank, attempt: "rate_limit" if attempt < 2 else "ok"
    done = _run(srv, tmp_path, "--max-retries", "3")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert sorted(srv.asked.values()) == [3] * N  # two 429s, then the answer; no item asked more
    results = json.loads((tmp_path / "runs" / "r" / "results.json").read_text())
    assert results["errors"] == 0 and results["retries"] == 2 * N and results["rate"]["n_429"] == 2 * N
    assert len(records(tmp_path / "runs" / "r")) == N


def test_a_power_cut_tears_the_last_line_and_the_resume_asks_only_that_item(chaos_server, tmp_path):
    srv = chaos_server
    write_bench(tmp_path, N)
    run = tmp_path / "runs" / "r"
    assert _run(srv, tmp_path).returncode == 0
    samples = run / "samples.jsonl"
    data = samples.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn = json.loads(data[last_start:])
    samples.write_bytes(data[: last_start + (len(data) - last_start) // 2])  # half a record, no newline
    (run / "results.json").unlink()  # the power went before the summary was written
    before = _asked(srv)
    again = _run(srv, tmp_path)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert _delta(before, srv) == {torn["request"]["messages"][-1]["content"]: 1}
    final = records(run)  # the torn half is gone, not kept beside the new record
    assert sorted(r["item_id"] for r in final) == [f"caps/{i}" for i in range(N)]
    assert json.loads((run / "results.json").read_text())["n_samples"] == N


HOW = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_run_keeping_every_answer_and_the_resume_asks_the_rest(tmp_path, sig, status):
    n = 20
    write_bench(tmp_path, n)
    run = tmp_path / "runs" / "r"
    with ChaosServer(responder=capital_of, latency_s=0.25) as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        args = ["run", str(tmp_path / "caps.yaml"), "--model", spec, "--run-dir", str(tmp_path / "runs"),
                "--run-id", "r", "--no-progress", "--no-cache", "--concurrency", "1"]  # fmt: skip
        proc = subprocess.Popen(
            [*EVALCORE, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while not (run / "samples.jsonl").exists() or len((run / "samples.jsonl").read_bytes().splitlines()) < 3:
                assert proc.poll() is None and time.monotonic() < deadline, "the run did not record 3 samples"
                time.sleep(0.05)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == status, err
        kept = records(run)
        assert 3 <= len(kept) < n and not any(r["error"] for r in kept)
        assert json.loads((run / "results.json").read_text())["complete"] is False
        # what was saved where, and the command that resumes it: a line each, nothing else
        said, resume = [line for line in err.splitlines() if line]
        assert said == f"evalcore: {HOW[sig]}: {len(kept)} of {n} samples saved in {run}"
        assert resume.startswith("resume with: evalcore run ") and resume.endswith("--run-id r") and out == ""

        recorded = {r["request"]["messages"][-1]["content"] for r in kept}
        before = _asked(srv)
        again = cli(*args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        asked = _delta(before, srv)
        assert not recorded & set(asked) and set(asked.values()) == {1} and len(asked) == n - len(kept)
    assert len(records(run)) == n
