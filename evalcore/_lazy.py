"""Lazy re-exports for package ``__init__`` modules (PEP 562 module ``__getattr__``).

A package lists its public names and the private module that defines each; a name's module is
imported the first time the name is read (``from evalcore.stats import compare`` included), and
the value is then stored on the package, so later reads are plain attribute lookups. This keeps
``import evalcore.<package>`` -- and with it ``evalcore --help`` and the light commands -- free of
scipy, pandas, matplotlib and the other heavy imports until a command really needs them.

Usage in a package ``__init__``::

    from evalcore._lazy import lazy_exports

    _EXPORTS = {"evalcore.stats._compare": ("compare", "compare_many")}
    __all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """Build ``__all__``, ``__getattr__`` and ``__dir__`` for a package with lazy re-exports.

    Args:
        package: The package's ``__name__``.
        exports: ``{module: names}``: each module (absolute name) and the public names it
            defines that the package re-exports.

    Returns:
        ``(__all__, __getattr__, __dir__)`` to assign at the package's top level.

    Raises:
        ValueError: A name is listed under two modules.
    """
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported from both {where[name]} and {module}")
            where[name] = module

    def __getattr__(name: str) -> Any:  # noqa: N807 (the PEP 562 hook)
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later reads skip this hook
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(set(vars(sys.modules[package])) | set(where))

    return list(where), __getattr__, __dir__
