"""Measure, don't ask: running registered tools on the evaluator's own inputs.

The evaluator believes nothing an agent says about itself. It reads what the protocol lets it
observe (responses, the registry's tools with their code, its own clock) and runs registered
code itself in the sandbox (:func:`evalcore.evaluators.run_python`) on inputs it chose:

* every response is reduced to plain JSON values before anything compares it
  (:func:`~evalcore.agent_eval._observed.plain_response`): matching never calls an agent's
  ``__eq__``, ``strip`` or ``__hash__``;
* a registry snapshot maps tool names to their code and its hash
  (:func:`~evalcore.agent_eval._observed.registry_snapshot`);
* a tool is called with keyword arguments bound to a request's inputs (:func:`infer_binding`
  from the arguments the agent itself passed, else :func:`signature_bindings` from the code's
  signature) and its outputs are compared with the evaluator's own answers
  (:class:`ToolChecker`).
"""

from __future__ import annotations

import ast
import itertools
import json
import keyword
import math
import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.agent_eval._cases.kinds import VARIABLE_SLOTS, sample_inputs, solve_kind
from evalcore.agent_eval._matching import values_match
from evalcore.agent_eval._observed import ToolRecord
from evalcore.agents import AgentResponse, StepRecord


# ------------------------------------------------------------------------------ bindings
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b and all(
            math.isfinite(x) for x in (a, b) if isinstance(x, float)
        )  # exact: no float() of a huge int
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return False


Binding = dict[str, tuple[str, Any]]
"""Argument name → ``("slot", input name)`` or ``("const", value)``."""


def infer_binding(args: Mapping[str, Any], kind: str, inputs: Mapping[str, Any]) -> Binding | None:
    """Read how a tool takes a request's inputs from the arguments the agent passed it.

    Each argument equal to one of the request's inputs is bound to that input; any other
    argument is kept as a constant. Every input that varies between requests of the kind
    (:data:`VARIABLE_SLOTS`) must be bound, else the tool does not take the request's values as
    parameters (None).
    """
    if not isinstance(args, Mapping) or not inputs:
        return None
    variable = VARIABLE_SLOTS.get(kind, tuple(inputs))
    bound: set[str] = set()
    out: Binding = {}
    for name, value in args.items():
        if not isinstance(name, str) or not name.isidentifier():
            return None
        slots = [s for s in inputs if s not in bound and _same(value, inputs[s])]
        slots.sort(key=lambda s: s not in variable)
        if slots:
            out[name] = ("slot", slots[0])
            bound.add(slots[0])
        else:
            out[name] = ("const", value)
    return out if set(variable) <= bound else None


def signature_bindings(code: str | None, name: str, kind: str, inputs: Mapping[str, Any]) -> list[Binding]:
    """Candidate bindings from the tool's signature: the request's inputs assigned to the
    function's parameters in every order (when their numbers agree)."""
    if not isinstance(code, str) or not inputs:
        return []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return []
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    n_defaults = len(fn.args.defaults)
    positional = fn.args.posonlyargs + fn.args.args
    required = [a.arg for a in positional[: len(positional) - n_defaults]]
    required += [a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is None]
    variable = [s for s in VARIABLE_SLOTS.get(kind, tuple(inputs)) if s in inputs]
    out: list[Binding] = []
    for slots in (variable, list(inputs)):
        if len(required) != len(slots) or not slots:
            continue
        for perm in itertools.permutations(slots):
            b = {p: ("slot", s) for p, s in zip(required, perm, strict=True)}
            if b not in out and all(p in params for p in b):
                out.append(b)
            if len(out) >= 6:
                return out
    return out


