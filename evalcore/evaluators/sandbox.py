"""Public sandbox API: run untrusted Python with an unforgeable proof of completion.

See :mod:`evalcore.evaluators._sandbox` for the isolation and the threat model.
"""

from evalcore.evaluators._sandbox import (
    SandboxPool,
    SandboxResult,
    get_pool,
    run_python,
    shutdown_pool,
)

__all__ = ["SandboxPool", "SandboxResult", "get_pool", "run_python", "shutdown_pool"]
