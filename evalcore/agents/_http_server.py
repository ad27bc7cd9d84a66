"""The server side of the agent wire protocol (:mod:`evalcore.agents._http`): an agent served
over HTTP on a background thread (:func:`serve_agent`, :class:`AgentServer`), as the agent host
and a user's own process serve it. Re-exported by :mod:`evalcore.agents`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from evalcore.agents._protocol import Agent

POLL_S = 0.05
"""How often a serving loop looks for :meth:`close` (``serve_forever``'s ``poll_interval``):
``shutdown()`` waits for the next look, and at socketserver's default 0.5 s every hosted agent
took 0.57 s to close (the agent overview's self-test closes 26)."""


class AgentServer:
    """Serves an agent over the wire protocol above on a background thread.

    Use :func:`serve_agent`; ``url`` is the request endpoint, ``close()`` stops the server.
    """

    def __init__(self, agent: Agent, host: str = "127.0.0.1", port: int = 0) -> None:
        self.agent = agent
        handler = _make_handler(agent)
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        bound_host, self.port = self._server.server_address[:2]
        self.host = bound_host if isinstance(bound_host, str) else bound_host.decode()
        self.url = f"http://{self.host}:{self.port}/"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            name="evalcore-agent-server",
            kwargs={"poll_interval": POLL_S},
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> AgentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_agent(agent: Agent, host: str = "127.0.0.1", port: int = 0) -> AgentServer:
    """Expose ``agent`` over HTTP (``port=0`` picks a free port); returns the running server."""
    return AgentServer(agent, host, port)


def _tool_record(registry: Any, name: str) -> dict[str, Any]:
    describe = getattr(registry, "describe", None)
    info: Any = {}
    if callable(describe):
        try:
            info = describe(name)
        except Exception:
            info = {}
    if not isinstance(info, dict):
        info = {}
    code, tests = info.get("code"), info.get("tests")
    return {
        "name": name,
        "code": str(code) if code is not None else None,
        "tests": str(tests) if tests is not None else None,
    }


class _AgentHandler(BaseHTTPRequestHandler):
    """Serves :attr:`agent` over the HTTP JSON protocol (a subclass per agent sets it)."""

    protocol_version = "HTTP/1.0"
    agent: Agent

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, payload: Any) -> None:
        body = json.dumps(payload, default=repr).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"{}")

    def do_POST(self) -> None:
        """``POST …/reset`` resets the agent; ``POST …`` with ``{"query"}`` asks it."""
        path = urlparse(self.path).path.rstrip("/")
        try:
            body = self._body()
        except ValueError:
            self._send(400, {"error": "body is not JSON"})
            return
        if path.endswith("/reset"):
            try:
                self.agent.reset()
            except Exception as exc:
                self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
                return
            self._send(200, {"ok": True})
            return
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            self._send(400, {"error": 'expected {"query": string}'})
            return
        try:
            response = self.agent.process_request(body["query"])
        except Exception as exc:
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._send(200, response.to_dict())

    def do_GET(self) -> None:
        """``GET …/search``, ``…/tools`` (``?code=1``: with code and tests), ``…/describe``."""
        parsed = urlparse(self.path)
        path = parsed.path.rstrip("/")
        registry = self.agent.registry
        if registry is None:
            self._send(404, {"error": "this agent has no registry"})
            return
        if path.endswith("/search"):
            self._search(registry, parsed.query)
        elif path.endswith("/tools"):
            names = [str(n) for n in registry.list_tools()]
            if parse_qs(parsed.query).get("code", ["0"])[0] in ("1", "true"):
                self._send(200, {"tools": [_tool_record(registry, n) for n in names]})
            else:
                self._send(200, {"tools": names})
        elif path.endswith("/describe"):
            self._describe(registry, parsed.query)
        else:
            self._send(404, {"error": f"unknown path {parsed.path}"})

    def _search(self, registry: Any, query: str) -> None:
        qs = parse_qs(query)
        try:
            q = qs.get("q", [""])[0]
            k = int(qs.get("k", ["5"])[0])
            threshold = float(qs.get("threshold", ["0"])[0])
        except ValueError:
            self._send(400, {"error": "k must be an int and threshold a float"})
            return
        try:
            matches = registry.search(q, k=k, threshold=threshold)
            rows = [{"name": m.name, "score": m.score} for m in matches]
        except Exception as exc:
            self._send(500, {"error": f"search raised {type(exc).__name__}: {exc}"})
            return
        self._send(200, {"matches": rows})

    def _describe(self, registry: Any, query: str) -> None:
        name = parse_qs(query).get("name", [""])[0]
        describe = getattr(registry, "describe", None)
        if not callable(describe):
            self._send(404, {"error": "this agent's registry cannot describe tools"})
            return
        try:
            info = describe(name)
        except KeyError:
            self._send(404, {"error": f"unknown tool {name!r}"})
            return
        self._send(200, info)


def _make_handler(agent: Agent) -> type[BaseHTTPRequestHandler]:
    """A request handler class serving ``agent``."""
    return type("Handler", (_AgentHandler,), {"agent": agent})
