"""Quality of synthesized tools: code quality read with :mod:`ast`; test quality measured by
running the tests against the tool and against mutants of it in the sandbox."""

from __future__ import annotations

import ast
from typing import Any

_ALLOWED_TOP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DANGEROUS = {"eval", "exec", "compile", "__import__", "input"}


def code_quality(code: str | None) -> dict[str, Any]:
    """Score a synthesized tool's source code.

    Criteria (each 0–1): ``has_function`` (at least one function definition), ``docstring``
    (fraction of functions with a docstring), ``type_hints`` (fraction of parameters and returns
    annotated), ``structure`` (only imports, definitions, constants and a module docstring at top
    level; no bare ``except:``; no ``eval``/``exec``/``input``).

    ``score = mean(has_function, docstring, type_hints, structure)`` when the code parses, else 0.

    Args:
        code: Python source.

    Returns:
        Dict with ``score``, ``parses`` and every criterion.
    """
    out: dict[str, Any] = {
        "score": 0.0,
        "parses": False,
        "has_function": 0.0,
        "docstring": 0.0,
        "type_hints": 0.0,
        "structure": 0.0,
        "n_functions": 0,
    }
    if not isinstance(code, str) or not code.strip():
        return out
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return out
    out["parses"] = True
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out["n_functions"] = len(funcs)
    if funcs:
        out["has_function"] = 1.0
        out["docstring"] = sum(ast.get_docstring(f) is not None for f in funcs) / len(funcs)
        slots = annotated = 0
        for f in funcs:
            args = f.args.posonlyargs + f.args.args + f.args.kwonlyargs
            args = [a for a in args if a.arg not in ("self", "cls")]
            for extra in (f.args.vararg, f.args.kwarg):
                if extra is not None:
                    args.append(extra)
            slots += len(args) + 1
            annotated += sum(a.annotation is not None for a in args) + (f.returns is not None)
        out["type_hints"] = annotated / slots if slots else 0.0
    ok_top = True
    for node in tree.body:
        if isinstance(node, _ALLOWED_TOP):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_constant(node.value):
            continue
        ok_top = False
    bare_except = any(isinstance(n, ast.ExceptHandler) and n.type is None for n in ast.walk(tree))
    dangerous = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DANGEROUS for n in ast.walk(tree)
    )
    out["structure"] = float(ok_top and not bare_except and not dangerous and bool(funcs))
    out["score"] = (out["has_function"] + out["docstring"] + out["type_hints"] + out["structure"]) / 4
    return out


def _is_constant(node: ast.AST | None) -> bool:
    if node is None:
        return True
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


_TEST_IMPORTS = {
    "math",
    "cmath",
    "pytest",
    "unittest",
    "re",
    "string",
    "itertools",
    "functools",
    "fractions",
    "decimal",
    "collections",
    "statistics",
    "operator",
}
_TEST_FORBIDDEN_NAMES = {
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "eval",
    "exec",
    "compile",
    "open",
    "breakpoint",
    "input",
    "memoryview",
    "help",
    "dir",
    "id",
    "type",
    "object",
}
MAX_MUTANTS = 16
"""Mutants of a tool its tests are run against (at most)."""


def screen_tests(tests: str) -> str | None:
    """Why tests may not be run as a measure of themselves (None when they may).

    Tests run in the same interpreter as the tool they test, so a test that looks at the
    tool's code instead of its behaviour (``__code__``, ``inspect``, ``globals()`` …) could
    fail on every mutant without testing anything. Such tests score 0: no name or attribute
    with a double underscore, imports only from a small list of libraries (math, pytest,
    unittest, re, string, itertools, functools, fractions, decimal, collections, statistics,
    operator), none of the built-ins that reach into objects or files.
    """
    try:
        tree = ast.parse(tests)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "the tests do not parse"
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and (("__" in n.id) or n.id in _TEST_FORBIDDEN_NAMES):
            return f"the tests use {n.id!r}, which reaches past the tool's behaviour"
        if isinstance(n, ast.Attribute) and "__" in n.attr:
            return f"the tests read attribute {n.attr!r}, which reaches past the tool's behaviour"
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and "__" in n.name:
            return f"the tests define {n.name!r}"
        if isinstance(n, ast.Import):
            bad = [a.name for a in n.names if a.name.split(".")[0] not in _TEST_IMPORTS]
            if bad:
                return f"the tests import {bad[0]!r} (allowed: {sorted(_TEST_IMPORTS)})"
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] not in _TEST_IMPORTS:
            return f"the tests import from {n.module!r} (allowed: {sorted(_TEST_IMPORTS)})"
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return "the tests rebind names outside their functions"
    return None


