"""MMLU: four-option multiple choice over 57 subjects; the answer is a letter A-D.

Loading (``cais/mmlu`` "all", the original per-subject CSVs, the shipped sample) is in
:mod:`evalcore.datasets`; the extractor is :mod:`evalcore.evaluators._extract_mmlu` (the
``"letter"`` answer kind of :class:`~evalcore.evaluators.ExactMatchEvaluator`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import ExactMatchScoring, by_subject, parse_failure_extras

if TYPE_CHECKING:
    from evalcore.datasets import Item


class MMLU(ExactMatchScoring, BuiltinBenchmark):
    """MMLU (Hendrycks et al., 2021): the reference letter; replies are read by the letter
    extractor (flexible mode matches an option's text back to its letter); the summary adds
    accuracy per subject. ``mmlu_mode="likelihood"`` applies (the most probable letter).

    Few-shot examples come from the ``dev`` split; a template may use ``{choices_text}`` (the
    ``(A) ...`` lines) and ``{subject}``."""

    name = "mmlu"
    answer_kind = "letter"
    default_max_tokens = 64
    supports_likelihood = True

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """``choices_text`` and ``subject`` (underscores as spaces)."""
        from evalcore.datasets import choices_text

        subject = str(item.metadata.get("subject") or item.fields.get("subject") or "general knowledge")
        return {
            "choices_text": choices_text(list(item.fields.get("choices") or [])),
            "subject": subject.replace("_", " "),
        }

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Parse-failure rates and ``by_subject``."""
        return {**parse_failure_extras(records), **by_subject(records)}


BENCHMARK = MMLU()
