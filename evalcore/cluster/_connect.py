"""A Dask client from a cluster name (or the user's own client), checked before any work is sent."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from evalcore.cluster._spec import CONNECT_TIMEOUT_S, DEFAULT_WORKER_WAIT_S, ClusterSpec, parse_cluster
from evalcore.errors import EvalcoreError

__all__ = ["ClusterSession", "open_cluster", "import_distributed", "check_worker_versions"]

_INSTALL = "pip install 'evalcore[cluster]' (Dask distributed and bokeh)"

# Runs on each worker to report its evalcore version. It is sent by value (its module is not
# importable), so that a worker without evalcore answers instead of failing to load it.
_PROBE_SOURCE = """
def probe():
    import sys
    try:
        import evalcore
    except Exception as exc:
        return {"evalcore": None, "error": f"{type(exc).__name__}: {exc}", "python": sys.version.split()[0]}
    return {"evalcore": str(getattr(evalcore, "__version__", "")), "python": sys.version.split()[0],
            "path": str(getattr(evalcore, "__file__", ""))}
"""


def _probe_function() -> Any:
    namespace: dict[str, Any] = {"__name__": "evalcore_cluster_probe"}
    exec(compile(_PROBE_SOURCE, "<evalcore cluster probe>", "exec"), namespace)  # noqa: S102 - our own text
    return namespace["probe"]


def import_distributed() -> Any:
    """``distributed``, or an error saying which extra to install."""
    try:
        import distributed
    except ImportError as exc:
        raise EvalcoreError(
            f"a cluster needs Dask distributed, which is not installed here ({exc}): {_INSTALL}",
            field="cluster",
        ) from None
    return distributed


class ClusterSession:
    """A connected client and, for ``local:N``, the cluster evalcore started.

    Attributes:
        client: The ``distributed.Client``.
        label: What to call the cluster in messages (the address, the file, ``local:N``).
        owned: Whether evalcore opened the client (and closes it).
    """

    def __init__(self, client: Any, label: str, cluster: Any = None, owned: bool = True) -> None:
        self.client = client
        self.label = label
        self.cluster = cluster
        self.owned = owned

    @property
    def dashboard_link(self) -> str | None:
        """The dashboard's address, when the scheduler serves one (bokeh installed)."""
        try:
            info = self.client.scheduler_info()
            if not (info.get("services") or {}).get("dashboard"):
                return None
            return str(self.client.dashboard_link)
        except Exception:  # noqa: BLE001 - a link is a courtesy
            return None

    def worker_count(self) -> int:
        """Workers connected now."""
        return len(self.client.nthreads())

    def total_threads(self) -> int:
        """Worker threads connected now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def local_worker_pids(self) -> list[int]:
        """Process ids of a local cluster's worker processes (empty for a remote one)."""
        pids = []
        for nanny in list(getattr(self.cluster, "workers", {}).values()):
            proc = getattr(getattr(nanny, "process", None), "process", None)
            pid = getattr(proc, "pid", None)
            if pid:
                pids.append(int(pid))
        return pids

    def close(self, fast: bool = False) -> None:
        """Close what evalcore opened (a user's own client stays open).

        Args:
            fast: Ctrl-C: kill a local cluster's worker processes at once (their sandbox
                pools die with them) instead of asking them to finish.
        """
        if not self.owned:
            return
        if fast:
            for pid in self.local_worker_pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        timeout = 1.0 if fast else 10.0

        def shut() -> None:
            with contextlib.suppress(Exception):
                self.client.close(timeout=timeout)
            if self.cluster is not None:
                with contextlib.suppress(Exception):
                    self.cluster.close(timeout=timeout)

        done = threading.Thread(target=shut, name="evalcore-cluster-close", daemon=True)
        done.start()
        # Ctrl-C: the processes are gone already; the rest closes in the background
        done.join(0.3 if fast else timeout * 2 + 1.0)


def _quiet_dask_logs() -> None:
    for name in (
        "distributed",
        "distributed.client",
        "distributed.worker",
        "distributed.scheduler",
        "distributed.nanny",
        "distributed.core",
        "distributed.comm",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)


def _connect(spec: ClusterSpec) -> ClusterSession:
    distributed = import_distributed()
    _quiet_dask_logs()
    if spec.kind == "local":
        try:
            import bokeh  # noqa: F401 - the dashboard needs it

            dashboard: str | None = "127.0.0.1:0"
        except ImportError:
            dashboard = None
        try:
            cluster = distributed.LocalCluster(
                n_workers=spec.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=dashboard,
                silence_logs=logging.ERROR,
            )
        except Exception as exc:  # noqa: BLE001 - a worker that dies at start-up, no free port...
            raise EvalcoreError(
                f"the local cluster {spec} could not start: {type(exc).__name__}: {exc} (a worker "
                "process that dies at start-up: check that `python -c 'import evalcore, "
                "distributed'` works in this environment)",
                field="cluster",
            ) from None
        try:
            client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001
            with contextlib.suppress(Exception):
                cluster.close(timeout=5)
            raise EvalcoreError(f"cannot connect to the local cluster {spec}: {exc}", field="cluster") from None
        return ClusterSession(client, str(spec), cluster)
    kwargs: dict[str, Any] = {"timeout": CONNECT_TIMEOUT_S, "set_as_default": False}
    if spec.kind == "file":
        kwargs["scheduler_file"] = spec.target
    else:
        kwargs["address"] = spec.target
    try:
        client = distributed.Client(**kwargs)
    except (OSError, TimeoutError) as exc:
        what = "the scheduler in the scheduler file" if spec.kind == "file" else "the scheduler at"
        raise EvalcoreError(
            f"cannot reach {what} {spec.target} within {CONNECT_TIMEOUT_S:g} s "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no reply'}); is a "
            "scheduler running there (dask scheduler) and reachable from here?",
            field="cluster",
        ) from None
    except Exception as exc:  # noqa: BLE001 - a malformed address or scheduler file
        raise EvalcoreError(
            f"cannot use the cluster {spec.target}: {type(exc).__name__}: {exc}", field="cluster"
        ) from None
    return ClusterSession(client, spec.target)


