"""The sandbox on its own floor (issue 32, item 3): ``evalcore.sandbox`` beside ``datasets`` and
``stats``, used through its public names; a typed job and a plain, module-level result."""

from __future__ import annotations

import ast
import dataclasses
import os
import pickle
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import evalcore.sandbox as sandbox

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "evalcore"


def _evalcore_imports(path: Path) -> set[str]:
    """Every ``evalcore.…`` module a file imports (at the top or inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalcore"):
            found.add(node.module or "")
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evalcore"))
    return found


def test_the_sandbox_is_a_package_of_its_own_that_imports_only_the_bottom_of_evalcore() -> None:
    assert not (PACKAGE / "evaluators" / "_sandbox").exists()
    used = set().union(*(_evalcore_imports(p) for p in (PACKAGE / "sandbox").glob("*.py")))
    assert used == {"evalcore._io"}


def test_nothing_outside_the_sandbox_imports_its_private_or_old_places() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "sandbox"):
            continue
        for module in _evalcore_imports(path):
            if (
                module.startswith("evalcore.evaluators._sandbox")
                or module == "evalcore.evaluators.sandbox"
                and path.parent.name != "evaluators"
            ):
                offenders.append(f"{path.relative_to(ROOT)}: {module}")
    assert offenders == []
    host = _evalcore_imports(PACKAGE / "agents" / "_host.py")
    assert "evalcore.sandbox" in host and not any(m.startswith("evalcore.evaluators") for m in host)


def test_the_result_is_a_plain_module_level_dataclass_that_pickles() -> None:
    result_cls = sandbox.SandboxResult
    assert dataclasses.is_dataclass(result_cls)
    assert result_cls.__module__ == "evalcore.sandbox.jobs" and result_cls.__qualname__ == "SandboxResult"
    import evalcore.sandbox.jobs as jobs

    assert jobs.SandboxResult is result_cls  # defined once, at import, not by a function
    result = result_cls(True, False, 0, "out", "", 0.5, None, {"level": "full"})
    assert pickle.loads(pickle.dumps(result)) == result
    from evalcore.evaluators import SandboxResult as via_evaluators

    assert via_evaluators is result_cls


def test_the_job_is_typed() -> None:
    hints = typing.get_type_hints(sandbox.SandboxJob)
    assert {"mode", "source", "timeout_s", "memory_mb", "max_output", "stdin", "prompt", "test", "entry_point"} <= set(
        hints
    )
    assert sandbox.SandboxJob.__required_keys__ == frozenset({"mode", "source"})
    assert typing.get_args(hints["mode"]) == ("script", "check")


def test_no_private_name_is_exported() -> None:
    assert all(not name.startswith("_") for name in sandbox.__all__)
    for name in ("_to_result", "_cost_key", "_WorkerHandle"):
        with pytest.raises(AttributeError):
            getattr(sandbox, name)
    for name in sandbox.__all__:
        assert getattr(sandbox, name) is not None


def test_the_worker_imports_the_package_alone_without_the_parents_side() -> None:
    probe = (
        f"import sys; sys.path.insert(0, {str(PACKAGE)!r}); import sandbox.worker; del sys.path[0]; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('evalcore', 'sandbox', 'typing', 'dataclasses')))"
    )
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)  # noqa: S307 - our own probe's printed list
    assert "sandbox.worker" in loaded
    assert not [
        m for m in loaded if m.startswith("evalcore") or m in ("typing", "dataclasses", "sandbox.pool", "sandbox.jobs")
    ]


def test_samples_do_not_see_the_project_that_holds_the_sandbox() -> None:
    assert os.path.realpath(ROOT) in sandbox.answer_key_paths()
