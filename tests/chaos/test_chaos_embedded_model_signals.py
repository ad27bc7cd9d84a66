"""Chaos: a supervisor's SIGTERM while the embedded model computes. A call inside llama.cpp cannot
be stopped, so the run abandons it and leaves at once; the status must still say SIGTERM (143), as
it does when no call is under way, and the resume asks only what was not saved."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from _chaos import EVALCORE, records

HOW = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}


@pytest.mark.integration
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_embedded_model_computes_exits_with_the_signals_status(tmp_path, sig, status):
    run = tmp_path / "runs" / "local"
    args = ["run", "gsm8k", "--model", "local:smollm2", "--limit", "4", "--max-tokens", "24", "--concurrency", "2",
            "--source", "sample", "--no-progress", "--no-cache", "--run-dir", str(tmp_path / "runs"),
            "--run-id", "local"]  # fmt: skip
    proc = subprocess.Popen([*EVALCORE, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        samples = run / "samples.jsonl"
        while not samples.exists() or samples.read_bytes().count(b"\n") < 1:  # then the next call is under way
            assert proc.poll() is None and time.monotonic() < deadline, "no sample within 600 s"
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    kept = records(run)
    assert "Traceback" not in err and f"evalcore: {HOW[sig]}: {len(kept)} of 4 samples saved in {run}" in err
    assert 1 <= len(kept) < 4 and json.loads((run / "results.json").read_text())["complete"] is False
