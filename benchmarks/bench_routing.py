"""Time the vectorized routing replay against a naive per-ordering loop.

Floor (issue 6): 11 algorithms × 1,319 queries × 200 orderings in ≤ 30 s on this machine.
The peer is the straightforward implementation: one ordering at a time, one query at a time,
in plain Python (UCB1), and with per-ordering numpy (LinUCB, on a subset of orderings, scaled).

Usage: ``python benchmarks/bench_routing.py [--orderings 200] [--items 1319] [--dims 64]``
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time

import numpy as np

from evalcore.routing import ALGORITHMS, make_orderings, replay, simulate_outcomes


def naive_ucb1(rewards: np.ndarray, orders: np.ndarray, c: float = math.sqrt(2.0), seed: int = 0) -> float:
    """UCB1 one ordering at a time in plain Python; returns the mean reward."""
    rng = random.Random(seed)
    rows = rewards.tolist()
    k = rewards.shape[1]
    total = 0.0
    for order in orders.tolist():
        n = [0] * k
        s = [0.0] * k
        for t, item in enumerate(order):
            best, cand = -math.inf, []
            for a in range(k):
                if n[a] == 0:
                    score = math.inf
                else:
                    score = s[a] / n[a] + c * math.sqrt(math.log(max(t, 1)) / n[a])
                if score > best:
                    best, cand = score, [a]
                elif score == best:
                    cand.append(a)
            a = rng.choice(cand)
            r = rows[item][a]
            n[a] += 1
            s[a] += r
            total += r
    return total / orders.size


def naive_linucb(rewards: np.ndarray, x: np.ndarray, orders: np.ndarray, alpha: float = 1.0) -> float:
    """Disjoint LinUCB one ordering at a time (numpy per step, Sherman–Morrison)."""
    k = rewards.shape[1]
    d = x.shape[1] + 1
    total = 0.0
    for order in orders:
        a_inv = np.stack([np.eye(d) for _ in range(k)])
        b = np.zeros((k, d))
        for item in order:
            xa = np.r_[1.0, x[item]]
            v = a_inv @ xa
            s = v @ xa
            score = np.einsum("kd,kd->k", b, v) + alpha * np.sqrt(s)
            a = int(np.argmax(score))
            r = rewards[item, a]
            a_inv[a] -= np.outer(v[a], v[a]) / (1.0 + s[a])
            b[a] += r * xa
            total += r
    return total / orders.size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orderings", type=int, default=200)
    ap.add_argument("--items", type=int, default=1319)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--naive-linucb-orderings", type=int, default=4)
    ap.add_argument("--workers", type=int, default=None, help="replay threads (default: CPU count)")
    args = ap.parse_args()

    m = simulate_outcomes(
        args.items, arm_quality=(0.35, 0.55, 0.75, 0.65), arm_cost=(1.0, 2.0, 8.0, 4.0), n_features=args.dims, seed=0
    )
    x = m.context(dims=args.dims)  # computed once, outside the timing (as the replay caches it)
    replay(m, "all", orderings=2, seed=0, progress=False)  # warm-up (imports, allocations)

    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    res = replay(m, "all", orderings=args.orderings, seed=0, features=x, progress=False, workers=args.workers)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"vectorized replay: {len(ALGORITHMS)} algorithms x {args.items} queries x "
        f"{args.orderings} orderings, {x.shape[1]} feature dims, {m.n_arms} arms, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} before the run"
    )
    for name, tr in res.traces.items():
        print(f"  {name:<20s} {tr.seconds:7.2f} s")
    print(
        f"  {'total':<20s} {total:7.2f} s wall, {cpu:.2f} s CPU   (floor: 30 s wall) -> "
        f"{'PASS' if total <= 30 else 'FAIL'}"
    )

    orders = make_orderings(args.items, args.orderings, 0)
    rewards = m.rewards(0.0)
    t0 = time.perf_counter()
    naive_ucb1(rewards, orders)
    t_naive = time.perf_counter() - t0
    t0 = time.perf_counter()
    replay(m, "ucb1", orderings=args.orderings, seed=0, progress=False, workers=1)
    t_vec = time.perf_counter() - t0
    print(f"ucb1: naive per-ordering Python loop {t_naive:.2f} s vs vectorized {t_vec:.2f} s -> {t_naive / t_vec:.1f}x")

    n_sub = max(1, min(args.naive_linucb_orderings, args.orderings))
    t0 = time.perf_counter()
    naive_linucb(rewards, x, orders[:n_sub])
    t_sub = time.perf_counter() - t0
    t_lin_naive = t_sub * args.orderings / n_sub
    t0 = time.perf_counter()
    replay(m, "linucb", orderings=args.orderings, seed=0, features=x, progress=False, workers=1)
    t_lin = time.perf_counter() - t0
    print(
        f"linucb: naive per-ordering numpy loop {t_sub:.2f} s for {n_sub} orderings, "
        f"{t_lin_naive:.1f} s scaled to {args.orderings} vs vectorized {t_lin:.2f} s -> "
        f"{t_lin_naive / t_lin:.1f}x"
    )


if __name__ == "__main__":
    main()
