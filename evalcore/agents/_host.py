"""Host a Python factory agent in a fresh interpreter of its own and talk to it over HTTP.

The evaluator never shares a process with the agent it evaluates: :class:`HostedAgent` starts
``python -m evalcore.agents._host`` (a new interpreter), which imports the factory, builds the
agent and serves it with :class:`~evalcore.agents.AgentServer` on 127.0.0.1 (the wire protocol
of :mod:`evalcore.agents._http`). The evaluator holds an :class:`~evalcore.agents.HttpAgent`
on that URL, so only JSON crosses between the two: the agent cannot read the evaluator's frames
or patch its code, and the evaluator never touches the agent's objects.

The child prints one handshake line, tagged with a nonce the parent drew, on a private copy of
its standard output, then serves until its standard input closes (the parent closed it, or
died). Bounds (:mod:`evalcore.agents._host_limits`): the agent runs in a memory and process
cgroup the evaluator made (rlimits where it cannot make one), in a network namespace of its own
(only a loopback; it serves on a Unix socket the evaluator handed down, so it reaches neither
the host's services nor the evaluator but through it), and its standard error goes through a
pipe into a log file of bounded size.

Isolation. A separate process of the same user could still read the evaluator's memory
(``/proc/<pid>/mem``) and outlive it. So the child, before it imports any agent code, enters
new user, PID and mount namespaces (the helpers of the code-execution sandbox,
:mod:`evalcore.sandbox.linux`), forks PID 1 of its PID namespace — evalcore's own
small init, which never runs agent code — mounts a fresh ``/proc`` there (only the namespace's
processes are visible: the evaluator has no PID it could name) and forks the process that hosts
the agent (PID 2, its parent the init), which gives up every capability for good (so the fresh
``/proc`` cannot be unmounted to show the old one). The init ends when the evaluator closes its
standard input or dies; it then asks the host to close its agent, waits at most two seconds and
exits, and with it the kernel kills every process of the namespace, also those that cleared
their parent-death signal or started a session of their own. The file system is
read-only for the agent: it cannot rewrite the evaluator's code, its virtual environment (a
``.pth`` file there would run in every later interpreter), its run store or its reports, which
the evaluator imports and reads after the agent started. The agent writes to a private, empty
``/tmp``, ``/var/tmp`` and ``/dev/shm`` of its own (tmpfs; what it keeps there is gone with it)
and to the directories the caller names (``writable``); under ``/tmp`` it sees only its working
directory, its import path, the folder of its factory file and evalcore's package folder (an
editable install imports it through a hook, not ``sys.path``), read-only. The paths the evaluator
names (``hide``: the cases file with the expected answers, the output folder with earlier results
and their seeds) and Jupyter's runtime folder (a kernel's connection file holds the key that lets
a client run code in that kernel, e.g. the notebook that evaluates the agent) lie under an empty
read-only file or directory in the agent's mount namespace. This is isolation level ``"full"``.
Where the kernel refuses the namespaces, or a mount above fails, the level is ``"weak"`` (the
notes say what was not done). In both cases the evaluator sets itself non-dumpable while it hosts agents (``prctl
PR_SET_DUMPABLE 0``: a process of the same user without ``CAP_SYS_PTRACE`` cannot open its
memory), restored when the last hosted agent closes. The child runs in a process group (and
session) of its own; closing the agent kills the whole group. With ``"weak"`` the init is a
child subreaper instead of PID 1: every process the agent starts is re-parented to it when its
parent ends, and killed, generation by generation, before the init exits.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.agents._host_child import _NONCE_ENV
from evalcore.agents._host_isolation import _HIDE_ENV, _NETWORK_ENV, _RUNTIME_ENV, _WRITABLE_ENV
from evalcore.agents._host_limits import (
    _SOCKET_ENV,
    MAX_LOG_BYTES,
    MAX_PROCESSES,
    MEMORY_MB,
    AgentCgroup,
    LogDrain,
    limits_env,
    listening_socket,
)
from evalcore.agents._http import HttpAgent
from evalcore.errors import EvalcoreError

# The evaluator is non-dumpable while it hosts at least one agent (see the module docstring).
_guard_lock = threading.Lock()
_guard_count = 0
_guard_before: int | None = None


def _prctl(option: int, arg: int = 0) -> int | None:
    """``prctl(option, arg)`` (None where it cannot be called)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        from evalcore.sandbox import linux

        return int(linux.Libc().lib.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def _guard_enter() -> None:
    global _guard_count, _guard_before
    from evalcore.sandbox import linux

    with _guard_lock:
        if _guard_count == 0:
            _guard_before = _prctl(linux.PR_GET_DUMPABLE)
            _prctl(linux.PR_SET_DUMPABLE, 0)
        _guard_count += 1


def _guard_exit() -> None:
    global _guard_count
    from evalcore.sandbox import linux

    with _guard_lock:
        _guard_count = max(0, _guard_count - 1)
        if _guard_count == 0 and _guard_before:
            _prctl(linux.PR_SET_DUMPABLE, _guard_before)


class HostedAgent(HttpAgent):
    """A ``module:function`` agent running in a subprocess, seen through HTTP.

    Args:
        spec: ``"module:function"`` or ``"path/to/file.py:function"``.
        options: Keyword arguments for the factory (JSON values only: they cross a pipe).
        timeout_s: Per-request timeout (default 30 s).
        startup_timeout_s: How long building the agent may take.
        threshold: The agent's similarity threshold when known (default: ``options["threshold"]``).
        hide: Paths the agent must not read (the evaluator's answer key: a cases file, the
            results folder), covered in the agent's mount namespace; a directory that holds the
            working directory or the agent's import path stays visible (a note says so).
            Jupyter's runtime folder is always hidden.
        writable: Directories the agent may write to (a file stands for its directory), e.g.
            the folder of a registry it keeps between runs; the rest of the file system is
            read-only for it, except its private ``/tmp``, ``/var/tmp`` and ``/dev/shm``.
        memory_mb: Memory of the agent, all its processes together (its cgroup's limit; an
            rlimit per process where no cgroup can be made).
        max_processes: Processes (and threads) the agent may have at once.
        network: Let the agent use the host's network (None: only the reference agent with an
            endpoint model, ``openai:``/``openai-compatible:``, or where the environment says
            ``EVALCORE_AGENT_NETWORK=shared``); otherwise it has a network namespace of its own
            and talks to the evaluator over a Unix socket only.
        max_log_bytes: Most bytes of the agent's standard error kept on disk.

    Raises:
        EvalcoreError: The factory cannot be imported or fails, its agent does not meet the
            protocol, the options are not JSON, or the child does not start in time.
    """

    def __init__(
        self,
        spec: str,
        options: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 30.0,
        startup_timeout_s: float = 300.0,
        threshold: float | None = None,
        hide: Sequence[str | os.PathLike[str]] = (),
        writable: Sequence[str | os.PathLike[str]] = (),
        memory_mb: int = MEMORY_MB,
        max_processes: int = MAX_PROCESSES,
        network: bool | None = None,
        max_log_bytes: int = MAX_LOG_BYTES,
    ) -> None:
        options = dict(options or {})
        try:
            payload = json.dumps(options)
        except (TypeError, ValueError) as exc:
            raise EvalcoreError(f"options of a hosted agent must be JSON values: {exc}", field="agent") from exc
        self.spec = spec
        nonce = secrets.token_hex(16)
        env = _child_env(spec, options, nonce, hide, writable, network)
        self._log = tempfile.NamedTemporaryFile(prefix="evalcore_agent_", suffix=".log", delete=False)
        self.log_path = Path(self._log.name)
        self.isolation = "weak"
        self.isolation_notes: list[str] = []
        self._sockdir = tempfile.mkdtemp(prefix="evalcore-agent-")
        self._cgroup = AgentCgroup(memory_mb, max_processes)
        env.update(limits_env(self._cgroup, memory_mb, max_processes))
        self._start(spec, env)
        assert self._proc.stderr is not None
        self._drain = LogDrain(self._proc.stderr, self._log, max_log_bytes)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(payload.encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:
            pass
        msg = self._handshake(spec, nonce, startup_timeout_s)
        self.isolation = "full" if msg.get("isolation") == "full" else "weak"
        self.isolation_notes = [
            *(str(n) for n in msg.get("isolation_notes") or []),
            *self._cgroup.notes,
            f"the agent's log is kept to {max_log_bytes} bytes",
        ]
        if threshold is None:
            t = options.get("threshold", msg.get("threshold"))
            threshold = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None
        super().__init__(
            "http://hosted-agent/",
            timeout_s=timeout_s,
            has_registry=bool(msg.get("has_registry", True)),
            threshold=threshold,
            uds=os.path.join(self._sockdir, "agent.sock"),
        )

    def _start(self, spec: str, env: dict[str, str]) -> None:
        """Start ``python -m evalcore.agents._host spec`` with the listening socket handed down
        (the evaluator non-dumpable from now on; undone if the start fails)."""
        _guard_enter()
        self._guarded = True
        try:
            sock = listening_socket(self._sockdir)
            env[_SOCKET_ENV] = str(sock.fileno())
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", "evalcore.agents._host", spec],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,  # drained into a bounded log (LogDrain)
                    env=env,
                    pass_fds=(sock.fileno(),),
                    start_new_session=True,  # a process group of its own, killed whole on close
                )
            finally:
                sock.close()  # the agent's host serves on it; this process connects to its path
        except BaseException:
            self._release_guard()
            self._cgroup.close()
            shutil.rmtree(self._sockdir, ignore_errors=True)
            raise

    def _handshake(self, spec: str, nonce: str, startup_timeout_s: float) -> dict[str, Any]:
        """The child's handshake (its URL, isolation and notes).

        Raises:
            EvalcoreError: The child said why it cannot serve the agent (an error the agent's
                factory raised as EvalcoreError is raised as it is: it names the spec, the
                file and what failed), sent no handshake in time, or exited.
        """
        box: dict[str, Any] = {}

        def read() -> None:
            # (bounded: the agent's code runs in the child before the handshake and could write
            # to it; a line past 64 KiB or 1 MiB in all is no handshake)
            assert self._proc.stdout is not None
            total = 0
            while total < 2**20:
                raw = self._proc.stdout.readline(2**16)
                if not raw:
                    return
                total += len(raw)
                line = raw.decode(errors="replace").strip()
                if line.startswith(nonce + " "):
                    try:
                        msg = json.loads(line[len(nonce) + 1 :])
                    except (ValueError, RecursionError):
                        msg = None
                    box["msg"] = msg if isinstance(msg, dict) else {"error": "malformed handshake"}
                    return
            box["msg"] = {"error": "more than 1 MiB on the handshake pipe before the handshake"}

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(startup_timeout_s)
        msg = box.get("msg")
        if msg is not None and "url" in msg:
            return msg
        self._stop()
        if msg is not None and isinstance(msg.get("reason"), str):
            raise _told_error(msg)
        why = (msg or {}).get("error") if msg else None
        if why is None:
            why = (
                f"did not start within {startup_timeout_s:g} s"
                if reader.is_alive()
                else f"exited with status {self._proc.returncode}: {self._log_tail()}"
            )
        raise EvalcoreError(f"agent {spec!r}: {why}", field="agent")

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

    def cgroup_memory_mb(self) -> float | None:
        """Memory of the agent's processes together as its memory cgroup counts it, in MB
        (page cache, tmpfs and memory files included; None where it has no memory cgroup)."""
        used = self._cgroup.memory_bytes()
        return None if used is None else used / 2**20

    def _log_tail(self, n: int = 600) -> str:
        """The end of the agent's log (only its last bytes are read; the log itself is bounded
        by :class:`LogDrain`), control characters but line breaks escaped."""
        from evalcore._io import terminal_safe

        drain = getattr(self, "_drain", None)
        if drain is not None:
            drain.tail(0, wait_s=1.0)  # what the agent wrote before it ended is in the file
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - 4 * n))
                text = fh.read(4 * n).decode(errors="replace").strip()
        except OSError:
            text = ""
        return terminal_safe(text, keep_newlines=True)[-n:] or "no output"

    def _release_guard(self) -> None:
        if getattr(self, "_guarded", False):
            self._guarded = False
            _guard_exit()

    def _stop(self) -> None:
        proc = self._proc
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        # Let the child end of itself (closing its standard input asks it to), without reaping
        # it: while it is a zombie its process group id cannot be reused, so the group kill
        # below reaches only processes the agent started.
        deadline = time.monotonic() + 5
        while proc.returncode is None and time.monotonic() < deadline:
            try:
                if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                    break
            except ChildProcessError:
                break
            time.sleep(0.02)
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child and everything left in its group
            except (ProcessLookupError, PermissionError):
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        self._cgroup.close()  # whatever is left of the agent in its cgroup (none with namespaces)
        self._release_guard()
        if proc.stdout is not None:
            proc.stdout.close()
        self._drain.tail(0, wait_s=1.0)  # the log's end and marker written
        self._log.close()
        shutil.rmtree(self._sockdir, ignore_errors=True)
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
        if self._proc.returncode is None or not self._log.closed:  # (not reaped yet: see _stop)
            self._stop()

    def __del__(self) -> None:
        try:
            if self._proc.returncode is None or not self._log.closed:
                self._stop()
        except Exception:
            pass


