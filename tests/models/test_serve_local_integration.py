"""`evalcore serve-local`: the embedded model behind llama-cpp-python's OpenAI server."""

from __future__ import annotations

import json
import urllib.request

import pytest

from evalcore.models import LocalServer
from evalcore.runs import load_run, run_benchmark

pytestmark = pytest.mark.integration
pytest.importorskip("llama_cpp.server")


def test_benchmark_through_the_real_openai_client_against_the_local_server(tmp_path) -> None:
    with LocalServer(log_path=tmp_path / "server.log") as server:
        with urllib.request.urlopen(server.url + "/models", timeout=5) as resp:
            listed = json.load(resp)
        assert resp.status == 200 and listed["data"][0]["id"] == "smollm2"
        assert server.url.startswith("http://127.0.0.1:")
        path = run_benchmark(
            "gsm8k",
            server.spec,
            limit=3,
            source="sample",
            progress=False,
            params={"max_tokens": 128},
            run_dir=tmp_path,
            run_id="served",
            cache=False,
            concurrency=1,
        )
        proc = server.proc
    assert proc.poll() is not None  # stopped
    run = load_run(path)
    res = run.results
    assert res["n_samples"] == 3 and res["errors"] == 0
    assert run.config["model"].startswith("openai-compatible:smollm2@http://127.0.0.1:")
    for s in run.samples:
        usage = s["completion"]["usage"]
        assert s["completion"]["text"] and 0 < usage["completion_tokens"] <= 128
        assert usage["prompt_tokens"] > 20 and s["completion"]["cost_usd"] == 0.0
    assert res["tokens"]["completion"] == sum(s["completion"]["usage"]["completion_tokens"] for s in run.samples)


def test_serve_local_cli_serves_on_loopback_until_stopped() -> None:
    import subprocess
    import sys
    import time

    from evalcore.cli import build_parser
    from evalcore.models._server import free_port

    args = build_parser().parse_args(["serve-local", "--port", "8123"])
    assert args.port == 8123 and args.host == "127.0.0.1"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalcore.cli", "serve-local", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        listed = None
        while time.monotonic() < deadline and listed is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                    listed = json.load(r)
            except OSError:
                assert proc.poll() is None, "server exited"
                time.sleep(0.3)
        assert listed and listed["data"][0]["id"] == "smollm2"
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode()
    assert f"http://127.0.0.1:{port}/v1" in out and "openai-compatible:smollm2@" in out


def test_served_seeded_answers_do_not_depend_on_earlier_requests(tmp_path) -> None:
    """The server process starts every completion from an empty context (``_serve_main``):
    the same seeded request gives the same text whether or not other prompts came before it,
    and whether or not it was just asked (llama-cpp-python would otherwise reuse the cached
    prefix and evaluate the prompt in another batch shape)."""
    from evalcore.models._server import server_command

    assert server_command(1, model_path=tmp_path / "m.gguf")[1:3] == ["-m", "evalcore.models._serve_main"]

    def ask(url: str, prompt: str) -> str:
        body = json.dumps(
            {
                "model": "smollm2",
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0.8,
                "max_tokens": 24,
                "seed": 11,
            }
        ).encode()
        req = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as resp:
            return json.load(resp)["choices"][0]["message"]["content"]

    with LocalServer(log_path=tmp_path / "server.log") as server:
        first = ask(server.url, "Name three colours.")
        again = ask(server.url, "Name three colours.")  # identical prompt: full prefix cached
        ask(server.url, "Name three colours of the sea, briefly.")  # shares a prefix
        after_other = ask(server.url, "Name three colours.")
    assert first and first == again == after_other
