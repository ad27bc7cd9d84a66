"""What :func:`~evalcore.sandbox.run_jobs` takes (:class:`SandboxJob`) and what it returns
(:class:`SandboxResult`).

Imported by the parent only: the workers (which import the package as a top-level ``sandbox``
and never load ``typing`` or ``dataclasses``, see :mod:`.worker`) receive a job as the plain
dict that a :class:`SandboxJob` is, through :mod:`.framing`.
"""

from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict

__all__ = ["SandboxJob", "SandboxResult"]


class SandboxJob(TypedDict, total=False):
    """One program for the sandbox, as :func:`~evalcore.sandbox.run_jobs` takes it.

    ``mode`` ``"script"`` runs ``source`` as ``__main__`` with ``stdin`` fed to it
    (:func:`~evalcore.sandbox.run_python` builds such a job). ``mode`` ``"check"`` runs
    ``source`` (the assembled program: prompt and completion) in a candidate process and the
    problem's ``test`` (``check(candidate)``) in the worker against a proxy of
    ``entry_point``; ``prompt`` is the problem's prompt, compiled once per problem and shared by
    its samples. Keys starting with ``_`` are the pool's own (added on the way to a worker).
    """

    mode: Required[Literal["script", "check"]]
    source: Required[str]
    timeout_s: float
    memory_mb: int
    max_output: int
    stdin: str | None
    prompt: str
    test: str
    entry_point: str


@dataclass
class SandboxResult:
    """Outcome of one sandboxed program.

    Attributes:
        completed: True only if the program ran to its end (``run_python``) or ``check``
            returned normally (``check`` mode), proven through the per-run nonce.
        timed_out: The wall-clock timeout fired and everything the program started was killed.
        returncode: Exit status of the program's process (negative: killed by that signal).
        stdout: Captured standard output (truncated to the output limit).
        stderr: Captured standard error (truncated).
        duration_s: Wall-clock seconds from fork to the end of the process.
        reason: Why the program did not complete (exception, exit, timeout), or None.
        isolation: What the sandbox isolated on this machine (see ``docs/sandbox.md``).
    """

    completed: bool
    timed_out: bool
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    reason: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
