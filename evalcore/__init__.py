"""evalcore: objective, reproducible evaluation of LLM systems.

Subpackages: ``datasets``, ``models``, ``runs``, ``evaluators``, ``metrics``, ``stats``,
``routing``, ``agents``, ``agent_eval`` (the agent evaluation), ``reporting``. The notebook helpers ``record`` and
``collect`` are re-exported here (imported lazily, so ``import evalcore`` stays fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:  # for mypy and editors only; at run time `record`/`collect` load on first use
    from .reporting import collect as collect
    from .reporting import record as record

__version__ = "0.1.0"
__all__ = ["EvalcoreError", "record", "collect", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("record", "collect"):
        from evalcore import reporting

        return getattr(reporting, name)
    raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
