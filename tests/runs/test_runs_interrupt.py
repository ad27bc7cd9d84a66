"""Ctrl-C on ``evalcore run`` (issue 15): the run stops without waiting for a model call stuck in
a worker thread, keeps what finished, says how to resume (exit 130), and resumes from there."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalcore.runs import load_run

# A model whose calls run in a worker thread like the embedded one; from the second call on a
# call blocks for two minutes (as a llama.cpp call cannot be cancelled) unless EVALCORE_TEST_FAST.
STUCK_CLI = textwrap.dedent("""
    import asyncio, os, sys, time
    import evalcore.models
    from evalcore.benchmarks import load
    from evalcore.models import Completion, Usage

    ITEMS = {it.fields["question"]: it for it in load("gsm8k", source="sample")}

    class Stuck:
        name = "stuck:test"
        endpoint = "memory"
        calls = 0

        def complete(self, messages, params):
            Stuck.calls += 1
            if Stuck.calls > 1 and not os.environ.get("EVALCORE_TEST_FAST"):
                time.sleep(120)
            q = messages[-1]["content"]
            it = next(it for k, it in ITEMS.items() if k in q)
            return Completion(text=f"#### {it.reference}", usage=Usage(3, 2), latency_s=0.01, model="stuck")

        async def acomplete(self, messages, params):
            return await asyncio.to_thread(self.complete, messages, params)

    evalcore.models.from_spec = lambda spec, **kw: Stuck()
    from evalcore.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _default_sigint() -> None:
    # a child of a shell's background job inherits SIGINT ignored; a terminal's Ctrl-C is not
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after_first_sample(
    cmd: list[str], samples: Path, wait_s: float, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint, env=env
    )
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and proc.poll() is None:
            if samples.exists() and samples.read_bytes().count(b"\n") >= 1:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        assert samples.exists() and samples.read_bytes().count(b"\n") >= 1, "no sample was recorded"
        time.sleep(0.3)  # the next call is under way
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a stuck call lasts 120 s: waiting for it fails here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def _resume_line(err: str) -> list[str]:
    lines = [line for line in err.splitlines() if line.startswith("resume with: ")]
    assert len(lines) == 1, err
    return shlex.split(lines[0][len("resume with: ") :])


