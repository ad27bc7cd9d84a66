"""evalcore.sandbox: run untrusted Python in isolated, resource-limited processes; decide test
verdicts outside them.

The floor beside ``datasets`` and ``stats``: it imports nothing of evalcore but ``_io`` (one
atomic write), and code execution (:mod:`evalcore.evaluators`), the agent host
(:mod:`evalcore.agents`) and the agent evaluation's tool runs use it through the names below.

Public names:

* :func:`run_python` (a whole program), :func:`run_jobs` (prepared :class:`SandboxJob` s),
  :class:`SandboxResult`; :class:`SandboxPool`, :func:`get_pool`, :func:`shutdown_pool`,
  :func:`default_workers`; :func:`data_file_paths`, :func:`answer_key_paths` (what samples must
  not see); :func:`isolation_text`; :func:`durations_file`; ``DEFAULT_MAX_OUTPUT``;
  :func:`cgroup_bases` (this process's cgroup hierarchies: the agent host's cgroups too);
* :mod:`.linux` -- system calls through ctypes (namespaces, mounts, ``prctl``, capabilities,
  the seccomp filters), which the agent host builds its own isolation from.

One module per role:

* :mod:`.jobs` -- :class:`SandboxJob` and :class:`SandboxResult` (the parent's only);
* :mod:`.framing` -- messages between the parent and its workers, and the plain-data
  encoding that is the only thing crossing between a test and its candidate;
* :mod:`.candidate` -- what runs in a sample process (the candidate's call server; the
  ``script`` harness);
* :mod:`.testside` -- the test run by the worker against a proxy of the candidate;
* :mod:`.worker` -- the worker process: namespaces, hiding paths, ``check`` samples, its loop;
* :mod:`.zygote` -- the zygotes that fork every sample; :mod:`.sample` -- a sample's own
  set-up (pipes, limits, user, seccomp, ``/proc``); :mod:`.scratch` -- scratch directories;
  :mod:`.script` -- ``script`` samples on the worker's side;
* :mod:`.pool` -- the parent's warm pool and the entry points.

The threat model and what each layer isolates are in ``docs/sandbox.md``.

This ``__init__`` imports nothing eagerly: the workers import the package as a top-level
``sandbox`` (``import sandbox.worker``, see :mod:`.pool`) and must not load the parent's side.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not `typing`'s: the workers import little (see pool.py)
if TYPE_CHECKING:  # relative: the workers import this package as a top-level ``sandbox``
    from . import linux as linux
    from .answer_keys import answer_key_paths as answer_key_paths
    from .answer_keys import data_file_paths as data_file_paths
    from .cgroup import cgroup_bases as cgroup_bases
    from .durations import durations_file as durations_file
    from .framing import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
    from .jobs import SandboxJob as SandboxJob
    from .jobs import SandboxResult as SandboxResult
    from .pool import SandboxPool as SandboxPool
    from .pool import default_workers as default_workers
    from .pool import get_pool as get_pool
    from .pool import isolation_text as isolation_text
    from .pool import run_jobs as run_jobs
    from .pool import run_python as run_python
    from .pool import shutdown_pool as shutdown_pool

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "SandboxJob",
    "SandboxPool",
    "SandboxResult",
    "answer_key_paths",
    "cgroup_bases",
    "data_file_paths",
    "default_workers",
    "durations_file",
    "get_pool",
    "isolation_text",
    "linux",
    "run_jobs",
    "run_python",
    "shutdown_pool",
]

_WHERE = {
    "SandboxJob": "jobs",
    "SandboxResult": "jobs",
    "SandboxPool": "pool",
    "run_python": "pool",
    "run_jobs": "pool",
    "get_pool": "pool",
    "shutdown_pool": "pool",
    "default_workers": "pool",
    "durations_file": "pool",
    "isolation_text": "pool",
    "DEFAULT_MAX_OUTPUT": "framing",
    "cgroup_bases": "cgroup",
    "data_file_paths": "pool",
    "answer_key_paths": "pool",
}


def __getattr__(name: str) -> object:  # the module attribute hook (PEP 562)
    if name == "linux":
        return importlib.import_module(f"{__name__}.linux")
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
