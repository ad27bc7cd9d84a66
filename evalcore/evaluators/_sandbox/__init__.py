"""Run untrusted Python in isolated, resource-limited processes; decide test verdicts outside them.

One module per role:

* :mod:`.framing` -- messages between the parent and its workers, and the plain-data
  encoding that is the only thing crossing between a test and its candidate;
* :mod:`.candidate` -- what runs in a sample process (the candidate's call server; the
  ``script`` harness);
* :mod:`.testside` -- the test run by the worker against a proxy of the candidate;
* :mod:`.worker` -- the worker process: namespaces, hiding paths, ``check`` samples, its loop;
* :mod:`.zygote` -- the zygotes that fork every sample; :mod:`.sample` -- a sample's own
  set-up (pipes, limits, user, seccomp, ``/proc``); :mod:`.scratch` -- scratch directories;
  :mod:`.script` -- ``script`` samples on the worker's side;
* :mod:`.linux` -- system calls through ctypes, the seccomp filters;
* :mod:`.pool` -- the parent's warm pool and the public entry points.

The threat model and what each layer isolates are in ``docs/sandbox.md``.

This ``__init__`` imports nothing eagerly: the workers import the package as a top-level
``_sandbox`` (``import _sandbox.worker``) and must not load the parent's side.
"""

from __future__ import annotations

import importlib

__all__ = ["SandboxResult", "SandboxPool", "run_python", "run_jobs", "get_pool", "shutdown_pool"]

_WHERE = {
    "SandboxResult": "pool",
    "SandboxPool": "pool",
    "run_python": "pool",
    "run_jobs": "pool",
    "get_pool": "pool",
    "shutdown_pool": "pool",
    "default_workers": "pool",
    "DEFAULT_MAX_OUTPUT": "pool",
    "_to_result": "pool",
    "_cost_key": "pool",
    "_WorkerHandle": "pool",
    "data_file_paths": "pool",
    "answer_key_paths": "pool",
}


def __getattr__(name: str):  # noqa: ANN202 - module attribute hook
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