def test_ctrl_c_does_not_wait_for_a_stuck_call_saves_and_says_how_to_resume(tmp_path: Path) -> None:
    script = tmp_path / "stuck_cli.py"
    script.write_text(STUCK_CLI)
    args = [
        "run",
        "gsm8k",
        "--model",
        "stuck:x",
        "--limit",
        "3",
        "--concurrency",
        "1",
        "--source",
        "sample",
        "--no-progress",
        "--run-dir",
        str(tmp_path / "runs"),
        "--run-id",
        "i",
    ]
    run_path = tmp_path / "runs" / "i"
    rc, out, err = _interrupt_after_first_sample(
        [sys.executable, str(script), *args], run_path / "samples.jsonl", wait_s=120
    )
    assert rc == 130, err
    assert f"evalcore: interrupted: 1 of 3 samples saved in {run_path}" in err
    resume = _resume_line(err)
    assert resume == [
        "evalcore",
        "run",
        "gsm8k",
        "--model",
        "stuck:x",
        "--limit",
        "3",
        "--concurrency",
        "1",
        "--run-dir",
        str(tmp_path / "runs"),
        "--source",
        "sample",
        "--no-progress",
        "--run-id",
        "i",
    ]
    assert "Traceback" not in err
    run = load_run(run_path)
    assert len(run.samples) == 1 and not run.samples[0]["error"]
    assert run.samples[0]["scores"]["score"] == 1.0
    assert run.results["complete"] is False
    assert run.results["invocation"] == {"resumed": 0, "asked": 1, "from_cache": 0, "interrupted": True}
    assert run.results["n_samples"] == 1
    # the printed command resumes the run: the saved sample is kept, the other two are asked
    env = {**os.environ, "EVALCORE_TEST_FAST": "1"}
    proc = subprocess.run(
        [sys.executable, str(script), *resume[1:]], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "samples: 3 (resumed 1, asked 2, from cache 0)" in proc.stdout
    run = load_run(run_path)
    assert run.results["complete"] is True and len(run.samples) == 3
    assert run.results["invocation"]["interrupted"] is False


@pytest.mark.integration
def test_ctrl_c_on_the_embedded_model(tmp_path: Path) -> None:
    """A real ``evalcore run`` on local:smollm2, interrupted while llama.cpp computes."""
    exe = Path(sys.executable).parent / "evalcore"
    args = [
        "run",
        "gsm8k",
        "--model",
        "local:smollm2",
        "--limit",
        "4",
        "--max-tokens",
        "24",
        "--concurrency",
        "2",
        "--source",
        "sample",
        "--no-progress",
        "--no-cache",
        "--run-dir",
        str(tmp_path / "runs"),
        "--run-id",
        "local",
    ]
    run_path = tmp_path / "runs" / "local"
    rc, out, err = _interrupt_after_first_sample([str(exe), *args], run_path / "samples.jsonl", wait_s=600)
    assert rc == 130, err
    run = load_run(run_path)
    saved = [s for s in run.samples if not s["error"]]
    assert 1 <= len(saved) < 4
    assert all(s["completion"]["text"] and s["completion"]["usage"]["completion_tokens"] > 0 for s in saved)
    assert f"evalcore: interrupted: {len(saved)} of 4 samples saved in {run_path}" in err
    assert _resume_line(err)[-2:] == ["--run-id", "local"]
    assert "Traceback" not in err and "Segmentation" not in err
    assert run.results["complete"] is False and run.results["invocation"]["interrupted"] is True
    assert json.loads((run_path / "results.json").read_text())["n_samples"] == len(saved)
    # the printed command resumes it: the saved samples are kept, only the rest is asked
    resume = _resume_line(err)
    proc = subprocess.run([str(exe), *resume[1:]], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"samples: 4 (resumed {len(saved)}, asked {4 - len(saved)}, from cache 0)" in proc.stdout
    assert load_run(run_path).results["complete"] is True


JUPYTER_LIKE = textwrap.dedent("""
    import asyncio, json, os, signal, sys, threading, time
    from evalcore.benchmarks import load
    from evalcore.models import Completion, Usage
    from evalcore.runs import RunInterrupted, run_benchmark

    ITEMS = {it.fields["question"]: it for it in load("gsm8k", source="sample")}
    run_dir, samples = sys.argv[1], sys.argv[2]

    class Stuck:
        name = "stuck:test"
        endpoint = "memory"
        calls = 0

        def complete(self, messages, params):
            Stuck.calls += 1
            if Stuck.calls == 2:
                time.sleep(3)  # under way when the interrupt comes
            it = next(it for k, it in ITEMS.items() if k in messages[-1]["content"])
            return Completion(text=f"#### {it.reference}", usage=Usage(3, 2), latency_s=0.01, model="stuck")

        async def acomplete(self, messages, params):
            return await asyncio.to_thread(self.complete, messages, params)

    def interrupt_after_first_sample():
        while not (os.path.exists(samples) and open(samples, "rb").read().count(b"\\n") >= 1):
            time.sleep(0.05)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    async def cell():  # a notebook cell: blocking code while the kernel's loop runs
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as ipykernel: KeyboardInterrupt
        threading.Thread(target=interrupt_after_first_sample, daemon=True).start()
        try:
            run_benchmark("gsm8k", Stuck(), limit=3, concurrency=1, source="sample", progress=False,
                          run_dir=run_dir, run_id="j", cache=False)
        except RunInterrupted as stop:
            time.sleep(5)  # a run left going on the background loop would ask the third item now
            print(json.dumps({"saved": stop.saved, "wanted": stop.wanted, "run_id": stop.run_id,
                              "calls": Stuck.calls}))
            sys.stdout.flush()
            os._exit(0)
        print("not interrupted")

    asyncio.run(cell())
""")


def test_an_interrupt_inside_a_running_loop_cancels_the_run_and_saves(tmp_path: Path) -> None:
    """As in Jupyter (a loop runs, the interrupt is a KeyboardInterrupt in the waiting thread):
    the run on the background loop is cancelled, not left running, and what finished is saved."""
    script = tmp_path / "jupyter_like.py"
    script.write_text(JUPYTER_LIKE)
    run_path = tmp_path / "runs" / "j"
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "runs"), str(run_path / "samples.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_default_sigint,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"saved": 1, "wanted": 3, "run_id": "j", "calls": 2}
    run = load_run(run_path)
    assert len(run.samples) == 1 and run.results["complete"] is False
    assert (run_path / "samples.jsonl").read_bytes().count(b"\n") == 1
    assert run.results["invocation"]["interrupted"] is True
