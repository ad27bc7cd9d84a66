"""evalcore.evaluators: exact match (GSM8K, MMLU), sandboxed code execution and pass@k.

Public names are re-exported lazily (see :mod:`evalcore._lazy`): ``import evalcore.evaluators``
imports nothing heavy until a name is used.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.evaluators._answer_files import score_answers_file as score_answers_file
    from evalcore.evaluators._cli import ANSWER_HELP as ANSWER_HELP
    from evalcore.evaluators._cli import add_answers_command as add_answers_command
    from evalcore.evaluators._cli import add_code_command as add_code_command
    from evalcore.evaluators._cli import add_isolation_option as add_isolation_option
    from evalcore.evaluators._cli import is_isolated as is_isolated
    from evalcore.evaluators._cli import require_isolation as require_isolation
    from evalcore.evaluators._cli import warn_if_not_isolated as warn_if_not_isolated
    from evalcore.evaluators._code_execution import CodeResult as CodeResult
    from evalcore.evaluators._code_execution import CodeSample as CodeSample
    from evalcore.evaluators._code_execution import build_program as build_program
    from evalcore.evaluators._code_execution import evaluate_code_batch as evaluate_code_batch
    from evalcore.evaluators._code_execution import evaluate_code_execution as evaluate_code_execution
    from evalcore.evaluators._code_execution import extract_code as extract_code
    from evalcore.evaluators._exact_match import DECLARED_METHODS as DECLARED_METHODS
    from evalcore.evaluators._exact_match import EXTRACTION_METHODS as EXTRACTION_METHODS
    from evalcore.evaluators._exact_match import ExactMatchEvaluator as ExactMatchEvaluator
    from evalcore.evaluators._exact_match import Extraction as Extraction
    from evalcore.evaluators._exact_match import canonical_number as canonical_number
    from evalcore.evaluators._exact_match import extraction_method_counts as extraction_method_counts
    from evalcore.evaluators._exact_match import gsm8k_reference as gsm8k_reference
    from evalcore.evaluators._exact_match import mmlu_reference as mmlu_reference
    from evalcore.evaluators._exact_match import numbers_equal as numbers_equal
    from evalcore.evaluators._exact_match import parse_number as parse_number
    from evalcore.evaluators._exact_match import summarize_exact_match as summarize_exact_match
    from evalcore.evaluators._humaneval_files import read_problems as read_problems
    from evalcore.evaluators._humaneval_files import results_path as results_path
    from evalcore.evaluators._humaneval_files import score_samples_file as score_samples_file
    from evalcore.evaluators._pass_at_k import estimate_pass_at_k as estimate_pass_at_k
    from evalcore.evaluators._pass_at_k import pass_at_k as pass_at_k
    from evalcore.evaluators._reasoning import after_reasoning as after_reasoning
    from evalcore.sandbox import SandboxResult as SandboxResult
    from evalcore.sandbox import run_python as run_python

_EXPORTS = {
    "evalcore.evaluators._cli": (
        "ANSWER_HELP",
        "add_answers_command",
        "add_code_command",
        "add_isolation_option",
        "is_isolated",
        "require_isolation",
        "warn_if_not_isolated",
    ),
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
    "evalcore.evaluators._humaneval_files": ("read_problems", "results_path", "score_samples_file"),
    "evalcore.evaluators._pass_at_k": ("estimate_pass_at_k", "pass_at_k"),
    "evalcore.evaluators._reasoning": ("after_reasoning",),
    "evalcore.sandbox": ("SandboxResult", "run_python"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
