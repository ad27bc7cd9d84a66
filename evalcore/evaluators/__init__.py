"""evalcore.evaluators."""

__all__: list[str] = []

from evalcore.evaluators._exact_match import (  # noqa: E402
    DECLARED_METHODS,
    EXTRACTION_METHODS,
    ExactMatchEvaluator,
    Extraction,
    canonical_number,
    extraction_method_counts,
    gsm8k_reference,
    mmlu_reference,
    numbers_equal,
    parse_number,
    summarize_exact_match,
)
from evalcore.evaluators._answer_files import score_answers_file  # noqa: E402

__all__ += [
    "DECLARED_METHODS",
    "EXTRACTION_METHODS",
    "ExactMatchEvaluator",
    "Extraction",
    "canonical_number",
    "extraction_method_counts",
    "gsm8k_reference",
    "mmlu_reference",
    "numbers_equal",
    "parse_number",
    "summarize_exact_match",
    "score_answers_file",
]

from evalcore.evaluators._code_execution import (  # noqa: E402
    CodeResult,
    CodeSample,
    build_program,
    evaluate_code_batch,
    evaluate_code_execution,
    extract_code,
)
from evalcore.evaluators._humaneval_files import score_samples_file  # noqa: E402
from evalcore.evaluators._pass_at_k import estimate_pass_at_k, pass_at_k  # noqa: E402
from evalcore.evaluators._sandbox import SandboxResult, run_python  # noqa: E402

__all__ += [
    "CodeResult",
    "CodeSample",
    "build_program",
    "evaluate_code_batch",
    "evaluate_code_execution",
    "extract_code",
    "score_samples_file",
    "estimate_pass_at_k",
    "pass_at_k",
    "SandboxResult",
    "run_python",
]
