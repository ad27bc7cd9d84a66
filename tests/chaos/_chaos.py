"""The chaos tests' tools: a fault-injecting OpenAI-compatible endpoint told per request what to
do, the real CLI run in a subprocess, a small benchmark of our own, and the checks every case ends
with (one line on stderr, no traceback, whole records). Imported as ``_chaos`` (the conftest puts
this folder on the path)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from evalcore.models import FakeChatServer

EVALCORE = [sys.executable, "-c", "import sys\nfrom evalcore.cli import main\nsys.exit(main(sys.argv[1:]))"]
CLI_TIMEOUT_S = 120  # one command of a chaos case; each runs a handful of items

Plan = Callable[[int, int], str]
"""``(rank, attempt) -> outcome``: ``rank`` numbers the distinct prompts in the order they first
arrived (0, 1, …), ``attempt`` counts that prompt's requests (0 = first)."""

OUTCOMES = ("ok", "server_error", "stall", "no_message", "no_content", "malformed", "drop", "rate_limit")


class ChaosServer(FakeChatServer):
    """The project's fake endpoint (``evalcore.models.FakeChatServer``) told per request what to do.

    ``plan(rank, attempt)`` picks each request's outcome: ``ok``, ``server_error`` (500),
    ``stall`` (answers only after ``stall_s``: past the client's timeout), ``no_message`` (200, a
    choice without a message), ``no_content`` (200, a message without content), ``malformed``
    (200, a body that is not JSON), ``drop`` (200 with the full ``Content-Length``, half the body,
    then the connection closed) or ``rate_limit`` (429 with ``Retry-After``). ``plan`` may be
    swapped between commands (the endpoint heals).

    Attributes:
        asked: Requests per prompt (its last message), over the server's life.
    """

    def __init__(self, plan: Plan = lambda rank, attempt: "ok", **kwargs: Any) -> None:
        self.plan = plan
        self.asked: Counter[str] = Counter()
        self._ranks: dict[str, int] = {}
        self._plan_lock = threading.Lock()
        kwargs.setdefault("stall_s", 8.0)  # past the tests' --timeout 2
        kwargs.setdefault("retry_after", 0.05)
        super().__init__(**kwargs)

    def prompts(self) -> int:
        """Distinct prompts asked so far."""
        return len(self._ranks)

    def decide(self, body: bytes) -> str:
        """The outcome ``plan`` gives this request (its prompt's rank and attempt)."""
        try:
            prompt = str(json.loads(body)["messages"][-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            prompt = ""
        with self._plan_lock:
            rank = self._ranks.setdefault(prompt, len(self._ranks))
            attempt = self.asked[prompt]
            self.asked[prompt] += 1
        outcome = self.plan(rank, attempt)
        assert outcome in OUTCOMES, outcome
        return outcome

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler_class()
        server = self

        class Handler(base):  # type: ignore[misc, valid-type]
            def _reply(self, outcome: str, body: bytes, *args: Any) -> None:
                if outcome == "no_content":
                    reply = server._answer(json.loads(body))
                    del reply["choices"][0]["message"]["content"]
                    self._send(200, json.dumps(reply).encode())
                    return
                if outcome != "drop":
                    super()._reply(outcome, body, *args)
                    return
                whole = json.dumps(server._answer(json.loads(body))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(whole)))
                self.end_headers()
                self.wfile.write(whole[: len(whole) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

        return Handler


BENCH_YAML = """\
name: caps
data: {data}
id_field: id
answer_field: capital
scorer: exact
prompt:
  user: "Capital of {{country}}?"
"""


def capital_of(messages: Any) -> str:
    """The right answer to ``Capital of C<n>?``: ``K<n>`` (the server's responder)."""
    return "K" + str(messages[-1]["content"]).rsplit("C", 1)[-1].rstrip("?")


def write_bench(folder: Path, n: int = 5, *, data: bytes | None = None, suffix: str = "jsonl") -> Path:
    """A benchmark file ``caps.yaml`` over ``n`` items (or the ``data`` bytes given); returns its path."""
    if data is None:
        rows = ({"id": str(i), "country": f"C{i}", "capital": f"K{i}"} for i in range(n))
        data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    (folder / f"caps.{suffix}").write_bytes(data)
    (folder / "caps.yaml").write_text(BENCH_YAML.format(data=f"caps.{suffix}"))
    return folder / "caps.yaml"


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S):
    """Run ``evalcore ARGS`` in a subprocess; returns the ``CompletedProcess``."""
    return subprocess.run(
        [*EVALCORE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )


def one_line(stderr: str, *wanted: str) -> str:
    """The single line on stderr, checked to name every ``wanted`` text and carry no traceback."""
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{stderr}"
    assert "Traceback" not in stderr
    for text in wanted:
        assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    return lines[0]


def records(run: Path) -> list[dict[str, Any]]:
    """Every line of ``run/samples.jsonl`` parsed: each must be a whole JSON record."""
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]
