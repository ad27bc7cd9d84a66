"""Public sandbox API: run untrusted Python in isolated processes (see ``docs/sandbox.md``)."""

from evalcore.evaluators._sandbox import (
    SandboxPool,
    SandboxResult,
    get_pool,
    run_python,
    shutdown_pool,
)

__all__ = ["SandboxPool", "SandboxResult", "get_pool", "run_python", "shutdown_pool"]
