"""Benchmarks: one module per benchmark and the registry every other package asks.

A :class:`Benchmark` says how its items load, its default prompt template and generation
settings, its few-shot examples, how one reply is scored, when two answers are equal and what
its summary adds. The built-ins are GSM8K (``_gsm8k``), MMLU (``_mmlu``) and HumanEval
(``_humaneval``); :func:`register` adds another; a user's own benchmark is one YAML file
(``_file``: a JSONL/CSV of items, a scorer, a prompt), found by :func:`get_benchmark` from its
path. :func:`benchmark_of_run` gives the benchmark a recorded run was scored with.
"""

from evalcore._lazy import lazy_exports

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
        "register",
        "unregister",
    ),
    "evalcore.benchmarks._file": ("FileBenchmark", "SCORER_TYPES", "load_benchmark_file"),
    "evalcore.benchmarks._scoring": (
        "CodeExecutionScoring",
        "ExactMatchScoring",
        "error_scores",
        "pass_at_k_table",
    ),
    "evalcore.benchmarks._builtin": ("BenchmarkBase", "BuiltinBenchmark"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
