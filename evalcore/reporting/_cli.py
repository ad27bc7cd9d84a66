"""``evalcore notebooks run``, ``evalcore report`` and ``evalcore browse``."""

from __future__ import annotations

import argparse
from typing import Any

from evalcore._cliargs import seconds, seconds_or_zero


def _notebooks_run(args: argparse.Namespace) -> int:
    from evalcore._io import check_output_dir
    from evalcore.reporting._notebook_suite import load_smoke
    from evalcore.reporting._notebooks import run_notebooks

    check_output_dir(args.output, field="--output")
    smoke = load_smoke(args.smoke) if args.smoke else None
    only = [name for value in (args.only or []) for name in value.split(",") if name]
    suite = args.suite if args.suite is not None or args.resume else "params/suite.yaml"
    result = run_notebooks(
        suite,
        only=only or None,
        output=args.output,
        smoke=smoke,
        pdf=not args.no_pdf,
        resume=args.resume,
        progress_every=args.progress_every,
        cell_timeout=args.cell_timeout,
        notebook_timeout=args.notebook_timeout,
        executor=getattr(args, "executor", None),
    )
    return 0 if result.ok else 1


def _report(args: argparse.Namespace) -> int:
    from evalcore.reporting._report import report

    if args.output is not None:
        from evalcore._io import check_output_dir

        check_output_dir(args.output, field="--output")
    report(args.path, output=args.output, pdf=not args.no_pdf)
    return 0


def _browse(args: argparse.Namespace) -> int:
    from evalcore.reporting._browser import write_sample_browser

    if args.output is not None:
        from evalcore._io import check_output_file

        check_output_file(args.output, field="--output")
    page = write_sample_browser(args.run_dir_path, args.output)
    print(f"sample browser: {page}")
    return 0


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``notebooks run``, ``report`` and ``browse`` to the ``evalcore`` command line."""
    notebooks = subparsers.add_parser("notebooks", help="run the notebook suite (papermill) into a report")
    nb_sub = notebooks.add_subparsers(dest="notebooks_command", metavar="ACTION", required=True)
    _add_notebooks_run(nb_sub)
    _add_report(subparsers)
    _add_browse(subparsers)


def _add_notebooks_run(nb_sub: Any) -> None:
    """``evalcore notebooks run``."""
    run = nb_sub.add_parser(
        "run",
        help="execute every notebook of a notebook suite and write reports/<id>/ (index.html, HTML, PDF, PNG, JSON)",
        description="Execute the notebooks listed in a notebook-suite file one at a time with papermill and "
        "write reports/<suite-run-id>/ with the executed notebooks, HTML and PDF exports, figures, "
        "recorded numbers and an index.html that starts with the headline table; reports/latest "
        "points to the last complete run of the whole suite, reports/latest-partial to the newest partial "
        "one (--only, interrupted). Prints a progress line every --progress-every seconds (with the time "
        "left, each notebook's run and export, estimated from this machine's earlier runs or the times "
        "stored beside the suite file, at this run's pace), the headline "
        "table at the end and, last, the path of the index. --resume continues an interrupted suite "
        "in its own folder: finished notebooks are kept, the others run again and resume their "
        "recorded runs. Exits 1 when a notebook failed, 2 for a bad suite file or parameter.",
    )
    run.add_argument(
        "--suite",
        default=None,
        help="notebook-suite YAML (default: params/suite.yaml; with --resume, the resumed run's)",
    )
    run.add_argument(
        "--only", action="append", metavar="NAME", help="run only this entry (repeatable, or comma-separated)"
    )
    run.add_argument("--output", default="reports", metavar="DIR", help="report folder (default: %(default)s)")
    run.add_argument("--smoke", metavar="YAML", help="merge fast values (params/smoke.yaml shape) over each run")
    run.add_argument("--no-pdf", action="store_true", help="skip the PDF exports")
    run.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="ID",
        help="continue an interrupted suite run reports/ID (default: the newest), re-running "
        "only the notebooks that did not finish",
    )
    run.add_argument(
        "--progress-every",
        type=seconds_or_zero,
        default=30.0,
        metavar="SECONDS",
        help="seconds between progress lines while a notebook runs; 0 for none (default: %(default)s)",
    )
    run.add_argument(
        "--cell-timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="fail a notebook whose cell runs longer than this (default: no limit); the suite goes on",
    )
    run.add_argument(
        "--notebook-timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="stop and fail a notebook running longer than this (default: no limit); the suite goes on",
    )
    # evalcore.cli adds --cluster/--cluster-wait and passes args.executor
    run.set_defaults(executor_for="each notebook (its files come back here; see docs/cluster.md)")
    run.set_defaults(func=_notebooks_run)


def _add_report(subparsers: Any) -> None:
    """``evalcore report``."""
    rep = subparsers.add_parser(
        "report",
        help="export an executed notebook (or a suite run folder) to HTML/PDF",
        description="Export an executed notebook to HTML with inputs hidden, a PDF printed by "
        "headless Chromium, and its figures as PNG. Given a suite run folder (reports/<id>), "
        "re-export every notebook in it and rebuild index.html.",
    )
    rep.add_argument(
        "path", metavar="RUN_OR_NOTEBOOK", help="an executed .ipynb, reports/<id>, or a folder of notebooks"
    )
    rep.add_argument("--output", metavar="DIR", help="output folder for a single notebook (default: next to it)")
    rep.add_argument("--no-pdf", action="store_true", help="HTML only")
    rep.set_defaults(func=_report)


def _add_browse(subparsers: Any) -> None:
    """``evalcore browse``."""
    browse = subparsers.add_parser(
        "browse",
        help="write a run's sample browser (one offline HTML page)",
        description="Write one static HTML page (no network) with every sample of a run: prompt, "
        "response, extracted answer and method, verdict, tokens, latency; filter by "
        "verdict, search the text.",
    )
    browse.add_argument("run_dir_path", metavar="RUN_DIR", help="the run directory")
    browse.add_argument(
        "-o", "--output", default=None, metavar="FILE.html", help="where to write it (default: RUN_DIR/samples.html)"
    )
    browse.set_defaults(func=_browse)
