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
