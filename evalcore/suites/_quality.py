"""Static quality of synthesized tools and of their tests, read with :mod:`ast`."""

from __future__ import annotations

import ast
import builtins
from typing import Any

_BUILTINS = set(dir(builtins))
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
    out: dict[str, Any] = {"score": 0.0, "parses": False, "has_function": 0.0, "docstring": 0.0,
                           "type_hints": 0.0, "structure": 0.0, "n_functions": 0}
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
    dangerous = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DANGEROUS
                    for n in ast.walk(tree))
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


def _is_edge_arg(node: ast.AST) -> bool:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value <= 0
    if isinstance(value, (str, list, tuple, dict, set)):
        return len(value) <= 1
    return value is None


def test_quality(tests: str | None, function_name: str | None = None) -> dict[str, Any]:
    """Score the tests written for a synthesized tool.

    Criteria (each 0–1): ``asserts`` = min(number of assert statements / 3, 1); ``inputs`` =
    min(distinct calls of the tool / 3, 1); ``edge_cases`` = 1 when a call uses a zero, negative,
    empty or one-element argument, or the tests expect an exception (``pytest.raises``,
    ``assertRaises`` or ``try``/``except``), else 0.

    ``score = mean(asserts, inputs, edge_cases)`` when the tests parse, else 0.

    Args:
        tests: Test source code.
        function_name: The tool's function name; when absent (or never called), calls of any
            non-builtin name count as calls of the tool.

    Returns:
        Dict with ``score``, ``parses``, ``n_asserts``, ``n_distinct_inputs``, ``edge_cases`` and
        the criteria.
    """
    out: dict[str, Any] = {"score": 0.0, "parses": False, "n_asserts": 0, "n_distinct_inputs": 0,
                           "edge_cases": 0.0, "asserts": 0.0, "inputs": 0.0}
    if not isinstance(tests, str) or not tests.strip():
        return out
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return out
    out["parses"] = True
    nodes = list(ast.walk(tree))
    n_asserts = sum(isinstance(n, ast.Assert) for n in nodes)
    n_asserts += sum(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and n.func.attr.startswith("assert") for n in nodes)
    calls = [(n, n.func.id) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    tool_calls = [c for c, name in calls if function_name and name == function_name]
    if not tool_calls:
        tool_calls = [c for c, name in calls if name not in _BUILTINS]
    distinct = {ast.dump(ast.Tuple(elts=list(c.args), ctx=ast.Load())) + ast.dump(ast.Tuple(
        elts=[k.value for k in c.keywords], ctx=ast.Load())) for c in tool_calls}
    expects_raise = any(
        (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("raises", "assertRaises"))
        or isinstance(n, ast.Try) for n in nodes)
    edge = expects_raise or any(_is_edge_arg(a) for c in tool_calls for a in c.args)
    out.update(n_asserts=n_asserts, n_distinct_inputs=len(distinct), edge_cases=float(edge),
               asserts=min(n_asserts / 3, 1.0), inputs=min(len(distinct) / 3, 1.0))
    out["score"] = (out["asserts"] + out["inputs"] + out["edge_cases"]) / 3
    return out


test_quality.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported
