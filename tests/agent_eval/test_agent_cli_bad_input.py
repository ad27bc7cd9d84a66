"""`evalcore agent-eval` / `sweep`: bad input is refused up front with one message and exit 2."""

from __future__ import annotations

import json

import pytest

from evalcore.agent_eval import AgentEvalConfig, save_cases
from evalcore.agent_eval._cases.generator import AgentCaseGenerator
from evalcore.cli import main
from evalcore.errors import EvalcoreError

BASE = ["agent-eval", "--agent", "oracle", "--categories", "functional", "--model", "none", "--limit", "1"]


@pytest.mark.parametrize("value", ["inf", "nan", "0", "1e9"])
def test_request_timeout_must_be_finite(tmp_path, capsys, value) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*BASE, "--request-timeout", value, "--output-dir", str(tmp_path / "ae")])
    assert stop.value.code == 2 and "argument --request-timeout" in capsys.readouterr().err
    assert not (tmp_path / "ae").exists()


def test_suite_config_refuses_infinite_timeout() -> None:
    with pytest.raises(EvalcoreError, match="request_timeout_s"):
        AgentEvalConfig(seed=0, request_timeout_s=float("inf"))


def test_output_dir_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "ae").write_text("")
    assert main([*BASE, "--output-dir", str(tmp_path / "ae")]) == 2
    err = capsys.readouterr().err
    assert "field '--output-dir'" in err and "is a file" in err and "Traceback" not in err


def test_sweep_output_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "sw").write_text("")
    assert main(["sweep", "--thresholds", "0.5", "--model", "none", "--output", str(tmp_path / "sw")]) == 2
    assert "field '--output'" in capsys.readouterr().err


def test_cases_file_not_utf8(tmp_path, capsys) -> None:
    path = tmp_path / "c.json"
    save_cases(AgentCaseGenerator(0).generate()[:3], path)
    lines = path.read_bytes().split(b"\n")
    lines[7] += b"\xff"
    path.write_bytes(b"\n".join(lines))
    assert main([*BASE, "--no-save", "--cases", str(path)]) == 2
    err = capsys.readouterr().err
    assert "c.json, line 8" in err and "not UTF-8" in err and "Traceback" not in err


