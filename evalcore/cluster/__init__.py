"""Dask distributed: code verdicts, benchmark runs and the notebook suite beyond one machine.

A cluster is named the same way everywhere (the ``cluster`` argument of the API, ``--cluster
ADDRESS`` on the command line): a scheduler address (``tcp://host:8786``), a scheduler file,
``local:N`` (a ``LocalCluster`` of N worker processes with one thread each, started and closed by
evalcore), or, in the API, a ``distributed.Client`` the user already has (left open).

It is one implementation of the executor protocol (``evalcore._executor``): ``DaskExecutor``.
Nothing of Dask is imported until a cluster is asked for: this ``__init__`` re-exports lazily, and
no package below imports it (``evalcore.cli`` builds the executor from ``--cluster``; a
``cluster=`` argument reaches :func:`dask_executor` through the ``evalcore.executors`` entry
point). See ``docs/cluster.md``.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.cluster._connect import ClusterSession as ClusterSession
    from evalcore.cluster._connect import open_cluster as open_cluster
    from evalcore.cluster._executor import DaskExecutor as DaskExecutor
    from evalcore.cluster._executor import dask_executor as dask_executor
    from evalcore.cluster._jobs import run_jobs_on_cluster as run_jobs_on_cluster
    from evalcore.cluster._routing import run_blocks_on_cluster as run_blocks_on_cluster
    from evalcore.cluster._spec import DEFAULT_WORKER_WAIT_S as DEFAULT_WORKER_WAIT_S
    from evalcore.cluster._spec import ClusterSpec as ClusterSpec
    from evalcore.cluster._spec import add_cluster_options as add_cluster_options
    from evalcore.cluster._spec import parse_cluster as parse_cluster
    from evalcore.cluster._verdicts import score_samples_file_on_cluster as score_samples_file_on_cluster

_EXPORTS = {
    "evalcore.cluster._connect": ("ClusterSession", "open_cluster"),
    "evalcore.cluster._executor": ("DaskExecutor", "dask_executor"),
    "evalcore.cluster._spec": ("ClusterSpec", "DEFAULT_WORKER_WAIT_S", "parse_cluster", "add_cluster_options"),
    "evalcore.cluster._routing": ("run_blocks_on_cluster",),
    "evalcore.cluster._jobs": ("run_jobs_on_cluster",),
    "evalcore.cluster._verdicts": ("score_samples_file_on_cluster",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
