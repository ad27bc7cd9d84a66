"""The agent is contained in time, memory and lifetime (issue 30, item 3).

* A hosted agent never runs as PID 1 of its namespace: evalcore's own init is, and when the
  evaluation ends nothing of the agent is alive a second later — also processes that cleared
  their parent-death signal, started a session of their own and ignore SIGTERM.
* Every interaction with an agent has an overall deadline: a registry listing (or a reply) that
  trickles one byte at a time is cut off at the deadline.
* Replies are capped after decompression (a small gzip body must not become gigabytes).
* The agent's registered tools have a total time budget per category.
"""

from __future__ import annotations

import gzip
import os
import socket
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from _processes import alive as _alive
from evalcore.agents import AgentEndpointError, HostedAgent, HttpAgent
from evalcore.errors import EvalcoreError

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process containment")

# A factory agent that does all it can to outlive the evaluation: it clears its parent-death
# signal, leaves its session, ignores SIGTERM, tries to kill its parent (the init), and starts a
# double-forked daemon that does the same and sleeps.
ESCAPER = textwrap.dedent("""
    import ctypes, os, signal, subprocess, sys

    from evalcore.agents._protocol import AgentResponse

    DAEMON = "\\n".join([
        "import ctypes, os, signal, sys, time",
        "ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0",
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)",
        "if os.fork():",
        "    os._exit(0)",
        "os.setsid()",
        "time.sleep(300)  # TOKEN daemon",
    ])


    class Escaper:
        registry = None

        def __init__(self, token, kill_parent):
            libc = ctypes.CDLL(None)
            libc.prctl(1, 0, 0, 0, 0)  # clear the parent-death signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            try:
                os.setsid()
            except OSError:
                pass
            subprocess.Popen([sys.executable, "-c", DAEMON.replace("TOKEN", token)], start_new_session=True).wait()
            self.killed_parent = None
            try:
                if not kill_parent:
                    raise PermissionError("not tried")
                os.kill(os.getppid(), signal.SIGKILL)
                self.killed_parent = "sent"
            except OSError as exc:
                self.killed_parent = type(exc).__name__

        def reset(self):
            pass

        def process_request(self, query):
            return AgentResponse(success=True, result={"pid": os.getpid(), "ppid": os.getppid(),
                                                       "killed_parent": self.killed_parent})


    def make(token, kill_parent=True):
        return Escaper(token, kill_parent)
""")


@linux_only
@pytest.mark.parametrize("isolation", ["full", "weak"])
def test_nothing_of_the_agent_is_alive_one_second_after_the_evaluation(tmp_path, monkeypatch, isolation) -> None:
    if isolation == "weak":
        monkeypatch.setenv("EVALCORE_AGENT_HOST_ISOLATION", "weak")
    path = tmp_path / "escaper_agent.py"
    path.write_text(ESCAPER)
    token = uuid.uuid4().hex
    # (without namespaces the init is an ordinary process of the agent's user: an agent that
    # kills it escapes, the reason "full" isolation uses a PID namespace; see docs/agents.md)
    agent = HostedAgent(f"{path}:make", {"token": token, "kill_parent": isolation == "full"}, timeout_s=10)
    try:
        assert agent.isolation == isolation, agent.isolation_notes
        assert any("evalcore's own init" in n for n in agent.isolation_notes)
        seen = agent.process_request("who").result
        deadline = time.monotonic() + 5
        while not _alive(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_alive(token)) == 1  # the daemon runs, in a session of its own, while the agent does
        if isolation == "full":
            assert seen["pid"] != 1 and seen["ppid"] == 1  # the agent is not PID 1: evalcore's init is
            assert seen["killed_parent"] == "sent"
            # (the kernel drops the agent's SIGKILL to its namespace's init: it still serves)
            assert agent.process_request("again").result["ppid"] == 1
    finally:
        agent.close()
    time.sleep(1.0)
    left = _alive(token)
    for p in left:  # (clean up before asserting)
        os.kill(p, 9)
    assert not left, "a process of the agent outlived the evaluation by a second"


