"""A real Dask LocalCluster (2 worker processes, 1 thread each) for the tests of evalcore.cluster."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from _cluster_helpers import descendants, describe, kill_all, wait_gone

distributed = pytest.importorskip("distributed")

# Tests here send SIGINT to the commands they start (Ctrl-C). A test run started in the background
# by a non-interactive shell (`pytest … &`, nohup, a loop in a script) has SIGINT ignored, and an
# ignored signal stays ignored in every child: the command never saw the Ctrl-C and ran on (issue
# 38's 20-run loop: the Ctrl-C tests "hung" for 30 s with the command still waiting on its chunks).
# A terminal's Ctrl-C reaches a command with the default disposition; give the children that.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="package")
def local_client() -> Iterator[object]:
    """A real LocalCluster of 2 worker processes with one thread each, and its client."""
    before = descendants()
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        from evalcore.sandbox import shutdown_pool

        shutdown_pool()  # the one-machine pool the comparisons started
        left = wait_gone(descendants() - before)
        what = describe(left)
        kill_all(left)
        assert not left, f"processes left behind by the cluster: {what}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test here starts or uses a real Dask cluster: all are ``slow`` (``make unit`` leaves them out)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.slow)
