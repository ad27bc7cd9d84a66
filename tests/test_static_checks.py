"""Static checks run as tests, so ``make test`` (and CI) covers them: ruff (lint and format check),
mypy over ``evalcore/`` and the import rules of docs/architecture.md.

Configuration lives in pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``); the tools come with the
``test`` extra (``make install`` installs ``.[all]``, which pulls it in).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "evalcore"


def _run_tool(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_ruff_check_passes():
    proc = _run_tool("ruff", "check", "--no-cache", "evalcore", "tests")
    assert proc.returncode == 0, f"ruff check found problems:\n{proc.stdout}{proc.stderr}"


def test_ruff_format_check_passes():
    proc = _run_tool("ruff", "format", "--check", "--no-cache", "evalcore", "tests")
    assert proc.returncode == 0, f"`ruff format evalcore tests` would change files:\n{proc.stdout}{proc.stderr}"


def test_mypy_passes(tmp_path):
    # mypy runs on a private copy of the project's cache (.mypy_cache, the one `make lint` keeps):
    # warm, a run takes seconds instead of ~50 s; private, concurrent runs never write one cache
    # at once. A passing run's cache replaces the project's (an unreadable entry only makes mypy
    # check that module again).
    shared = ROOT / ".mypy_cache"
    private = tmp_path / "mypy-cache"
    if shared.is_dir():
        shutil.copytree(shared, private, ignore_dangling_symlinks=True, dirs_exist_ok=True)
    proc = _run_tool("mypy", "--cache-dir", str(private), "evalcore", timeout=900)
    assert proc.returncode == 0, f"mypy found errors:\n{proc.stdout[-20000:]}{proc.stderr}"
    assert "Success: no issues found" in proc.stdout
    _replace_dir(private, shared)


def _replace_dir(new: Path, target: Path) -> None:
    """Put NEW at TARGET (same file system as TARGET's parent: moved beside it first)."""
    staged = target.with_name(f"{target.name}.new-{os.getpid()}")
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    try:
        shutil.copytree(new, staged)
        if target.exists():
            target.rename(old)
        staged.rename(target)
    except OSError:
        pass  # another run put its cache there first: keep that one
    finally:
        shutil.rmtree(staged, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Import rules (docs/architecture.md, "Import rules"). Every package sits on a floor; a module may
# import a package on a lower floor, never one on its own floor or above. So no two packages
# import each other, `stats`/`metrics` import only the bottom modules, `agent_eval` builds on
# `agents` (never the reverse), `benchmarks` sits above `datasets`/`models`/`evaluators` and below
# `runs`, `routing`, `imports` and `reporting`, and `reporting` is the top of the library.

BOTTOM = {
    "errors",
    "_io",
    "_yaml",
    "_validate",
    "_lazy",
    "_runstore",
    "_checks",
    "_cliargs",
    "_progress",
    "_executor",
    "_html",
}
FLOORS: dict[str, int] = {
    **{name: 0 for name in BOTTOM},
    "datasets": 1,
    "stats": 1,
    "metrics": 1,
    "sandbox": 1,
    "models": 2,
    "evaluators": 3,
    "benchmarks": 4,
    "agents": 4,
    "runs": 5,
    "agent_eval": 5,
    "routing": 6,
    "imports": 7,
    "reporting": 8,
    # Dask, one implementation of the executor protocol (`_executor`, at the bottom): no package
    # below imports it, lazily or not; `cli` builds it from --cluster, a `cluster=` argument
    # reaches it through the `evalcore.executors` entry point (docs/cluster.md)
    "cluster": 9,
    "cli": 10,
}

# Known exceptions, each with its reason. The test fails on any new violation and on an entry
# here that no longer occurs (so the list only shrinks). Empty since datasets' name-based aliases
# went (issue 40: evalcore.datasets.load & co live in evalcore.benchmarks).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
# Another package's private module (`evalcore.<pkg>._module`) instead of its public name.
ALLOWED_PRIVATE: dict[tuple[str, str], str] = {}


def _package_of(rel: Path) -> str:
    return rel.parts[0].removesuffix(".py")


def _evalcore_imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """Absolute ``evalcore.*`` modules a file imports, each with whether the import sits inside a
    function (a lazy import). ``from evalcore import name`` counts as ``evalcore.name``."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            lazy = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, in_function) for a in child.names if a.name.startswith("evalcore."))
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                if child.module == "evalcore":
                    found.extend((f"evalcore.{a.name}", in_function) for a in child.names)
                elif child.module.startswith("evalcore."):
                    found.append((child.module, in_function))
            visit(child, lazy)

    visit(tree, False)
    return found


def _scan() -> tuple[list[str], list[str], set[tuple[str, str]], set[tuple[str, str]]]:
    floor_errors: list[str] = []
    private_errors: list[str] = []
    upward_seen: set[tuple[str, str]] = set()
    private_seen: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        source_pkg = _package_of(rel)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > len(rel.parts) - 1 and len(rel.parts) > 1:
                floor_errors.append(f"{rel}: relative import leaves its package ({'.' * node.level}{node.module})")
        for module, lazy in _evalcore_imports(tree):
            parts = module.split(".")
            target = parts[1]
            if target == source_pkg or target == "__version__":
                continue
            key = (rel.as_posix(), module)
            if source_pkg == "__init__":
                # the root package loads only EvalcoreError eagerly; `record`/`collect` on first use
                if not lazy and target != "errors":
                    floor_errors.append(f"{rel}: imports {module} at module level (only errors is eager)")
                continue
            if source_pkg not in FLOORS:
                floor_errors.append(f"{rel}: package {source_pkg!r} has no floor in the import rules")
                continue
            if target not in FLOORS:
                floor_errors.append(f"{rel}: imports {module}, a package with no floor in the import rules")
                continue
            if len(parts) > 2 and parts[2].startswith("_") and target not in BOTTOM:
                if key in ALLOWED_PRIVATE:
                    private_seen.add(key)
                else:
                    private_errors.append(f"{rel}: imports {module}, a private module of {target!r}")
            if FLOORS[target] < FLOORS[source_pkg] or (source_pkg in BOTTOM and target in BOTTOM):
                continue
            if key in ALLOWED_UPWARD:
                upward_seen.add(key)
                continue
            how = "at module level" if not lazy else "inside a function"
            floor_errors.append(
                f"{rel}: {source_pkg} (floor {FLOORS[source_pkg]}) imports {module} (floor {FLOORS[target]}) {how}"
            )
    return floor_errors, private_errors, upward_seen, private_seen


def test_every_package_has_a_floor():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    packages |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert packages - set(FLOORS) == set(), "add the new package to FLOORS (and to docs/architecture.md)"


def test_imports_follow_the_floors():
    floor_errors, _, _, _ = _scan()
    assert floor_errors == []


def test_no_private_module_of_another_package_is_imported():
    _, private_errors, _, _ = _scan()
    assert private_errors == []


def test_allowed_exceptions_still_occur():
    _, _, upward_seen, private_seen = _scan()
    assert set(ALLOWED_UPWARD) - upward_seen == set(), "an exception no longer occurs: remove it from the list"
    assert set(ALLOWED_PRIVATE) - private_seen == set(), "an exception no longer occurs: remove it from the list"


def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_scan_catches_an_upward_import_and_a_private_one(tmp_path, monkeypatch):
    # the checker itself: a `routing` module importing `reporting` at module level and reaching
    # into `datasets._common` is reported twice; `runs` importing `cluster`, even inside a
    # function, is reported too (nothing below `cluster` imports it)
    _write_package(
        tmp_path,
        {
            "routing/__init__.py": "",
            "routing/_x.py": "from evalcore.reporting import record\nfrom evalcore.datasets._common import f\n",
            "runs/__init__.py": "",
            "runs/_y.py": "def go():\n    from evalcore.cluster import parse\n",
            "runs/_z.py": "from evalcore.cluster import parse\n",
        },
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path)
    floor_errors, private_errors, _, _ = _scan()
    assert sorted(floor_errors) == [
        "routing/_x.py: routing (floor 6) imports evalcore.reporting (floor 8) at module level",
        "runs/_y.py: runs (floor 5) imports evalcore.cluster (floor 9) inside a function",
        "runs/_z.py: runs (floor 5) imports evalcore.cluster (floor 9) at module level",
    ]
    assert private_errors == ["routing/_x.py: imports evalcore.datasets._common, a private module of 'datasets'"]


def test_ruff_and_mypy_are_installed_by_make_install():
    # `make install` installs `.[all]`; `all` pulls in `test`, which must name the checkers
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert "test" in extras["all"][0]
    names = {req.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip() for req in extras["test"]}
    assert {"ruff", "mypy", "pandas-stubs", "types-PyYAML"} <= names
    assert shutil.which("ruff", path=str(Path(sys.executable).parent)) is not None


def _package_graph() -> dict[str, set[str]]:
    """Which package imports which (every ``evalcore.*`` import: module level, inside a function
    or for typing only); the bottom modules are one node, ``bottom``; the root ``__init__`` is left
    out (it re-exports ``record``/``collect`` lazily, on first use), and so are the listed
    ``ALLOWED_UPWARD`` imports (each with its reason; that list only shrinks)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        source = _package_of(rel)
        if source == "__init__":
            continue
        source = "bottom" if source in BOTTOM else source
        for module, _lazy in _evalcore_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel.as_posix(), module) in ALLOWED_UPWARD:
                continue
            target = module.split(".")[1]
            target = "bottom" if target in BOTTOM else target
            if target not in (source, "__version__") and target in {*FLOORS, "bottom"}:
                graph.setdefault(source, set()).add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every package that can reach itself, with one path back to it (depth-first search)."""
    found: list[list[str]] = []
    for start in sorted(graph):
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append([*path, start])
                    stack.clear()
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_package_import_graph_has_no_cycles():
    # issue 40: no two packages import each other, directly or around a circle, counting every
    # import (lazy and typing-only ones too); `cluster` is imported only by `cli` (the top)
    graph = _package_graph()
    assert _cycles(graph) == []
    assert sorted(p for p, targets in graph.items() if "cluster" in targets) == ["cli"]


def test_cycle_check_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c", "a"],
        ["b", "c", "a", "b"],
        ["c", "a", "b", "c"],
    ]
    assert _cycles({"a": {"b"}, "b": {"c"}, "d": {"a"}}) == []


def _definitions(name: str) -> list[str]:
    """Modules of evalcore defining a function or class called ``name`` at module level."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found.append(str(path.relative_to(PACKAGE)))
    return found


def test_each_shared_helper_is_defined_once_where_callers_import_it_from() -> None:
    for name in ("pass_at_k_table", "write_json_atomic", "format_comparison"):
        assert len(_definitions(name)) == 1, _definitions(name)
    import evalcore.benchmarks
    import evalcore.imports
    import evalcore.runs
    from evalcore import _io, _runstore, runs

    assert evalcore.runs.pass_at_k_table is evalcore.benchmarks.pass_at_k_table
    assert evalcore.imports.format_comparison.__module__ == "evalcore.imports._compare"
    assert not hasattr(_runstore, "write_json_atomic") and not hasattr(runs, "write_json_atomic")
    assert runs.write_run_json is _runstore.write_run_json
    assert _io.write_json_atomic.__module__ == "evalcore._io"
