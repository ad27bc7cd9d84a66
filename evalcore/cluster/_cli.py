"""The ``--cluster`` side of the commands (reached only when ``--cluster`` is given)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any, NoReturn

__all__ = ["score_humaneval_on_cluster", "interrupted", "exit_now"]


def exit_now(code: int = 130) -> NoReturn:
    """End a cluster command stopped by Ctrl-C now: what it wrote is closed and a local cluster's
    processes were killed, so skip the interpreter's shutdown (Dask's exit handlers and the final
    garbage collection of a large heap take a second or more on a busy machine), as asked:
    stopped within 2 s. Standard output and error are flushed first."""
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def interrupted() -> NoReturn:
    """Ctrl-C on ``score humaneval --cluster``: the results written so far are closed (whole lines)
    and a local cluster's processes were killed; say how to resume and exit now (130)."""
    print("evalcore: interrupted (rerun the command to resume)", file=sys.stderr, flush=True)
    exit_now(130)


def score_humaneval_on_cluster(args: argparse.Namespace) -> int:
    """``evalcore score humaneval SAMPLES --cluster ADDRESS``: as on one machine, on the cluster."""
    from evalcore.cluster._spec import parse_cluster
    from evalcore.cluster._verdicts import score_samples_file_on_cluster
    from evalcore.evaluators._cli import skipped_pass_at_k

    spec = parse_cluster(args.cluster, field="--cluster")  # before anything is read or started
    try:
        result: dict[str, Any] = score_samples_file_on_cluster(
            args.file,
            cluster=spec,
            ks=args.k,
            timeout_s=args.timeout,
            problems_file=args.problems,
            chunk_size=getattr(args, "chunk_size", None),  # None: adaptive, from DEFAULT_CHUNK_SIZE
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
