"""Resource bounds of a hosted agent (see :mod:`evalcore.agents._host`): a memory and process
cgroup made by the evaluator (rlimits in the agent's process where no cgroup can be made), the
agent's log drained from a pipe into a file of bounded size, and the Unix socket the agent
serves on (its network namespace is empty: it has no route to the evaluator but that socket).

Evaluator side: :class:`AgentCgroup`, :class:`LogDrain`, :func:`listening_socket`. Child side
(before any agent code): :func:`join_limits`, :func:`serve_on_socket`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from typing import IO, Any

MEMORY_MB = 4096
"""Default memory of a hosted agent, all its processes together (MB; ``HostedAgent(memory_mb=)``)."""

MAX_PROCESSES = 256
"""Default number of processes (threads included, as the kernel counts them) a hosted agent may
have at once (``HostedAgent(max_processes=)``)."""

MAX_LOG_BYTES = 8 * 2**20
"""Most bytes of a hosted agent's standard error kept on the evaluator's disk (8 MiB); past it
the log keeps a marker and the last 64 KiB."""

_CGROUP_ENV = "EVALCORE_AGENT_HOST_CGROUPS"
_LIMITS_ENV = "EVALCORE_AGENT_HOST_LIMITS"
_SOCKET_ENV = "EVALCORE_AGENT_HOST_SOCKET"
_TAIL_BYTES = 64 * 1024


# ----------------------------------------------------------------------------- evaluator side
def _cgroup_bases() -> list[tuple[str, str]]:
    """``(kind, directory)`` of this process's own cgroups that can hold an agent's: the v1
    ``memory`` and ``pids`` hierarchies (the first of each), or the v2 unified one (kind ``"v2"``)
    where there is no v1 one (the sandbox's :func:`~evalcore.sandbox.cgroup_bases` finds them)."""
    from evalcore.sandbox import cgroup_bases

    try:
        found = cgroup_bases(("memory", "pids"))
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    for kind, base in found:
        if kind != "v2" and kind not in {k for k, _ in out}:
            out.append((kind, base))
    return out or [b for b in found if b[0] == "v2"][:1]


class AgentCgroup:
    """The memory and process cgroups of one hosted agent, below the evaluator's own (cgroup v1
    ``memory`` and ``pids`` hierarchies, or v2 where the evaluator's cgroup delegates both
    controllers). The agent's process joins them before any agent code runs
    (:func:`join_limits`), so every process it starts is counted; :meth:`close` kills whatever
    is left in them and removes them.

    Attributes:
        procs: The ``cgroup.procs`` files the agent joins (empty when none could be made).
        notes: What was done, or why not.
    """

    def __init__(self, memory_mb: int, max_processes: int) -> None:
        self.dirs: list[str] = []
        self.procs: list[str] = []
        self.notes: list[str] = []
        if os.environ.get("EVALCORE_AGENT_CGROUP", "1") == "0":
            self.notes.append("no cgroup for the agent: EVALCORE_AGENT_CGROUP=0")
            return
        limits = {"memory": False, "pids": False}
        name = f"evalcore-agent-{os.getpid()}-{os.urandom(4).hex()}"
        for kind, base in _cgroup_bases():
            d = f"{base.rstrip('/')}/{name}"
            try:
                os.mkdir(d, 0o755)
            except OSError as exc:
                self.notes.append(f"no {kind} cgroup for the agent in {base} ({exc.strerror})")
                continue
            self.dirs.append(d)
            try:
                if kind in ("memory", "v2") and _write_memory(d, kind, memory_mb):
                    limits["memory"] = True
                if kind in ("pids", "v2") and os.path.exists(f"{d}/pids.max"):
                    _write(f"{d}/pids.max", str(max_processes))
                    limits["pids"] = True
                self.procs.append(f"{d}/cgroup.procs")
            except OSError as exc:
                self.notes.append(f"the agent's {kind} cgroup {d} refused its limit ({exc.strerror})")
        if limits["memory"] and limits["pids"]:
            self.notes.append(
                f"the agent runs in a memory and process cgroup of its own ({memory_mb} MB, {max_processes} processes)"
            )
        elif not self.notes:
            self.notes.append("no memory and process cgroup could be made for the agent")

    @property
    def complete(self) -> bool:
        """Both limits (memory and processes) are set."""
        return any("memory and process cgroup of its own" in n for n in self.notes)

    def memory_bytes(self) -> int | None:
        """What the agent's processes use now, as its memory cgroup counts it (page cache, tmpfs
        and memory files included; None without a memory cgroup)."""
        for d in self.dirs:
            for name in ("memory.usage_in_bytes", "memory.current"):
                try:
                    with open(f"{d}/{name}") as fh:
                        return int(fh.read().strip())
                except (OSError, ValueError):
                    continue
        return None

    def members(self) -> list[int]:
        """The processes in the agent's cgroups now."""
        out: set[int] = set()
        for path in self.procs:
            try:
                with open(path) as fh:
                    out.update(int(x) for x in fh.read().split())
            except (OSError, ValueError):
                pass
        return sorted(out)

    def close(self, deadline_s: float = 2.0) -> None:
        """Kill every process left in the agent's cgroups, then remove them."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            left = self.members()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)
        for d in self.dirs:
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.dirs = []


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _write_memory(d: str, kind: str, memory_mb: int) -> bool:
    limit = str(int(memory_mb) * 2**20)
    if kind == "v2":
        if not os.path.exists(f"{d}/memory.max"):
            return False
        _write(f"{d}/memory.max", limit)
        if os.path.exists(f"{d}/memory.swap.max"):
            _write(f"{d}/memory.swap.max", "0")
        return True
    _write(f"{d}/memory.limit_in_bytes", limit)
    if os.path.exists(f"{d}/memory.memsw.limit_in_bytes"):
        _write(f"{d}/memory.memsw.limit_in_bytes", limit)  # no swap beyond the limit
    return True


def limits_env(cgroup: AgentCgroup, memory_mb: int, max_processes: int) -> dict[str, str]:
    """What the hosted process reads in :func:`join_limits` (taken out of its environment there)."""
    return {
        _CGROUP_ENV: json.dumps(cgroup.procs),
        _LIMITS_ENV: json.dumps({"memory_mb": int(memory_mb), "processes": int(max_processes)}),
    }


class LogDrain:
    """The agent's standard error, read from a pipe on a thread of the evaluator and written
    to ``sink`` up to ``cap`` bytes; beyond that the bytes are counted, not kept, and when the
    pipe closes a marker and the last 64 KiB are added. The agent cannot grow a file on the
    evaluator's disk (a pipe cannot be ``fallocate``-d or seeked either), and never blocks on a
    full pipe: everything is read.
    """

    def __init__(self, fd: IO[bytes], sink: IO[bytes], cap: int = MAX_LOG_BYTES) -> None:
        self._fd = fd
        self._sink = sink
        self.cap = int(cap)
        self.written = 0
        self.dropped = 0
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True, name="evalcore-agent-log")
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                try:
                    data = os.read(self._fd.fileno(), 65536)
                except OSError:
                    break
                if not data:
                    break
                with self._lock:
                    self._tail += data
                    del self._tail[: max(0, len(self._tail) - _TAIL_BYTES)]
                    room = self.cap - self.written
                    keep = data[: max(0, room)]
                    if keep:
                        self._sink.write(keep)
                        self._sink.flush()
                        self.written += len(keep)
                    self.dropped += len(data) - len(keep)
            with self._lock:
                if self.dropped:
                    self._sink.write(
                        f"\n[evalcore: log cut at {self.cap} bytes, {self.dropped} more bytes not kept; "
                        f"its last {len(self._tail)} bytes follow]\n".encode()
                    )
                    self._sink.write(bytes(self._tail))
                    self._sink.flush()
        except (OSError, ValueError):
            pass
        finally:
            try:
                self._fd.close()
            except OSError:
                pass

    def tail(self, n: int, wait_s: float = 1.0) -> str:
        """The last ``n`` characters the agent wrote (waits up to ``wait_s`` for the pipe to close)."""
        self._thread.join(wait_s)
        with self._lock:
            return bytes(self._tail[-4 * n :]).decode(errors="replace").strip()[-n:]


def listening_socket(directory: str) -> socket.socket:
    """A Unix stream socket listening at ``directory/agent.sock`` (the directory is the
    evaluator's, mode 0700): the hosted agent inherits it and serves on it, the evaluator
    connects to its path."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.path.join(directory, "agent.sock"))
    sock.listen(64)
    return sock


# -------------------------------------------------------------------------------- child side
def _descendants_of_mine() -> list[int]:
    """Processes whose parent is this one (orphans of the agent are re-parented here: this
    process is PID 1 of the namespace, or a child subreaper)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == me and fields[0] != b"Z":
            out.append(int(entry))
    return out


def _reap() -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return out
        except InterruptedError:
            continue
        if pid == 0:
            return out
        out.append((pid, status))


def _kill_all(deadline_s: float = 2.0) -> None:
    """SIGKILL every process left below this one, until none is (a killed process's children
    are re-parented here, so each round reaches the next generation)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        _reap()
        left = _descendants_of_mine()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def join_limits() -> tuple[bool, list[str]]:
    """In the hosted process, before any agent code: join the agent's cgroups; where none was
    made (an unprivileged evaluator without a delegated cgroup), set rlimits instead
    (``RLIMIT_DATA`` to the memory, ``RLIMIT_NPROC`` to the processes this user has now plus the
    agent's allowance) -- bounds that hold per process and per user, not for the agent's
    processes together.

    Returns:
        ``(in a cgroup, notes)``.
    """
    import resource

    try:
        procs = json.loads(os.environ.pop(_CGROUP_ENV, "[]") or "[]")
        limits = json.loads(os.environ.pop(_LIMITS_ENV, "{}") or "{}")
    except ValueError:
        procs, limits = [], {}
    memory_mb = int(limits.get("memory_mb") or MEMORY_MB)
    processes = int(limits.get("processes") or MAX_PROCESSES)
    joined = 0
    notes: list[str] = []
    for path in procs if isinstance(procs, list) else []:
        try:
            _write(str(path), str(os.getpid()))
            joined += 1
        except OSError as exc:
            notes.append(f"could not join the agent's cgroup {path} ({exc.strerror})")
    if procs and joined == len(procs):
        return True, notes
    data = memory_mb * 2**20
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        cap = data if hard == resource.RLIM_INFINITY else min(data, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
        mine = _processes_of(os.getuid())
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        n = mine + processes if hard == resource.RLIM_INFINITY else min(mine + processes, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        notes.append(
            f"no cgroup for the agent: rlimits instead (data {memory_mb} MB per process, at most "
            f"{processes} more processes of this user)"
        )
    except (OSError, ValueError) as exc:
        notes.append(f"no cgroup for the agent and its rlimits were refused ({exc})")
    return False, notes


def _processes_of(uid: int) -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) of ``uid`` now."""
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                st = os.stat(f"/proc/{entry}")
                if st.st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                pass
    return n


def serve_on_socket(agent: Any) -> Any:
    """Serve ``agent`` (the wire protocol of :mod:`evalcore.agents._http_server`) on the Unix
    socket the evaluator handed down (its descriptor in the environment); returns an object
    with ``close()``. Raises OSError when there is none."""
    import socketserver

    from evalcore.agents._http_server import POLL_S, _make_handler

    fd = int(os.environ.pop(_SOCKET_ENV, "-1"))
    if fd < 0:
        raise OSError("no socket handed down by the evaluator")

    class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    server = _Server("", _make_handler(agent), bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=fd)
    thread = threading.Thread(
        target=server.serve_forever, name="evalcore-agent-server", kwargs={"poll_interval": POLL_S}, daemon=True
    )
    thread.start()

    class _Handle:
        url = "unix"

        def close(self) -> None:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

    return _Handle()
