"""``evalcore route``: replay the routers over an outcome matrix and write the tables."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore._cliargs import non_negative_int, positive_int
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    import pandas as pd

    from evalcore.routing._matrix import OutcomeMatrix
    from evalcore.routing._result import ReplayResult
    from evalcore.routing._studies import ItemBootstrap


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``evalcore route`` to the CLI."""
    p = subparsers.add_parser(
        "route",
        help="benchmark bandit routers on an outcome matrix (counterfactual replay)",
        description="Replay routing algorithms over R random orderings of an outcome matrix "
        "(CSV/Parquet table or recorded run directories) and write summary.csv, "
        "curves, selection shares, Pareto points and pairwise comparisons.",
    )
    p.add_argument(
        "--outcomes",
        nargs="+",
        required=True,
        metavar="FILE|RUN_DIR",
        help="an outcome table (evalcore's long .csv/.parquet, RouterBench's wide table as .pkl/.csv/.parquet, "
        "or RouteLLM correctness CSVs: several files or a folder), or run directories (one arm each) "
        "or folders of run directories",
    )
    p.add_argument(
        "--format",
        default="auto",
        choices=("auto", "long", "routerbench", "routellm"),
        help="format of the outcome table (auto: from the suffix and header; see docs/routing.md)",
    )
    p.add_argument(
        "--costs",
        default="",
        metavar="MODEL=PRICE,...",
        help="RouteLLM tables only (they publish no cost): the price of one call of each model",
    )
    _add_replay_args(p)
    p.add_argument("--output", required=True, help="output directory")
    p.add_argument("--feature-dims", type=int, default=64, help="maximum context feature dimensions (64)")
    p.add_argument(
        "--embedder",
        default="auto",
        choices=("auto", "minilm", "tfidf"),
        help="query embedder for context features (auto)",
    )
    p.add_argument(
        "--curves-format", default="csv", choices=("csv", "parquet"), help="format of the per-step curves (csv)"
    )
    p.add_argument("--every", type=positive_int, default=1, help="keep every n-th step in curves (1)")
    _add_study_args(p)
    # evalcore.cli adds --cluster/--cluster-wait and passes args.executor
    p.set_defaults(executor_for="the replays (each router over a block of orderings is a task; same results)")
    p.set_defaults(func=_run)


def _add_replay_args(p: argparse.ArgumentParser) -> None:
    """The replay's options: routers, orderings, seed and λ."""
    p.add_argument("--algorithms", default="all", help="'all' or a comma-separated list (default: all)")
    p.add_argument("--orderings", type=int, default=200, help="random orderings R (200)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of orderings and algorithms (0)")
    p.add_argument(
        "--lambda",
        dest="lam",
        type=float,
        default=0.0,
        help="cost weight λ in reward = quality − λ·normalized cost (0)",
    )


def _add_study_args(p: argparse.ArgumentParser) -> None:
    """The studies' options: λ sweep, item bootstrap, tests and corrections."""
    p.add_argument(
        "--sweep",
        default="",
        help="comma-separated λ values for a cost–quality sweep (writes sweep.csv and aiq.csv); empty = no sweep",
    )
    p.add_argument("--sweep-orderings", type=positive_int, default=20, help="orderings per λ in the sweep (20)")
    p.add_argument(
        "--sweep-bootstrap",
        type=int,
        default=20,
        metavar="B",
        help="item resamples of the sweep for the intervals in aiq.csv (AIQ, margin over the Zero router, "
        "APGR); each replays the whole sweep; 0 = no intervals (20)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=100,
        metavar="B",
        help="item resamples of the main comparison (bootstrap over items with "
        "orderings nested; writes bootstrap.csv and bootstrap_comparisons.csv); "
        "0 = none (100)",
    )
    p.add_argument("--bootstrap-orderings", type=int, default=10, help="orderings replayed in each item resample (10)")
    p.add_argument(
        "--test",
        default="paired_t",
        choices=("paired_t", "wilcoxon", "permutation"),
        help="paired test of the order-variability check over orderings (paired_t)",
    )
    p.add_argument(
        "--correction", default="holm", choices=("holm", "bh", "none"), help="multiple-comparison correction (holm)"
    )


