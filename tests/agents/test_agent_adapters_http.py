"""Adapters: load_agent specs, the factory check, and the HTTP adapter against real local servers."""

from __future__ import annotations

import json
import re
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _fakes import CUBE_IMPL, CUBE_SPEC, CUBE_TESTS, ScriptedModel  # noqa: E402

from evalcore.agents import (  # noqa: E402
    Agent,
    AgentEndpointError,
    AgentResponse,
    FactoryAgent,
    HostedAgent,
    HttpAgent,
    StepRecord,
    ToolMatch,
    load_agent,
    serve_agent,
)
from evalcore.agents.reference import ReferenceAgent, make_agent  # noqa: E402
from evalcore.errors import EvalcoreError  # noqa: E402


# ------------------------------------------------------------------ load_agent
def test_reference_spec() -> None:
    a = load_agent("reference", in_process=True, model=None, embedder="tfidf", threshold=0.3)
    assert isinstance(a, ReferenceAgent) and isinstance(a, Agent)
    assert a.process_request("what is 5 factorial").result == 120
    a.close()


def test_reference_spec_is_hosted_in_its_own_interpreter_by_default() -> None:
    import os

    a = load_agent("reference", model=None, embedder="tfidf", threshold=0.3)
    try:
        assert isinstance(a, HostedAgent) and a.pid != os.getpid() and a.threshold == 0.3
        assert a.process_request("what is 5 factorial").result == 120
        names = {r["name"]: r for r in a.registry.tool_records()}
        assert "def factorial" in names["factorial"]["code"] and names["factorial"]["tests"]
    finally:
        a.close()
    assert a._proc.poll() is not None  # the hosting process ended


def _write_module(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


ORACLE = """
from evalcore.agents import AgentResponse

ANSWERS = {"what is 15% of 80": 12.0}

class Oracle:
    registry = None

    def __init__(self, scale=1):
        self.scale = scale
        self.resets = 0

    def process_request(self, query):
        if query in ANSWERS:
            return AgentResponse(success=True, result=ANSWERS[query] * self.scale, response="ok")
        return AgentResponse(success=False, error="unknown")

    def reset(self):
        self.resets += 1

class NoRegistry:
    def process_request(self, query):
        return AgentResponse(success=True, result=1)

    def reset(self):
        pass

def make(scale=1):
    return Oracle(scale)

def make_bare():
    return NoRegistry()

def make_wrong():
    return object()

def make_broken():
    raise RuntimeError("boom")

VALUE = 3
"""


def test_module_function_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_module(tmp_path, "user_agents_mod", ORACLE)
    monkeypatch.syspath_prepend(str(tmp_path))
    a = load_agent("user_agents_mod:make", in_process=True, scale=2)
    assert a.process_request("what is 15% of 80").result == 24.0 and a.registry is None
    a.reset()
    assert a.resets == 1
    b = load_agent(f"{tmp_path / 'user_agents_mod.py'}:make", in_process=True)  # a file path works too
    assert b.process_request("what is 15% of 80").result == 12.0
    bare = load_agent("user_agents_mod:make_bare", in_process=True)
    assert isinstance(bare, FactoryAgent) and bare.registry is None and bare.process_request("x").result == 1
    # by default the factory runs hosted in an interpreter of its own, reached over HTTP
    hosted = load_agent("user_agents_mod:make", scale=2)
    try:
        assert isinstance(hosted, HostedAgent) and hosted.registry is None
        assert hosted.process_request("what is 15% of 80").result == 24.0
        hosted.reset()
    finally:
        hosted.close()
    c = load_agent(f"{tmp_path / 'user_agents_mod.py'}:make")
    try:
        assert c.process_request("what is 15% of 80").result == 12.0
    finally:
        c.close()


@pytest.mark.parametrize(
    "spec, match",
    [
        ("user_agents_mod2:make_wrong", "lacks process_request, reset"),
        ("user_agents_mod2:make_broken", "RuntimeError: boom"),
        ("user_agents_mod2:missing", "no callable 'missing'"),
        ("user_agents_mod2:VALUE", "no callable 'VALUE'"),
        ("no_such_module_xyz:make", "cannot import module"),
        ("justaname", "not 'module:function'"),
        ("", "empty agent spec"),
        ("/nonexistent/file.py:make", "not found"),
        ("ftp://host/agent", "unsupported URL scheme"),
    ],
)
def test_bad_specs_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, match: str) -> None:
    _write_module(tmp_path, "user_agents_mod2", ORACLE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EvalcoreError, match=match):
        load_agent(spec)


