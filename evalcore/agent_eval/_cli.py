"""``evalcore agent-eval`` and ``evalcore sweep``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalcore._cliargs import finite_float, seconds
from evalcore.agent_eval._weights import CATEGORIES
from evalcore.errors import EvalcoreError


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add the ``agent-eval`` and ``sweep`` sub-commands."""
    _agent_eval_parser(subparsers)
    _sweep_parser(subparsers)


def _agent_eval_parser(subparsers: Any) -> None:
    """The ``agent-eval`` sub-command: which agent and cases, then how the run is done."""
    p = subparsers.add_parser(
        "agent-eval",
        help="evaluate a tool-building agent in seven categories, or compare two evaluations",
        description="Evaluate an agent (functional, synthesis, retrieval, workflow, learning, robustness, "
        "performance) and write evaluation_YYYYMMDD_HHMMSS.json (+ figures and report.html with "
        "--visualize); or compare two result files with --compare A.json B.json.",
    )
    p.add_argument(
        "--categories",
        nargs="+",
        metavar="CAT",
        help=f"categories to run (default all): {', '.join(CATEGORIES)}; commas also accepted",
    )
    p.add_argument(
        "--agent",
        default="reference",
        help="reference | module:function | path/file.py:function | http://host:port/… | "
        "oracle | honest | wrong | failing (self-test agents) (default: reference); a Python "
        "agent runs in an interpreter of its own and speaks the HTTP JSON protocol",
    )
    p.add_argument(
        "--model",
        default=None,
        help="model of the reference agent: a model spec (default local:smollm2) or 'none' (no-LLM mode)",
    )
    p.add_argument(
        "--threshold", type=finite_float, default=None, help="similarity threshold of the agent's tool search"
    )
    p.add_argument("--cases", type=Path, default=None, help="JSON file of test cases (default: generated)")
    p.add_argument(
        "--counts", default=None, help="generated cases per complexity, e.g. simple=8,medium=4,complex=4,edge=6"
    )
    p.add_argument(
        "--seed",
        default=None,
        metavar="N",
        help="refused: a seed on the command line is readable by every local process, the agent "
        "included; use --seed-file or EVALCORE_AGENT_SEED",
    )
    p.add_argument(
        "--seed-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="file holding the seed of the case generator (default: the environment variable "
        "EVALCORE_AGENT_SEED, else a fresh secret seed drawn per run; either way recorded in the "
        "results after the run, so the agent cannot rebuild the expected answers; put the "
        "recorded seed in a file to rerun the same cases)",
    )
    _agent_eval_run_args(p)


def _agent_eval_run_args(p: argparse.ArgumentParser) -> None:
    """``agent-eval``'s options of the run: sizes, limits, outputs, ``--compare``."""
    p.add_argument("--limit", type=int, default=None, help="at most N cases per category")
    p.add_argument("--workers", type=int, default=4, help="threads of the load test (default 4)")
    p.add_argument("--load-requests", type=int, default=20, help="requests of the load test (default 20)")
    p.add_argument(
        "--request-timeout",
        type=seconds,
        default=30.0,
        metavar="S",
        help="a request unanswered after S seconds scores 0 and is a critical failure (default 30)",
    )
    p.add_argument(
        "--tool-budget",
        type=seconds,
        default=40.0,
        metavar="S",
        help="total sandbox time the agent's registered tools may take per category (default 40 s)",
    )
    p.add_argument(
        "--category-floor",
        type=finite_float,
        default=0.5,
        metavar="F",
        help="every category must score at least F for the system to pass (default 0.5)",
    )
    p.add_argument(
        "--throughput-target",
        type=finite_float,
        default=10.0,
        metavar="QPS",
        help="correct answers per second under load that earn full throughput credit (default 10)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="build a Python agent in the evaluator's process (debugging only: it could reach the "
        "evaluator, so its results say trusted: false); by default it runs in an interpreter "
        "of its own",
    )
    p.add_argument("--visualize", action="store_true", help="also write the PNG figures and report.html")
    p.add_argument("--no-save", action="store_true", help="print the summary only; write no file")
    p.add_argument("--output-dir", type=Path, default=Path("reports/agent_eval"), help="output folder")
    p.add_argument("--strict", action="store_true", help="exit 1 when the system does not pass")
    p.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("A.json", "B.json"),
        help="compare two evaluation files (B against baseline A) and exit",
    )
    p.set_defaults(func=_escaped(_agent_eval))