def _run(args: argparse.Namespace) -> int:
    from evalcore.routing._replay import cluster_session, parse_algorithms, replay
    from evalcore.routing._tables import write_tables

    lambdas = _checked_args(args)
    out = Path(args.output)
    spec = getattr(args, "executor", None)  # --cluster: checked by evalcore.cli before any work
    names = parse_algorithms(args.algorithms)
    outcomes = _read(args, out)
    with cluster_session(spec, getattr(args, "cluster_wait", 60.0)) as session:
        result = replay(
            outcomes,
            names,
            orderings=args.orderings,
            seed=args.seed,
            lam=args.lam,
            feature_dims=args.feature_dims,
            embedder=args.embedder,
            cluster=session,
        )
        summary = result.summary()
        boot = _bootstrap(args, outcomes, names, result, session) if args.bootstrap else None
        boot_summary = boot.summary() if boot is not None else None
        boot_comparisons = boot.compare(correction=args.correction) if boot is not None else None
        sweep, aiq = _sweep(args, outcomes, names, lambdas, session) if lambdas else (None, None)
    files = write_tables(
        out,
        summary=summary,
        curves=result.curves(every=args.every),
        selection_share=result.selection_share(every=args.every),
        points=result.points(),
        comparisons=result.compare(test=args.test, correction=args.correction),
        arms=outcomes.arm_table(args.lam),
        bootstrap=boot_summary,
        bootstrap_comparisons=boot_comparisons,
        sweep=sweep,
        aiq=aiq,
        curves_format=args.curves_format,
        per_ordering=result.per_ordering_table(),
        design=result.design(),
    )
    _print_results(args, outcomes, summary, boot, boot_summary, aiq)
    print(f"wrote {', '.join(sorted(files))} to {out}")
    return 0


def _checked_args(args: argparse.Namespace) -> list[float]:
    """Refuse bad option values before any work (the output folder too); the λ values of ``--sweep``."""
    if args.orderings < 1:
        raise EvalcoreError("must be >= 1", field="--orderings")
    if not math.isfinite(args.lam) or args.lam < 0:
        raise EvalcoreError(f"must be a finite number >= 0, got {args.lam}", field="--lambda")
    if args.bootstrap != 0 and args.bootstrap < 2:
        raise EvalcoreError(f"must be 0 or >= 2, got {args.bootstrap}", field="--bootstrap")
    if args.sweep_bootstrap != 0 and args.sweep_bootstrap < 2:
        raise EvalcoreError(f"must be 0 or >= 2, got {args.sweep_bootstrap}", field="--sweep-bootstrap")
    if args.bootstrap_orderings < 1:
        raise EvalcoreError("must be >= 1", field="--bootstrap-orderings")
    if not 1 <= args.feature_dims <= 64:
        raise EvalcoreError(f"must be between 1 and 64, got {args.feature_dims}", field="--feature-dims")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise EvalcoreError("exists and is not a directory", path=out, field="--output")
    from evalcore._io import check_output_dir

    check_output_dir(out, field="--output")  # read-only: refused before the replay
    lambdas: list[float] = []
    if args.sweep.strip():
        try:
            lambdas = [float(v) for v in args.sweep.split(",") if v.strip()]
        except ValueError as exc:
            raise EvalcoreError(f"not a list of numbers: {args.sweep!r}", field="--sweep") from exc
        if any(not math.isfinite(v) or v < 0 for v in lambdas):
            raise EvalcoreError("λ values must be finite numbers >= 0", field="--sweep")
    return lambdas


