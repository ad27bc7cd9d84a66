"""``evalcore run`` and ``evalcore rescore``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.evaluators._cli import add_isolation_option, require_isolation, warn_if_not_isolated


def _fmt_ci(d: dict[str, Any] | None) -> str:
    if not d or d.get("mean") is None:
        return "n/a"
    lo, hi = d.get("ci_low"), d.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    return f"{d['mean']:.3f}{ci}"


def _print_results(path: Any, res: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    print(f"run: {path}")
    if config:  # which data was asked: a shipped sample is not the full benchmark
        print(f"dataset: {config.get('dataset')} split {config.get('split')}, source "
              f"{', '.join(config.get('source') or [])}, {config.get('n_items')} items  "
              f"model: {config.get('model')}")
    print(f"samples: {res.get('n_samples')}  errors: {res.get('errors')}  "
          f"retries: {res.get('retries')}  cached: {res.get('cached')}")
    print(f"accuracy strict:   {_fmt_ci(res.get('accuracy_strict'))}")
    print(f"accuracy flexible: {_fmt_ci(res.get('accuracy_flexible'))}")
    if res.get("pass_at_k"):
        print("pass@k: " + ", ".join(f"{k}={v:.3f}" for k, v in res["pass_at_k"].items()))
    if res.get("parse_failure_rate") is not None:
        print(f"parse failures: {res['parse_failure_rate']:.3f}")
    tok = res.get("tokens") or {}
    print(f"tokens: {tok.get('prompt', 0)} in / {tok.get('completion', 0)} out  "
          f"cost: ${res.get('cost_usd', 0.0):.4f}")
    if res.get("latency_p50_s") is not None:
        qps = res.get("qps")
        print(f"latency p50 {res['latency_p50_s']:.3f}s p95 {res['latency_p95_s']:.3f}s"
              + (f"  qps {qps:.2f}" if qps else ""))


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

    params: dict[str, Any] = dict(_parse_param(p) for p in args.param or [])
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    if args.temperature is not None:
        params["temperature"] = args.temperature
    options: dict[str, Any] = {}
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.pricing is not None:
        options["pricing"] = args.pricing
    if args.max_retries is not None:
        from evalcore.models import RetryPolicy

        if args.max_retries < 0:
            raise EvalcoreError(f"must be >= 0, got {args.max_retries}", field="--max-retries")
        options["retry"] = RetryPolicy(max_retries=args.max_retries)
    code = args.dataset == "humaneval"  # the only dataset scored by running code
    if code and args.require_isolation:
        require_isolation()  # before any model call
    path = run_benchmark(
        args.dataset, args.model, limit=args.limit, seed=args.seed, epochs=args.epochs,
        concurrency=args.concurrency, run_dir=args.run_dir, run_id=args.run_id,
        prompt=args.prompt, params=params, progress=not args.no_progress,
        few_shot=args.few_shot, mmlu_mode=args.mmlu_mode, split=args.split, source=args.source,
        cache=False if args.no_cache else True, scorer=args.scorer, model_options=options,
    )
    run = load_run(Path(path))
    if code:
        warn_if_not_isolated()
    _print_results(path, run.results, run.config)
    return 0


def _rescore(args: argparse.Namespace) -> int:
    from evalcore.runs import load_run, rescore

    code = load_run(args.run_dir_path).config.get("dataset") == "humaneval"
    if code and args.require_isolation:
        require_isolation()
    res = rescore(args.run_dir_path)
    if code:
        warn_if_not_isolated()
    _print_results(args.run_dir_path, res, load_run(args.run_dir_path).config)
    return 0


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``run`` and ``rescore`` to the CLI."""
    p = subparsers.add_parser(
        "run", help="run a benchmark (gsm8k, mmlu, humaneval) against a model",
        description="Ask a model every item x epoch, score by exact match or code execution, "
                    "record every sample in DIR/ID/samples.jsonl (resumable).")
    p.add_argument("dataset", help="gsm8k, mmlu or humaneval")
    p.add_argument("--model", required=True,
                   help="local:smollm2 | openai:gpt-4o-mini | openai-compatible:NAME@URL | "
                        "replay:RUN_DIR")
    p.add_argument("--limit", type=int, default=None, help="number of items (default: all)")
    p.add_argument("--seed", type=int, default=0, help="item sampling and generation seed")
    p.add_argument("--epochs", type=int, default=1, help="repetitions of every item")
    p.add_argument("--concurrency", type=int, default=4, help="calls in flight")
    p.add_argument("--run-dir", default="runs", help="parent folder of run directories")
    p.add_argument("--run-id", default=None, help="run id; an existing one is resumed")
    p.add_argument("--max-tokens", type=int, default=None, help="completion token limit")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="another generation parameter (top_p, stop, seed, logprobs, ...)")
    p.add_argument("--prompt", default=None, help="prompt template YAML (default: packaged)")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples per prompt")
    p.add_argument("--mmlu-mode", default="generate", help="generate | likelihood")
    p.add_argument("--split", default="test", help="dataset split")
    p.add_argument("--source", default="auto", help="auto | hf | local | package | sample")
    p.add_argument("--scorer", default="exact", help="exact (LLM judges are refused)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per model call attempt (endpoint models)")
    p.add_argument("--max-retries", type=int, default=None,
                   help="retries of a failed call (endpoint models; default 5)")
    p.add_argument("--pricing", default=None,
                   help="pricing YAML overriding the shipped table (USD per 1M tokens)")
    p.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_isolation_option(p)
    p.set_defaults(func=_run)

    r = subparsers.add_parser("rescore", help="recompute scores of a recorded run (no model calls)")
    r.add_argument("run_dir_path", metavar="RUN_DIR", help="the run directory")
    add_isolation_option(r)
    r.set_defaults(func=_rescore)