def test_agent_module_that_fails_to_import_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "syntax_agent_mod.py"
    bad.write_text("import os\n\ndef make(:\n    pass\n")
    with pytest.raises(EvalcoreError, match="syntax error") as info:
        load_agent(f"{bad}:make", in_process=True)
    assert info.value.path == str(bad) and info.value.line == 3
    with pytest.raises(EvalcoreError, match=r"line 3.*syntax error"):  # hosted: the child's message
        load_agent(f"{bad}:make")
    crash = tmp_path / "crash_agent_mod.py"
    crash.write_text("raise KeyError('config')\n")
    with pytest.raises(EvalcoreError, match="raised KeyError"):
        load_agent(f"{crash}:make")


def test_http_spec_rejects_options_that_do_not_apply() -> None:
    with pytest.raises(EvalcoreError, match=r"\['threshold'\] do not apply to an HTTP agent"):
        load_agent("http://127.0.0.1:9/agent", threshold=0.5)
    assert isinstance(load_agent("http://127.0.0.1:9/agent", timeout_s=1.0), HttpAgent)


# ------------------------------------------------------------------ HTTP adapter, reference agent served
@pytest.fixture
def served() -> Iterator[tuple[ReferenceAgent, Any]]:
    model = ScriptedModel(spec=CUBE_SPEC, tests=CUBE_TESTS, implementation=CUBE_IMPL, args='{"x": 2}')
    agent = make_agent(model, embedder="tfidf", threshold=0.3)
    server = serve_agent(agent)
    yield agent, server
    server.close()
    agent.close()


def test_http_agent_round_trip(served: tuple[ReferenceAgent, Any]) -> None:
    agent, server = served
    remote = load_agent(server.url, timeout_s=10)
    assert isinstance(remote, HttpAgent) and isinstance(remote, Agent)
    for q in [
        "compute 5 factorial, then take 20% of the result",
        "reverse the string 'abc'",
        "convert the temperature",
        "factorial of -5",
        "",
    ]:
        got = remote.process_request(q)
        want = agent.process_request(q)
        assert got == want
    got = remote.process_request("compute 5 factorial, then take 20% of the result")
    assert got.result == 24.0 and isinstance(got.steps[1], StepRecord) and got.steps[1].depends_on == [0]
    assert remote.registry.list_tools() == agent.registry.list_tools()
    hits = remote.registry.search("compute 15 percent of 80", k=3, threshold=0.0)
    assert hits == agent.registry.search("compute 15 percent of 80", k=3, threshold=0.0)
    assert all(isinstance(h, ToolMatch) for h in hits) and hits[0].name == "percentage"
    # Synthesis over HTTP, then reset removes the learned tool.
    r = remote.process_request("cube the number 2")
    assert r.success and r.synthesized and r.result == 8
    assert "cube" in remote.registry.list_tools()
    info = remote.registry.describe("cube")
    assert info["code"] == agent.registry.describe("cube")["code"] and "def cube" in info["code"]
    assert info["tests"] and info["origin"] == "synthesized"
    with pytest.raises(KeyError):
        remote.registry.describe("no_such_tool")
    remote.reset()
    assert "cube" not in remote.registry.list_tools()
    remote.close()


def test_http_agent_under_concurrent_load(served: tuple[ReferenceAgent, Any]) -> None:
    _, server = served
    remote = HttpAgent(server.url, timeout_s=10)
    results: dict[int, Any] = {}

    def work(i: int) -> None:
        results[i] = remote.process_request(f"what is {i} factorial").result

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    import math

    assert results == {i: math.factorial(i) for i in range(8)}
    remote.close()


