"""evalcore.evaluators: exact match (GSM8K, MMLU), sandboxed code execution and pass@k.

Public names are re-exported lazily (see :mod:`evalcore._lazy`): ``import evalcore.evaluators``
imports nothing heavy until a name is used.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.evaluators._cli": ("add_isolation_option", "require_isolation", "warn_if_not_isolated"),
    "evalcore.evaluators._exact_match": (
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
    ),
    "evalcore.evaluators._answer_files": ("score_answers_file",),
    "evalcore.evaluators._code_execution": (
        "CodeResult",
        "CodeSample",
        "build_program",
        "evaluate_code_batch",
        "evaluate_code_execution",
        "extract_code",
    ),
    "evalcore.evaluators._humaneval_files": ("score_samples_file",),
    "evalcore.evaluators._pass_at_k": ("estimate_pass_at_k", "pass_at_k"),
    "evalcore.sandbox": ("SandboxResult", "run_python"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