_CODE_FORBIDDEN_IMPORTS = {
    "inspect",
    "sys",
    "gc",
    "dis",
    "ast",
    "marshal",
    "types",
    "ctypes",
    "os",
    "importlib",
    "linecache",
    "traceback",
    "hashlib",
    "zlib",
    "pickle",
    "builtins",
    "io",
    "code",
    "codeop",
    "tokenize",
    "pathlib",
    "subprocess",
    "signal",
    "threading",
    "hmac",
    "base64",
    "binascii",
}
_CODE_FORBIDDEN_NAMES = {
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "eval",
    "exec",
    "compile",
    "open",
    "breakpoint",
    "input",
    "memoryview",
    "dir",
    "id",
    "hash",
}


def screen_code(code: str) -> str | None:
    """Why a tool's code may not be measured by mutation (None when it may).

    A tool that reads its own code (its ``__code__``, its source, a hash of either) can raise
    whenever it is changed, so that every mutant fails whatever its tests check: tests that
    call it once would kill them all. Such code earns no test quality: no name or attribute
    with a double underscore, none of the built-ins that reach into objects or files, no import
    of a module that reads code, frames or files (``inspect``, ``sys``, ``hashlib``, ``os`` …).
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "the code does not parse"
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and ("__" in n.id or n.id in _CODE_FORBIDDEN_NAMES):
            return f"the tool's code uses {n.id!r}, which can read the code itself"
        if isinstance(n, ast.Attribute) and "__" in n.attr:
            return f"the tool's code reads attribute {n.attr!r}, which can read the code itself"
        if isinstance(n, ast.Import):
            bad = [a.name for a in n.names if a.name.split(".")[0] in _CODE_FORBIDDEN_IMPORTS]
            if bad:
                return f"the tool's code imports {bad[0]!r}, which can read the code itself"
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in _CODE_FORBIDDEN_IMPORTS:
            return f"the tool's code imports from {n.module!r}, which can read the code itself"
    return None


_SWAP_BINOP: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
_SWAP_CMP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _mutation_sites(base: ast.AST) -> list[tuple[int, str]]:
    """The mutation sites of a parsed tool, as (index in ``ast.walk`` order, description)."""
    sites: list[tuple[int, str]] = []
    for i, n in enumerate(ast.walk(base)):
        if isinstance(n, ast.BinOp) and type(n.op) in _SWAP_BINOP:
            sites.append((i, f"{type(n.op).__name__}→{_SWAP_BINOP[type(n.op)].__name__} at line {n.lineno}"))
        elif isinstance(n, ast.Compare) and type(n.ops[0]) in _SWAP_CMP:
            sites.append((i, f"{type(n.ops[0]).__name__}→{_SWAP_CMP[type(n.ops[0])].__name__} at line {n.lineno}"))
        elif isinstance(n, ast.BoolOp):
            sites.append((i, f"and↔or at line {n.lineno}"))
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            sites.append((i, f"'not' dropped at line {n.lineno}"))
        elif (
            isinstance(n, ast.Constant)
            and isinstance(n.value, (int, float))
            and not isinstance(n.value, bool)
            and abs(n.value) < 1e15
        ):
            sites.append((i, f"constant {n.value!r}→{n.value + 1!r} at line {n.lineno}"))
        elif (
            isinstance(n, ast.Return)
            and n.value is not None
            and not (isinstance(n.value, ast.Constant) and n.value.value is None)
        ):
            sites.append((i, f"return None at line {n.lineno}"))
    return sites


def _mutate(code: str, index: int) -> str | None:
    """``code`` with the mutation site ``index`` (see :func:`_mutation_sites`) changed; None when
    the result cannot be written back as source."""
    tree = ast.parse(code)
    node = list(ast.walk(tree))[index]
    if isinstance(node, ast.BinOp):
        node.op = _SWAP_BINOP[type(node.op)]()
    elif isinstance(node, ast.Compare):
        node.ops = [_SWAP_CMP[type(node.ops[0])](), *node.ops[1:]]
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        node = _replace_not(tree, node)
    elif isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, (int, float))  # only numeric constants are mutation sites
        node.value = value + 1
    elif isinstance(node, ast.Return):
        node.value = ast.Constant(None)
    try:
        return ast.unparse(ast.fix_missing_locations(tree))
    except (ValueError, TypeError, RecursionError):
        return None


def mutants(code: str, limit: int = MAX_MUTANTS) -> list[dict[str, str]]:
    """Versions of ``code`` with one small fault each (the usual mutation operators): an
    arithmetic operator swapped (``+``↔``-``, ``*``↔``/``, ``//``→``*``, ``%``→``//``,
    ``**``→``*``), a comparison flipped at its boundary or negated (``<``↔``<=``, ``==``↔``!=``,
    ``in``↔``not in``), ``and``↔``or``, a ``not`` dropped, a number constant + 1, a returned value
    replaced by None. Mutants whose source equals the original's are dropped; at most ``limit``,
    spread over the code's sites in source order.

    Returns:
        ``[{"what": description, "code": mutated source}, ...]`` (empty when ``code`` does not parse).
    """
    try:
        base = ast.parse(code)
        original = ast.unparse(base)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    sites = _mutation_sites(base)
    if len(sites) > limit:  # spread over the code
        step = len(sites) / limit
        sites = [sites[int(j * step)] for j in range(limit)]
    out: list[dict[str, str]] = []
    for index, what in sites:
        text = _mutate(code, index)
        if text is None:
            continue
        if text != original and all(m["code"] != text for m in out):
            out.append({"what": what, "code": text})
    return out


def _replace_not(tree: ast.AST, target: ast.UnaryOp) -> ast.AST:
    """Replace ``not x`` by ``x`` in ``tree``."""
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, target.operand)
            elif isinstance(value, list):
                for j, item in enumerate(value):
                    if item is target:
                        value[j] = target.operand
    return target.operand


def _clean(out: Any) -> dict[str, Any]:
    """An outcome as the evaluator keeps it: ``{"ok": True, "result"}`` or ``{"ok": False,
    "type", "error"}`` (whatever else the tool's process sent is dropped)."""
    if isinstance(out, dict) and out.get("ok") is True:
        return {"ok": True, "result": out.get("result")}
    if isinstance(out, dict) and (out.get("hang") or out.get("crash")):
        return {"hang": True} if out.get("hang") else {"crash": True}
    got = out if isinstance(out, dict) else {}
    kind = got.get("type")
    return {
        "ok": False,
        "type": kind if isinstance(kind, str) and kind.isidentifier() else "Exception",
        "error": str(got.get("error"))[:200],
    }


def test_quality(
    tests: str | None, function_name: str | None = None, code: str | None = None, *, timeout_s: float = 20.0
) -> dict[str, Any]:
    """Test quality, measured from outside the tool: the share of mutants whose *outputs* the
    tests tell from the tool's.

    The tests (every top-level ``test*`` function) run in a process that holds no object of the
    tool: they get a proxy that forwards each call to the tool in another process and returns
    the plain JSON result (:mod:`evalcore.agent_eval._quality_run`), so comparing the tool's
    code, bytecode or defaults compares the proxy's. Steps:

    1. *live*: the tests run against the tool; they must pass and call it (calls counted by the
       router between them); every call and its outcome is recorded (the log);
    2. *mutants*: behaviour mutants made from the log without touching the code (every result
       + 1, negated, a constant, None, an exception, and the tool run on inputs n → 2n + 1), and up to
       :data:`MAX_MUTANTS` code mutants (:func:`mutants`), each run on the log's calls. A code
       mutant that fails loudly where the tool returned (raises, hangs, returns None or another
       type) is left out: a tool that computes its answer twice and raises on disagreement
       turns every code mutant into one, and the ``None`` and ``exception`` mutants already
       measure that failure (see :func:`~evalcore.agent_eval._quality_run.plausible`);
    3. *replays*: the tests run again, in a sandboxed run of their own per variant, against the
       log answered with the original's outcomes (they must pass), then with each mutant's.
       A mutant is **killed** when the tests fail on it *after* being answered a call whose
       outcome differs from the tool's; a mutant whose outputs equal the tool's on every
       recorded call survives without a run.

    ``score = min(behaviour share, code share)``: the share of behaviour mutants killed, and of
    code mutants kept killed (the behaviour share alone when no code mutant is kept). The
    behaviour mutants do not depend on the tool's code, so a tool cannot make them easy to
    kill: one that returns a sentinel when it sees itself changed, with tests that check only
    for the sentinel, has most code mutants killed (0.73 with code mutants alone, as before;
    0.57 pooled with the behaviour mutants) and scores its behaviour share, 0.17. Tests that fail on the tool,
    never call it, call it otherwise when run again (not deterministic), or reach past its
    behaviour (:func:`screen_tests`) score 0, and so do tests of a tool whose code could read
    itself (:func:`screen_code`). Before this, tests that compared the tool's code object or a
    type only, a self-checking tool, or a tool whose one mutation site was its ``return``
    (one mutant, which ``is not None`` kills) all scored 1.0.

    Args:
        tests: Test source code.
        function_name: The tool's function name (the name the tests call).
        code: The tool's source.
        timeout_s: Limit of the live run; each later run gets max(1 s, 3 × the time the live
            run took).

    Returns:
        Dict with ``score``, ``behaviour_score``, ``code_score`` (None without code mutants),
        ``passes`` (against the tool), ``tool_calls``, ``n_mutants`` (in the score),
        ``n_behaviour``, ``n_code``, ``n_killed``, ``survivors`` (what each
        surviving mutant changed), ``left_out`` (code mutants that failed loudly) and ``error``.
    """
    from evalcore.agent_eval._quality_run import run_session

    out = _blank_quality()
    checked = _runnable(tests, function_name, code)
    if isinstance(checked, str):
        return {**out, "error": checked}
    tests, function_name, code, names = checked
    live = _live_run(function_name, tests, names, code, timeout_s, out)
    if isinstance(live, dict):
        return live
    log, limit = live
    calls = [e["call"] for e in log if isinstance(e, dict)]
    original = [_clean(e.get("out")) for e in log if isinstance(e, dict)]
    variants = _variants(function_name, code, calls, original, limit, out)
    try:
        replay = run_session(function_name, tests, names, calls=calls, outcomes=original, limit_s=limit)
    except Exception as exc:
        return {**out, "error": f"the tests could not be run: {type(exc).__name__}: {exc}"}
    if not replay["passed"]:
        return {**out, "error": f"the tests fail when run again against the tool's recorded outputs: {replay['error']}"}
    killed = _kills(function_name, tests, names, calls, original, variants, limit)
    return _scored(out, variants, killed)


test_quality.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported


def _scored(out: dict[str, Any], variants: list[tuple[str, list[Any]]], killed: list[bool]) -> dict[str, Any]:
    """``out`` with the score: the lower of the behaviour mutants' killed share and the code
    mutants' (the behaviour share alone without code mutants)."""
    nb = out["n_behaviour"]
    behaviour = sum(killed[:nb]) / nb if nb else 0.0
    code_share = sum(killed[nb:]) / (len(killed) - nb) if len(killed) > nb else None
    out.update(
        n_mutants=len(variants),
        n_killed=sum(killed),
        behaviour_score=behaviour,
        code_score=code_share,
        score=behaviour if code_share is None else min(behaviour, code_share),
        survivors=[w for (w, _o), k in zip(variants, killed, strict=True) if not k],
    )
    return out


def _blank_quality() -> dict[str, Any]:
    """The result of :func:`test_quality` before anything is measured (score 0)."""
    return {
        "score": 0.0,
        "passes": False,
        "tool_calls": 0,
        "n_mutants": 0,
        "n_behaviour": 0,
        "n_code": 0,
        "n_killed": 0,
        "behaviour_score": None,
        "code_score": None,
        "survivors": [],
        "left_out": [],
        "error": None,
    }


def _runnable(tests: str | None, function_name: str | None, code: str | None) -> tuple[str, str, str, list[str]] | str:
    """The tests, tool name, code and test function names when the tests can be measured, else
    why not (no tests, no tool code, a screen's finding, no ``test*`` function)."""
    if not isinstance(tests, str) or not tests.strip():
        return "no tests"
    if (
        not isinstance(code, str)
        or not code.strip()
        or not isinstance(function_name, str)
        or not function_name.isidentifier()
    ):
        return "no tool code to run the tests against"
    why = screen_tests(tests) or screen_code(code)
    if why is not None:
        return why
    names = [n.name for n in ast.parse(tests).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    if not names:
        return "no test* function"
    return tests, function_name, code, names


def _live_run(
    function_name: str, tests: str, names: list[str], code: str, timeout_s: float, out: dict[str, Any]
) -> tuple[list[Any], float] | dict[str, Any]:
    """Step 1 of :func:`test_quality`: the tests against the tool (recording ``passes`` and
    ``tool_calls`` in ``out``).

    Returns:
        The call log and the time limit of every later run, or the final result when the tests
        cannot be run, fail or never call the tool.
    """
    import time

    from evalcore.agent_eval._quality_run import run_session

    t0 = time.monotonic()
    try:
        live = run_session(function_name, tests, names, code=code, limit_s=timeout_s)
    except Exception as exc:  # the sandbox failed, or the tool time budget is spent
        return {**out, "error": f"the tests could not be run: {type(exc).__name__}: {exc}"}
    limit = min(timeout_s, max(1.0, 3 * (time.monotonic() - t0)))
    log = live["log"] or []
    out.update(passes=live["passed"], tool_calls=len(log))
    if not live["passed"]:
        return {**out, "passes": False, "error": f"the tests fail against the tool: {live['error']}"}
    if not log:
        return {**out, "error": f"the tests never call {function_name}"}
    return log, limit


def _variants(
    function_name: str, code: str, calls: list[Any], original: list[dict[str, Any]], limit: float, out: dict[str, Any]
) -> list[tuple[str, list[Any]]]:
    """Step 2 of :func:`test_quality`: the behaviour mutants, then the code mutants kept (those
    that do not fail loudly where the tool returned), each with its outcomes on the log's
    calls; ``n_behaviour``, ``n_code`` and ``left_out`` are recorded in ``out``."""
    from evalcore.agent_eval._quality_run import behaviour_mutants, perturbed_calls, plausible, run_outcomes

    variants: list[tuple[str, list[Any]]] = [("behaviour: " + w, o) for w, o in behaviour_mutants(original)]
    code_muts = mutants(code)
    shifted = perturbed_calls(calls)
    to_run = ([(code, shifted)] if shifted is not None else []) + [(m["code"], calls) for m in code_muts]
    try:
        ran = run_outcomes(function_name, to_run, limit_s=limit)
    except Exception:
        ran = [None] * len(to_run)
    if shifted is not None:
        perturbed = ran.pop(0)
        variants.append(
            ("behaviour: the inputs changed (n → 2n + 1)", [_clean(o) for o in perturbed or []] or original)
        )
    out["n_behaviour"] = len(variants)
    for m, outs in zip(code_muts, ran, strict=True):
        if outs is None:  # not run (budget spent): counts as surviving
            variants.append((m["what"], original))
        elif plausible(original, outs):
            variants.append((m["what"], [_clean(o) for o in outs]))
        else:
            out["left_out"].append(m["what"])
    out["n_code"] = len(variants) - out["n_behaviour"]
    return variants


def _kills(
    function_name: str,
    tests: str,
    names: list[str],
    calls: list[Any],
    original: list[dict[str, Any]],
    variants: list[tuple[str, list[Any]]],
    limit: float,
) -> list[bool]:
    """Step 3 of :func:`test_quality`: per variant, whether the tests, replayed against its
    outcomes, fail after being answered a call whose outcome differs from the tool's."""
    from evalcore.agent_eval._quality_run import first_difference, run_session

    killed: list[bool] = []
    for _what, outs in variants:
        diff = first_difference(original, outs)
        if diff is None:
            killed.append(False)  # equal outputs on every call the tests made: no test can tell
            continue
        try:
            got = run_session(function_name, tests, names, calls=calls, outcomes=outs, watch=diff, limit_s=limit)
        except Exception:  # not run (budget spent): counts as surviving
            killed.append(False)
            continue
        killed.append(not got["passed"] and got["served"] > diff)
    return killed