# ------------------------------------------------------------------ HTTP error mapping
class _Misbehaving(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    mode = "ok"

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.rstrip("/")
        mode = type(self).mode
        if path.endswith("/reset"):
            self._reply(500 if mode == "reset500" else 200, b"{}")
        elif mode == "500":
            self._reply(500, b"internal trouble")
        elif mode == "400":
            self._reply(400, b"query rejected: unsupported request")
        elif mode == "html":
            self._reply(200, b"<html>hi</html>", "text/html")
        elif mode == "nosuccess":
            self._reply(200, json.dumps({"result": 12}).encode())
        elif mode == "stringsuccess":
            self._reply(200, json.dumps({"success": "false", "result": 12}).encode())
        elif mode == "slow":
            time.sleep(1.5)
            self._reply(200, json.dumps({"success": True, "result": 1}).encode())
        else:
            self._reply(
                200,
                json.dumps(
                    {
                        "success": True,
                        "result": 12.0,
                        "extra": "ignored",
                        "steps": [{"tool": "t", "result": 12.0, "ms": 3}],
                    }
                ).encode(),
            )

    def do_GET(self) -> None:
        mode = type(self).mode
        if mode == "badsearch":
            self._reply(200, json.dumps({"matches": [{"nom": "x"}]}).encode())
        else:
            self._reply(200, json.dumps({"matches": [{"name": "a", "score": 0.9}]}).encode())


@pytest.fixture
def misbehaving() -> Iterator[tuple[type[_Misbehaving], str]]:
    handler = type("H", (_Misbehaving,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_address[1]}/api/agent"
    server.shutdown()
    server.server_close()


def test_http_error_mapping(misbehaving: tuple[type[_Misbehaving], str]) -> None:
    handler, url = misbehaving
    agent = HttpAgent(url, timeout_s=0.5)
    assert agent.reset_url.endswith("/api/reset") and agent.registry.search_url.endswith("/api/search")
    ok = agent.process_request("q")
    assert ok.success and ok.result == 12.0 and ok.steps[0].tool == "t"
    # the endpoint refusing the request is an ordinary failed response ...
    handler.mode = "400"
    r = agent.process_request("q")
    assert isinstance(r, AgentResponse) and not r.success
    assert r.error == "agent endpoint answered HTTP 400: query rejected: unsupported request"
    # ... a crash or a protocol break raises, so the evaluator records a critical failure
    expected = {
        "500": "HTTP 500: internal trouble",
        "html": "non-JSON",
        "nosuccess": "without 'success'",
        "stringsuccess": "'success': 'false', not a JSON boolean",
        "slow": "timed out after 0.5s",
    }
    for mode, text in expected.items():
        handler.mode = mode
        with pytest.raises(AgentEndpointError, match=re.escape(text)):
            agent.process_request("q")
    handler.mode = "reset500"
    with pytest.raises(EvalcoreError, match="reset answered HTTP 500"):
        agent.reset()
    handler.mode = "badsearch"
    with pytest.raises(EvalcoreError, match="malformed match"):
        agent.registry.search("q")
    handler.mode = "ok"
    assert agent.registry.search("q") == [ToolMatch("a", 0.9)]
    agent.close()


def test_http_unreachable_endpoint() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = HttpAgent(f"http://127.0.0.1:{port}", timeout_s=2)
    assert agent.url.endswith("/") and agent.reset_url == f"http://127.0.0.1:{port}/reset"
    with pytest.raises(AgentEndpointError, match="unreachable"):
        agent.process_request("what is 5 factorial")
    with pytest.raises(EvalcoreError, match="reset failed"):
        agent.reset()
    with pytest.raises(EvalcoreError):
        HttpAgent("localhost:8000")


class _RaisingAgent:
    registry = None

    def reset(self) -> None:
        pass

    def process_request(self, query: str) -> AgentResponse:
        if "-5" in query:
            raise ValueError("negative input crashed the agent")
        return AgentResponse(success=True, result=120)


def test_agent_raising_behind_http_is_a_critical_failure() -> None:
    from evalcore.agent_eval import AgentCase, AgentEvalConfig, AgentEvalData, evaluate_robustness

    cases = [
        AgentCase(
            id="e",
            query="factorial of -5",
            complexity="edge",
            kind="invalid_input",
            categories=["robustness"],
            expected_behavior="error",
        ),
        AgentCase(
            id="b", query="factorial of 5", complexity="edge", kind="factorial", categories=["robustness"], expected=120
        ),
    ]
    with serve_agent(_RaisingAgent()) as server:  # type: ignore[arg-type]
        remote = HttpAgent(server.url, timeout_s=10, has_registry=False)
        res = evaluate_robustness(remote, AgentEvalData(cases), AgentEvalConfig(seed=0))
        remote.close()
    t = {x.name: x for x in res.tests}
    # (b's answer is right; its score is scaled by the robustness floor of the failed error kind)
    assert t["b"].details["result"] == 120 and t["b"].details["success"] and not t["b"].critical
    # the server's HTTP 500 must not pass for a clear error message
    assert t["e"].score == 0.0 and t["e"].critical
    assert "AgentEndpointError" in t["e"].error and "negative input crashed the agent" in t["e"].error


def test_performance_over_http_leaves_out_the_memory_test() -> None:
    from evalcore.agent_eval import AgentCase, AgentEvalConfig, AgentEvalData, evaluate_performance

    cases = [
        AgentCase(
            id="p",
            query="factorial of 5",
            complexity="simple",
            kind="factorial",
            categories=["performance"],
            expected=120,
        )
    ]
    with serve_agent(_RaisingAgent()) as server:  # type: ignore[arg-type]
        remote = HttpAgent(server.url, timeout_s=10, has_registry=False)
        res = evaluate_performance(
            remote, AgentEvalData(cases), AgentEvalConfig(seed=0, timing_repetitions=2, load_requests=4, workers=2)
        )
        local = evaluate_performance(
            _RaisingAgent(),
            AgentEvalData(cases),
            AgentEvalConfig(seed=0, timing_repetitions=2, memory_requests=2, load_requests=4, workers=2),
        )
        remote.close()
    assert [t.name for t in res.tests] == ["latency:p", "throughput"]
    assert res.metrics["memory_growth_mb"] is None and any("memory test not run" in n for n in res.notes)
    assert res.metrics["success_rate_under_load"] == 1.0
    assert [t.name for t in local.tests] == ["latency:p", "memory", "throughput"]
