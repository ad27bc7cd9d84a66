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
    if len(sites) > limit:  # spread over the code
        step = len(sites) / limit
        sites = [sites[int(j * step)] for j in range(limit)]
    out: list[dict[str, str]] = []
    for index, what in sites:
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
            text = ast.unparse(ast.fix_missing_locations(tree))
        except (ValueError, TypeError, RecursionError):
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


def _run_variants(name: str, tests: str, variants: list[str], timeout_s: float) -> list[dict[str, Any]] | str:
    """Run ``tests`` against each version of the tool's code, each version in a sandboxed
    process of its own (no state a test keeps — a module attribute, a decimal context — can
    carry from one version to the next and tell the original from a mutant), each run charged
    to the category's tool time budget; one ``{"passed", "calls", "error"}`` per version (a
    mutant that could not be run counts as surviving).

    Returns:
        The rows, or a string saying why the original could not be run.
    """
    import json
    import secrets
    import time

    tree = ast.parse(tests)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    marker = f"__EVALCORE_TQ_{secrets.token_hex(8)}__"
    # the original gets the whole limit; a mutant max(1 s, 3 × the original's time) (past that it hangs: killed)
    per_variant = timeout_s
    program = (
        "def __evalcore_tq():\n"
        "    import json as _json, sys as _sys\n"
        "    _data = _json.loads(_sys.stdin.read())\n"
        "    _calls = [0]\n"
        "    _row = {'passed': False, 'calls': 0, 'error': None}\n"
        "    try:\n"
        "        _ns = {'__name__': '__evalcore_tool__'}\n"
        "        exec(compile(_data['code'], '<tool>', 'exec'), _ns)\n"
        "        _real = _ns[_data['name']]\n"
        "        def _counted(*a, _real=_real, **k):\n"
        "            _calls[0] += 1\n"
        "            return _real(*a, **k)\n"
        "        _ns[_data['name']] = _counted\n"
        "        exec(compile(_data['tests'], '<tests>', 'exec'), _ns)\n"
        "        for _t in _data['test_names']:\n"
        "            _ns[_t]()\n"
        "        _row['passed'] = True\n"
        "    except BaseException as _exc:\n"
        "        _row['error'] = (type(_exc).__name__ + ': ' + str(_exc))[:200]\n"
        "    _row['calls'] = _calls[0]\n"
        f"    print({marker!r} + _json.dumps(_row), flush=True)\n"
        "__evalcore_tq()\n"
    )
    from evalcore.agent_eval._measure import _run_python  # charged to the category's tool time budget

    run = _run_python()
    results: list[Any] = []
    for i, code in enumerate(variants):
        t0 = time.monotonic()
        try:
            results.append(
                run(
                    program,
                    timeout_s=per_variant,
                    stdin=json.dumps({"name": name, "tests": tests, "test_names": names, "code": code}),
                )
            )
        except Exception as exc:  # the sandbox failed, or the tool time budget is spent
            if i == 0:
                return f"the tests could not be run: {type(exc).__name__}: {exc}"
            results.append(str(exc))
        if i == 0:
            per_variant = min(timeout_s, max(1.0, 3 * (time.monotonic() - t0)))
    rows: list[dict[str, Any]] = []
    for res in results:
        if isinstance(res, str):  # not run: counts as a survivor
            rows.append({"passed": True, "calls": 0, "error": f"not run: {res}"})
            continue
        lines = [ln for ln in (res.stdout or "").splitlines() if ln.startswith(marker)]
        row: Any = None
        if lines:
            try:
                row = json.loads(lines[-1][len(marker) :])
            except ValueError:
                row = None
        if not isinstance(row, dict) or not res.completed:
            why = (
                f"timed out after {per_variant:g} s"
                if res.timed_out
                else "did not run to its end: " + ((res.stderr or "").strip()[-200:] or str(res.reason))
            )
            rows.append({"passed": False, "calls": 0, "error": why})
            continue
        rows.append(
            {
                "passed": row.get("passed") is True,
                "calls": int(row.get("calls") or 0),
                "error": row.get("error") if isinstance(row.get("error"), str) else None,
            }
        )
    return rows


def test_quality(
    tests: str | None, function_name: str | None = None, code: str | None = None, *, timeout_s: float = 20.0
) -> dict[str, Any]:
    """Test quality, measured by running the tests (in the sandbox) against the tool and
    against mutants of it (:func:`mutants`).

    The tests (every top-level ``test*`` function) must pass against ``code`` and call the tool
    (the calls are counted at run time); then ``score`` = the share of mutants they kill (a
    mutant is killed when a test fails, raises or runs out of time on it). Tests that fail on
    the tool, never call it, reach past its behaviour (:func:`screen_tests`) or have no mutant
    to kill score 0, and so do tests of a tool whose code could read itself
    (:func:`screen_code`: such a tool can fail on every mutant by itself). Reading the tests
    (counting asserts and calls) once gave 1.0 to tests that never called the tool.

    Args:
        tests: Test source code.
        function_name: The tool's function name (the function the tests must call).
        code: The tool's source.
        timeout_s: Limit of the run against the tool; each mutant gets max(1 s, 3 × that run's
            time), past which it counts as killed (it hangs).

    Returns:
        Dict with ``score``, ``passes`` (against the tool), ``tool_calls``, ``n_mutants``,
        ``n_killed``, ``survivors`` (what each surviving mutant changed) and ``error``.
    """
    out: dict[str, Any] = {
        "score": 0.0,
        "passes": False,
        "tool_calls": 0,
        "n_mutants": 0,
        "n_killed": 0,
        "survivors": [],
        "error": None,
    }
    if not isinstance(tests, str) or not tests.strip():
        return {**out, "error": "no tests"}
    if (
        not isinstance(code, str)
        or not code.strip()
        or not isinstance(function_name, str)
        or not function_name.isidentifier()
    ):
        return {**out, "error": "no tool code to run the tests against"}
    why = screen_tests(tests) or screen_code(code)
    if why is not None:
        return {**out, "error": why}
    if not any(isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in ast.parse(tests).body):
        return {**out, "error": "no test* function"}
    muts = mutants(code)
    rows = _run_variants(function_name, tests, [code] + [m["code"] for m in muts], timeout_s)
    if isinstance(rows, str):
        return {**out, "error": rows}
    first = rows[0]
    out.update(passes=first["passed"], tool_calls=first["calls"], n_mutants=len(muts))
    if not first["passed"]:
        return {**out, "error": f"the tests fail against the tool: {first['error']}"}
    if first["calls"] == 0:
        return {**out, "error": f"the tests never call {function_name}"}
    if not muts:
        return {**out, "error": "the code has no mutant to kill"}
    killed = [not r["passed"] for r in rows[1:]]
    out.update(
        n_killed=sum(killed),
        score=sum(killed) / len(muts),
        survivors=[m["what"] for m, k in zip(muts, killed, strict=True) if not k],
    )
    return out


test_quality.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported
