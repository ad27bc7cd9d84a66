"""The child side of a hosted agent (see :mod:`evalcore.agents._host`): isolate, fork evalcore's
own small init and the agent's host; the host builds the agent, serves it, prints the handshake
and serves until the init asks it to close."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from evalcore.agents import _host_isolation as isolation
from evalcore.agents._host_isolation import _isolate
from evalcore.agents._host_limits import _kill_all, _reap, join_limits, serve_on_socket
from evalcore.errors import EvalcoreError

_NONCE_ENV = "EVALCORE_AGENT_HOST_NONCE"

# How long the agent's host may take to close its agent (save a registry …) once the evaluation
# ends, before everything of the agent is killed.
_CLOSE_GRACE_S = 2.0
PR_SET_CHILD_SUBREAPER = 36


def _init(agent_pid: int, libc: Any) -> int:
    """evalcore's own small init: the parent of the agent's host, never running agent code.

    With namespaces it is PID 1 of the agent's PID namespace: the agent cannot signal it (the
    kernel drops signals to a namespace's init that it has no handler for, SIGKILL included)
    and, non-dumpable and without capabilities, cannot trace it; when it exits, the kernel
    kills every process of the namespace, whatever they did to their parent-death signal or
    session. Without namespaces it is a child subreaper: every orphan of the agent is
    re-parented to it and killed before it exits.

    It ends when the evaluator closes its standard input (or dies: its parent-death signal
    then ends it), or when the agent's host exits. The host is asked to close its agent
    (SIGTERM) and given :data:`_CLOSE_GRACE_S`; then everything of the agent is killed.

    Returns:
        The exit status to pass on: the host's own when it ended first, else 0.
    """
    _init_setup(libc)
    status = _wait_for_end(agent_pid)
    if status is None:
        status = _close_agent(agent_pid)
    if not isolation._namespaced:
        # (with namespaces the kernel kills the namespace when this process exits; and where
        # the namespace's own /proc could not be mounted, the PIDs read there are the host's)
        _kill_all()
    if status is None:
        return 0
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _init_setup(libc: Any) -> None:
    """The init's standard output to /dev/null (only the agent's host holds the handshake
    pipe), signals ignored, non-dumpable, and a child subreaper without namespaces or without
    capabilities with them."""
    from evalcore.sandbox import linux

    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # only the agent's host holds the handshake pipe
    os.close(devnull)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    if libc is not None:
        libc.lib.prctl(linux.PR_SET_DUMPABLE, 0, 0, 0, 0)
        if not isolation._namespaced:
            libc.lib.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        else:
            try:
                linux.drop_capabilities(libc)
            except OSError:
                pass


def _wait_for_end(agent_pid: int) -> int | None:
    """Reap until the agent's host exits (its wait status) or the evaluator closes the init's
    standard input (None)."""
    import select

    status: int | None = None
    while status is None:
        try:
            ready, _, _ = select.select([0], [], [], 0.1)
        except InterruptedError:
            continue
        for pid, st in _reap():
            if pid == agent_pid:
                status = st
        if status is None and ready:
            try:
                data = os.read(0, 65536)
            except OSError:
                data = b""
            if not data:
                break  # the evaluation is over
    return status


def _close_agent(agent_pid: int) -> int | None:
    """Ask the agent's host to close its agent (SIGTERM) and reap it for at most
    :data:`_CLOSE_GRACE_S`; its wait status, or None when it did not end in time."""
    status: int | None = None
    try:
        os.kill(agent_pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    end = time.monotonic() + _CLOSE_GRACE_S
    while status is None and time.monotonic() < end:
        for pid, st in _reap():
            if pid == agent_pid:
                status = st
        time.sleep(0.01)
    return status


def _load_libc() -> Any:
    """The C library (None where it cannot be loaded or off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        from evalcore.sandbox import linux

        return linux.Libc()
    except (OSError, AttributeError):
        return None


def _main(argv: list[str]) -> int:
    """Child side: isolate, fork evalcore's init (this process) and the agent's host (its
    child); the host builds the agent, serves it, prints the handshake and serves until the
    init asks it to close."""
    in_cgroup, limit_notes = join_limits()  # first of all: every process of the agent is counted
    level, notes = _isolate(argv[0] if argv else "")  # no agent code has been imported yet
    notes.extend(limit_notes)
    nonce = os.environ.get(_NONCE_ENV, "")
    options_line = sys.stdin.readline()
    libc = _load_libc()
    sys.stdout.flush()
    sys.stderr.flush()
    init_pid = os.getpid()
    agent_pid = os.fork()
    if agent_pid:
        os._exit(_init(agent_pid, libc))
    # The agent's host, a child of evalcore's init.
    if libc is not None:
        from evalcore.sandbox import linux

        libc.lib.prctl(linux.PR_SET_PDEATHSIG, linux.SIGKILL, 0, 0, 0)
    if os.getppid() != init_pid:  # the init ended before the line above
        os._exit(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    level = _host_notes(level, notes, libc)
    return _host(argv, options_line, nonce, {"cgroup": in_cgroup, "isolation": level, "isolation_notes": notes})


def _host_notes(level: str, notes: list[str], libc: Any) -> str:
    """With namespaces, drop every capability of the agent's host (the level falls to weak
    where that fails); note who ends the agent's processes. Returns the isolation level."""
    if isolation._namespaced:
        try:
            from evalcore.sandbox import linux

            if libc is None:
                raise OSError("the C library could not be loaded")
            linux.drop_capabilities(libc)
        except OSError as exc:
            level = "weak"
            notes.append(f"could not drop capabilities ({exc})")
        notes.append(
            "the agent runs under evalcore's own init (PID 1 of its namespace), which ends every "
            "process of the namespace when the evaluation ends"
        )
    else:
        notes.append(
            "the agent runs under evalcore's own init, a child subreaper that kills every process "
            "the agent started (also those in a session of their own) when the evaluation ends"
        )
    return level


def _host(argv: list[str], options_line: str, nonce: str, hello: dict[str, Any]) -> int:
    """The agent's host: build the agent, serve it, send the handshake (``hello`` and what the
    agent says of itself), serve until SIGTERM, then close the agent."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    handshake = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's own prints go to the log, never into the handshake
    sys.stdout = sys.stderr

    def say(msg: dict[str, Any]) -> None:
        handshake.write(f"{nonce} {json.dumps(msg)}\n")
        handshake.flush()

    built = _build(argv, options_line, say)
    if built is None:
        return 2
    agent, server = built
    threshold = getattr(agent, "threshold", None)
    say(
        {
            "url": server.url,
            "cgroup": hello["cgroup"],
            "has_registry": getattr(agent, "registry", None) is not None,
            "isolation": hello["isolation"],
            "isolation_notes": hello["isolation_notes"],
            "threshold": threshold if isinstance(threshold, (int, float)) and not isinstance(threshold, bool) else None,
        }
    )
    handshake.close()
    try:
        while not stop.wait(0.2):  # until the init asks (SIGTERM), or kills this process
            pass
    finally:
        server.close()
        close = getattr(agent, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                pass
    return 0


def _build(argv: list[str], options_line: str, say: Callable[[dict[str, Any]], None]) -> tuple[Any, Any] | None:
    """Build the agent and its server; on failure tell the parent why (an EvalcoreError with
    its path, line and field, so that the parent raises it as it is) and return None."""
    try:
        options = json.loads(options_line or "{}")
        from evalcore.agents._adapters import build_in_process

        agent = build_in_process(argv[0], **options)
        server = serve_on_socket(agent)
    except BaseException as exc:  # anything: the parent must hear why
        if isinstance(exc, EvalcoreError):
            say({"error": str(exc), "reason": exc.reason, "path": exc.path, "line": exc.line, "field": exc.field})
        else:
            say({"error": f"{type(exc).__name__}: {exc}"})
        return None
    return agent, server
