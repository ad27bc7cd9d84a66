"""Dask distributed: code verdicts, benchmark runs and the notebook suite beyond one machine.

A cluster is named the same way everywhere (the ``cluster`` argument of the API, ``--cluster
ADDRESS`` on the command line): a scheduler address (``tcp://host:8786``), a scheduler file,
``local:N`` (a ``LocalCluster`` of N worker processes with one thread each, started and closed by
evalcore), or, in the API, a ``distributed.Client`` the user already has (left open).

Nothing of Dask is imported until a cluster is asked for: this ``__init__`` re-exports lazily,
and the rest of evalcore reaches this package only behind ``if cluster:``. See ``docs/cluster.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ClusterSession",
    "DEFAULT_WORKER_WAIT_S",
    "open_cluster",
    "parse_cluster",
    "run_blocks_on_cluster",
    "run_jobs_on_cluster",
    "score_samples_file_on_cluster",
]

_WHERE = {
    "ClusterSession": "_connect",
    "DEFAULT_WORKER_WAIT_S": "_spec",
    "open_cluster": "_connect",
    "parse_cluster": "_spec",
    "ClusterSpec": "_spec",
    "run_blocks_on_cluster": "_routing",
    "run_jobs_on_cluster": "_jobs",
    "score_samples_file_on_cluster": "_verdicts",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