def _read(args: argparse.Namespace, out: Path) -> OutcomeMatrix:
    """The outcome matrix of ``--outcomes`` (run directories cached under ``out/.cache``); a
    no-signal warning becomes one plain line on stderr, before the replay."""
    from evalcore.routing._matrix import NoSignalWarning
    from evalcore.routing._outcomes import read_outcomes
    from evalcore.routing._published import parse_costs

    costs = parse_costs(args.costs) if args.costs.strip() else None
    cache = None
    if not (len(args.outcomes) == 1 and Path(args.outcomes[0]).is_file()):
        cache = out / ".cache"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoSignalWarning)
        outcomes = read_outcomes(args.outcomes, cache_dir=cache, format=args.format, costs=costs)
    for w in caught:
        if issubclass(w.category, NoSignalWarning):
            print(f"evalcore route: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return outcomes


def _bootstrap(
    args: argparse.Namespace, outcomes: OutcomeMatrix, names: list[str], result: ReplayResult, session: Any
) -> ItemBootstrap:
    """``--bootstrap``: the item bootstrap whose point values are ``result``'s."""
    from evalcore.routing._studies import item_bootstrap

    return item_bootstrap(
        outcomes,
        names,
        n_boot=args.bootstrap,
        orderings=args.bootstrap_orderings,
        seed=args.seed,
        lam=args.lam,
        feature_dims=args.feature_dims,
        embedder=args.embedder,
        base=result,
        cluster=session,
    )


def _sweep(
    args: argparse.Namespace, outcomes: OutcomeMatrix, names: list[str], lambdas: list[float], session: Any
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``--sweep``: the λ sweep and its published metrics (with ``--sweep-bootstrap`` intervals)."""
    from evalcore.routing._margins import aiq_bootstrap, aiq_table
    from evalcore.routing._studies import lambda_sweep

    sweep = lambda_sweep(
        outcomes,
        names,
        lambdas,
        orderings=args.sweep_orderings,
        seed=args.seed,
        feature_dims=args.feature_dims,
        embedder=args.embedder,
        cluster=session,
    )
    if not args.sweep_bootstrap:
        return sweep, aiq_table(sweep, outcomes.arm_table(0.0))
    aiq = aiq_bootstrap(
        outcomes,
        names,
        lambdas,
        n_boot=args.sweep_bootstrap,
        orderings=args.sweep_orderings,
        seed=args.seed,
        sweep=sweep,
        feature_dims=args.feature_dims,
        embedder=args.embedder,
        cluster=session,
    ).table()
    return sweep, aiq


_SHOWN = [
    "algorithm",
    "mean_quality",
    "mean_reward",
    "total_cost",
    "cost_savings_vs_always_best",
    "regret_vs_oracle",
    "regret_vs_best_fixed",
    "convergence_point",
]


def _print_results(
    args: argparse.Namespace,
    outcomes: OutcomeMatrix,
    summary: pd.DataFrame,
    boot: ItemBootstrap | None,
    boot_summary: pd.DataFrame | None,
    aiq: pd.DataFrame | None,
) -> None:
    """What ``evalcore route`` prints: the summary with its column definitions, the bootstrap's
    mean rewards and the published metrics of the sweep."""
    from evalcore.routing._columns import describe_columns

    print(f"{outcomes.n_items} items × {outcomes.n_arms} arms, {args.orderings} orderings, λ = {args.lam:g}")
    # a value that does not exist (a convergence point of orderings that never settle) is blank, as in the CSV
    print(summary[_SHOWN].to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep=""))
    print(describe_columns(_SHOWN).replace("`", ""))
    if boot is not None and boot_summary is not None:
        print(
            f"mean reward on resampled items ({boot.n_boot} item resamples × {boot.orderings} orderings, 95% interval):"
        )
        for rec in boot_summary.to_dict("records"):
            low, mid, high = (_blank_or(rec[k]) for k in ("mean_reward_ci_low", "mean_reward", "mean_reward_ci_high"))
            print(f"  {rec['algorithm']:<20} {mid} [{low}, {high}]")
    if aiq is not None:
        from evalcore.routing._margins import published_lines

        print("\n".join(published_lines(aiq)))
    print("comparisons.csv: paired tests over orderings of the same items (order variability, not generalization)")


def _blank_or(value: Any) -> str:
    """``value`` with three decimals, or blank where it is missing (never ``nan``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return f"{number:.3f}" if math.isfinite(number) else ""
