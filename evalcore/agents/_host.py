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

from evalcore.agents import _host_isolation as isolation
from evalcore.agents._host_isolation import _HIDE_ENV, _NETWORK_ENV, _RUNTIME_ENV, _WRITABLE_ENV, _isolate
from evalcore.agents._host_limits import (
    _SOCKET_ENV,
    MAX_LOG_BYTES,
    MAX_PROCESSES,
    MEMORY_MB,
    AgentCgroup,
    LogDrain,
    _kill_all,
    _reap,
    join_limits,
    limits_env,
    listening_socket,
    serve_on_socket,
)
from evalcore.agents._http import HttpAgent
from evalcore.errors import EvalcoreError

_NONCE_ENV = "EVALCORE_AGENT_HOST_NONCE"

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
        env = dict(os.environ)
        env[_NONCE_ENV] = nonce
        # the child resolves modules as this process does (the current directory included)
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
        self._log = tempfile.NamedTemporaryFile(prefix="evalcore_agent_", suffix=".log", delete=False)
        self.log_path = Path(self._log.name)
        self.isolation = "weak"
        self.isolation_notes: list[str] = []
        self._sockdir = tempfile.mkdtemp(prefix="evalcore-agent-")
        self._cgroup = AgentCgroup(memory_mb, max_processes)
        env.update(limits_env(self._cgroup, memory_mb, max_processes))
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
        assert self._proc.stderr is not None
        self._drain = LogDrain(self._proc.stderr, self._log, max_log_bytes)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(payload.encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:
            pass
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
        if msg is None or "url" not in msg:
            self._stop()
            why = (msg or {}).get("error") if msg else None
            if why is None:
                why = (
                    f"did not start within {startup_timeout_s:g} s"
                    if reader.is_alive()
                    else f"exited with status {self._proc.returncode}: {self._log_tail()}"
                )
            raise EvalcoreError(f"agent {spec!r}: {why}", field="agent")
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


def _jupyter_runtime_dir() -> list[str]:
    """Jupyter's runtime folder (kernels' connection files), where Jupyter is installed."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return [jupyter_runtime_dir()]
    except Exception:
        return []


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
    import select

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
    if status is None:
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
    if not isolation._namespaced:
        # (with namespaces the kernel kills the namespace when this process exits; and where
        # the namespace's own /proc could not be mounted, the PIDs read there are the host's)
        _kill_all()
    if status is None:
        return 0
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _main(argv: list[str]) -> int:
    """Child side: isolate, fork evalcore's init (this process) and the agent's host (its
    child); the host builds the agent, serves it, prints the handshake and serves until the
    init asks it to close."""
    in_cgroup, limit_notes = join_limits()  # first of all: every process of the agent is counted
    level, notes = _isolate(argv[0] if argv else "")  # no agent code has been imported yet
    notes.extend(limit_notes)
    nonce = os.environ.get(_NONCE_ENV, "")
    options_line = sys.stdin.readline()
    libc = None
    if sys.platform.startswith("linux"):
        try:
            from evalcore.sandbox import linux

            libc = linux.Libc()
        except (OSError, AttributeError):
            libc = None
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
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    handshake = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's own prints go to the log, never into the handshake
    sys.stdout = sys.stderr

    def say(msg: dict[str, Any]) -> None:
        handshake.write(f"{nonce} {json.dumps(msg)}\n")
        handshake.flush()

    try:
        options = json.loads(options_line or "{}")
        from evalcore.agents._adapters import build_in_process

        agent = build_in_process(argv[0], **options)
        server = serve_on_socket(agent)
    except BaseException as exc:  # anything: the parent must hear why
        say({"error": str(exc) if isinstance(exc, EvalcoreError) else f"{type(exc).__name__}: {exc}"})
        return 2
    threshold = getattr(agent, "threshold", None)
    say(
        {
            "url": server.url,
            "cgroup": in_cgroup,
            "has_registry": getattr(agent, "registry", None) is not None,
            "isolation": level,
            "isolation_notes": notes,
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


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
