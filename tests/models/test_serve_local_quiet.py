"""`evalcore serve-local` without llama.cpp's loader noise (issue 31 item 10: about 2,100 lines
of loader output at start-up, and per-request timings)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from evalcore.models import LocalServer
from evalcore.models._server import server_command

pytest.importorskip("llama_cpp.server")


def test_server_command_turns_llama_logs_off_by_default(tmp_path) -> None:
    cmd = server_command(1, model_path=tmp_path / "m.gguf")
    assert cmd[cmd.index("--verbose") + 1] == "False"
    loud = server_command(1, model_path=tmp_path / "m.gguf", verbose=True)
    assert loud[loud.index("--verbose") + 1] == "True"


@pytest.mark.integration
def test_the_server_log_holds_no_loader_lines(tmp_path) -> None:
    log = tmp_path / "server.log"
    with LocalServer(log_path=log) as server:
        body = json.dumps(
            {"model": "smollm2", "max_tokens": 8, "messages": [{"role": "user", "content": "Say hi."}]}
        ).encode()
        req = urllib.request.Request(
            server.url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            assert resp.status == 200
    lines = log.read_text(errors="replace").splitlines()
    noisy = [
        line
        for line in lines
        if line.startswith(("llama_", "llm_load", "load_tensors", "print_info", "llama_model_loader", "llama_perf"))
    ]
    assert noisy == [], noisy[:5]
    assert len(lines) < 40, lines[:40]  # uvicorn's start-up and one access line per request


def test_cli_verbose_flag_reaches_the_server(monkeypatch) -> None:
    from evalcore.cli import main
    from evalcore.models import _server

    seen = {}

    def fake_execv(path, cmd):
        seen["cmd"] = cmd
        raise SystemExit(0)

    monkeypatch.setattr(_server, "check_port", lambda port, host: None)
    monkeypatch.setattr(_server.os, "execv", fake_execv)
    for argv, want in (
        (["serve-local", "--port", "8123"], "False"),
        (["serve-local", "--port", "8123", "--verbose"], "True"),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        cmd = seen.pop("cmd")
        assert cmd[cmd.index("--verbose") + 1] == want
