"""GSM8K: grade-school math word problems; the answer is a number read from the reply.

Loading (``openai/gsm8k`` "main", a JSONL of ``question``/``answer``, the shipped sample) is in
:mod:`evalcore.datasets`; the extractor is :mod:`evalcore.evaluators._extract_gsm8k` (the
``"number"`` answer kind of :class:`~evalcore.evaluators.ExactMatchEvaluator`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import ExactMatchScoring

if TYPE_CHECKING:
    from evalcore.datasets import Item


class GSM8K(ExactMatchScoring, BuiltinBenchmark):
    """GSM8K (Cobbe et al., 2021): the number after ``####`` is the reference; replies are read
    by the number extractor in strict and flexible modes; answers compare numerically.

    Few-shot examples come from the ``train`` split; a template may use ``{solution}`` (the
    worked solution without its ``<<...>>`` calculator annotations)."""

    name = "gsm8k"
    answer_kind = "number"
    default_max_tokens = 512

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """``solution``: the worked solution ending ``#### N``."""
        sol = str(item.metadata.get("solution") or f"#### {item.reference}")
        return {"solution": re.sub(r"<<[^<>]*>>", "", sol)}


BENCHMARK = GSM8K()
