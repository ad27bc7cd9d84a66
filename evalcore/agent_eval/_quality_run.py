"""Running a tool's tests from outside the tool: the sandbox programs behind
:func:`~evalcore.agent_eval._quality.test_quality`.

The tests never share a process with the tool's code. In every run the test process is forked
before anything of the run is read (the tool's code, its recorded outputs, the output marker),
so it holds only the tests and a proxy: a callable under the tool's name that sends each call's
arguments down a pipe as JSON and returns the plain JSON value that comes back (or raises the
exception named in the reply). No function object, code object, default, source or file of the
tool exists in that process, so a test that compares the tool's code, bytecode or defaults
(``operator.attrgetter('__code__')``, a traceback's frames) compares the proxy's, the same in
every run.

Three kinds of run, each a sandboxed program (:func:`evalcore.sandbox.run_python`, charged to the
category's tool time budget):

* **live** — the tests against the tool, run in a third process of its own (a fresh namespace
  per call); the router in between records every call and its outcome (the *log*);
* **outcomes** — no tests: each code mutant (and the original on perturbed inputs) is run on the
  log's calls, each in a process forked for it, with a time limit;
* **replay** — the tests against the log: the router answers the i-th call with the i-th
  recorded outcome of one variant (the original's, or a mutant's), when the call's arguments are
  those recorded; a call that differs is answered with an exception the test cannot take for a
  tool's (the tests are not deterministic). No tool code runs in a replay, so nothing the tool
  does can tell the tests which variant they face: only its outputs can. Each replay is a
  sandboxed run of its own (no state, file or process carries from one to the next).

The router prints a progress line, tagged with a marker the test process never sees, when it
has answered the first call whose outcome differs from the tool's, so a run cut at its limit
still says whether the tests saw the difference.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

MAX_CALLS = 10_000
"""Calls of the tool the tests may make in one run (past that they are answered an exception)."""
MAX_OUTPUT = 16 << 20
"""Bytes of a run's output kept (the live run's log of calls and outcomes is one line)."""

_COMMON = r'''
import json as _json, os as _os, select as _select, signal as _signal, sys as _sys, time as _time


class _Chan:
    """Newline-delimited JSON over a pair of pipe ends."""

    def __init__(self, rfd, wfd):
        self.r, self.w, self.buf = rfd, wfd, b""

    def send(self, obj):
        data = (_json.dumps(obj) + "\n").encode()
        while data:
            data = data[_os.write(self.w, data):]

    def recv(self, deadline=None):
        while b"\n" not in self.buf:
            if deadline is not None:
                left = deadline - _time.monotonic()
                if left <= 0 or not _select.select([self.r], [], [], left)[0]:
                    return _TIMEOUT
            chunk = _os.read(self.r, 1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return _json.loads(line)


_TIMEOUT = object()


def _quiet():
    null = _os.open(_os.devnull, _os.O_RDWR)
    for fd in (0, 1, 2):
        _os.dup2(null, fd)


def _outcome(code, name, call):
    try:
        ns = {"__name__": "__evalcore_tool__"}
        exec(compile(code, "<tool>", "exec"), ns)
        r = ns[name](*call.get("args", []), **call.get("kwargs", {}))
        try:
            return {"ok": True, "result": _json.loads(_json.dumps(r, allow_nan=False))}
        except (TypeError, ValueError, RecursionError):
            why = "the tool returned %s, which is not JSON data" % type(r).__name__
            return {"ok": False, "type": "TypeError", "error": why}
    except Exception as exc:
        return {"ok": False, "type": type(exc).__name__, "error": str(exc)[:200]}


def _kill(pid):
    try:
        _os.kill(pid, _signal.SIGKILL)
        _os.waitpid(pid, 0)
    except OSError:
        pass


def _nondumpable():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no reading of this process's memory
    except Exception:
        pass
'''

_SESSION = (
    _COMMON
    + r'''

class _Stop(BaseException):
    """Not a tool's exception: the run answered no more calls."""


