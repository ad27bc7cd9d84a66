"""Parent side: a worker's reply as a :class:`.SandboxResult`, and an isolation report as text
(both used by :mod:`.pool`, which re-exports them)."""

from __future__ import annotations

from .jobs import SandboxResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def isolation_report(info: dict[str, Any]) -> str:
    """An isolation report as text for a person (see :func:`.pool.isolation_text`): the level,
    each layer, and the samples' file-system view (the allow-list), one path a line."""
    lines = [f"level: {info.get('level', '?')}"]
    for key in (
        "network",
        "pid",
        "user",
        "memory",
        "threads",
        "seccomp",
        "environment",
        "kill_on_timeout",
        "verdict",
        "check_view",
    ):
        if info.get(key):
            lines.append(f"{key}: {info[key]}")
    lines.append("rlimits: " + ", ".join(info.get("rlimits") or []))
    view = info.get("view") or []
    if view:
        lines.append("file-system view (read-only unless marked; nothing else of the host exists there):")
        lines += [f"  {path}" for path in view]
        lines.append("hidden inside the view: " + (", ".join(info.get("hidden") or []) or "nothing"))
    else:
        lines.append(f"filesystem: {info.get('filesystem', '?')}")
    for note in info.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _to_result(reply: dict[str, Any]) -> SandboxResult:
    if "error" in reply:
        return SandboxResult(False, False, None, "", "", 0.0, reply["error"], reply.get("isolation", {}))
    return SandboxResult(
        completed=bool(reply["completed"]),
        timed_out=bool(reply["timed_out"]),
        returncode=reply["returncode"],
        stdout=reply["stdout"],
        stderr=reply["stderr"],
        duration_s=float(reply["duration_s"]),
        reason=reply["reason"],
        isolation=reply.get("isolation", {}),
    )
