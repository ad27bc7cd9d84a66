"""The public API is typed: each package's ``if TYPE_CHECKING:`` imports mirror its lazy exports.

Public names are lazy re-exports (:mod:`evalcore._lazy`), which mypy and editors cannot follow;
each package ``__init__`` therefore also imports every public name under ``if TYPE_CHECKING:``
(``from <module> import name as name``, an explicit re-export). These tests keep the two lists
equal and check that every name resolves at run time to the very object the typed import names.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import evalcore

PACKAGE = Path(evalcore.__file__).parent
PACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def _typed_imports(init: Path, package: str) -> dict[str, tuple[str, str]]:
    """``{public name: (absolute module, attribute)}`` from the ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            assert isinstance(stmt, ast.ImportFrom), f"{init}: only imports belong in the TYPE_CHECKING block"
            if stmt.level:
                base = package if init.name == "__init__.py" else package.rpartition(".")[0]
                module = ".".join([base, stmt.module] if stmt.module else [base])
            else:
                assert stmt.module is not None
                module = stmt.module
            for alias in stmt.names:
                # `name as name` is an explicit re-export (mypy's no_implicit_reexport)
                assert alias.asname == alias.name, f"{init}: import {alias.name} as {alias.name}"
                assert alias.name not in found, f"{init}: {alias.name} imported twice"
                found[alias.name] = (module, alias.name)
    return found


def _lazy_names(package: str) -> set[str]:
    module = importlib.import_module(package)
    exports = getattr(module, "_EXPORTS", None)
    if exports is not None:
        return {name for names in exports.values() for name in names}
    return set(module.__all__)  # sandbox: its own hook (the workers import it as a top-level package)


@pytest.mark.parametrize("name", PACKAGES)
def test_typed_imports_mirror_lazy_exports(name):
    package = f"evalcore.{name}"
    typed = _typed_imports(PACKAGE / name / "__init__.py", package)
    lazy = _lazy_names(package)
    assert sorted(lazy - set(typed)) == [], f"{package}: lazy exports without a TYPE_CHECKING import"
    assert sorted(set(typed) - lazy) == [], f"{package}: TYPE_CHECKING imports that are not exported"
    assert set(importlib.import_module(package).__all__) == lazy


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves_to_the_typed_object(name):
    package = f"evalcore.{name}"
    module = importlib.import_module(package)
    for public, (where, attr) in _typed_imports(PACKAGE / name / "__init__.py", package).items():
        value = getattr(module, public)
        source = importlib.import_module(where)
        # a submodule imported as a name (sandbox's `linux`) is the module itself
        expected = getattr(source, attr) if hasattr(source, attr) else importlib.import_module(f"{where}.{attr}")
        assert value is expected, f"{package}.{public} is not {where}.{attr}"
        assert public in dir(module)


def test_root_package_types_its_lazy_names():
    typed = _typed_imports(PACKAGE / "__init__.py", "evalcore")
    assert set(typed) == {"record", "collect"}
    assert set(evalcore.__all__) == {"EvalcoreError", "record", "collect", "__version__"}
    for public, (where, attr) in typed.items():
        assert getattr(evalcore, public) is getattr(importlib.import_module(where), attr)


def test_checker_sees_a_missing_typed_import(tmp_path):
    # the checker itself: a block that forgets a name, or imports it without `as`, is caught
    init = tmp_path / "__init__.py"
    init.write_text("if TYPE_CHECKING:\n    from evalcore.stats._paired import mcnemar as mcnemar\n")
    typed = _typed_imports(init, "evalcore.stats")
    assert typed == {"mcnemar": ("evalcore.stats._paired", "mcnemar")}
    assert _lazy_names("evalcore.stats") - set(typed)
    init.write_text("if TYPE_CHECKING:\n    from evalcore.stats._paired import mcnemar\n")
    with pytest.raises(AssertionError, match="as mcnemar"):
        _typed_imports(init, "evalcore.stats")