# ------------------------------------------------------------------------------ deadlines
def _trickle_server(
    head: bytes, body_byte: bytes, every_s: float, header_trickle: bool = False
) -> tuple[str, threading.Event]:
    """A raw HTTP server that answers every request slowly: the head at once (or one byte per
    ``every_s``), then one body byte per ``every_s``, for ever."""
    stop = threading.Event()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)

    def serve(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            if header_trickle:
                for b in head:
                    if stop.is_set():
                        return
                    conn.sendall(bytes([b]))
                    time.sleep(every_s)
            else:
                conn.sendall(head)
            while not stop.is_set():
                conn.sendall(body_byte)
                time.sleep(every_s)
        except OSError:
            pass
        finally:
            conn.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        srv.close()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/agent", stop


@pytest.fixture()
def stops() -> Iterator[list[threading.Event]]:
    events: list[threading.Event] = []
    yield events
    for e in events:
        e.set()


def test_a_registry_listing_that_trickles_a_byte_at_a_time_is_cut_off_at_the_deadline(stops) -> None:
    head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    url, stop = _trickle_server(head, b" ", 0.3)
    stops.append(stop)
    agent = HttpAgent(url, timeout_s=1.5)
    t0 = time.monotonic()
    with pytest.raises(EvalcoreError, match=r"no complete answer within 1.5s"):
        agent.registry.tool_records()
    assert time.monotonic() - t0 < 3.0
    t0 = time.monotonic()
    with pytest.raises(AgentEndpointError, match="timed out after 1.5s"):
        agent.process_request("q")
    with pytest.raises(EvalcoreError, match="no complete answer"):
        agent.registry.search("q")
    with pytest.raises(EvalcoreError, match="reset failed"):
        agent.reset()
    assert time.monotonic() - t0 < 3 * 1.5 + 3
    agent.close()


def test_headers_trickled_a_byte_at_a_time_are_cut_off_too(stops) -> None:
    head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"a" * 1000 + b"\r\n\r\n"
    url, stop = _trickle_server(head, b" ", 0.2, header_trickle=True)
    stops.append(stop)
    agent = HttpAgent(url, timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(AgentEndpointError, match="timed out"):
        agent.process_request("q")
    assert time.monotonic() - t0 < 2.5
    agent.close()


def test_an_evaluation_of_a_trickling_agent_ends(stops) -> None:
    from evalcore.agent_eval import AgentEvalConfig, evaluate

    head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    url, stop = _trickle_server(head, b" ", 0.3)
    stops.append(stop)
    cfg = AgentEvalConfig(
        counts={"simple": 1, "medium": 0, "complex": 0, "edge": 0},
        limit=1,
        n_paraphrase_groups=1,
        paraphrase_size=2,
        n_unrelated=1,
        request_timeout_s=1.0,
    )
    t0 = time.monotonic()
    result = evaluate(url, cfg, categories=["retrieval", "functional"], progress=False)
    assert time.monotonic() - t0 < 60
    assert result.overall == 0.0
    assert any(
        "no complete answer" in n or "timed out" in n
        for n in result.categories["retrieval"].notes + [t.error or "" for t in result.categories["retrieval"].tests]
    )


def test_a_listing_of_many_names_described_slowly_has_one_deadline_too() -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Slow(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a: object) -> None:
            return

        def do_GET(self) -> None:
            if "/describe" in self.path:
                time.sleep(0.3)  # each answer in time, but a thousand of them are not
                body = b'{"name": "t", "code": "def t():\\n    return 1\\n"}'
            else:
                body = ('{"tools": [' + ",".join(f'"t{i}"' for i in range(1000)) + "]}").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent = HttpAgent(f"http://127.0.0.1:{server.server_address[1]}/agent", timeout_s=1.0)
        t0 = time.monotonic()
        with pytest.raises(EvalcoreError, match=r"tool listing was not read within 2s \(\d+ of 1000 tools described\)"):
            agent.registry.tool_records()
        assert time.monotonic() - t0 < 3.5
        agent.close()
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------ size after decompression
def _gzip_server(payload: bytes) -> tuple[str, threading.Event]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a: object) -> None:
            return

        def _answer(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer()

        do_GET = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()

    def stopper() -> None:
        stop.wait()
        server.shutdown()
        server.server_close()

    threading.Thread(target=stopper, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/agent", stop


def test_a_reply_is_capped_after_decompression(stops) -> None:
    import psutil

    bomb = gzip.compress(b'{"success": true, "response": "' + b"0" * (256 * 2**20) + b'"}', compresslevel=9)
    assert len(bomb) < 2**20  # well under a megabyte on the wire
    url, stop = _gzip_server(bomb)
    stops.append(stop)
    before = psutil.Process().memory_info().rss
    agent = HttpAgent(url, timeout_s=20)
    with pytest.raises(AgentEndpointError, match=r"reply larger than 16777216 bytes after decompression"):
        agent.process_request("q")
    with pytest.raises(EvalcoreError, match=r"reply larger than 16777216 bytes after decompression"):
        agent.registry.tool_records()
    assert psutil.Process().memory_info().rss - before < 128 * 2**20  # never the 256 MB it inflates to
    agent.close()
    small = HttpAgent(url, timeout_s=20, max_reply_bytes=2**20)
    with pytest.raises(AgentEndpointError, match=r"reply larger than 1048576 bytes after decompression"):
        small.process_request("q")
    small.close()


def test_a_compressed_reply_under_the_cap_is_read() -> None:
    url, stop = _gzip_server(gzip.compress(b'{"success": true, "result": 120}'))
    try:
        agent = HttpAgent(url, timeout_s=5)
        assert agent.process_request("q").result == 120
        agent.close()
    finally:
        stop.set()


# ------------------------------------------------------------------------------ tool time budget
class _SleepyTools:
    """A registry of tools that never return, and an agent that claims to have built one for
    every request (so the evaluator runs them all)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list:
        from evalcore.agents import ToolMatch

        return [ToolMatch(n, 0.9) for n in self.names[:k]]

    def list_tools(self) -> list[str]:
        return list(self.names)

    def describe(self, name: str) -> dict:
        return {
            "name": name,
            "code": f"def {name}(**kw):\n    import time\n    time.sleep(1000)\n",
            "tests": f"def test_{name}():\n    assert {name}(x=1) == 1\n",
        }


class _SleepyAgent:
    def __init__(self) -> None:
        self.registry = _SleepyTools()

    def reset(self) -> None:
        self.registry.names.clear()

    def process_request(self, query: str):
        from evalcore.agents import AgentResponse, StepRecord

        name = f"tool_{len(self.registry.names)}"
        self.registry.names.append(name)
        return AgentResponse(
            success=True,
            result=1,
            tool_used=name,
            synthesized=True,
            steps=[StepRecord(tool=name, args={"x": 1}, result=1)],
        )


def test_tool_runs_have_a_total_time_budget_per_category() -> None:
    from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, AgentEvaluator

    counts = {"simple": 4, "medium": 3, "complex": 2, "edge": 0}
    cases = AgentCaseGenerator(0, counts).generate()
    # workflow reruns every step the agent reports with the registered tool: here each run
    # would sleep until the sandbox's limit (2 s), one per multi-step case and step
    cfg = AgentEvalConfig(seed=0, counts=counts, sandbox_timeout_s=2.0, tool_budget_s=3.0)
    t0 = time.monotonic()
    result = AgentEvaluator(_SleepyAgent(), cases, config=cfg).run(["workflow"], progress=False)
    took = time.monotonic() - t0
    cat = result.categories["workflow"]
    n_steps = sum(len(c.steps) or 1 for c in cases if "workflow" in c.categories)
    assert n_steps * 2.0 >= 2 * 3.0  # without the budget the tools would run at least twice as long
    # each run is cut at what is left of the budget: the category's tool time stays within it
    assert 3.0 <= cat.metrics["tool_time_s"] <= 3.0 + 1.0, cat.metrics["tool_time_s"]
    assert any("tool time budget of 3 s is spent" in n for n in cat.notes), cat.notes
    assert cat.score == 0.0 and took < 3.0 + 15, took
    assert result.config["suite"]["tool_budget_s"] == 3.0


def test_the_default_tool_budget_ends_seven_categories_of_hostile_tools_within_five_minutes() -> None:
    from evalcore.agent_eval import AgentEvalConfig
    from evalcore.agent_eval._calling import DEFAULT_TOOL_BUDGET_S

    assert AgentEvalConfig().tool_budget_s == DEFAULT_TOOL_BUDGET_S and 7 * DEFAULT_TOOL_BUDGET_S < 300
    with pytest.raises(EvalcoreError, match="tool_budget_s"):
        AgentEvalConfig(tool_budget_s=float("inf"))


@linux_only
def test_a_factory_flooding_the_handshake_pipe_is_refused_with_a_reason(tmp_path) -> None:
    # the factory runs in the child before the handshake and can write to the pipe it goes on:
    # the evaluator reads at most 1 MiB there, not whatever the agent writes
    path = tmp_path / "flood_agent.py"
    path.write_text(
        "import os\n\nclass A:\n    registry = None\n    def reset(self):\n        pass\n"
        "    def process_request(self, q):\n        pass\n\n"
        "def make():\n    for fd in range(3, 20):\n        try:\n"
        "            os.write(fd, b'x' * 3_000_000)\n        except OSError:\n            pass\n"
        "    return A()\n"
    )
    with pytest.raises(EvalcoreError, match="more than 1 MiB on the handshake pipe before the handshake"):
        HostedAgent(f"{path}:make", startup_timeout_s=30)


def test_only_the_end_of_the_agents_log_is_read(tmp_path) -> None:
    # the agent decides how much it writes to its log; a failed start shows the last lines only,
    # read from the end (not the whole file into the evaluator's memory)
    log = tmp_path / "agent.log"
    with open(log, "wb") as fh:
        fh.seek(3 * 2**30)  # a sparse 3 GiB of nothing, then the reason
        fh.write(b"\nthe real reason: boom\n")
    agent = HostedAgent.__new__(HostedAgent)
    agent.log_path = log
    t0 = time.monotonic()
    tail = agent._log_tail()
    assert tail.endswith("\nthe real reason: boom") and len(tail) == 600
    assert time.monotonic() - t0 < 1.0
