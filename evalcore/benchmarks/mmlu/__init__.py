"""MMLU: four-option multiple choice over 57 subjects; the answer is a letter A-D.

Everything that is MMLU lives in this folder: its rows and splits (``_rows``: per-subject CSVs
of the original ``data.tar``, hub id ``cais/mmlu`` "all"; ``val`` is ``validation``), the shipped
sample (``samples/test/`` and ``samples/dev/`` for few-shot examples), the scorer choice (exact
match of the ``"letter"`` answer kind), the prompt fields and the per-subject summary. The
registry names it in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._builtin import BuiltinBenchmark
from evalcore.benchmarks._scoring import ExactMatchScoring, by_subject, parse_failure_extras
from evalcore.benchmarks.mmlu._rows import source

if TYPE_CHECKING:
    from evalcore.datasets import Item

SOURCE = source(Path(__file__).resolve().parent / "samples")


class MMLU(ExactMatchScoring, BuiltinBenchmark):
    """MMLU (Hendrycks et al., 2021): the reference letter; replies are read by the letter
    extractor (flexible mode matches an option's text back to its letter); the summary adds
    accuracy per subject. ``choice_mode="likelihood"`` applies (the most probable letter).

    Few-shot examples come from the ``dev`` split; a template may use ``{choices_text}`` (the
    ``(A) ...`` lines) and ``{subject}``."""

    name = "mmlu"
    answer_kind = "letter"
    default_max_tokens = 64
    supports_likelihood = True
    data = SOURCE

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
