"""Hostile agents for the bounds of issue 37's third round (test fixtures, not a test module).

One per class of attack on the evaluator's resources; hosted through their ``make_*``
factories (``tests/agents/_bounds_agents.py:make_long_texts``) or built in process:

* :class:`Deep`: results and step values nested ``depth`` levels deep (700 once crashed the
  evaluation while its results were saved: no results file);
* :class:`LongTexts`: every reply's error text 8 MiB long (twenty of them made a 160 MB
  results file and 600 MB of evaluator memory);
* :class:`BigRegistry`: a registry of ``n`` one-line tools (150,000 kept the evaluator busy
  378 s where an honest agent takes 13 s);
* :class:`LogFlood`: 64 MiB on its standard error per request, and a 1 GiB ``fallocate`` of it
  (the log lived on the evaluator's disk without a cap);
* :class:`Terminal`: error texts of terminal commands (clear screen, an OSC 52 clipboard write,
  a forged ``PASSED`` line); :func:`make_terminal_at_start` fails at start with such a text;
* :class:`Resources`: allocates past its memory, forks past its processes, and connects to a
  TCP service of the host on request.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from evalcore.agents import AgentResponse, StepRecord, ToolMatch

TERMINAL = "\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x07\r\nPASSED\x9b31m evil"


class _Base:
    registry: Any = None

    def reset(self) -> None:
        pass


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


class Deep(_Base):
    """Answers every request with a result, step arguments and a step result ``depth`` deep."""

    def __init__(self, depth: int = 700) -> None:
        self.depth = depth

    def process_request(self, query: str) -> AgentResponse:
        v = nested(self.depth)
        return AgentResponse(
            success=True,
            response="deep",
            result=v,
            tool_used="t",
            steps=[StepRecord(tool="t", args={"x": v}, result=v)],
        )


DEEP_TOOL = "def deep(x=0):\n    v = 'bottom'\n    for _ in range(700):\n        v = [v]\n    return v\n"


class _DeepToolRegistry:
    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        return [ToolMatch("deep", 0.9)][:k]

    def list_tools(self) -> list[str]:
        return ["deep"]

    def describe(self, name: str) -> dict[str, Any]:
        if name != "deep":
            raise KeyError(name)
        return {"name": "deep", "code": DEEP_TOOL, "tests": "def test_deep():\n    assert deep(1)\n"}


class DeepTool(_Base):
    """Its one registered tool returns a list nested 700 deep; every request names it in a step,
    so the evaluator runs it (workflow's re-run, retrieval's and synthesis's held-out runs)."""

    def __init__(self) -> None:
        self.registry = _DeepToolRegistry()

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(
            success=True,
            response="1",
            result=1,
            tool_used="deep",
            steps=[StepRecord(tool="deep", args={"x": 1}, result=1)],
        )


class LongTexts(_Base):
    """Refuses every request with an error text of ``mib`` MiB (the same text each time)."""

    def __init__(self, mib: int = 8) -> None:
        self.text = "invalid input: " + "E" * (mib * 2**20)

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, response="no", error=self.text)


class _Registry:
    def __init__(self, n: int, code_chars: int = 0) -> None:
        self.names = [f"t{i}" for i in range(n)]
        self.padding = "#" * code_chars

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        return [ToolMatch(name, 0.9) for name in self.names[:k]]

    def list_tools(self) -> list[str]:
        return list(self.names)

    def describe(self, name: str) -> dict[str, Any]:
        return {"name": name, "code": f"def {name}(x):\n    return x\n{self.padding}\n", "tests": None}


class BigRegistry(_Base):
    """A registry of ``n`` one-line tools; every request refused."""

    def __init__(self, n: int = 150_000, code_chars: int = 0) -> None:
        self.registry = _Registry(n, code_chars)

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, error="not served")


class LogFlood(_Base):
    """Writes ``mib`` MiB to its standard error per request, then tries to ``fallocate`` 1 GiB
    of it; answers what the ``fallocate`` did."""

    def __init__(self, mib: int = 64) -> None:
        self.mib = mib

    def process_request(self, query: str) -> AgentResponse:
        chunk = b"L" * 2**20
        for _ in range(self.mib):
            os.write(2, chunk)
        try:
            os.posix_fallocate(2, 0, 2**30)
            how = "allocated"
        except OSError as exc:
            how = f"refused ({exc.errno})"
        return AgentResponse(success=True, response=how, result=how)


class Slow(_Base):
    """Takes ``seconds`` over every request (under the request timeout, so each one is waited for)."""

    def __init__(self, seconds: float = 2.0) -> None:
        self.seconds = seconds

    def process_request(self, query: str) -> AgentResponse:
        time.sleep(self.seconds)
        return AgentResponse(success=False, error="slow")


class Terminal(_Base):
    """Every reply's error and response are terminal commands."""

    def process_request(self, query: str) -> AgentResponse:
        return AgentResponse(success=False, response=TERMINAL, error=TERMINAL, tool_used=TERMINAL)


class Resources(_Base):
    """``memory N``: allocate (and touch) N MiB; ``processes N``: fork N sleeping children;
    ``connect PORT``: open a TCP connection to 127.0.0.1:PORT. Answers what it managed."""

    def process_request(self, query: str) -> AgentResponse:
        what, _, arg = query.partition(" ")
        if what == "memory":
            try:
                blob = bytearray(int(arg) * 2**20)  # zero-filled: every page touched
                result: Any = f"allocated {len(blob) >> 20} MiB"
            except MemoryError:
                result = "MemoryError"
        elif what == "processes":
            pids = []
            try:
                for _ in range(int(arg)):
                    pid = os.fork()
                    if pid == 0:
                        time.sleep(30)
                        os._exit(0)
                    pids.append(pid)
            except OSError:
                pass
            for pid in pids:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            result = len(pids)
        elif what == "connect":
            try:
                with socket.create_connection(("127.0.0.1", int(arg)), timeout=3) as conn:
                    result = "connected: " + conn.recv(100).decode(errors="replace")
            except OSError as exc:
                result = f"refused: {exc}"
        else:
            result = None
        return AgentResponse(success=True, response=str(result), result=result)


def make_deep(depth: int = 700) -> Deep:
    return Deep(depth)


def make_deep_tool() -> DeepTool:
    return DeepTool()


def make_long_texts(mib: int = 8) -> LongTexts:
    return LongTexts(mib)


def make_big_registry(n: int = 150_000, code_chars: int = 0) -> BigRegistry:
    return BigRegistry(n, code_chars)


def make_log_flood(mib: int = 64) -> LogFlood:
    return LogFlood(mib)


def make_terminal() -> Terminal:
    return Terminal()


def make_terminal_at_start() -> Terminal:
    raise RuntimeError(TERMINAL)


def make_resources() -> Resources:
    return Resources()