def _child_env(
    spec: str,
    options: Mapping[str, Any],
    nonce: str,
    hide: Sequence[str | os.PathLike[str]],
    writable: Sequence[str | os.PathLike[str]],
    network: bool | None,
) -> dict[str, str]:
    """The hosting child's environment: this one's, with the handshake nonce, the import path
    (the child resolves modules as this process does, the current directory included), the
    paths to hide and to leave writable, Jupyter's runtime folder and the network it gets (see
    :class:`HostedAgent`)."""
    env = dict(os.environ)
    env[_NONCE_ENV] = nonce
    paths = [p if p else os.getcwd() for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env[_HIDE_ENV] = json.dumps([os.path.abspath(os.fspath(p)) for p in hide])
    env[_RUNTIME_ENV] = json.dumps(_jupyter_runtime_dir())
    env[_WRITABLE_ENV] = json.dumps([os.path.abspath(os.fspath(p)) for p in writable])
    if network is None:
        model = options.get("model")
        network = os.environ.get("EVALCORE_AGENT_NETWORK", "") == "shared" or (
            spec.endswith("reference:make_agent")
            and isinstance(model, str)
            and model.split(":", 1)[0] in ("openai", "openai-compatible")
        )
    env[_NETWORK_ENV] = "shared" if network else "own"
    return env


def _told_error(msg: Mapping[str, Any]) -> EvalcoreError:
    """The EvalcoreError the child reported (building the agent failed), as it was raised there."""
    line = msg.get("line")
    return EvalcoreError(
        str(msg["reason"]),
        path=msg["path"] if isinstance(msg.get("path"), str) else None,
        line=line if isinstance(line, int) and not isinstance(line, bool) else None,
        field=msg["field"] if isinstance(msg.get("field"), str) else None,
    )


def _jupyter_runtime_dir() -> list[str]:
    """Jupyter's runtime folder (kernels' connection files), where Jupyter is installed."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return [jupyter_runtime_dir()]
    except Exception:
        return []


if __name__ == "__main__":
    from evalcore.agents._host_child import _main

    sys.exit(_main(sys.argv[1:]))
