"""What ``--cluster ADDRESS`` names, checked without importing Dask (also the CLI options)."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError

__all__ = ["ClusterSpec", "parse_cluster", "add_cluster_options", "DEFAULT_WORKER_WAIT_S"]

# How long a command waits for the first worker of a cluster that has none (--cluster-wait).
DEFAULT_WORKER_WAIT_S = 60.0
# How long connecting to a scheduler may take before the address is called unreachable.
CONNECT_TIMEOUT_S = 6.0
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_HOST_PORT = re.compile(r"^[A-Za-z0-9_.-]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$")
_EXPECTED = "expected a scheduler address (tcp://HOST:PORT), a scheduler file or local:N"


@dataclass(frozen=True)
class ClusterSpec:
    """A parsed cluster name.

    Attributes:
        kind: ``"local"`` (a LocalCluster evalcore starts), ``"address"`` or ``"file"``
            (a scheduler file).
        workers: Worker processes of a local cluster (else 0).
        target: The address or the scheduler file's path (``local:N`` for a local cluster).
    """

    kind: str
    workers: int
    target: str

    def __str__(self) -> str:
        return self.target


def parse_cluster(text: Any, field: str = "cluster") -> ClusterSpec:
    """Check a cluster name: ``local:N``, ``tcp://host:port`` (any Dask scheme), ``host:port``
    or an existing scheduler file.

    Args:
        text: What the user wrote.
        field: The option named in errors.

    Returns:
        The :class:`ClusterSpec`.

    Raises:
        EvalcoreError: ``local:0``, ``local:-1``, ``local:abc``, an empty name, a file that
            does not exist (each one line, naming the value).
    """
    if not isinstance(text, str) or not text.strip():
        raise EvalcoreError(f"{_EXPECTED}, got {text!r}", field=field)
    value = text.strip()
    if value.lower().startswith("local:"):
        count = value.split(":", 1)[1].strip()
        if not re.fullmatch(r"\+?\d+", count) or int(count) < 1:
            raise EvalcoreError(f"local:N needs a whole number N >= 1 of worker processes, got {value!r}", field=field)
        n = int(count)
        if n > 512:
            raise EvalcoreError(
                f"local:N starts N processes on this machine; {n} is too many (at most 512)", field=field
            )
        return ClusterSpec("local", n, f"local:{n}")
    if _SCHEME.match(value):
        return ClusterSpec("address", 0, value)
    path = Path(value).expanduser()
    if path.is_file():
        return ClusterSpec("file", 0, str(path))
    if _HOST_PORT.match(value):
        return ClusterSpec("address", 0, f"tcp://{value}")
    if path.exists():
        raise EvalcoreError(f"{_EXPECTED}; {value!r} is a folder, not a scheduler file", field=field)
    raise EvalcoreError(f"{_EXPECTED}, got {value!r} (no such scheduler file)", field=field)


def add_cluster_options(parser: argparse.ArgumentParser, what: str = "the work") -> None:
    """Add ``--cluster ADDRESS`` and ``--cluster-wait S`` to a command (imports nothing of Dask)."""
    from evalcore._cliargs import seconds

    parser.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help=f"run {what} on a Dask cluster: a scheduler address (tcp://HOST:8786), a scheduler "
        "file, or local:N (N worker processes on this machine, started and stopped by evalcore); "
        "needs evalcore[cluster], see docs/cluster.md",
    )
    parser.add_argument(
        "--cluster-wait",
        type=seconds,
        default=DEFAULT_WORKER_WAIT_S,
        metavar="S",
        help=f"seconds to wait for the cluster's first worker before failing (default {DEFAULT_WORKER_WAIT_S:g})",
    )
