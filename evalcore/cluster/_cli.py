"""The ``--cluster`` side of the commands (reached only when ``--cluster`` is given)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

__all__ = ["score_humaneval_on_cluster", "interrupted"]


def interrupted() -> None:
    """Ctrl-C on a cluster command: the results written so far are closed (whole lines) and a
    local cluster's processes were killed; exit now (130) rather than wait for Dask's shutdown
    handlers (seconds), as asked: stopped within 2 s."""
    import os

    print("evalcore: interrupted (rerun the command to resume)", file=sys.stderr, flush=True)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(130)


def score_humaneval_on_cluster(args: argparse.Namespace) -> int:
    """``evalcore score humaneval SAMPLES --cluster ADDRESS``: as on one machine, on the cluster."""
    from evalcore.cluster._spec import parse_cluster
    from evalcore.cluster._verdicts import DEFAULT_CHUNK_SIZE, score_samples_file_on_cluster
    from evalcore.evaluators._cli import skipped_pass_at_k

    spec = parse_cluster(args.cluster, field="--cluster")  # before anything is read or started
    try:
        result: dict[str, Any] = score_samples_file_on_cluster(
            args.file,
            cluster=spec,
            ks=args.k,
            timeout_s=args.timeout,
            problems_file=args.problems,
            chunk_size=getattr(args, "chunk_size", None) or DEFAULT_CHUNK_SIZE,
            wait_s=args.cluster_wait,
            require_isolation=bool(getattr(args, "require_isolation", False)),
        )
    except KeyboardInterrupt:
        interrupted()
    print(json.dumps(result, indent=2))
    note = skipped_pass_at_k(args.file, args.k, result)
    if note:
        print(note, file=sys.stderr)
    return 0
