"""``evalcore run`` and ``evalcore rescore``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from evalcore._cliargs import finite_float, seconds
from evalcore.errors import EvalcoreError
from evalcore.evaluators import add_isolation_option, require_isolation, warn_if_not_isolated
from evalcore.runs._defaults import DEFAULT_MAX_TOKENS


def _fmt_ci(d: dict[str, Any] | None) -> str:
    """``0.625 [0.306, 0.863] 95% CI, n=8`` (the interval is printed with every accuracy)."""
    if not d or d.get("mean") is None:
        return "n/a"
    lo, hi = d.get("ci_low"), d.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}] 95% CI" if lo is not None and hi is not None else " (no interval)"
    n = f", n={d['n']}" if d.get("n") is not None else ""
    if d.get("n_eff") is not None and d.get("n_items") is not None:
        # several epochs: the samples of one item are not independent, so the interval is
        # Wilson's on the effective sample size, not on n
        n += f" samples of {d['n_items']} items, effective n {d['n_eff']:.1f}"
    return f"{d['mean']:.3f}{ci}{n}"


def _resume_command(parser: argparse.ArgumentParser, args: argparse.Namespace, run_id: str) -> str:
    """The ``evalcore run ...`` line that resumes this run: the options given, ``--run-id`` set."""
    import shlex

    words = ["evalcore", "run"]
    for action in parser._actions:  # noqa: SLF001 (argparse has no public list of its options)
        if action.dest in ("help", "run_id") or action.dest.startswith("_"):
            continue
        value = getattr(args, action.dest, None)
        if not action.option_strings:  # the positional dataset
            words.append(str(value))
        elif value is None or value == action.default:
            continue
        elif isinstance(action, argparse._StoreTrueAction):  # noqa: SLF001
            words.append(action.option_strings[-1])
        elif isinstance(value, list):
            for v in value:
                words += [action.option_strings[-1], str(v)]
        else:
            words += [action.option_strings[-1], str(value)]
    words += ["--run-id", run_id]
    return shlex.join(words)


def _print_results(path: Any, res: dict[str, Any], config: Mapping[str, Any] | None = None) -> None:
    print(f"run: {path}")
    if config:  # which data was asked: a shipped sample is not the full benchmark
        print(
            f"dataset: {config.get('dataset')} split {config.get('split')}, source "
            f"{', '.join(config.get('source') or [])}, {config.get('n_items')} items  "
            f"model: {config.get('model')}"
        )
    inv = res.get("invocation")
    if res.get("rescored"):
        done = "re-scored from the recorded answers, no model calls"
    elif inv:  # what this command did: a resumed run re-asks nothing it has
        done = f"resumed {inv.get('resumed', 0)}, asked {inv.get('asked', 0)}, from cache {inv.get('from_cache', 0)}"
    else:
        done = f"cached {res.get('cached')}"
    print(f"samples: {res.get('n_samples')} ({done})  errors: {res.get('errors')}  retries: {res.get('retries')}")
    print(f"accuracy strict:   {_fmt_ci(res.get('accuracy_strict'))}")
    print(f"accuracy flexible: {_fmt_ci(res.get('accuracy_flexible'))}")
    if res.get("pass_at_k"):
        print("pass@k: " + ", ".join(f"{k}={v:.3f}" for k, v in res["pass_at_k"].items()))
    if res.get("parse_failure_rate") is not None:
        strict = res.get("parse_failure_rate_strict")
        print(
            f"parse failures: flexible {res['parse_failure_rate']:.3f}"
            + (f", strict {strict:.3f}" if strict is not None else "")
        )
    tok = res.get("tokens") or {}
    print(f"tokens: {tok.get('prompt', 0)} in / {tok.get('completion', 0)} out  cost: ${res.get('cost_usd', 0.0):.4f}")
    if res.get("latency_p50_s") is not None:
        qps = res.get("qps")
        print(
            f"latency p50 {res['latency_p50_s']:.3f}s p95 {res['latency_p95_s']:.3f}s"
            + (f"  qps {qps:.2f}" if qps else "")
        )


def _parse_param(text: str) -> tuple[str, Any]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise EvalcoreError(f"expected KEY=VALUE, got {text!r}", field="--param")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evalcore.runs import load_run, run_benchmark

    _resolve_choice_mode(args)
    params = _generation_params(args)
    options = _model_options(args)
    from evalcore.benchmarks import get_benchmark

    code = get_benchmark(args.dataset).scorer == "code_execution"  # checks a benchmark file too
    if code and args.require_isolation:
        require_isolation()  # before any model call
    from evalcore.runs import RunInterrupted

    try:
        path = run_benchmark(
            args.dataset,
            args.model,
            limit=args.limit,
            seed=args.seed,
            epochs=args.epochs,
            concurrency=args.concurrency,
            run_dir=args.run_dir,
            run_id=args.run_id,
            prompt=args.prompt,
            params=params,
            progress=not args.no_progress,
            few_shot=args.few_shot,
            choice_mode=args.choice_mode,
            split=args.split,
            source=args.source,
            cache=False if args.no_cache else True,
            scorer=args.scorer,
            model_options=options,
            executor=getattr(args, "executor", None),
        )
    except RunInterrupted as stop:
        return _interrupted(stop, args)
    run = load_run(Path(path))
    if code:
        warn_if_not_isolated()
    _report_failures(run, args, path)
    return 0


def _generation_params(args: argparse.Namespace) -> dict[str, Any]:
    """The request parameters of ``--param`` key=value pairs, ``--max-tokens`` and ``--temperature``."""
    params: dict[str, Any] = dict(_parse_param(p) for p in args.param or [])
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    if args.temperature is not None:
        params["temperature"] = args.temperature
    return params


def _model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The model client's options from the command line (timeout, pricing, pacing, retries)."""
    options: dict[str, Any] = {}
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.pricing is not None:
        options["pricing"] = args.pricing
    if str(args.model).startswith(("openai:", "openai-compatible:")):
        # the endpoint client's own bound of calls in flight (adaptive below it), else its default 8
        options["concurrency"] = args.concurrency
    for flag, option in (("rpm", "requests_per_minute"), ("tpm", "tokens_per_minute")):
        value = getattr(args, flag, None)
        if value is not None:
            if not (value > 0 and value != float("inf")):  # nan fails the comparison too
                raise EvalcoreError(f"must be a number > 0 (per minute), got {value:g}", field=f"--{flag}")
            options[option] = value
    if args.max_retries is not None:
        from evalcore.models import RetryPolicy

        if args.max_retries < 0:
            raise EvalcoreError(f"must be >= 0, got {args.max_retries}", field="--max-retries")
        options["retry"] = RetryPolicy(max_retries=args.max_retries)
    return options