def wait_for_workers(session: ClusterSession, wait_s: float, stream: Any = None) -> None:
    """Return once the cluster has a worker; say so while waiting; fail after ``wait_s``."""
    if session.worker_count() > 0:
        return
    stream = sys.stderr if stream is None else stream
    print(
        f"evalcore: waiting up to {wait_s:g} s for a worker to join the cluster at {session.label} "
        "(--cluster-wait S; start one with: dask worker ADDRESS --nworkers N --nthreads 1)",
        file=stream,
        flush=True,
    )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if session.worker_count() > 0:
            return
        time.sleep(0.2)
    raise EvalcoreError(
        f"no worker joined the cluster at {session.label} within {wait_s:g} s (raise --cluster-wait, "
        "or check that the workers can reach the scheduler and start)",
        field="cluster",
    )


def check_worker_versions(session: ClusterSession) -> dict[str, dict[str, Any]]:
    """Ask every worker which evalcore it has; refuse a worker without it or with another version.

    Returns:
        ``{worker address: {"evalcore": version, "python": ...}}``.

    Raises:
        EvalcoreError: Naming the worker, its version and this machine's.
    """
    from evalcore import __version__

    try:
        replies = session.client.run(_probe_function(), on_error="return")
    except Exception as exc:  # noqa: BLE001 - a worker lost while asked
        raise EvalcoreError(
            f"cannot ask the workers of {session.label} for their versions: {exc}", field="cluster"
        ) from None
    for address, info in sorted(replies.items()):
        if isinstance(info, BaseException) or not isinstance(info, dict):
            raise EvalcoreError(
                f"worker {address} of {session.label} failed to report its evalcore version: {info!r}", field="cluster"
            )
        if info.get("evalcore") is None:
            raise EvalcoreError(
                f"worker {address} of {session.label} cannot import evalcore ({info.get('error')}); install "
                f"evalcore {__version__} on every worker",
                field="cluster",
            )
        if info["evalcore"] != __version__:
            raise EvalcoreError(
                f"worker {address} of {session.label} has evalcore {info['evalcore']}, this machine has "
                f"evalcore {__version__}: install the same version on every worker",
                field="cluster",
            )
    return replies


# Dask keeps the last ``distributed.admin.low-level-log-length`` (1,000) messages of every
# batched stream (client -> scheduler, scheduler -> each worker) for debugging, each message up to
# 1 MB: with a chunk of samples in each message that was 1,000 chunks per stream held in memory
# (the client's memory grew with the input up to ~(workers + 1) x 1,000 chunks). evalcore keeps 8.
LOG_LENGTH = 8


def _shrink_message_logs(client: Any) -> None:
    """Bound the debug logs of the streams that already exist (a user's own client, the
    scheduler of a LocalCluster in this process); streams made later read the config."""
    from collections import deque

    streams: list[Any] = [getattr(client, "scheduler_comm", None)]
    scheduler = getattr(getattr(client, "cluster", None), "scheduler", None)
    streams += list(getattr(scheduler, "stream_comms", {}).values())
    for bs in streams:
        log = getattr(bs, "recent_message_log", None)
        if isinstance(log, deque) and (log.maxlen is None or log.maxlen > LOG_LENGTH):
            bs.recent_message_log = deque(log, maxlen=LOG_LENGTH)


@contextlib.contextmanager
def open_cluster(
    cluster: Any, *, wait_s: float = DEFAULT_WORKER_WAIT_S, stream: Any = None
) -> Iterator[ClusterSession]:
    """Connect to a cluster, wait for a worker, check versions; close what was opened after.

    Args:
        cluster: A ``distributed.Client`` (kept open), a :class:`ClusterSpec`, or a name for
            :func:`parse_cluster` (``tcp://host:port``, a scheduler file, ``local:N``).
        wait_s: Seconds to wait for the first worker.
        stream: Where the waiting message goes (default stderr).

    Yields:
        The :class:`ClusterSession`. On Ctrl-C a local cluster's processes are killed at once.
    """
    import_distributed()
    import dask

    with dask.config.set({"distributed.admin.low-level-log-length": LOG_LENGTH}):
        session = _session(cluster)
        interrupted = False
        try:
            _shrink_message_logs(session.client)
            wait_for_workers(session, wait_s, stream)
            check_worker_versions(session)
            yield session
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            session.close(fast=interrupted)


def _session(cluster: Any) -> ClusterSession:
    if isinstance(cluster, ClusterSession):
        return ClusterSession(cluster.client, cluster.label, cluster.cluster, owned=False)
    if not isinstance(cluster, (str, ClusterSpec)):
        distributed = import_distributed()
        if isinstance(cluster, distributed.Client):
            return ClusterSession(
                cluster, str(getattr(cluster, "scheduler", None) and cluster.scheduler.address), owned=False
            )
        raise EvalcoreError(
            f"cluster must be a scheduler address, a scheduler file, local:N or a distributed.Client, "
            f"got {type(cluster).__name__}",
            field="cluster",
        )
    spec = cluster if isinstance(cluster, ClusterSpec) else parse_cluster(cluster)
    return _connect(spec)
