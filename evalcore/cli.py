"""The ``evalcore`` command line: thin; it parses, calls the package, prints.

Each area registers its own sub-commands from a private ``_cli`` module with a
``register(subparsers, groups)`` function; ``groups["score"]`` is the sub-parser set of
``evalcore score …``. Handlers import heavy modules lazily so ``evalcore --help`` is fast.
Errors a user can cause (:class:`~evalcore.errors.EvalcoreError`) print one message and exit 2.

The top owns the executor choice: a sub-command whose parser sets ``executor_for`` gets
``--cluster ADDRESS`` and ``--cluster-wait S`` here, and its handler receives ``args.executor``
(a Dask executor built from ``evalcore.cluster``, or None for this machine); the packages below
never import the cluster (docs/architecture.md, "Import rules").
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from types import FrameType

    from evalcore._executor import Executor

_COMMAND_MODULES = (
    "evalcore.benchmarks._cli",  # score NAME: one per registered benchmark (evaluators does the work)
    "evalcore.runs._cli",  # run, rescore
    "evalcore.models._cli",  # serve-local
    "evalcore.routing._cli",  # route
    "evalcore.agent_eval._cli",  # agent-eval, sweep
    "evalcore.reporting._cli",  # notebooks run, report, browse
    "evalcore.imports._cli",  # compare, import (lm-eval / inspect_ai logs)
)


def build_parser() -> argparse.ArgumentParser:
    """Build the full argument parser from every area's ``register`` function."""
    from evalcore import __version__

    parser = argparse.ArgumentParser(prog="evalcore", description="Objective, reproducible evaluation of LLM systems.")
    parser.add_argument("--version", action="version", version=f"evalcore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    score = sub.add_parser("score", help="score answers or code samples from a file")
    score.add_argument(
        "--show-isolation",
        action=_ShowIsolation,
        help="print what the code sandbox isolates here (each layer, the samples' file-system view) and exit",
    )
    score_sub = score.add_subparsers(dest="dataset", metavar="DATASET", required=True)
    groups = {"score": score_sub}
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub, groups)
    _add_executor_options(parser, set())
    return parser


def _add_executor_options(parser: argparse.ArgumentParser, seen: set[int]) -> None:
    """Give ``--cluster``/``--cluster-wait`` to every sub-command that takes an executor (its
    parser's ``executor_for`` default says what runs there); imports nothing of Dask."""
    from evalcore.cluster import add_cluster_options

    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for child in action.choices.values():
            if id(child) in seen:  # an alias names the same parser
                continue
            seen.add(id(child))
            what = child.get_default("executor_for")
            if what:
                add_cluster_options(child, str(what))
            _add_executor_options(child, seen)


def executor_from_args(args: argparse.Namespace) -> Executor | None:
    """The executor ``--cluster ADDRESS`` names (a ``DaskExecutor``; a bad name fails here, in one
    line, before any work), or None: the command's one-machine path."""
    if not getattr(args, "cluster", None):
        return None
    from evalcore.cluster import dask_executor

    return dask_executor(args.cluster, wait_s=args.cluster_wait, field="--cluster")


class _ShowIsolation(argparse.Action):
    """``evalcore score --show-isolation``: print the sandbox's isolation report and exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: object, values: object, option_string: str | None = None
    ) -> None:
        from evalcore.sandbox.pool import isolation_text

        print(isolation_text())
        parser.exit(0)


def os_error_text(exc: OSError) -> str:
    """One line for a failed read or write: the path (the target of a rename) and the reason."""
    import errno

    where = exc.filename2 if exc.filename2 is not None else exc.filename
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        return f"no space left on device: {where}" if where is not None else "no space left on device"
    if where is None:
        return f"{type(exc).__name__}: {reason}"  # (a connection, a pipe: no path to name)
    return f"cannot use {where}: {reason}"


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class _SigtermAsInterrupt:
    """SIGTERM handled like Ctrl-C by every command (kernels shut down, runs flushed, files
    removed), ending with status 143 instead of 130. A second SIGTERM kills at once."""

    def __init__(self) -> None:
        self.received = False
        self._previous: object = None

    def __enter__(self) -> _SigtermAsInterrupt:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        import signal

        self.received = True
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # do what Ctrl-C does now: inside a run that is asyncio.Runner's SIGINT handler, which
        # cancels the run's task (its records are written whole, its HTTP sessions closed) and
        # raises KeyboardInterrupt once the task has ended; a KeyboardInterrupt raised here
        # instead would land inside whichever task step runs, leaving "Task exception was
        # never retrieved" and "Unclosed connector" on stderr
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint) and on_sigint is not signal.default_int_handler:
            on_sigint(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)  # type: ignore[arg-type]

    def status(self, status: int) -> int:
        return 143 if self.received and status == 130 else status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status (SIGTERM: 143, after the Ctrl-C clean-up)."""
    with _SigtermAsInterrupt() as term:
        return term.status(_main(argv, term))


def _main(argv: Sequence[str] | None, term: _SigtermAsInterrupt) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "executor_for", None):
            args.executor = executor_from_args(args)
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe fails here, inside the handlers below
    except EvalcoreError as exc:
        print(f"evalcore: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # stdout closed early (``evalcore compare … | head -1``): not an error of the command;
        # point stdout at /dev/null so the interpreter's final flush does not fail again
        _silence_stdout()
        return 141  # what a command stopped by SIGPIPE returns (128 + 13), without a traceback
    except OSError as exc:  # an output path that is a file, a folder, read-only, a full disk
        print(f"evalcore: error: {os_error_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evalcore: terminated (SIGTERM)" if term.received else "evalcore: interrupted", file=sys.stderr)
        if getattr(args, "cluster", None):  # stop within 2 s: skip the interpreter's slow shutdown
            import os  # (Dask's exit handlers, the final GC of a large heap; docs/cluster.md)

            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(term.status(130))
        return 130
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
