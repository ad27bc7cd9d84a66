"""GSM8K: grade-school math word problems; the answer is a number read from the reply.

Everything that is GSM8K lives in this folder: its rows and splits (``_rows``: JSONL of
``question``/``answer``, hub id ``openai/gsm8k`` "main"), the shipped sample (``samples/``:
``test.jsonl``, and ``train.jsonl`` for few-shot examples), the scorer choice (exact match of the
``"number"`` answer kind) and the prompt fields. The registry names it in one line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import ExactMatchScoring
from evalcore.benchmarks.gsm8k._rows import source

if TYPE_CHECKING:
    from evalcore.datasets import Item

SOURCE = source(Path(__file__).resolve().parent / "samples")


class GSM8K(ExactMatchScoring, BuiltinBenchmark):
    """GSM8K (Cobbe et al., 2021): the number after ``####`` is the reference; replies are read
    by the number extractor in strict and flexible modes; answers compare numerically.

    Few-shot examples come from the ``train`` split; a template may use ``{solution}`` (the
    worked solution without its ``<<...>>`` calculator annotations)."""

    name = "gsm8k"
    answer_kind = "number"
    default_max_tokens = 512
    data = SOURCE

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """``solution``: the worked solution ending ``#### N``."""
        sol = str(item.metadata.get("solution") or f"#### {item.reference}")
        return {"solution": re.sub(r"<<[^<>]*>>", "", sol)}


BENCHMARK = GSM8K()
