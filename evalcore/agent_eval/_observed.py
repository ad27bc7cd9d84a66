"""What the evaluator observes of an agent, as plain values: responses reduced to plain JSON
(:func:`plain_response`) and the registry's tools with their code and its hash
(:func:`registry_snapshot`, :class:`ToolRecord`). Matching never calls an agent's own objects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalcore.agents import AgentResponse, StepRecord

if TYPE_CHECKING:
    from evalcore.agents import Agent

_RESPONSE_FIELDS = (
    "success",
    "response",
    "result",
    "tool_used",
    "synthesized",
    "reused",
    "error",
    "needs_clarification",
)
_STEP_FIELDS = ("tool", "args", "result", "error", "depends_on")


def _json_plain(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data: only dict/list/str/int/float/bool/None come out.

    Every value is rebuilt through its base type's own slot (``int.__int__``, ``str.__str__``,
    ``float.__float__``, ``dict.items``, ``list.__iter__``), so no method an agent's subclass
    overrides decides what the evaluator compares; other objects become their ``object`` repr.
    """
    if depth > 100:
        raise ValueError("the response nests deeper than 100 levels")
    if value is None or value is True or value is False:
        return value
    if isinstance(value, bool):  # numpy booleans and the like
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, dict):
        return {
            str.__str__(k) if isinstance(k, str) else object.__repr__(k): _json_plain(v, depth + 1)
            for k, v in dict.items(value)
        }
    if isinstance(value, (list, tuple)):
        items = list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)
        return [_json_plain(v, depth + 1) for v in items]
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return _json_plain(value.item(), depth + 1)
    except ImportError:  # pragma: no cover
        pass
    return object.__repr__(value)


def plain_response(resp: AgentResponse) -> AgentResponse:
    """A copy of a (type-checked) response made of plain JSON values only."""
    d = {f: getattr(resp, f) for f in _RESPONSE_FIELDS}
    d["steps"] = [{f: getattr(st, f) for f in _STEP_FIELDS} for st in resp.steps]
    data = _json_plain(d)
    data["steps"] = [StepRecord(**s) for s in data["steps"]]
    return AgentResponse(**data)


def code_hash(code: str | None) -> str | None:
    """SHA-256 (first 16 hex digits) of a tool's source, or None without source."""
    if not isinstance(code, str):
        return None
    return hashlib.sha256(code.encode()).hexdigest()[:16]


@dataclass
class ToolRecord:
    """One registered tool as the evaluator saw it."""

    name: str
    code: str | None
    tests: str | None

    @property
    def hash(self) -> str | None:
        return code_hash(self.code)


def registry_snapshot(agent: Agent) -> tuple[dict[str, ToolRecord], str | None]:
    """Every registered tool with its code, read through the protocol.

    An HTTP or hosted agent answers ``GET tools?code=1``; an in-process registry is asked
    ``list_tools()`` and ``describe(name)``, its answers reduced to plain JSON.

    Returns:
        ``(tools by name, None)``, or ``({}, why)`` when the registry cannot be read.
    """
    reg = getattr(agent, "registry", None)
    if reg is None:
        return {}, "the agent exposes no registry"
    try:
        if callable(getattr(reg, "tool_records", None)) and type(reg).__module__ == "evalcore.agents._http":
            rows = reg.tool_records()
        else:
            rows = []
            for name in _json_plain(list(reg.list_tools())):
                info: Any = {}
                describe = getattr(reg, "describe", None)
                if callable(describe):
                    try:
                        info = _json_plain(describe(name))
                    except Exception:
                        info = {}
                info = info if isinstance(info, dict) else {}
                rows.append({"name": name, "code": info.get("code"), "tests": info.get("tests")})
    except Exception as exc:
        return {}, f"the registry could not be listed: {type(exc).__name__}: {exc}"
    out: dict[str, ToolRecord] = {}
    for r in rows:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            return {}, "the registry listed a tool without a name"
        code, tests = r.get("code"), r.get("tests")
        out[r["name"]] = ToolRecord(
            r["name"], code if isinstance(code, str) else None, tests if isinstance(tests, str) else None
        )
    return out, None


# ------------------------------------------------------------------------------ held memory
_PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/dev/shm")
"""Where a hosted agent has a private tmpfs of its own (its files there are memory)."""


@dataclass
class HeldMemory:
    """Everything an agent holds in memory, read from ``/proc`` (bytes).

    Attributes:
        total: ``pss + shared_objects − mapped_shared`` (the shared objects counted once).
        pss: Σ ``Pss`` of ``/proc/PID/smaps_rollup`` over the process tree.
        shared_objects: Σ allocated size (``st_blocks · 512``) of the memfd and ``/dev/shm`` files
            the tree holds open (each file once), plus the used space of the agent's private
            tmpfs mounts (``/tmp``, ``/var/tmp``, ``/dev/shm`` in a mount namespace of its own).
        mapped_shared: Σ ``Pss`` of the tree's mappings of those objects (already in ``pss``).
        processes: Processes read.
        how: ``"pss+shm"``, or ``"rss"`` when ``smaps`` could not be read (a note says why).
        notes: What could not be read.
    """

    total: int
    pss: int
    shared_objects: int
    mapped_shared: int
    processes: int
    how: str
    notes: list[str]

    @property
    def total_mb(self) -> float:
        return self.total / 2**20