def _report_failures(run: Any, args: argparse.Namespace, path: Any) -> None:
    """Print the results; failed model calls are an error when all failed, else a warning on stderr."""
    failed = _failed_calls(run, args)
    if failed is not None and failed["all"]:
        # nothing was scored: an accuracy of "n/a" with exit 0 reads as a result; the failed
        # samples stay recorded (as errors, never as wrong answers) and a resume asks them again
        raise EvalcoreError(
            f"the model call failed for all {failed['count']} samples, nothing was scored "
            f"(first error: {failed['first']}); the failed samples are kept in this run "
            f"directory, and re-running with its --run-id asks them again: {failed['resume']}",
            path=path,
        )
    _print_results(path, run.results, run.config)
    if failed is not None:
        import sys

        print(
            f"evalcore: warning: the model call failed for {failed['count']} of {failed['n']} "
            f"samples (first error: {failed['first']}); the accuracy counts only the "
            f"{failed['n'] - failed['count']} answered; re-running with --run-id asks the "
            f"failed ones again: {failed['resume']}",
            file=sys.stderr,
        )


def _failed_calls(run: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    """The samples of ``run`` whose model call failed: how many, of how many, the first error's
    text (one line) and the command that resumes the run; None when every call succeeded."""
    n = int(run.results.get("n_samples") or 0)
    count = int(run.results.get("errors") or 0)
    if not count:
        return None
    first = next((r for r in run.samples if r.get("error")), None)
    error = ((first or {}).get("completion") or {}).get("error") or {}
    text = " ".join(str(error.get("message") or error.get("type") or "unknown error").split())
    if len(text) > 200:
        text = text[:197] + "..."
    run_id = str(run.results.get("run_id") or run.config.get("run_id") or run.path.name)
    return {
        "n": n,
        "count": count,
        "all": count >= n,
        "first": text,
        "resume": _resume_command(args._run_parser, args, run_id),
    }


def _interrupted(stop: Any, args: argparse.Namespace) -> int:
    """Say what Ctrl-C (or SIGTERM) saved and how to resume; exit 130 without waiting for a running call."""
    import os
    import sys

    how = "terminated (SIGTERM)" if _signal_status() == 143 else "interrupted"  # the words cli.py uses
    print(f"\nevalcore: {how}: {stop.saved} of {stop.wanted} samples saved in {stop.path}", file=sys.stderr)
    print(f"resume with: {_resume_command(args._run_parser, args, stop.run_id)}", file=sys.stderr)
    if stop.abandoned or getattr(args, "cluster", None):  # a cluster: skip the slow shutdown (docs/cluster.md)
        # a model call still computes in a worker thread (llama.cpp cannot be stopped
        # mid-call): leave now; everything is saved and the run lock dies with the process
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_signal_status())
    return 130  # the CLI turns it into 143 after a SIGTERM