def _sweep_parser(subparsers: Any) -> None:
    """The ``sweep`` sub-command."""
    s = subparsers.add_parser(
        "sweep",
        help="sweep the similarity threshold of an agent's tool search",
        description="For each threshold: retrieval precision/recall/F1, false-positive rate on unrelated queries, "
        "synthesis rate and end-to-end success; best threshold chosen on a development split and "
        "reported on a held-out split; paired tests against the best with Benjamini–Hochberg correction.",
    )
    s.add_argument("--thresholds", default="0.30:0.80:0.05", help="start:stop:step (inclusive) or a comma list")
    s.add_argument("--agent", default="reference", help="reference | module:function (called with threshold=T)")
    s.add_argument(
        "--model", default=None, help="model of the reference agent (default local:smollm2; 'none' = no LLM)"
    )
    s.add_argument("--cases", type=Path, default=None, help="JSON file of test cases (default: generated)")
    s.add_argument("--counts", default=None, help="generated cases per complexity, e.g. simple=8,medium=6")
    s.add_argument(
        "--seed",
        default=None,
        metavar="N",
        help="refused: a seed on the command line is readable by every local process; use "
        "--seed-file or EVALCORE_AGENT_SEED",
    )
    s.add_argument(
        "--seed-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="file holding the seed of the cases and of the dev/held-out split (default: "
        "EVALCORE_AGENT_SEED, else a fresh secret one; recorded in sweep.json)",
    )
    s.add_argument("--unrelated", type=int, default=16, help="unrelated queries for the false-positive rate")
    s.add_argument("--output", type=Path, default=Path("reports/sweep"), help="output folder")
    s.set_defaults(func=_escaped(_sweep))


def _say(*parts: Any, file: Any = None) -> None:
    """``print`` with every control character but a line break escaped
    (:func:`evalcore._io.terminal_safe`): what an agent wrote (an error text, a test name, a
    tool name in a results file) reaches the terminal as text, never as a terminal command
    (clear screen, clipboard write, a line of its own that forges "PASSED")."""
    from evalcore._io import terminal_safe

    print(" ".join(terminal_safe(p, keep_newlines=True) for p in parts), file=file)


def _escaped(command: Any) -> Any:
    """The command with the message of an :class:`EvalcoreError` it raises escaped
    (:func:`evalcore._io.terminal_safe`, line breaks included): the CLI prints that message on
    one line, and it may quote an agent (a hosted agent's start-up error, an endpoint's reply)."""
    import functools

    from evalcore._io import terminal_safe

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return int(command(args))
        except EvalcoreError as exc:
            raise EvalcoreError(
                terminal_safe(exc.reason),
                path=None if exc.path is None else terminal_safe(exc.path),
                line=exc.line,
                field=None if exc.field is None else terminal_safe(exc.field),
            ) from None

    return run


def _parse_counts(spec: str | None) -> dict[str, int] | None:
    if not spec:
        return None
    out: dict[str, int] = {}
    for part in spec.split(","):
        key, sep, val = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[key.strip()] = int(val)
        except ValueError:
            raise EvalcoreError(
                f"cannot parse {part!r}; use name=count pairs like simple=8,edge=4", field="counts"
            ) from None
    return out


def _categories(raw: list[str] | None) -> list[str] | None:
    if not raw:
        return None
    cats = [c.strip() for item in raw for c in item.split(",") if c.strip()]
    bad = [c for c in cats if c not in CATEGORIES]
    if bad:
        raise EvalcoreError(f"unknown categories {bad}; choose from {list(CATEGORIES)}", field="--categories")
    return cats


def _case_seed(args: argparse.Namespace) -> tuple[int | None, str]:
    """The case seed from ``--seed-file`` or ``EVALCORE_AGENT_SEED`` (``--seed N`` is refused)."""
    from evalcore.agent_eval._config import SEED_ON_COMMAND_LINE, seed_from_sources

    if args.seed is not None:
        raise EvalcoreError(SEED_ON_COMMAND_LINE, field="--seed")
    return seed_from_sources(args.seed_file)


def _agent_eval(args: argparse.Namespace) -> int:
    if not args.no_save:  # a file in the way fails now, not after the evaluation
        from evalcore._io import check_output_dir

        check_output_dir(args.output_dir, field="--output-dir")
    if args.compare:
        return _compare(args)
    cats = _categories(args.categories)
    seed, seed_source = _case_seed(args)
    _agent_eval_checks(args)
    from evalcore.agent_eval import AgentEvalConfig, evaluate, write_outputs

    url = _http_agent_url(args.agent)
    if url is not None:  # a dead or non-agent endpoint is refused now, not scored 0 case by case
        if args.threshold is not None:
            raise EvalcoreError(
                "does not apply to an HTTP agent: its threshold is set on its server", field="--threshold"
            )
        _check_http_agent(url, args.request_timeout)
    config = AgentEvalConfig(
        seed=seed,
        counts=_parse_counts(args.counts),
        limit=args.limit,
        workers=args.workers,
        load_requests=args.load_requests,
        request_timeout_s=args.request_timeout,
        category_floor=args.category_floor,
        throughput_target=args.throughput_target,
        tool_budget_s=args.tool_budget,
    )
    config.seed_source = seed_source
    extra = {
        "agent_spec": args.agent,
        "model": args.model,
        "threshold": args.threshold,
        "cases_file": str(args.cases) if args.cases else None,
    }
    hide = [args.output_dir] + ([args.seed_file] if args.seed_file is not None else [])
    _starting(
        f"agent-eval: generating the cases and starting agent {args.agent!r}", url is None and not args.in_process
    )
    result = evaluate(
        args.agent,
        config,
        categories=cats,
        cases=args.cases,
        model=args.model,
        threshold=args.threshold,
        in_process=args.in_process,
        extra_config=extra,
        hide=hide,
    )
    lost = _lost_agent(url, args.request_timeout, result) if url is not None else None
    _print_result(result, config.seed, config.seed_source, args.cases is None)
    written: list[str] = []
    if not args.no_save:
        paths = write_outputs(result, args.output_dir, visualize=args.visualize)
        for path in paths.values():
            _say(f"wrote {path}")
        written = [str(path) for path in paths.values() if str(path).endswith(".json")]
    if lost is not None:
        raise EvalcoreError(
            f"{lost}; these results do not measure the agent after it stopped"
            + (f" ({', '.join(written)} says so in config.agent_endpoint_lost)" if written else ""),
            field="--agent",
        )
    return 1 if args.strict and not result.passed else 0


def _compare(args: argparse.Namespace) -> int:
    """``agent-eval --compare A.json B.json``: print the comparison and write it (unless
    ``--no-save``)."""
    from evalcore.agent_eval import compare_results, format_agent_eval_comparison

    cmp = compare_results(args.compare[0], args.compare[1])
    _say(format_agent_eval_comparison(cmp))
    if not args.no_save:
        from evalcore._io import write_bytes_atomic

        out = args.output_dir / f"comparison_{args.compare[0].stem}_vs_{args.compare[1].stem}.json"
        write_bytes_atomic(out, json.dumps(cmp, indent=1).encode())
        _say(f"wrote {out}")
    return 0


def _agent_eval_checks(args: argparse.Namespace) -> None:
    """``agent-eval``'s numeric options and ``--model`` checked before anything runs.

    Raises:
        EvalcoreError: naming the option.
    """
    for name in ("limit", "workers", "load_requests"):
        val = getattr(args, name)
        if val is not None and val < 1:
            raise EvalcoreError("must be at least 1", field="--" + name.replace("_", "-"))
    if args.threshold is not None and not -1.0 <= args.threshold <= 1.0:
        raise EvalcoreError("must lie in [-1, 1]", field="--threshold")
    if args.request_timeout is not None and not args.request_timeout > 0:
        raise EvalcoreError("must be a positive number of seconds", field="--request-timeout")
    if not 0.0 <= args.category_floor <= 1.0:
        raise EvalcoreError("must lie in [0, 1]", field="--category-floor")
    if not args.throughput_target > 0:
        raise EvalcoreError("must be a positive number of requests per second", field="--throughput-target")
    _model_only_for_reference(args)


def _print_result(result: Any, seed: int | None, seed_source: str, generated: bool) -> None:
    """Print the evaluation's summary: the verdict, the case seed (for generated cases), the
    categories below the floor and one line per category."""
    from evalcore.agent_eval import agent_eval_records

    s = result.summary()
    status = {"PASSED": "PASSED", "FAILED": "FAILED", "partial": "partial (not every category run: no verdict)"}
    _say(
        f"overall {s['overall_score']:.3f}  system {status[s['status']]}  "
        f"tests passed {s['n_tests_passed']}/{s['n_tests']}  critical failures {s['n_critical_failures']}"
        + ("" if s["trusted"] else "  [in-process agent: results not trusted]")
    )
    if generated:
        _say(
            f"  cases from seed {seed}"
            + (
                " (drawn for this run; put it in a file and pass --seed-file FILE, or set EVALCORE_AGENT_SEED, "
                "to rerun the same cases)"
                if seed_source == "drawn"
                else f" (from the {seed_source})"
            )
        )
    if s["categories_below_floor"] and s["status"] != "partial":
        _say(f"  below the category floor {s['category_floor']:g}: {', '.join(s['categories_below_floor'])}")
    for row in agent_eval_records(result):
        _say(
            f"  {row['category']:<12} {row['score']:.3f} {'pass' if row['passed'] else 'FAIL'}  "
            f"(weight {row['weight']:.3f}, {row['tests_passed']}/{row['tests']} tests)"
        )


def _starting(what: str, hosted: bool) -> None:
    """Say on a terminal what the silent start of a command does (an agent hosted in an interpreter
    of its own takes 10-30 s to start, before the progress bar has anything to count)."""
    from evalcore._progress import progress_enabled

    if progress_enabled(None):
        how = " (an interpreter of its own; its start can take half a minute)" if hosted else ""
        _say(f"{what}{how} ...", file=sys.stderr)


def _model_only_for_reference(args: argparse.Namespace) -> None:
    """``--model`` is the reference agent's: given with another agent it would be ignored."""
    if args.model is not None and args.model.strip().lower() != "none" and args.agent != "reference":
        raise EvalcoreError(
            f"is the reference agent's model; agent {args.agent!r} does not use it "
            "(its own model is its own business): leave --model out",
            field="--model",
        )


def _http_agent_url(spec: str) -> str | None:
    """The URL of an HTTP agent specification, or None for any other agent."""
    spec = spec.strip() if isinstance(spec, str) else ""
    return spec if spec.startswith(("http://", "https://")) else None


def _check_http_agent(url: str, timeout_s: float | None) -> None:
    """Refuse an HTTP agent endpoint that does not answer as an agent (see ``HttpAgent.check``)."""
    from evalcore.agents import HttpAgent

    try:
        agent = HttpAgent(url, timeout_s=timeout_s or 30.0)
    except EvalcoreError as exc:
        raise EvalcoreError(exc.reason, field="--agent") from None
    try:
        agent.check()
    except EvalcoreError as exc:
        raise EvalcoreError(exc.reason, field="--agent") from None
    finally:
        agent.close()


def _lost_agent(url: str, timeout_s: float | None, result: Any) -> str | None:
    """After a run: None when the HTTP agent still answers, else why its results are not a measurement.

    An agent that stops answering mid-run turns every later test into a critical failure. When
    every test failed so, there is no result: :class:`EvalcoreError`, nothing written. Otherwise
    the results are kept (what was measured before is not thrown away), marked in
    ``config.agent_endpoint_lost``, and the command still exits 2.
    """
    try:
        _check_http_agent(url, timeout_s)
        return None
    except EvalcoreError as exc:
        why = exc.reason
    tests = [t for cat in result.categories.values() for t in cat.tests]
    n_bad = sum(bool(t.critical) for t in tests)
    if n_bad == len(tests):
        raise EvalcoreError(
            f"the agent stopped answering during the run (checked after it: {why}); "
            f"all {len(tests)} tests failed on it, so there is no result: nothing written",
            field="--agent",
        )
    note = (
        f"the agent stopped answering during the run (checked after it: {why}); "
        f"{n_bad} of {len(tests)} tests failed critically"
    )
    result.config["agent_endpoint_lost"] = note
    return note


def write_sweep_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``sweep.json`` bounded like the evaluation's results: every string an agent put there
    (tool names, texts) at most 2,000 characters with its SHA-256, nesting 32 deep, 40 MB of text
    in all; the tables' rows are kept."""
    from evalcore._io import bounded, write_bytes_atomic

    sweep = bounded(data, items=1_000_000, nodes=5_000_000, total_chars=40_000_000)
    write_bytes_atomic(path, json.dumps(sweep, indent=1).encode())


def _sweep(args: argparse.Namespace) -> int:
    from evalcore.agent_eval import load_cases, resolve_agent, threshold_sweep

    thresholds, seed = _sweep_checks(args)
    cases = load_cases(args.cases) if args.cases else None
    counts = _parse_counts(args.counts)
    _starting(f"sweep: generating the cases; agent {args.agent!r} is started once per threshold", True)
    res = threshold_sweep(
        lambda t: resolve_agent(
            args.agent,
            model=args.model,
            threshold=t,
            hide=[p for p in (args.cases, args.output, args.seed_file) if p is not None],
        ),
        thresholds,
        cases=cases,
        seed=seed,
        counts=counts,
        n_unrelated=args.unrelated,
    )
    _write_sweep(args.output, res)
    _print_sweep(res)
    out = args.output
    _say(f"wrote {out / 'sweep.json'}, {out / 'sweep_metrics.csv'}, {out / 'sweep.png'}", file=sys.stderr)
    return 0


def _sweep_checks(args: argparse.Namespace) -> tuple[list[float], int | None]:
    """``sweep``'s arguments checked before anything runs; the thresholds and the case seed.

    Raises:
        EvalcoreError: A bad argument, an agent whose threshold cannot be varied, an output
            folder in the way, or a reference agent's endpoint that cannot be reached.
    """
    from evalcore.agent_eval import parse_thresholds

    thresholds = parse_thresholds(args.thresholds)
    if any(not -1.0 <= t <= 1.0 for t in thresholds):
        raise EvalcoreError("thresholds must lie in [-1, 1]", field="--thresholds")
    seed, _source = _case_seed(args)
    if args.agent in ("oracle", "wrong", "failing"):
        raise EvalcoreError("self-test agents have no threshold to sweep", field="--agent")
    if _http_agent_url(args.agent) is not None:
        raise EvalcoreError(
            f"{args.agent}: an HTTP agent's threshold is set on its server, so a sweep cannot "
            "vary it; sweep reference or a module:function factory (called with threshold=T)",
            field="--agent",
        )
    _model_only_for_reference(args)
    if args.unrelated < 1:
        raise EvalcoreError("must be at least 1", field="--unrelated")
    from evalcore._io import check_output_dir

    check_output_dir(args.output, field="--output")
    if args.agent == "reference":
        from evalcore.agent_eval._entry import check_agent_model

        check_agent_model(args.model)  # a dead endpoint fails now, not unnoticed in every run
    return thresholds, seed


def _write_sweep(out: Path, res: Any) -> None:
    """Write ``sweep.json``, ``sweep_metrics.csv`` and ``sweep.png`` into ``out``."""
    from evalcore._io import write_bytes_atomic

    write_sweep_json(out / "sweep.json", res.to_dict())
    write_bytes_atomic(out / "sweep_metrics.csv", res.metrics.to_csv(index=False).encode())
    import io

    buf = io.BytesIO()
    res.figure().savefig(buf, format="png", dpi=110)
    write_bytes_atomic(out / "sweep.png", buf.getvalue())


def _print_sweep(res: Any) -> None:
    """Print the sweep's held-out tables, the best threshold (and a note when it lies at the
    grid's edge), the paired tests and the figure's caption."""
    cols = [
        "threshold",
        "n_labelled",
        "precision",
        "recall",
        "f1",
        "n_unrelated",
        "fpr",
        "fpr_low",
        "fpr_high",
        "synthesis_rate",
        "success",
        "utility",
    ]  # n: the queries behind P/R/F1 and FPR (95% Wilson)
    from evalcore.agent_eval._sweep_notes import held_out_table, split_title

    def table(df: Any, digits: str) -> str:  # a missing value is blank, never NaN
        return str(df.to_string(index=False, float_format=lambda v: format(v, digits), na_rep=""))

    _say(split_title(res.metrics, "test", "every threshold") + ":")
    _say(table(res.metrics[res.metrics.split == "test"][cols], ".3f"))
    _say(f"best threshold on the development split: {res.best_threshold:g}")
    note = res.edge_note()
    if note:
        _say(f"note: {note}")
    _say(split_title(res.metrics, "test", f"the best threshold {res.best_threshold:g}") + ":")
    _say(table(held_out_table(res, cols), ".3f"))
    if len(res.tests):
        _say(f"paired permutation tests on the held-out split, each threshold against {res.best_threshold:g}:")
        _say(table(res.tests, ".4g"))
    _say(f"sweep.png: {res.figure_caption()}")
