"""Host a Python factory agent in a fresh interpreter of its own and talk to it over HTTP.

The evaluator never shares a process with the agent it evaluates: :class:`HostedAgent` starts
``python -m evalcore.agents._host`` (a new interpreter), which imports the factory, builds the
agent and serves it with :class:`~evalcore.agents.AgentServer` on 127.0.0.1 (the wire protocol
of :mod:`evalcore.agents._http`). The evaluator holds an :class:`~evalcore.agents.HttpAgent`
on that URL, so only JSON crosses between the two: the agent cannot read the evaluator's frames
or patch its code, and the evaluator never touches the agent's objects.

The child prints one handshake line, tagged with a nonce the parent drew, on a private copy of
its standard output (the agent's own prints go to a log file), then serves until its standard
input closes (the parent closed it, or died).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from evalcore.agents._http import HttpAgent
from evalcore.errors import EvalcoreError

_NONCE_ENV = "EVALCORE_AGENT_HOST_NONCE"


class HostedAgent(HttpAgent):
    """A ``module:function`` agent running in a subprocess, seen through HTTP.

    Args:
        spec: ``"module:function"`` or ``"path/to/file.py:function"``.
        options: Keyword arguments for the factory (JSON values only: they cross a pipe).
        timeout_s: Per-request timeout (default 30 s).
        startup_timeout_s: How long building the agent may take.
        threshold: The agent's similarity threshold when known (default: ``options["threshold"]``).

    Raises:
        EvalcoreError: The factory cannot be imported or fails, its agent does not meet the
            protocol, the options are not JSON, or the child does not start in time.
    """

    def __init__(self, spec: str, options: Mapping[str, Any] | None = None, *, timeout_s: float = 30.0,
                 startup_timeout_s: float = 300.0, threshold: float | None = None) -> None:
        options = dict(options or {})
        try:
            payload = json.dumps(options)
        except (TypeError, ValueError) as exc:
            raise EvalcoreError(f"options of a hosted agent must be JSON values: {exc}", field="agent") from exc
        self.spec = spec
        nonce = secrets.token_hex(16)
        env = dict(os.environ)
        env[_NONCE_ENV] = nonce
        # the child resolves modules as this process does (the current directory included)
        paths = [p if p else os.getcwd() for p in sys.path]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        self._log = tempfile.NamedTemporaryFile(prefix="evalcore_agent_", suffix=".log", delete=False)
        self.log_path = Path(self._log.name)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "evalcore.agents._host", spec],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(payload.encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:
            pass
        box: dict[str, Any] = {}

        def read() -> None:
            assert self._proc.stdout is not None
            for raw in self._proc.stdout:
                line = raw.decode(errors="replace").strip()
                if line.startswith(nonce + " "):
                    try:
                        box["msg"] = json.loads(line[len(nonce) + 1:])
                    except ValueError:
                        box["msg"] = {"error": "malformed handshake"}
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(startup_timeout_s)
        msg = box.get("msg")
        if msg is None or "url" not in msg:
            self._stop()
            why = (msg or {}).get("error") if msg else None
            if why is None:
                why = (f"did not start within {startup_timeout_s:g} s" if reader.is_alive()
                       else f"exited with status {self._proc.returncode}: {self._log_tail()}")
            raise EvalcoreError(f"agent {spec!r}: {why}", field="agent")
        if threshold is None:
            t = options.get("threshold", msg.get("threshold"))
            threshold = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None
        super().__init__(msg["url"], timeout_s=timeout_s, has_registry=bool(msg.get("has_registry", True)),
                         threshold=threshold)

    @property
    def pid(self) -> int:
        """Process id of the interpreter hosting the agent."""
        return self._proc.pid

    def rss_mb(self) -> float | None:
        """Resident memory of the hosting process and its children, in MB (None when gone)."""
        try:
            import psutil

            proc = psutil.Process(self._proc.pid)
            total = proc.memory_info().rss
            for child in proc.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:
                    pass
            return total / 2**20
        except Exception:
            return None

    def _log_tail(self, n: int = 600) -> str:
        try:
            return self.log_path.read_text(errors="replace").strip()[-n:] or "no output"
        except OSError:
            return "no output"

    def _stop(self) -> None:
        proc = self._proc
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        self._log.close()
        try:
            self.log_path.unlink()
        except OSError:
            pass

    def close(self) -> None:
        """Close the HTTP client and end the hosting process."""
        try:
            super().close()
        except AttributeError:  # never connected
            pass
        if self._proc.poll() is None or not self._log.closed:
            self._stop()

    def __del__(self) -> None:
        try:
            if self._proc.poll() is None:
                self._stop()
        except Exception:
            pass


def _main(argv: list[str]) -> int:
    """Child side: build the agent, serve it, print the handshake, wait for stdin to close."""
    nonce = os.environ.get(_NONCE_ENV, "")
    handshake = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's own prints go to the log, never into the handshake
    sys.stdout = sys.stderr

    def say(msg: dict[str, Any]) -> None:
        handshake.write(f"{nonce} {json.dumps(msg)}\n")
        handshake.flush()

    try:
        options = json.loads(sys.stdin.readline() or "{}")
        from evalcore.agents._adapters import build_in_process
        from evalcore.agents._http import serve_agent

        agent = build_in_process(argv[0], **options)
        server = serve_agent(agent, "127.0.0.1", 0)
    except BaseException as exc:  # anything: the parent must hear why
        say({"error": str(exc) if isinstance(exc, EvalcoreError) else f"{type(exc).__name__}: {exc}"})
        return 2
    threshold = getattr(agent, "threshold", None)
    say({"url": server.url, "has_registry": getattr(agent, "registry", None) is not None,
         "threshold": threshold if isinstance(threshold, (int, float)) and not isinstance(threshold, bool) else None})
    handshake.close()
    try:
        sys.stdin.read()  # returns when the parent closes the pipe or dies
    finally:
        server.close()
        close = getattr(agent, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