def _signal_status() -> int:
    """130 after Ctrl-C, 143 after SIGTERM, for a run that leaves with ``os._exit``.

    The CLI's SIGTERM handler (``evalcore/cli.py``) puts SIGTERM's default action back when it
    fires (a second SIGTERM kills at once), so a default action here means a SIGTERM stopped the run.
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        return 143
    return 130


def _rescore(args: argparse.Namespace) -> int:
    from evalcore.benchmarks import benchmark_of_run
    from evalcore.runs import load_run, rescore
    from evalcore.runs._rescore import score_changes

    bench = benchmark_of_run(load_run(args.run_dir_path).config)
    code = bench is not None and bench.scorer == "code_execution"
    if code and args.require_isolation:
        require_isolation()
    before = load_run(args.run_dir_path)
    res = rescore(args.run_dir_path, benchmark_file=getattr(args, "benchmark", None))
    if code:
        warn_if_not_isolated()
    after = load_run(args.run_dir_path)
    _print_results(args.run_dir_path, res, after.config)
    _print_changes(score_changes(before.results, before.samples, res, after.samples), len(after.samples))
    return 0


def _print_changes(changes: dict[str, Any], n_samples: int, limit: int = 20) -> None:
    """What ``rescore`` changed: each metric old -> new, and the samples whose verdict changed."""

    def fmt(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    metrics, verdicts = changes["metrics"], changes["verdicts"]
    if not metrics and not verdicts:
        print("changes: none (every metric and verdict is as before)")
        return
    print("changes:")
    for key, (old, new) in metrics.items():
        print(f"  {key}: {fmt(old)} -> {fmt(new)}")
    print(f"  verdict changed: {len(verdicts)} of {n_samples} samples")
    for v in verdicts[:limit]:
        extracted = ""
        if v.get("extracted_old") != v.get("extracted_new"):
            extracted = f"  (extracted {v.get('extracted_old')!r} -> {v.get('extracted_new')!r})"
        print(f"    {v['item_id']} epoch {v['epoch']}: {v['old']} -> {v['new']}{extracted}")
    if len(verdicts) > limit:
        print(f"    ... and {len(verdicts) - limit} more")


def _add_choice_mode(p: argparse.ArgumentParser) -> None:
    """``--choice-mode`` and its deprecated alias ``--mmlu-mode`` (hidden from ``--help``)."""
    p.add_argument(
        "--choice-mode",
        default=None,
        help="letter-choice benchmarks (mmlu): generate (default: the letter read from the reply) | "
        "likelihood (the most probable option letter; local:smollm2)",
    )
    p.add_argument("--mmlu-mode", default=None, help=argparse.SUPPRESS)  # its name before issue 40


def _resolve_choice_mode(args: argparse.Namespace) -> None:
    """Fold the deprecated ``--mmlu-mode`` into ``args.choice_mode`` (a note on stderr), so the
    run and its printed resume command see ``--choice-mode`` only.

    Raises:
        EvalcoreError: Both options given with different values.
    """
    old = getattr(args, "mmlu_mode", None)
    if old is None:
        return
    import sys

    print("evalcore: --mmlu-mode is deprecated: use --choice-mode (same values)", file=sys.stderr)
    if args.choice_mode is not None and args.choice_mode != old:
        raise EvalcoreError(
            f"--choice-mode {args.choice_mode} and its deprecated alias --mmlu-mode {old} differ: "
            "give --choice-mode only",
            field="--choice-mode",
        )
    args.choice_mode, args.mmlu_mode = old, None


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``run`` and ``rescore`` to the CLI (the benchmarks named in the help: the registry's)."""
    from evalcore.benchmarks import benchmark_names

    names = ", ".join(benchmark_names())
    p = subparsers.add_parser(
        "run",
        help=f"run a benchmark ({names}, or your own YAML file) against a model",
        description="Ask a model every item x epoch, score by exact match or code execution, "
        "record every sample in DIR/ID/samples.jsonl (resumable). Exit status 2 "
        "when the input is bad or the model call failed for every sample (the run "
        "directory is kept; --run-id resumes it), 130 on Ctrl-C.",
    )
    p.add_argument(
        "dataset",
        help=f"{names}, or a benchmark YAML file (your own items and scorer: docs/benchmarks.md)",
    )
    p.add_argument(
        "--model",
        required=True,
        help="local:smollm2 | openai:gpt-4o-mini | openai-compatible:NAME@URL | replay:RUN_DIR",
    )
    p.add_argument("--limit", type=int, default=None, help="number of items (default: all)")
    p.add_argument("--seed", type=int, default=0, help="item sampling and generation seed")
    p.add_argument("--epochs", type=int, default=1, help="repetitions of every item")
    p.add_argument("--concurrency", type=int, default=4, help="calls in flight")
    p.add_argument("--run-dir", default="runs", help="parent folder of run directories")
    p.add_argument("--run-id", default=None, help="run id; an existing one is resumed")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="completion token limit (default per dataset: "
        + ", ".join(f"{d} {n}" for d, n in DEFAULT_MAX_TOKENS.items())
        + "; the notebooks' too)",
    )
    p.add_argument("--temperature", type=finite_float, default=None, help="sampling temperature")
    p.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="another generation parameter (top_p, stop, seed, logprobs, ...)",
    )
    p.add_argument("--prompt", default=None, help="prompt template YAML (default: packaged)")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples per prompt")
    _add_choice_mode(p)
    p.add_argument("--split", default="test", help="dataset split")
    p.add_argument("--source", default="auto", help="auto | hf | local | package | sample")
    p.add_argument("--scorer", default="exact", help="exact (LLM judges are refused)")
    p.add_argument("--timeout", type=seconds, default=None, help="seconds per model call attempt (endpoint models)")
    p.add_argument(
        "--max-retries", type=int, default=None, help="retries of a failed call (endpoint models; default 5)"
    )
    p.add_argument(
        "--rpm",
        type=float,
        default=None,
        help="the endpoint's requests per minute: calls are paced to it (shared by all calls of the process)",
    )
    p.add_argument(
        "--tpm", type=float, default=None, help="the endpoint's tokens per minute (prompt + completion): paced likewise"
    )
    p.add_argument("--pricing", default=None, help="pricing YAML overriding the shipped table (USD per 1M tokens)")
    p.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    # evalcore.cli adds --cluster/--cluster-wait and passes args.executor
    p.set_defaults(
        executor_for="the model calls (each worker builds the model once; --concurrency is per worker thread)"
    )
    add_isolation_option(p)
    p.set_defaults(func=_run, _run_parser=p)

    r = subparsers.add_parser("rescore", help="recompute scores of a recorded run (no model calls)")
    r.add_argument("run_dir_path", metavar="RUN_DIR", help="the run directory")
    r.add_argument(
        "--benchmark",
        metavar="FILE",
        help="a benchmark YAML whose scorer settings replace the run's (the prompt and data must be the same)",
    )
    add_isolation_option(r)
    r.set_defaults(func=_rescore)