def _test_side(rfd, wfd):
    import builtins as _b
    _quiet()
    ch = _Chan(rfd, wfd)
    msg = ch.recv()

    def _raise(rep):
        if "stop" in rep:
            raise _Stop(rep["stop"])
        name = rep.get("type") if isinstance(rep.get("type"), str) else "Exception"
        cls = getattr(_b, name, None)
        text = rep.get("error") if isinstance(rep.get("error"), str) else ""
        if isinstance(cls, type) and issubclass(cls, Exception) and cls is not StopIteration:
            try:
                exc = cls(text)
            except Exception:
                exc = None
            if exc is not None:
                raise exc
        raise type(name if name.isidentifier() else "ToolError", (Exception,), {})(text)

    def tool(*args, **kwargs):
        try:
            line = {"args": _json.loads(_json.dumps(list(args), allow_nan=False)),
                    "kwargs": _json.loads(_json.dumps(kwargs, allow_nan=False))}
        except (TypeError, ValueError, RecursionError):
            raise TypeError("the tool is called with plain JSON data only") from None
        ch.send(line)
        rep = ch.recv()
        if rep.get("ok") is True:
            return rep.get("result")
        _raise(rep)

    ns = {"__name__": "__evalcore_tests__", msg["name"]: tool}
    row = {"passed": False, "error": None}
    try:
        exec(compile(msg["tests"], "<tests>", "exec", dont_inherit=True, optimize=0), ns)
        for t in msg["test_names"]:
            ns[t]()
        row["passed"] = True
    except BaseException as exc:
        row["error"] = (type(exc).__name__ + ": " + str(exc))[:200]
    ch.send({"done": row})


def _tool_side(rfd, wfd):
    _quiet()
    ch = _Chan(rfd, wfd)
    msg = ch.recv()
    while True:
        ch.send(_outcome(msg["code"], msg["name"], ch.recv()))


def _main():
    tr, tw = _os.pipe()
    rr, rw = _os.pipe()
    test_pid = _os.fork()  # before anything of the run is read
    if test_pid == 0:
        try:
            _os.close(tr)
            _os.close(rw)
            _test_side(rr, tw)
        finally:
            _os._exit(0)
    _os.close(tw)
    _os.close(rr)
    ar, aw = _os.pipe()
    br, bw = _os.pipe()
    tool_pid = _os.fork()
    if tool_pid == 0:
        try:
            for fd in (tr, rw, aw, br):
                _os.close(fd)
            _tool_side(ar, bw)
        finally:
            _os._exit(0)
    _os.close(ar)
    _os.close(bw)
    data = _json.loads(_sys.stdin.read())
    _nondumpable()
    marker, live = data["marker"], data["live"]
    test_ch, tool_ch = _Chan(tr, rw), _Chan(br, aw)
    deadline = _time.monotonic() + data["limit_s"]
    row, log, diverged = None, [], False
    try:
        test_ch.send({"name": data["name"], "tests": data["tests"], "test_names": data["test_names"]})
        if live:
            tool_ch.send({"name": data["name"], "code": data["code"]})
        while row is None:
            msg = test_ch.recv(deadline)
            if msg is _TIMEOUT:
                row = {"passed": False, "error": "timed out after %g s" % data["limit_s"]}
            elif isinstance(msg, dict) and "done" in msg:
                got = msg["done"] if isinstance(msg["done"], dict) else {}
                row = {"passed": got.get("passed") is True, "error": str(got.get("error"))[:200]}
            elif not isinstance(msg, dict) or "args" not in msg:
                row = {"passed": False, "error": "malformed message from the tests"}
            else:
                call = {"args": msg["args"], "kwargs": msg.get("kwargs", {})}
                if len(log) >= data["max_calls"]:
                    out = {"stop": "the tests called the tool more than %d times" % data["max_calls"]}
                    diverged = True
                elif live:
                    tool_ch.send(call)
                    out = tool_ch.recv(deadline)
                    if out is _TIMEOUT:
                        row = {"passed": False, "error": "the tool timed out after %g s" % data["limit_s"]}
                        break
                    log.append({"call": call, "out": out})
                else:
                    i = len(log)
                    key = _json.dumps(call, sort_keys=True)
                    if not diverged and i < len(data["calls"]) and key == _json.dumps(data["calls"][i], sort_keys=True):
                        out = data["outcomes"][i]
                    else:
                        diverged = True
                        out = {"stop": "the tests called the tool otherwise than in the run against it"}
                    log.append(None)
                    if len(log) == data["watch"] + 1:  # the call whose outcome differs was answered
                        print(marker + _json.dumps({"served": len(log), "diverged": diverged}), flush=True)
                test_ch.send(out)
    except (EOFError, ValueError, OSError) as exc:
        row = {"passed": False, "error": "the tests ended without a verdict (%s)" % type(exc).__name__}
    _kill(test_pid)
    _kill(tool_pid)
    end = {"row": row, "log": log if live else None, "served": len(log), "diverged": diverged}
    print(marker + _json.dumps(end), flush=True)


