"""``evalcore score NAME FILE``: one sub-command per registered benchmark, built from the registry.

An exact-match benchmark with an answer kind (``number``, ``letter``) scores an answers file
(:func:`evalcore.evaluators.add_answers_command`); a code-execution benchmark runs a samples
file in the sandbox (:func:`evalcore.evaluators.add_code_command`). A benchmark added to the
registry (its folder plus one line, an ``evalcore.benchmarks`` entry point, or
:func:`~evalcore.benchmarks.register` in a module named by ``EVALCORE_BENCHMARKS``) gets its
command with no change here.
"""

from __future__ import annotations

from typing import Any

from evalcore.evaluators import ANSWER_HELP, add_answers_command, add_code_command


def register(sub: Any, groups: dict[str, Any]) -> None:
    """Add ``score NAME`` for every registered benchmark that a file of answers or code samples
    can be scored for, in the registry's order.

    Args:
        sub: The top-level sub-parser set (unused: everything here lives under ``score``).
        groups: Named sub-parser sets; ``groups["score"]`` receives one parser per benchmark.
    """
    from evalcore.benchmarks._registry import benchmark_names, find_benchmark

    score = groups["score"]
    for name in benchmark_names():
        bench = find_benchmark(name)
        if bench is None:
            continue
        if bench.scorer == "code_execution":
            add_code_command(score, name, getattr(bench, "title", "") or name)
            continue
        kind = getattr(bench, "answer_kind", None)
        if kind in ANSWER_HELP:
            add_answers_command(score, name, str(kind))


__all__ = ["register"]