def _process_tree(pid: int, children: bool) -> list[int]:
    import psutil

    try:
        root = psutil.Process(pid)
        kids = root.children(recursive=True) if children else []
    except psutil.Error:
        return []
    return [pid, *(p.pid for p in kids)]


def _mount_ns(pid: int | str) -> str | None:
    import os

    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def _private_tmpfs(pid: int) -> dict[int, int]:
    """Device → used bytes of the tmpfs mounts at :data:`_PRIVATE_TMPFS` in ``pid``'s mount
    namespace, when it is not this process's (a shared ``/dev/shm`` holds others' files too)."""
    import os

    ns = _mount_ns(pid)
    if ns is None or ns == _mount_ns("self"):
        return {}
    out: dict[int, int] = {}
    try:
        with open(f"/proc/{pid}/mountinfo") as fh:
            rows = [line.split() for line in fh]
    except OSError:
        return {}
    for row in rows:
        if " - " not in " ".join(row):
            continue
        sep = row.index("-")
        if len(row) > sep + 1 and row[sep + 1] == "tmpfs" and row[4] in _PRIVATE_TMPFS:
            path = f"/proc/{pid}/root{row[4]}"
            try:
                st, vfs = os.stat(path), os.statvfs(path)
            except OSError:
                continue
            out.setdefault(st.st_dev, (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize)
    return out


def _smaps_pss(pid: int, shared_devs: set[int], shared_inodes: set[tuple[int, int]]) -> tuple[int, int]:
    """``(Pss of the process, Pss of its mappings of the shared objects)`` in bytes, from
    ``/proc/PID/smaps_rollup`` and (only when shared objects exist) ``/proc/PID/smaps``."""
    import os

    pss = 0
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
                break
    if not shared_devs and not shared_inodes:
        return pss, 0
    mapped = 0
    counting = False
    with open(f"/proc/{pid}/smaps") as fh:
        for line in fh:
            head = line.split(None, 6)
            if len(head) >= 5 and "-" in head[0] and ":" in head[3]:
                major, minor = (int(x, 16) for x in head[3].split(":"))
                dev, ino = os.makedev(major, minor), int(head[4])
                counting = ino != 0 and (dev in shared_devs or (dev, ino) in shared_inodes)
            elif counting and line.startswith("Pss:"):
                mapped += int(line.split()[1]) * 1024
    return pss, mapped


def held_memory(pid: int, *, children: bool = True) -> HeldMemory | None:
    """Everything the process ``pid`` (and, with ``children``, every process below it) holds.

    ``total = Σ Pss + shared objects − their mapped Pss``: the proportional set size of each
    process (``/proc/PID/smaps_rollup``; shared pages divided among the processes that map
    them, so a tree is not counted twice) plus memory no mapping shows — memfd and ``/dev/shm``
    files held open (``/proc/PID/fd``, each file once, its allocated size ``st_blocks · 512``)
    and the used space of the agent's private tmpfs mounts (``statvfs`` through
    ``/proc/PID/root``) — less the part of those objects that is mapped (already in Pss).
    An agent that kept 144 MiB in an unmapped memfd showed an RSS growth of 0. Source: the
    kernel's ``proc(5)`` (``smaps_rollup``, ``smaps``, ``fd``, ``mountinfo``).

    Args:
        pid: The root of the tree (a hosted agent's host process).
        children: Include its descendants.

    Returns:
        The reading, or None when the process is gone. Where ``smaps`` cannot be read (another
        user's process without ptrace rights), the RSS sum (``how == "rss"``) with a note.
    """
    import os

    import psutil

    pids = _process_tree(pid, children)
    if not pids:
        return None
    notes: list[str] = []
    tmpfs: dict[int, int] = {}
    for p in pids:
        for dev, used in _private_tmpfs(p).items():
            tmpfs.setdefault(dev, used)
    objects: dict[tuple[int, int], int] = {}
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{p}/fd/{fd}")
                if not (target.startswith("/memfd:") or target.startswith("/dev/shm/")):
                    continue
                st = os.stat(f"/proc/{p}/fd/{fd}")
            except OSError:
                continue
            if st.st_dev not in tmpfs:
                objects.setdefault((st.st_dev, st.st_ino), st.st_blocks * 512)
    shared = sum(tmpfs.values()) + sum(objects.values())
    pss = mapped = read = 0
    for p in pids:
        try:
            a, b = _smaps_pss(p, set(tmpfs), set(objects))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            notes.append(f"smaps of process {p} unreadable ({type(exc).__name__}): memory read as RSS")
            break
        pss, mapped, read = pss + a, mapped + b, read + 1
    else:
        return HeldMemory(pss + shared - mapped, pss, shared, mapped, read, "pss+shm", notes)
    rss = 0
    for p in pids:
        try:
            rss += psutil.Process(p).memory_info().rss
        except psutil.Error:
            continue
    return HeldMemory(rss + shared, rss, shared, 0, len(pids), "rss", notes)
