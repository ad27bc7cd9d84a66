"""The agent host's view of the file system, set up in the hosted process before any agent code
runs (see :mod:`evalcore.agents._host`): new user, PID and mount namespaces, a read-only root,
private scratch folders, the evaluator's hidden paths covered, the writable ones bound back.
:func:`_isolate` returns the isolation level and notes; :data:`_namespaced` says whether this
process became PID 1 of the agent's namespaces."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

_HIDE_ENV = "EVALCORE_AGENT_HOST_HIDE"
_WRITABLE_ENV = "EVALCORE_AGENT_HOST_WRITABLE"
_RUNTIME_ENV = "EVALCORE_AGENT_HOST_JUPYTER_RUNTIME"
_NETWORK_ENV = "EVALCORE_AGENT_HOST_NETWORK"  # "shared": the host's network (a model endpoint)
# The agent's private scratch directories (fresh tmpfs in its mount namespace).
_SCRATCH = {"/tmp": "size=512m,mode=1777", "/var/tmp": "size=512m,mode=1777", "/dev/shm": "size=256m,mode=1777"}


def _package_dir() -> str:
    """The folder of the ``evalcore`` package this interpreter runs. An editable install finds
    it through an import hook, not ``sys.path``, so it is kept visible by name (read-only), also
    where it lies under ``/tmp`` (a project cloned there: the agent's ``/tmp`` is private)."""
    import evalcore

    return os.path.dirname(os.path.abspath(evalcore.__file__))


def _hidden_paths(variable: str = _HIDE_ENV) -> list[str]:
    """The paths the evaluator asked to hide (taken out of the environment before agent code
    runs); a directory that holds the working directory or an import path stays (the agent's
    own code may live there)."""
    try:
        raw = json.loads(os.environ.pop(variable, "[]") or "[]")
    except ValueError:
        raw = []
    keep = [os.path.realpath(p or os.getcwd()) for p in (os.getcwd(), *sys.path, _package_dir())]
    out: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        path = os.path.realpath(str(item))
        if path in out or not os.path.exists(path) or path == "/":
            continue
        if os.path.isdir(path) and any(k == path or k.startswith(path + "/") for k in keep):
            continue
        out.append(path)
    return out


def _writable_paths() -> list[str]:
    """The directories the caller lets the agent write to (real paths; a file stands for its
    directory), taken out of the environment before agent code runs."""
    try:
        raw = json.loads(os.environ.pop(_WRITABLE_ENV, "[]") or "[]")
    except ValueError:
        raw = []
    out: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        path = os.path.realpath(str(item))
        if os.path.exists(path) and not os.path.isdir(path):
            path = os.path.dirname(path)
        if os.path.isdir(path) and path != "/" and path not in out:
            out.append(path)
    return out


def _outermost(paths: Sequence[str]) -> list[str]:
    """``paths`` without those that lie inside another of them."""
    return [p for p in paths if not any(p.startswith(q.rstrip("/") + "/") for q in paths if q != p)]


def _read_only_view(libc: Any, spec: str) -> tuple[list[str], list[str]]:
    """Make the file system read-only for the agent, with a private empty ``/tmp``, ``/var/tmp``
    and ``/dev/shm`` (the agent's import path, working directory and factory file bound back
    read-only where they lie there) and the caller's ``writable`` directories bound back
    writable (see the module docstring).

    Returns:
        The writable directories, and what could not be done (empty when all was).
    """
    from evalcore.sandbox import linux

    writable = _writable_paths()
    module = spec.rpartition(":")[0]
    keep = [os.getcwd(), *sys.path, _package_dir()]
    if module.endswith(".py"):
        keep.append(os.path.dirname(os.path.abspath(module)))
    scratch = [d for d in _SCRATCH if os.path.isdir(d) and not os.path.islink(d)]
    # A scratch folder itself (a working directory of /tmp) is not kept whole: what lies in it
    # that the agent needs (its factory's folder, evalcore's package) is kept by name.
    keep = _outermost(
        sorted(
            {os.path.realpath(p or os.getcwd()) for p in keep if os.path.isdir(p or ".")}
            - {os.path.realpath(d) for d in scratch}
            - {"/"}
        )
    )
    problems: list[str] = []
    # What to bind back into the private scratch directories, opened before anything changes.
    inside = [
        (p, p in writable) for p in sorted(set(keep) | set(writable)) if any(p.startswith(d + "/") for d in scratch)
    ]
    handles = [(p, rw, os.open(p, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) for p, rw in inside]
    try:
        failed = linux.remount_readonly(libc)
        if failed:
            problems.append(f"could not make {', '.join(failed)} read-only for the agent")
        for d in scratch:
            try:
                libc.mount("tmpfs", d, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, _SCRATCH[d])
            except OSError as exc:
                problems.append(f"no private {d} ({exc})")
        # Bound back from the read-only mounts, so read-only unless writable.
        binds = [(p, rw, f"/proc/self/fd/{fd}") for p, rw, fd in handles]
        binds += [(p, True, p) for p in writable if (p, True) not in inside]
        for p, rw, source in binds:
            try:
                os.makedirs(p, mode=0o755, exist_ok=True)
                libc.mount(source, p, None, linux.MS_BIND | linux.MS_REC)
                if rw:
                    linux.remount_writable(libc, p)
            except OSError as exc:
                problems.append(f"could not bind {p} for the agent ({exc})")
    finally:
        for _, _, fd in handles:
            os.close(fd)
    return writable, problems


def _own_network(libc: Any, shared: bool) -> tuple[str, str]:
    """Enter a fresh network namespace (only a loopback device, brought up: the agent may talk
    to itself, never to the host's services nor the evaluator but over the Unix socket it was
    handed), unless ``shared`` (the reference agent's model endpoint, or
    ``EVALCORE_AGENT_NETWORK=shared``). Returns the isolation level it allows and a note."""
    from evalcore.sandbox import linux

    if shared:
        return "full", "network shared with the host (the agent needs its model endpoint): local services are reachable"
    try:
        libc.unshare(linux.CLONE_NEWNET)
    except OSError as exc:
        return "weak", f"no network namespace of its own ({exc}): the host's network and local services are reachable"
    try:
        _loopback_up()
    except OSError as exc:
        return "full", f"a network namespace of its own, without network (its loopback stayed down: {exc})"
    return "full", "a network namespace of its own: only its own loopback, no route to the host or its services"


def _loopback_up() -> None:
    """``ip link set lo up`` in this network namespace (``SIOCSIFFLAGS``)."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifr = fcntl.ioctl(sock, siocgifflags, struct.pack("16sh22x", b"lo", 0))
        flags = struct.unpack("16sh22x", ifr)[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sh22x", b"lo", flags | iff_up))


def _cover(libc: Any, path: str) -> str | None:
    """Lay an empty read-only directory (tmpfs) or an empty file (``/dev/null``) over ``path``
    in this mount namespace; None when done, else why not."""
    from evalcore.sandbox import linux

    try:
        if os.path.isdir(path):
            libc.mount(
                "tmpfs",
                path,
                "tmpfs",
                linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC,
                "size=4k,mode=0555",
            )
        else:
            libc.mount("/dev/null", path, None, linux.MS_BIND)
    except OSError as exc:
        return str(exc)
    return None


def _isolate(spec: str = "") -> tuple[str, list[str]]:
    """Child side, before any agent code: enter new user, PID and mount namespaces, fork PID 1
    of the new PID namespace (this process waits for it and exits with its status), mount a
    fresh ``/proc``, cover the paths to hide, make the file system read-only but for private
    scratch directories and the ``writable`` ones, and drop every capability (see the module
    docstring).

    Returns:
        ``("full", [])`` in PID 1 of the namespaces, or ``("weak", [why])`` where the kernel
        refused them (then nothing has changed).
    """
    hide = _hidden_paths()
    runtime = [p for p in _hidden_paths(_RUNTIME_ENV) if p not in hide]
    unhidden = [f"{', '.join(hide)} not hidden from the agent"] if hide else []
    if not sys.platform.startswith("linux"):
        return "weak", [f"no namespaces on {sys.platform}", *unhidden]
    if os.environ.get("EVALCORE_AGENT_HOST_ISOLATION") == "weak":  # (to test the fallback)
        return "weak", ["namespaces not tried: EVALCORE_AGENT_HOST_ISOLATION=weak", *unhidden]
    shared = os.environ.pop(_NETWORK_ENV, "") == "shared"
    try:
        from evalcore.sandbox import linux

        libc = linux.Libc()
        linux.enter_user_namespace(libc, None, None)  # the same uid and gid inside
        libc.unshare(linux.CLONE_NEWPID | linux.CLONE_NEWNS)
    except (OSError, AttributeError) as exc:
        return "weak", [
            f"namespaces refused ({exc}): the agent runs as this user with the host's /proc and network",
            *unhidden,
        ]
    net_level, net_note = _own_network(libc, shared)
    pid = os.fork()
    if pid:
        _pass_on_exit(pid)
    libc.lib.prctl(linux.PR_SET_PDEATHSIG, linux.SIGKILL, 0, 0, 0)
    notes: list[str] = [net_note]
    level = net_level
    try:
        libc.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
        libc.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    except OSError as exc:
        level = "weak"
        notes.append(f"could not mount a /proc of the agent's own ({exc}): the host's /proc stays visible")
    if not _cover_all(libc, hide, runtime, notes):
        level = "weak"
    writable, problems = _read_only_view(libc, spec)
    if problems:
        level = "weak"
        notes.extend(problems)
    else:
        notes.append(
            "file system read-only for the agent, but for a private /tmp, /var/tmp and /dev/shm"
            + "".join(f", {p}" for p in writable)
        )
    global _namespaced
    _namespaced = True
    return level, notes


def _pass_on_exit(pid: int) -> None:
    """Outside the new PID namespace: wait for its PID 1 (``pid``) and exit with its status.
    (Killed, this process takes PID 1 with it through PR_SET_PDEATHSIG, and PID 1 its whole
    namespace.)"""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def _cover_all(libc: Any, hide: list[str], runtime: list[str], notes: list[str]) -> bool:
    """Cover the paths to hide and Jupyter's runtime folder, noting what was covered and what
    could not be; False when one could not."""
    ok = True
    covered = []
    for path in (*hide, *runtime):
        why = _cover(libc, path)
        if why:
            ok = False
            notes.append(f"could not hide {path} from the agent ({why})")
        else:
            covered.append(path)
    named = [p for p in covered if p in hide]
    if named:
        notes.append(f"hidden from the agent: {', '.join(named)}")
    if len(named) < len(covered):
        notes.append(
            "Jupyter's runtime folder (kernels' connection files) covered: "
            + ", ".join(p for p in covered if p not in hide)
        )
    return ok


# Set by _isolate once this process is PID 1 of the agent's namespaces (capabilities are dropped
# after the fork of the agent's host: see evalcore.agents._host_child._main).
_namespaced = False
