"""The sandbox's names where they were before it moved to :mod:`evalcore.sandbox` (kept so
that code importing ``evalcore.evaluators.sandbox`` keeps working); new code imports from
:mod:`evalcore.sandbox`.
"""

from evalcore.sandbox import (
    SandboxPool,
    SandboxResult,
    get_pool,
    linux,
    run_python,
    shutdown_pool,
)

__all__ = ["SandboxPool", "SandboxResult", "get_pool", "linux", "run_python", "shutdown_pool"]