def apply_binding(binding: Binding, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for one call: bound inputs, constants as given."""
    return {arg: (inputs[v] if how == "slot" else v) for arg, (how, v) in binding.items()}


# ------------------------------------------------------------------------------ running code
def _run_python() -> Any:
    from evalcore.agent_eval._calling import budgeted_run_python  # charged to the category's tool time budget

    return budgeted_run_python


def run_tool_calls(
    code: str, name: str, calls: Sequence[Mapping[str, Any]], *, timeout_s: float = 20.0
) -> list[dict[str, Any]] | str:
    """Call function ``name`` of ``code`` once per keyword-argument dict, in one sandboxed run
    (each call in a fresh namespace, see :func:`run_tool_steps`).

    Returns:
        One ``{"ok": bool, "result": plain JSON value, "error": str | None}`` per call, or a
        string saying why the program failed as a whole.
    """
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        return f"tool name {name!r} is not a Python function name"
    if not isinstance(code, str) or not code.strip():
        return "the registry holds no code for the tool"
    return run_tool_steps([(code, name, kw) for kw in calls], timeout_s=timeout_s)


def run_tool_steps(
    steps: Sequence[tuple[str, str, Mapping[str, Any]]], *, timeout_s: float = 20.0
) -> list[dict[str, Any]] | str:
    """Run each ``(code, function name, keyword arguments)`` in a namespace of its own, in one
    sandboxed program (the tools of a multi-step request, each as registered).

    The arguments cross on standard input as JSON; the results come back as JSON on a line
    tagged with a random marker (text the tool prints cannot pass for a result; a tool that
    forges the line only chooses its own answers, which the caller compares with values the
    program never sees).

    Returns:
        One ``{"ok", "result", "error"}`` per step, or a string saying why the program failed.
    """
    for _code, name, _kw in steps:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            return f"tool name {name!r} is not a Python function name"
    if not steps:
        return []
    marker = f"__EVALCORE_STEPS_{secrets.token_hex(8)}__"
    program = (
        "def __evalcore_steps():\n"
        "    import json as _json, sys as _sys\n"
        "    _out = []\n"
        "    for _code, _name, _kw in _json.loads(_sys.stdin.read()):\n"
        "        try:\n"
        "            _ns = {'__name__': '__evalcore_tool__'}\n"
        "            exec(compile(_code, '<tool ' + _name + '>', 'exec'), _ns)\n"
        "            _r = _ns[_name](**_kw)\n"
        "            _out.append({'ok': True, 'result': _json.loads(_json.dumps(_r, default=repr))})\n"
        "        except Exception as _exc:\n"
        "            _out.append({'ok': False, 'error': type(_exc).__name__ + ': ' + str(_exc)[:200]})\n"
        f"    print({marker!r} + _json.dumps(_out))\n"
        "__evalcore_steps()\n"
    )
    try:
        res = _run_python()(
            program, timeout_s=timeout_s, stdin=json.dumps([[c, n, dict(kw)] for c, n, kw in steps], default=repr)
        )
    except Exception as exc:
        return f"the sandbox failed: {type(exc).__name__}: {exc}"
    if res.timed_out:
        return f"timed out after {timeout_s:g} s"
    lines = [ln for ln in (res.stdout or "").splitlines() if ln.startswith(marker)]
    if not res.completed or not lines:
        tail = (res.stderr or "").strip()[-300:]
        return f"the program did not run to its end: {tail or res.reason or 'no output'}"
    try:
        out = json.loads(lines[-1][len(marker) :])
    except ValueError:
        return "malformed output"
    if not isinstance(out, list) or len(out) != len(steps):
        return "malformed output"
    return [{"ok": bool(o.get("ok")), "result": o.get("result"), "error": o.get("error")} for o in out]


def run_tool_tests(code: str | None, tests: str | None, *, timeout_s: float = 20.0) -> tuple[bool, str]:
    """Run a tool's own tests (every top-level ``test_*`` function) against its code in the sandbox.

    Returns:
        ``(passed, detail)``; passed only when the program ran to its end after the last test.
    """
    if not isinstance(code, str) or not isinstance(tests, str) or not tests.strip():
        return False, "no tests"
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return False, "the tests do not parse"
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    if not names:
        return False, "no test_* function"
    marker = f"__EVALCORE_TESTS_{secrets.token_hex(8)}__"
    program = f"{code}\n\n{tests}\n\n" + "".join(f"{n}()\n" for n in names) + f"print({marker!r})\n"
    try:
        res = _run_python()(program, timeout_s=timeout_s)
    except Exception as exc:
        return False, f"the sandbox failed: {type(exc).__name__}: {exc}"
    if res.timed_out:
        return False, f"the tests timed out after {timeout_s:g} s"
    if res.completed and res.returncode == 0 and marker in (res.stdout or ""):
        return True, f"{len(names)} test function(s) passed"
    return False, "tests failed: " + ((res.stderr or "").strip()[-300:] or str(res.reason))


# ------------------------------------------------------------------------------ checking tools
@dataclass
class Check:
    """The verdict on one tool for one kind of request."""

    tool: str
    kind: str
    hash: str | None
    passed: bool
    binding: Binding | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "code_hash": self.hash,
            "passed": self.passed,
            "binding": {k: list(v) for k, v in (self.binding or {}).items()},
            "calls": self.calls,
            "error": self.error,
        }


class ToolChecker:
    """Runs registered tools on the evaluator's inputs and caches the verdicts by code hash.

    Held-out inputs are drawn from a secret seed (never derived from the run's seed), from values
    the generated requests do not use, so an agent cannot have seen them.

    Args:
        n_held_out: Held-out inputs per check.
        timeout_s: Sandbox limit of one run.
    """

    def __init__(self, n_held_out: int = 3, timeout_s: float = 20.0) -> None:
        self.n_held_out = n_held_out
        self.timeout_s = timeout_s
        self._rng = random.Random(secrets.randbits(64))
        self._cache: dict[tuple[Any, ...], Check] = {}
        # (code hash, name, kind) of tools that ran out of time on that kind's inputs: not run
        # on that kind again (each try would cost the whole timeout for the same answer).
        self.stalled: set[tuple[Any, ...]] = set()

    def held_out(self, kind: str, like: Mapping[str, Any], n: int | None = None) -> list[dict[str, Any]]:
        """``n`` fresh inputs of ``kind`` that differ from ``like``."""
        out: list[dict[str, Any]] = []
        for _ in range(200):
            if len(out) >= (self.n_held_out if n is None else n):
                break
            x = sample_inputs(kind, self._rng, like)
            if not _same(list(x.values()), list(dict(like).values())) and x not in out:
                out.append(x)
        return out

    def verify(
        self, record: ToolRecord | None, kind: str, inputs: Mapping[str, Any], args: Mapping[str, Any] | None
    ) -> Check:
        """Whether ``record`` computes requests of ``kind``: it must give the right answer on the
        request's own inputs and on held-out ones.

        Args:
            record: The registered tool (None: not registered).
            kind: The request's kind.
            inputs: The request's inputs.
            args: The arguments the agent passed the tool for this request (how it binds them),
                or None to try bindings from the tool's signature.
        """
        if record is None:
            return Check("", kind, None, False, error="the tool is not in the agent's registry")
        if kind not in VARIABLE_SLOTS or not inputs:
            return Check(record.name, kind, record.hash, False, error=f"no solver for kind {kind!r}")
        key = (record.hash, record.name, kind, json.dumps(args, sort_keys=True, default=repr) if args else None)
        if key in self._cache:
            return self._cache[key]
        bindings: list[Binding] = []
        if args:
            b = infer_binding(args, kind, inputs)
            if b is None:
                check = Check(
                    record.name,
                    kind,
                    record.hash,
                    False,
                    error="the tool's arguments do not carry the request's values",
                )
                self._cache[key] = check
                return check
            bindings = [b]
        else:
            bindings = signature_bindings(record.code, record.name, kind, inputs)
        if not bindings:
            check = Check(record.name, kind, record.hash, False, error="no way to pass the request's values")
            self._cache[key] = check
            return check
        probes = [dict(inputs), *self.held_out(kind, inputs)]
        calls = [apply_binding(b, x) for b in bindings for x in probes]
        out = run_tool_calls(record.code or "", record.name, calls, timeout_s=self.timeout_s)
        if isinstance(out, str):
            check = Check(record.name, kind, record.hash, False, bindings[0], error=out)
        else:
            check = Check(record.name, kind, record.hash, False, bindings[0], error="wrong answers")
            for i, b in enumerate(bindings):
                part = out[i * len(probes) : (i + 1) * len(probes)]
                rows = [
                    {
                        "inputs": x,
                        "expected": solve_kind(kind, x),
                        "ok": o["ok"],
                        "result": o["result"],
                        "error": o["error"],
                    }
                    for x, o in zip(probes, part, strict=True)
                ]
                good = all(r["ok"] and values_match(r["result"], r["expected"]) for r in rows)
                if good or i == 0:
                    check = Check(record.name, kind, record.hash, good, b, rows, None if good else "wrong answers")
                if good:
                    break
        self._cache[key] = check
        return check

    def verify_spec(
        self, record: ToolRecord | None, spec: Any, inputs: Mapping[str, Any], args: Mapping[str, Any] | None
    ) -> Check:
        """Whether ``record`` computes the drawn synthesis ``spec``
        (:class:`~evalcore.agent_eval._cases.specs.Spec`) when called with the request's one input
        ``x`` and nothing else: on the request's own input and on held-out ones.

        A tool the agent passed any other argument (the steps, a constant, the spec's name) is
        not built for the request: a generic tool told what to compute answers every spec once
        written, so it is refused without a run.

        Args:
            record: The registered tool (None: not registered).
            spec: The spec of the request.
            inputs: The request's inputs (``{"x": int}``).
            args: The arguments the agent passed the tool (None: bind by its signature).
        """
        from evalcore.agent_eval._cases.specs import SPEC_KIND

        if record is None:
            return Check("", SPEC_KIND, None, False, error="the tool is not in the agent's registry")
        key = (
            record.hash,
            record.name,
            repr(spec),
            json.dumps(args, sort_keys=True, default=repr) if args else None,
            json.dumps(dict(inputs), sort_keys=True, default=repr),
        )
        if key in self._cache:
            return self._cache[key]
        x = inputs.get("x")
        if args:
            others = sorted(str(k) for k, v in args.items() if not _same(v, x))
            if others or len(args) != 1 or not all(isinstance(k, str) and k.isidentifier() for k in args):
                check = Check(
                    record.name,
                    SPEC_KIND,
                    record.hash,
                    False,
                    error=(
                        f"the tool was passed arguments besides the request's input x ({others or list(args)}): "
                        "a tool told what to compute is not one built for this request"
                    ),
                )
                self._cache[key] = check
                return check
            bindings: list[Binding] = [{str(next(iter(args))): ("slot", "x")}]
        else:
            bindings = signature_bindings(record.code, record.name, SPEC_KIND, {"x": x})
        if not bindings:
            check = Check(
                record.name, SPEC_KIND, record.hash, False, error="no way to pass the request's input x alone"
            )
            self._cache[key] = check
            return check
        probes: list[dict[str, Any]] = [{"x": x}]
        while len(probes) < 1 + self.n_held_out:
            v = self._rng.randint(-10_000, 10_000)
            if all(p["x"] != v for p in probes):
                probes.append({"x": v})
        out = run_tool_calls(
            record.code or "", record.name, [apply_binding(bindings[0], p) for p in probes], timeout_s=self.timeout_s
        )
        if isinstance(out, str):
            check = Check(record.name, SPEC_KIND, record.hash, False, bindings[0], error=out)
        else:
            rows = [
                {"inputs": p, "expected": spec.apply(p["x"]), "ok": o["ok"], "result": o["result"], "error": o["error"]}
                for p, o in zip(probes, out, strict=True)
            ]
            good = all(r["ok"] and values_match(r["result"], r["expected"]) for r in rows)
            check = Check(
                record.name, SPEC_KIND, record.hash, good, bindings[0], rows, None if good else "wrong answers"
            )
        self._cache[key] = check
        return check

    def relevant(
        self, record: ToolRecord, kind: str, binding: Binding | None, queries: Sequence[Mapping[str, Any]]
    ) -> list[bool]:
        """Whether running the tool on each query's own inputs gives the query's answer.

        With ``binding`` None the signature's bindings are tried (the first that answers the
        first query rightly is used for all). A tool that ran out of time on a kind's inputs is
        not run on that kind again (see :attr:`stalled`): every tool is run on every kind's
        queries, and one that loops on another kind's inputs would cost the whole timeout each
        time.
        """
        if not queries or record.code is None:
            return [False] * len(queries)
        stall_key = (record.hash, record.name, kind)
        if stall_key in self.stalled:
            return [False] * len(queries)
        bindings = [binding] if binding is not None else signature_bindings(record.code, record.name, kind, queries[0])
        if not bindings:
            return [False] * len(queries)
        calls = [apply_binding(b, q) for b in bindings for q in queries]
        out = run_tool_calls(record.code, record.name, calls, timeout_s=self.timeout_s)
        if isinstance(out, str):
            if out.startswith("timed out"):
                self.stalled.add(stall_key)
            return [False] * len(queries)
        best: list[bool] = [False] * len(queries)
        for i, _ in enumerate(bindings):
            part = out[i * len(queries) : (i + 1) * len(queries)]
            flags = [
                o["ok"] and values_match(o["result"], solve_kind(kind, q)) for o, q in zip(part, queries, strict=True)
            ]
            if sum(flags) > sum(best):
                best = flags
        return best


def answering_step(resp: AgentResponse | None, tool: str | None) -> StepRecord | None:
    """The (last) step of ``resp`` that used ``tool``."""
    if resp is None or not tool:
        return None
    steps = [s for s in resp.steps if s.tool == tool]
    return steps[-1] if steps else None


def verify_steps(
    resp: AgentResponse | None,
    case: Any,
    before: Mapping[str, ToolRecord],
    after: Mapping[str, ToolRecord],
    at_reset: Mapping[str, ToolRecord],
    checker: ToolChecker,
) -> list[dict[str, Any]]:
    """Whether each step the agent reports was run by a registered tool: the evaluator runs the
    tool's registered code on the step's arguments and its output must be the step's result.

    A step counts (``executed``) only when its tool is registered after the request with code,
    was not rewritten during the request (a tool present before it with other code: a table
    made for this request), its error is None, the run reproduces the result, and the tool
    passes :meth:`ToolChecker.verify` on held-out inputs of the kind the case's step at that
    position computes (:func:`step_check`), **whenever it was registered**: at the reset or
    during the session. (Only tools added in the session were checked before: an agent that
    computed every answer itself and passed it through identity "relays" it had at the reset,
    ``def percentage(answer, **inputs): return answer``, earned a full workflow score.) A
    step at a position the case does not have, or of a kind without a solver, cannot be
    checked and does not count.

    Args:
        resp: The agent's response.
        case: The multi-step case (its ``steps`` name each step's kind).
        before: Registry snapshot right before the request.
        after: Registry snapshot right after it.
        at_reset: Registry snapshot at the category's reset.
        checker: Runs tools on held-out inputs.

    Returns:
        One ``{"tool", "executed", "why"}`` per reported step.
    """
    if resp is None:
        return []
    out: list[dict[str, Any]] = [{"tool": st.tool, "executed": False, "why": None} for st in resp.steps]
    todo: list[int] = []
    for i, st in enumerate(resp.steps):
        rec = after.get(st.tool)
        if st.error is not None:
            out[i]["why"] = "the step reports an error"
        elif rec is None or rec.code is None:
            out[i]["why"] = "the tool is not in the agent's registry (with code)"
        elif st.tool in before and before[st.tool].hash != rec.hash:
            out[i]["why"] = "the tool was rewritten during the request"
        else:
            todo.append(i)
    if not todo:
        return out
    ran = run_tool_steps(
        [(after[resp.steps[i].tool].code or "", resp.steps[i].tool, resp.steps[i].args) for i in todo],
        timeout_s=checker.timeout_s,
    )
    if isinstance(ran, str):
        for i in todo:
            out[i]["why"] = f"the evaluator could not run the step: {ran}"
        return out
    expected = list(getattr(case, "steps", []) or [])
    for i, o in zip(todo, ran, strict=True):
        st = resp.steps[i]
        if not o["ok"]:
            out[i]["why"] = f"the tool failed on the step's arguments: {o['error']}"
            continue
        if not values_match(o["result"], st.result, 1e-9, 1e-9):
            out[i]["why"] = "the tool's output on the step's arguments is not the step's result"
            continue
        if i >= len(expected) or expected[i].tool not in VARIABLE_SLOTS:
            out[i]["why"] = "no held-out check for a step at this position: the case has no such step of a known kind"
            continue
        check = step_check(checker, after[st.tool], expected[i], getattr(case, "query", ""), st.args)
        if not check.passed:
            rec = after[st.tool]
            added = st.tool not in at_reset or at_reset[st.tool].hash != rec.hash
            origin = "added in the session" if added else "present at the reset"
            out[i]["why"] = f"the step's tool ({origin}) failed on held-out inputs of {expected[i].tool}: {check.error}"
            continue
        out[i]["executed"] = True
    return out


def step_check(checker: ToolChecker, record: ToolRecord, step: Any, query: str, args: Any) -> Check:
    """Whether ``record`` computes the kind of the case's ``step`` (an
    :class:`~evalcore.agent_eval._cases.records.ExpectedStep`) on held-out inputs.

    A step whose inputs the request states (no ``depends_on``) is checked as a single request
    of its kind: the agent's arguments must carry the request's values
    (:meth:`ToolChecker.verify`). A dependent step's inputs are another step's output: when the
    agent's arguments are named like the kind's inputs they are taken as the step's inputs
    (the same binding, held-out values), else the tool is called through its signature on
    held-out inputs.
    """
    from evalcore.agent_eval._cases.kinds import parse_inputs

    kind = step.tool
    if not step.depends_on:
        inputs = parse_inputs(kind, query)
        if inputs and set(VARIABLE_SLOTS[kind]) <= set(inputs):
            return checker.verify(record, kind, inputs, args or None)
    sample = sample_inputs(kind, checker._rng)
    if isinstance(args, Mapping) and args and set(args) == set(sample):
        return checker.verify(record, kind, dict(args), dict(args))
    return checker.verify(record, kind, sample, None)
