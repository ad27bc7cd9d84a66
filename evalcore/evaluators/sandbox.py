"""Public sandbox API: run untrusted Python in isolated processes (see ``docs/sandbox.md``).

``linux`` holds the system calls (namespaces, ``prctl``, seccomp filters) the sandbox is built
from; the agent host (:mod:`evalcore.agents`) uses them too.
"""

from evalcore.evaluators._sandbox import linux
from evalcore.evaluators._sandbox import (
    SandboxPool,
    SandboxResult,
    get_pool,
    run_python,
    shutdown_pool,
)

__all__ = ["SandboxPool", "SandboxResult", "get_pool", "linux", "run_python", "shutdown_pool"]
