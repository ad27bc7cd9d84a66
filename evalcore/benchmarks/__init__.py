"""Benchmarks: one folder per benchmark and the registry every other package asks.

A :class:`Benchmark` says how its items load, its default prompt template and generation
settings, its few-shot examples, how one reply is scored, when two answers are equal and what
its summary adds. The built-ins are folders, ``gsm8k/``, ``mmlu/`` and ``humaneval/``, each
holding everything that is that benchmark (rows and splits, HF id, shipped sample, scorer
choice, prompt fields, summary extras), named by one line of the registry; :func:`load`,
:func:`sample_path`, :func:`few_shot_pool` and :func:`resolve_source` read one by its name;
:func:`register` adds another; a user's own benchmark is one YAML file
(``_file``: a JSONL/CSV of items, a scorer, a prompt), found by :func:`get_benchmark` from its
path. :func:`benchmark_of_run` gives the benchmark a recorded run was scored with.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.benchmarks._builtin import BenchmarkBase as BenchmarkBase
    from evalcore.benchmarks._builtin import BuiltinBenchmark as BuiltinBenchmark
    from evalcore.benchmarks._file import SCORER_TYPES as SCORER_TYPES
    from evalcore.benchmarks._file import FileBenchmark as FileBenchmark
    from evalcore.benchmarks._file import load_benchmark_file as load_benchmark_file
    from evalcore.benchmarks._loading import few_shot_pool as few_shot_pool
    from evalcore.benchmarks._loading import few_shot_split as few_shot_split
    from evalcore.benchmarks._loading import load as load
    from evalcore.benchmarks._loading import resolve_source as resolve_source
    from evalcore.benchmarks._loading import sample_path as sample_path
    from evalcore.benchmarks._protocol import SCORERS as SCORERS
    from evalcore.benchmarks._protocol import Benchmark as Benchmark
    from evalcore.benchmarks._registry import benchmark_names as benchmark_names
    from evalcore.benchmarks._registry import benchmark_of_run as benchmark_of_run
    from evalcore.benchmarks._registry import builtin_names as builtin_names
    from evalcore.benchmarks._registry import default_max_tokens as default_max_tokens
    from evalcore.benchmarks._registry import find_benchmark as find_benchmark
    from evalcore.benchmarks._registry import get_benchmark as get_benchmark
    from evalcore.benchmarks._registry import is_benchmark_file as is_benchmark_file
    from evalcore.benchmarks._registry import refresh_plugins as refresh_plugins
    from evalcore.benchmarks._registry import register as register
    from evalcore.benchmarks._registry import unregister as unregister
    from evalcore.benchmarks._scoring import CodeExecutionScoring as CodeExecutionScoring
    from evalcore.benchmarks._scoring import ExactMatchScoring as ExactMatchScoring
    from evalcore.benchmarks._scoring import error_scores as error_scores
    from evalcore.benchmarks._scoring import pass_at_k_table as pass_at_k_table

_EXPORTS = {
    "evalcore.benchmarks._protocol": ("Benchmark", "SCORERS"),
    "evalcore.benchmarks._registry": (
        "benchmark_names",
        "benchmark_of_run",
        "builtin_names",
        "default_max_tokens",
        "find_benchmark",
        "get_benchmark",
        "is_benchmark_file",
        "refresh_plugins",
        "register",
        "unregister",
    ),
    "evalcore.benchmarks._file": ("SCORER_TYPES", "FileBenchmark", "load_benchmark_file"),
    "evalcore.benchmarks._loading": ("few_shot_pool", "few_shot_split", "load", "resolve_source", "sample_path"),
    "evalcore.benchmarks._scoring": (
        "CodeExecutionScoring",
        "ExactMatchScoring",
        "error_scores",
        "pass_at_k_table",
    ),
    "evalcore.benchmarks._builtin": ("BenchmarkBase", "BuiltinBenchmark"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
