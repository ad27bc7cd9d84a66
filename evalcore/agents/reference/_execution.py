"""Running tools: vetted starter tools in-process, every other tool inside the sandbox."""

from __future__ import annotations

import ast
import json
import secrets
from dataclasses import dataclass
from typing import Any


@dataclass
class ToolRun:
    """The outcome of one tool call: ``ok`` with ``result``, or an ``error`` message."""

    ok: bool
    result: Any = None
    error: str | None = None


def _run_python() -> Any:
    from evalcore.sandbox import run_python

    return run_python


def _sandboxed(program: str, *, timeout_s: float, stdin: str | None = None) -> Any:
    """Run ``program`` in the sandbox; retry once when the sandbox itself (not the program) failed."""
    run_python = _run_python()
    res = run_python(program, timeout_s=timeout_s, stdin=stdin)
    if res.returncode is None and not res.timed_out and "sandbox worker failed" in (res.reason or ""):
        res = run_python(program, timeout_s=timeout_s, stdin=stdin)
    return res


def _tail(text: str, n: int = 400) -> str:
    text = (text or "").strip()
    return text[-n:]


def run_tool_sandboxed(code: str, name: str, args: dict[str, Any], *, timeout_s: float = 10.0) -> ToolRun:
    """Call function ``name`` from ``code`` with ``args`` inside the sandbox.

    The program reads the arguments as JSON from stdin and prints the result as JSON on a line
    tagged with a random marker, so text the tool prints itself cannot pass for a result.

    Args:
        code: The tool's source.
        name: The function to call.
        args: Keyword arguments (JSON-serialisable).
        timeout_s: Wall-clock limit of the sandboxed run.

    Returns:
        The call's outcome; an exception raised by the tool becomes ``ok=False`` with
        ``"<ExceptionType>: <message>"``.
    """
    marker = f"__EVALCORE_RESULT_{secrets.token_hex(8)}__"
    program = (
        f"{code}\n\n"
        "def __evalcore_call():\n"
        "    import json as _json, sys as _sys\n"
        "    _args = _json.loads(_sys.stdin.read())\n"
        "    try:\n"
        f"        _res = {name}(**_args)\n"
        "        _out = _json.dumps({'ok': True, 'result': _res}, default=repr)\n"
        "    except Exception as _exc:\n"
        "        _out = _json.dumps({'ok': False, 'error': type(_exc).__name__ + ': ' + str(_exc)})\n"
        f"    print({marker!r} + _out)\n"
        "__evalcore_call()\n"
    )
    try:
        res = _sandboxed(program, timeout_s=timeout_s, stdin=json.dumps(args))
    except ImportError as exc:
        return ToolRun(False, error=f"sandbox unavailable: {exc}")
    if res.timed_out:
        return ToolRun(False, error=f"tool {name} timed out after {timeout_s:g}s")
    lines = [ln for ln in (res.stdout or "").splitlines() if ln.startswith(marker)]
    if not res.completed or not lines:
        why = _tail(res.stderr) or res.reason or "no result"
        return ToolRun(False, error=f"tool {name} crashed: {why}")
    try:
        payload = json.loads(lines[-1][len(marker) :])
    except ValueError:
        return ToolRun(False, error=f"tool {name} returned malformed output")
    if payload.get("ok"):
        return ToolRun(True, result=payload.get("result"))
    return ToolRun(False, error=str(payload.get("error")))


def run_tool_in_process(function: Any, args: dict[str, Any]) -> ToolRun:
    """Call a vetted starter tool directly; its exceptions become ``ok=False``."""
    try:
        result = function(**args)
    except Exception as exc:  # the tool's own validation errors (ValueError) and bad args (TypeError)
        return ToolRun(False, error=f"{type(exc).__name__}: {exc}")
    return ToolRun(True, result=result)


def test_function_names(tests: str) -> list[str]:
    """Names of the top-level ``test_*`` functions in ``tests``."""
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


@dataclass
class Verification:
    """Outcome of running a tool's tests in the sandbox."""

    passed: bool
    detail: str
    isolation: dict[str, Any] | None = None


def verify_tool(code: str, tests: str, *, timeout_s: float = 10.0) -> Verification:
    """Run ``code`` followed by ``tests`` and a call of every ``test_*`` function in the sandbox.

    The tool passes only when the program ran to its end (``SandboxResult.completed``), exited
    with status 0, and printed the random end-of-tests marker after the last test returned.
    """
    names = test_function_names(tests)
    marker = f"__EVALCORE_TESTS_PASSED_{secrets.token_hex(8)}__"
    calls = "".join(f"{n}()\n" for n in names)
    program = f"{code}\n\n{tests}\n\n{calls}print({marker!r})\n"
    try:
        res = _sandboxed(program, timeout_s=timeout_s)
    except ImportError as exc:
        return Verification(False, f"sandbox unavailable: {exc}")
    if res.timed_out:
        return Verification(False, f"tests timed out after {timeout_s:g}s", res.isolation)
    ok = bool(res.completed) and res.returncode == 0 and marker in (res.stdout or "")
    if ok:
        return Verification(True, f"{len(names)} test function(s) passed", res.isolation)
    why = _tail(res.stderr) or res.reason or "no output"
    return Verification(False, f"tests failed: {why}", res.isolation)