_main()
'''
)

_OUTCOMES = (
    _COMMON
    + r"""

def _main():
    data = _json.loads(_sys.stdin.read())
    marker = data["marker"]
    for index, variant in enumerate(data["variants"]):
        r, w = _os.pipe()
        pid = _os.fork()
        if pid == 0:
            try:
                _os.close(r)
                _quiet()
                ch = _Chan(None, w)
                for call in variant["calls"]:
                    ch.send(_outcome(variant["code"], data["name"], call))
            finally:
                _os._exit(0)
        _os.close(w)
        ch = _Chan(r, None)
        deadline = _time.monotonic() + data["limit_s"]
        outs = []
        while len(outs) < len(variant["calls"]):
            try:
                got = ch.recv(deadline)
            except (EOFError, ValueError):
                outs.append({"crash": True})
                break
            if got is _TIMEOUT:
                outs.append({"hang": True})
                break
            outs.append(got)
        _kill(pid)
        _os.close(r)
        print(marker + _json.dumps({"variant": index, "outs": outs}), flush=True)


_main()
"""
)


def _runner() -> Any:
    from evalcore.agent_eval._measure import _run_python  # charged to the category's tool time budget

    return _run_python()


def _tagged(stdout: str | None, marker: str) -> list[Any]:
    out: list[Any] = []
    for line in (stdout or "").splitlines():
        if line.startswith(marker):
            try:
                out.append(json.loads(line[len(marker) :]))
            except ValueError:
                continue
    return out


def run_session(
    name: str,
    tests: str,
    test_names: Sequence[str],
    *,
    code: str | None = None,
    calls: Sequence[Any] | None = None,
    outcomes: Sequence[Any] | None = None,
    watch: int = -1,
    limit_s: float,
) -> dict[str, Any]:
    """Run the tests once: live against ``code``, or (``code`` None) against the recorded
    ``calls`` answered with ``outcomes``; ``watch`` is the index of the first call whose
    outcome differs from the tool's (the router says when it was answered, so that a run cut
    at its limit still tells). At most :data:`MAX_CALLS` calls are answered.

    Returns:
        ``{"passed", "error", "served", "diverged", "log"}``: ``served`` the calls answered
        (known even when the run was cut), ``log`` (live only) every call with its outcome.
    """
    marker = f"__EVALCORE_TQ_{secrets.token_hex(8)}__"
    payload = {
        "marker": marker,
        "live": code is not None,
        "name": name,
        "tests": tests,
        "test_names": list(test_names),
        "code": code,
        "calls": list(calls or []),
        "outcomes": list(outcomes or []),
        "limit_s": limit_s,
        "watch": watch,
        "max_calls": MAX_CALLS,
    }
    res = _runner()(_SESSION, timeout_s=limit_s + 2.0, stdin=json.dumps(payload), max_output=MAX_OUTPUT)
    rows = _tagged(res.stdout, marker)
    final = next((r for r in reversed(rows) if isinstance(r, dict) and "row" in r), None)
    progress = [r for r in rows if isinstance(r, dict) and "served" in r]
    served = max((int(r.get("served") or 0) for r in progress), default=0)
    diverged = any(r.get("diverged") is True for r in progress)
    if final is None or not isinstance(final.get("row"), dict):
        why = (
            f"timed out after {limit_s:g} s"
            if res.timed_out
            else "did not run to its end: " + ((res.stderr or "").strip()[-200:] or str(res.reason))
        )
        return {"passed": False, "error": why, "served": served, "diverged": diverged, "log": None}
    row = final["row"]
    log = final.get("log") if isinstance(final.get("log"), list) else None
    return {
        "passed": row.get("passed") is True,
        "error": row.get("error") if isinstance(row.get("error"), str) else None,
        "served": served,
        "diverged": diverged,
        "log": log,
    }


def run_outcomes(name: str, variants: Sequence[tuple[str, Sequence[Any]]], *, limit_s: float) -> list[list[Any] | None]:
    """Each ``(code, calls)`` run without tests, each in a process of its own with ``limit_s``;
    its outcome per call (``{"hang": True}`` where it ran out of time, ``{"crash": True}`` where
    its process ended), or None for a variant that was not run (the sandbox failed or the tool
    time budget was spent)."""
    if not variants:
        return []
    marker = f"__EVALCORE_TQO_{secrets.token_hex(8)}__"
    payload = {
        "marker": marker,
        "name": name,
        "variants": [{"code": c, "calls": list(k)} for c, k in variants],
        "limit_s": limit_s,
    }
    out: list[list[Any] | None] = [None] * len(variants)
    try:
        res = _runner()(
            _OUTCOMES, timeout_s=limit_s * len(variants) + 2.0, stdin=json.dumps(payload), max_output=MAX_OUTPUT
        )
    except Exception:  # the sandbox failed or the budget is spent: nothing was run
        return out
    for row in _tagged(res.stdout, marker):
        if isinstance(row, dict) and isinstance(row.get("variant"), int) and isinstance(row.get("outs"), list):
            if 0 <= row["variant"] < len(out):
                out[row["variant"]] = row["outs"]
    return out


# ------------------------------------------------------------------------------ behaviour mutants
def _kind(out: Any) -> str:
    """The class of one outcome: ``hang``, ``crash``, ``raise`` or the JSON type of the value."""
    if not isinstance(out, dict):
        return "crash"
    if out.get("hang"):
        return "hang"
    if out.get("crash"):
        return "crash"
    if out.get("ok") is not True:
        return "raise"
    return type(out.get("result")).__name__


def plausible(original: Sequence[Any], mutant: Sequence[Any]) -> bool:
    """Whether a code mutant differs from the original only in values, on every recorded call.

    Where the original returned a value the mutant must return a value of the same JSON type
    (not raise, hang, end its process or return None or another type): a mutant that fails
    loudly is what a tool that checks itself (computing its answer twice and raising when the
    two disagree) makes of *every* mutant, and the behaviour mutants ``None`` and ``exception``
    already stand for that failure. Where the original raised, anything but a hang or crash.
    """
    if len(mutant) < len(original):
        return False
    for o, m in zip(original, mutant, strict=False):
        ko, km = _kind(o), _kind(m)
        if km in ("hang", "crash"):
            return False
        if ko != "raise" and km != ko:
            return False
    return True


def _shift(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "a"
    if isinstance(v, list):
        return [*v, v[-1] if v else 0]
    if isinstance(v, dict):
        return {**v, "_mutant": 0}
    return 0


def _negate(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return -v
    if isinstance(v, (str, list)):
        return v[::-1]
    return v


def _map_values(outs: Sequence[Any], f: Any) -> list[Any]:
    return [{"ok": True, "result": f(o["result"])} if _kind(o) not in ("raise", "hang", "crash") else o for o in outs]


def _perturb(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return 2 * v + 1
    if isinstance(v, float):
        return 2 * v + 0.5
    if isinstance(v, str):
        return v + "a"
    if isinstance(v, list):
        return [_perturb(x) for x in v]
    return v


def perturbed_calls(calls: Sequence[Any]) -> list[Any] | None:
    """The recorded calls with every number n made 2n + 1 (2n + 0.5 for a float: a shift of 1
    leaves ``x // 21`` unchanged at most inputs) and every string + ``"a"``;
    None when no argument changes."""
    out = [
        {"args": _perturb(c.get("args", [])), "kwargs": {k: _perturb(v) for k, v in c.get("kwargs", {}).items()}}
        for c in calls
    ]
    return out if json.dumps(out, sort_keys=True) != json.dumps(list(calls), sort_keys=True) else None


def behaviour_mutants(outcomes: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    """Mutants made from the original's recorded outcomes without touching its code: every
    value + 1 (a boolean negated, a string or list lengthened), every value negated (a string or
    list reversed), every call answered with the first call's outcome (a constant), None, and an
    exception (``RuntimeError``). The perturbed-input mutant (the original run on shifted
    arguments, :func:`perturbed_calls`) is made by the caller."""
    first = outcomes[0] if outcomes else {"ok": True, "result": None}
    return [
        ("result + 1", _map_values(outcomes, _shift)),
        ("−result", _map_values(outcomes, _negate)),
        ("a constant (the first call's outcome)", [first for _ in outcomes]),
        ("None", [{"ok": True, "result": None} for _ in outcomes]),
        ("an exception", [{"ok": False, "type": "RuntimeError", "error": "the tool failed"} for _ in outcomes]),
    ]


def first_difference(original: Sequence[Any], mutant: Sequence[Any]) -> int | None:
    """The index of the first call whose outcome differs (None when none does)."""
    for i, (o, m) in enumerate(zip(original, mutant, strict=False)):
        if json.dumps(o, sort_keys=True) != json.dumps(m, sort_keys=True):
            return i
    return None
