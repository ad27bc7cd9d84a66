"""evalcore.evaluators."""

__all__: list[str] = []

from evalcore.evaluators._exact_match import (  # noqa: E402
    ExactMatchEvaluator,
    Extraction,
    canonical_number,
    gsm8k_reference,
    mmlu_reference,
    numbers_equal,
    parse_number,
    summarize_exact_match,
)
from evalcore.evaluators._answer_files import score_answers_file  # noqa: E402

__all__ += [
    "ExactMatchEvaluator",
    "Extraction",
    "canonical_number",
    "gsm8k_reference",
    "mmlu_reference",
    "numbers_equal",
    "parse_number",
    "summarize_exact_match",
    "score_answers_file",
]
