"""``evalcore compare`` and ``evalcore import``: runs and other harnesses' logs."""

from __future__ import annotations

import argparse
from typing import Any

from evalcore._cliargs import non_negative_int, positive_int


def _compare_routing(args: argparse.Namespace) -> int:
    """``evalcore compare`` when the sources are routing results (paired by ordering)."""
    from evalcore.routing import compare_routing, format_routing_comparison, write_routing_comparison

    cmp = compare_routing(args.sources, labels=args.label, correction=args.correction, alpha=args.alpha)
    csv_path, json_path = write_routing_comparison(cmp, args.output)
    print(format_routing_comparison(cmp))
    print(f"wrote {csv_path} and {json_path}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from evalcore._io import check_output_dir
    from evalcore.imports import compare_sources, format_comparison, write_comparison

    check_output_dir(args.output, field="--output")  # before any log is imported
    from evalcore.routing import is_routing_result

    if any(is_routing_result(s) for s in args.sources):  # routing results: paired by ordering
        return _compare_routing(args)
    check_output_dir(args.import_dir, field="--import-dir")
    cmp = compare_sources(
        args.sources,
        metric=args.metric or (),
        correction=args.correction,
        alpha=args.alpha,
        task=args.task,
        labels=args.label,
        import_dir=args.import_dir,
        n_resamples=args.n_resamples,
        seed=args.seed,
        cluster=args.cluster,
    )
    # the files first: a reader that stops early (``| head``) must not cost them
    csv_path, json_path = write_comparison(cmp, args.output)
    print(format_comparison(cmp))
    print(f"wrote {csv_path} and {json_path}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from evalcore._io import check_output_dir
    from evalcore._runstore import load_run
    from evalcore.imports import import_log
    from evalcore.imports._common import import_batch

    check_output_dir(args.run_dir, field="--run-dir")
    # all the logs or none: a malformed later log leaves no run of an earlier one behind
    with import_batch() as batch:
        staged = [
            path
            for source in args.logs
            for path in import_log(source, args.run_dir, metric=args.metric or (), task=args.task)
        ]
    for path in dict.fromkeys(batch.final_path(p) for p in staged):
        run = load_run(path)
        acc = (run.results.get("accuracy_flexible") or {}).get("mean")
        reported = run.results.get("reported_by_harness") or {}
        metric = run.results.get("metric")
        shown = "n/a" if acc is None else f"{acc:.4f}"
        told = reported.get(metric)
        print(
            f"{path}: {run.config.get('task')} ({run.config['imported']['harness']}), "
            f"{run.results.get('n_samples')} samples, mean {metric} {shown}"
            + ("" if told is None else f" (harness reported {told:.4f})")
        )
    return 0


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``compare`` and ``import`` to the CLI."""
    p = subparsers.add_parser(
        "compare",
        help="paired comparison of runs and lm-eval / inspect_ai logs",
        description="Compare two or more evalcore run directories, lm-evaluation-harness "
        "--log_samples outputs (results_<time>.json, or its folder) and inspect_ai "
        "logs (.eval, .json), paired on the items they share (by id, else by "
        "normalised question hash). Logs are imported as run directories first, all "
        "of them or none: when a log is malformed or the runs cannot be compared, "
        "nothing is left in --import-dir.",
    )
    p.add_argument(
        "sources",
        nargs="+",
        metavar="RUN_OR_LOG",
        help="run directory or log; or routing result folders (evalcore route "
        "--output), compared router by router over their shared orderings",
    )
    p.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="score to compare, tried in order for each source: an lm-eval "
        "metric[,filter] (exact_match,strict-match), an inspect scorer "
        "(match), an evalcore score (strict, flexible); repeat for a mix. A "
        "source with none of the names given is refused, never read with "
        "another metric",
    )
    p.add_argument(
        "--correction",
        default="holm",
        choices=["holm", "bh", "none"],
        help="multiple-comparison correction across pairs (default holm)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--task", default=None, help="task (or group, e.g. mmlu) to take from lm-eval output with several")
    p.add_argument(
        "--cluster",
        default=None,
        metavar="FIELD",
        help="metadata field that clusters items (subject for MMLU): clustered paired "
        "test and interval instead of McNemar / paired t",
    )
    p.add_argument("--label", action="append", metavar="NAME", help="display name of each source, in order (repeat)")
    p.add_argument("--import-dir", default="runs/imported", help="where imported logs are written as run directories")
    p.add_argument("-o", "--output", default="reports/compare", help="folder for compare.csv and compare.json")
    p.add_argument("--n-resamples", type=positive_int, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=non_negative_int, default=0, help="resampling seed")
    p.set_defaults(func=_compare)

    q = subparsers.add_parser(
        "import",
        help="import lm-eval / inspect_ai logs as evalcore run directories",
        description="Write each log as an ordinary run directory (config.json with read-only "
        "provenance, samples.jsonl, results.json); all the logs or none.",
    )
    q.add_argument("logs", nargs="+", metavar="LOG", help="lm-eval results file or folder, inspect .eval/.json log")
    q.add_argument("--run-dir", default="runs/imported", help="parent folder of the runs")
    q.add_argument("--metric", action="append", metavar="NAME", help="as for compare")
    q.add_argument(
        "--task",
        default=None,
        help="import only this lm-eval task or group (default: every task of the "
        "results file; one whose samples file is missing is refused)",
    )
    q.set_defaults(func=_import)