def test_dead_model_endpoint_is_refused(capsys) -> None:
    from evalcore.models._server import free_port

    dead = f"openai-compatible:x@http://127.0.0.1:{free_port()}/v1"
    assert main(["agent-eval", "--categories", "functional", "--model", dead, "--limit", "1", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach endpoint" in err and "reference agent's model" in err


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda d: d["cases"][0].update(tolerance=0.5), "cases[0].tolerance"),  # a misspelt field was ignored
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.update(format="nope"), "format"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d["cases"][1].update(categories=["nonsense"]), "cases[1].categories"),  # dropped the case
        (lambda d: d["cases"][0].update(rel_tol=float("nan")), "cases[0].rel_tol"),
    ],
)
def test_cases_file_with_unknown_keys_or_values_is_refused(tmp_path, capsys, change, where) -> None:
    path = tmp_path / "c.json"
    save_cases(AgentCaseGenerator(0, {"simple": 2, "medium": 0, "complex": 0, "edge": 0}).generate(), path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "oracle",
                "--model",
                "none",
                "--categories",
                "functional",
                "--cases",
                str(path),
                "--output-dir",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert str(path) in err and where in err and "Traceback" not in err, err
    assert not out.exists() or not any(out.iterdir())  # nothing written


# --- HTTP agent endpoints: a dead or non-agent endpoint is refused before any work ----------------

AGENT_BASE = ["agent-eval", "--categories", "functional", "--limit", "2", "--request-timeout", "5"]


def _nothing_written(out) -> bool:
    return not out.exists() or not any(out.iterdir())


@pytest.mark.timeout(60)
def test_dead_http_agent_is_refused(tmp_path, capsys) -> None:
    from evalcore.models._server import free_port

    url = f"http://127.0.0.1:{free_port()}/agent"
    out = tmp_path / "out"
    assert main([*AGENT_BASE, "--agent", url, "--output-dir", str(out)]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "field '--agent'" in err and f"no agent answers at {url}" in err and "ConnectError" in err, err
    assert "overall" not in cap.out  # no result reported
    assert _nothing_written(out)


@pytest.mark.timeout(60)
def test_non_agent_http_endpoint_is_refused(tmp_path, capsys) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):  # a web server, not an agent: HTML for every GET, no POST
        def log_message(self, *a) -> None:
            return

        def do_GET(self) -> None:
            body = b"<html>hello</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        out = tmp_path / "out"
        assert main([*AGENT_BASE, "--agent", url, "--output-dir", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"no agent answers at {url}" in err and "tools" in err and "Traceback" not in err, err
        assert _nothing_written(out)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.timeout(60)
def test_http_agent_without_reset_is_refused(tmp_path, capsys) -> None:
    """An agent without a registry (tools 404) is fine, but reset is part of every agent."""
    from evalcore.agent_eval._oracle import make_honest
    from evalcore.agents import serve_agent

    class NoReset:
        registry = None

        def __init__(self) -> None:
            self.inner = make_honest()

        def process_request(self, q):
            return self.inner.process_request(q)

        def reset(self) -> None:
            raise RuntimeError("cannot reset")

    with serve_agent(NoReset()) as server:
        out = tmp_path / "out"
        assert main([*AGENT_BASE, "--agent", server.url, "--output-dir", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"no agent answers at {server.url}" in err and "reset answered HTTP 500" in err, err
        assert _nothing_written(out)


@pytest.mark.timeout(60)
def test_sweep_refuses_http_agent(tmp_path, capsys) -> None:
    out = tmp_path / "sw"
    assert main(["sweep", "--agent", "http://127.0.0.1:1/agent", "--thresholds", "0.5", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "field '--agent'" in err and "http://127.0.0.1:1/agent" in err and "threshold is set on its server" in err
    assert _nothing_written(out)


class _DyingAgent:
    """The honest self-test agent behind a server that it shuts down on a given call."""

    def __init__(self, die_on: str, n: int) -> None:
        from evalcore.agent_eval._oracle import make_honest

        self.inner, self.die_on, self.n, self.server = make_honest(), die_on, n, None

    @property
    def registry(self):
        return self.inner.registry

    def _tick(self, what: str) -> None:
        if what == self.die_on:
            self.n -= 1
            if self.n == 0:
                self.server.close()  # this answer still goes out; every later request is refused

    def reset(self) -> None:
        self._tick("reset")
        self.inner.reset()

    def process_request(self, q):
        self._tick("request")
        return self.inner.process_request(q)


@pytest.mark.timeout(60)
def test_http_agent_dead_for_the_whole_run_writes_nothing(tmp_path, capsys) -> None:
    from evalcore.agents import serve_agent

    agent = _DyingAgent("reset", 2)  # answers the up-front check (reset 1), dies on the run's first reset
    agent.server = server = serve_agent(agent)
    out = tmp_path / "out"
    assert main([*AGENT_BASE, "--agent", server.url, "--output-dir", str(out)]) == 2
    cap = capsys.readouterr()
    assert "stopped answering during the run" in cap.err and server.url in cap.err and "nothing written" in cap.err
    assert "overall" not in cap.out and "Traceback" not in cap.err
    assert _nothing_written(out)


@pytest.mark.timeout(60)
def test_http_agent_dying_mid_run_exits_2_and_keeps_what_was_measured(tmp_path, capsys) -> None:
    from evalcore.agents import serve_agent

    agent = _DyingAgent("request", 1)  # answers the first request, then nobody listens
    agent.server = server = serve_agent(agent)
    out = tmp_path / "out"
    assert main([*AGENT_BASE, "--agent", server.url, "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert "stopped answering during the run" in err and server.url in err and "1 of 2 tests" in err, err
    files = list(out.glob("evaluation_*.json"))
    assert len(files) == 1 and str(files[0]) in err
    data = json.loads(files[0].read_text())
    assert "stopped answering" in data["config"]["agent_endpoint_lost"]
    assert data["summary"]["n_tests_passed"] == 1 and data["summary"]["n_critical_failures"] == 1


@pytest.mark.timeout(60)
def test_live_http_agent_still_runs(tmp_path, capsys) -> None:
    from evalcore.agent_eval._oracle import make_honest
    from evalcore.agents import serve_agent

    with serve_agent(make_honest()) as server:
        out = tmp_path / "out"
        assert main([*AGENT_BASE, "--agent", server.url, "--output-dir", str(out)]) == 0
        assert "functional   1.000 pass" in capsys.readouterr().out
        data = json.loads(next(out.glob("evaluation_*.json")).read_text())
        assert "agent_endpoint_lost" not in data["config"]


@pytest.mark.timeout(60)
def test_threshold_for_http_agent_is_refused_before_asking_it(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert (
        main([*AGENT_BASE, "--agent", "http://127.0.0.1:1/agent", "--threshold", "0.5", "--output-dir", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert "field '--threshold'" in err and "set on its server" in err and "no agent answers" not in err, err
    assert _nothing_written(out)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", ["agent-eval", "sweep"])
def test_model_for_an_agent_that_does_not_use_it_is_refused(tmp_path, capsys, command) -> None:
    # --model is the reference agent's; given with another agent it used to be ignored silently
    out = tmp_path / "out"
    args = ["--agent", "tests.nosuch:make", "--model", "openai:gpt-4o-mini"]
    args += ["--thresholds", "0.5", "--output", str(out)] if command == "sweep" else ["--output-dir", str(out)]
    assert main([command, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "field '--model'" in err and "tests.nosuch:make" in err, err
    assert not out.exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999999/agent"])
def test_malformed_agent_url_is_one_line(tmp_path, capsys, url) -> None:
    out = tmp_path / "out"
    assert main([*AGENT_BASE, "--agent", url, "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "field '--agent'" in err, err
    assert "not a valid URL" in err and _nothing_written(out)
