"""Agent evaluation: seeded cases, the seven categories, scoring, outputs, comparison, threshold
sweeps and the evaluator's self-test. It evaluates agents of :mod:`evalcore.agents` (which imports
nothing of this package).

Quick start::

    from evalcore.agent_eval import AgentEvalConfig, evaluate, agent_eval_records, write_outputs
    result = evaluate("reference", AgentEvalConfig(limit=5), categories=["functional", "workflow"], model="none")
    print(agent_eval_records(result))
    write_outputs(result, "reports/agent")

Public names are imported when first used (see :mod:`evalcore._lazy`): the results pull in numpy,
the figures matplotlib, the sweep pandas, which ``evalcore --help`` should not pay for.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.agent_eval._calling import Call as Call
    from evalcore.agent_eval._calling import call_agent as call_agent
    from evalcore.agent_eval._case_results import CaseResult as CaseResult
    from evalcore.agent_eval._case_results import CategoryResult as CategoryResult
    from evalcore.agent_eval._case_results import make_test as make_test
    from evalcore.agent_eval._case_results import overall_score as overall_score
    from evalcore.agent_eval._cases.generator import AgentCaseGenerator as AgentCaseGenerator
    from evalcore.agent_eval._cases.kinds import STARTER_KINDS as STARTER_KINDS
    from evalcore.agent_eval._cases.kinds import SYNTHESIZED_KINDS as SYNTHESIZED_KINDS
    from evalcore.agent_eval._cases.records import AgentCase as AgentCase
    from evalcore.agent_eval._cases.records import ExpectedStep as ExpectedStep
    from evalcore.agent_eval._cases.records import load_cases as load_cases
    from evalcore.agent_eval._cases.records import save_cases as save_cases
    from evalcore.agent_eval._categories import CATEGORY_FUNCTIONS as CATEGORY_FUNCTIONS
    from evalcore.agent_eval._categories.functional import evaluate_functional as evaluate_functional
    from evalcore.agent_eval._categories.learning import evaluate_learning as evaluate_learning
    from evalcore.agent_eval._categories.performance import evaluate_performance as evaluate_performance
    from evalcore.agent_eval._categories.retrieval import evaluate_retrieval as evaluate_retrieval
    from evalcore.agent_eval._categories.robustness import evaluate_robustness as evaluate_robustness
    from evalcore.agent_eval._categories.synthesis import evaluate_synthesis as evaluate_synthesis
    from evalcore.agent_eval._categories.workflow import evaluate_workflow as evaluate_workflow
    from evalcore.agent_eval._categories.workflow import score_workflow as score_workflow
    from evalcore.agent_eval._compare import compare_results as compare_results
    from evalcore.agent_eval._compare import format_agent_eval_comparison as format_agent_eval_comparison
    from evalcore.agent_eval._config import CATEGORIES as CATEGORIES
    from evalcore.agent_eval._config import CATEGORY_WEIGHTS as CATEGORY_WEIGHTS
    from evalcore.agent_eval._config import PASS_THRESHOLD as PASS_THRESHOLD
    from evalcore.agent_eval._config import SEED_ENV as SEED_ENV
    from evalcore.agent_eval._config import AgentEvalConfig as AgentEvalConfig
    from evalcore.agent_eval._config import AgentEvalData as AgentEvalData
    from evalcore.agent_eval._config import seed_from_sources as seed_from_sources
    from evalcore.agent_eval._entry import agent_eval_records as agent_eval_records
    from evalcore.agent_eval._entry import case_records as case_records
    from evalcore.agent_eval._entry import evaluate as evaluate
    from evalcore.agent_eval._entry import resolve_agent as resolve_agent
    from evalcore.agent_eval._evaluator import AgentEvaluator as AgentEvaluator
    from evalcore.agent_eval._evaluator import EvaluationResult as EvaluationResult
    from evalcore.agent_eval._matching import is_clear_error as is_clear_error
    from evalcore.agent_eval._matching import normalize_string as normalize_string
    from evalcore.agent_eval._matching import to_number as to_number
    from evalcore.agent_eval._matching import values_match as values_match
    from evalcore.agent_eval._oracle import FailingAgent as FailingAgent
    from evalcore.agent_eval._oracle import HonestAgent as HonestAgent
    from evalcore.agent_eval._oracle import OracleAgent as OracleAgent
    from evalcore.agent_eval._oracle import WrongAgent as WrongAgent
    from evalcore.agent_eval._oracle import perturb as perturb
    from evalcore.agent_eval._output import figure_caption as figure_caption
    from evalcore.agent_eval._output import figure_category_scores as figure_category_scores
    from evalcore.agent_eval._output import figure_category_tests as figure_category_tests
    from evalcore.agent_eval._output import figure_performance as figure_performance
    from evalcore.agent_eval._output import figure_test_distribution as figure_test_distribution
    from evalcore.agent_eval._output import load_results as load_results
    from evalcore.agent_eval._output import render_html as render_html
    from evalcore.agent_eval._output import save_results as save_results
    from evalcore.agent_eval._output import write_outputs as write_outputs
    from evalcore.agent_eval._quality import code_quality as code_quality
    from evalcore.agent_eval._quality import test_quality as test_quality
    from evalcore.agent_eval._self_test import run_self_test as run_self_test
    from evalcore.agent_eval._sweep import SweepResult as SweepResult
    from evalcore.agent_eval._sweep import parse_thresholds as parse_thresholds
    from evalcore.agent_eval._sweep import threshold_sweep as threshold_sweep

_EXPORTS = {
    "evalcore.agent_eval._entry": ("case_records", "evaluate", "resolve_agent", "agent_eval_records"),
    "evalcore.agent_eval._config": (
        "CATEGORIES",
        "CATEGORY_WEIGHTS",
        "PASS_THRESHOLD",
        "SEED_ENV",
        "AgentEvalConfig",
        "AgentEvalData",
        "seed_from_sources",
    ),
    "evalcore.agent_eval._cases.generator": ("AgentCaseGenerator",),
    "evalcore.agent_eval._cases.kinds": ("STARTER_KINDS", "SYNTHESIZED_KINDS"),
    "evalcore.agent_eval._cases.records": ("AgentCase", "ExpectedStep", "load_cases", "save_cases"),
    "evalcore.agent_eval._evaluator": ("AgentEvaluator", "EvaluationResult"),
    "evalcore.agent_eval._case_results": ("CaseResult", "CategoryResult", "make_test", "overall_score"),
    "evalcore.agent_eval._calling": ("Call", "call_agent"),
    "evalcore.agent_eval._categories": ("CATEGORY_FUNCTIONS",),
    "evalcore.agent_eval._categories.functional": ("evaluate_functional",),
    "evalcore.agent_eval._categories.synthesis": ("evaluate_synthesis",),
    "evalcore.agent_eval._categories.retrieval": ("evaluate_retrieval",),
    "evalcore.agent_eval._categories.workflow": ("evaluate_workflow", "score_workflow"),
    "evalcore.agent_eval._categories.learning": ("evaluate_learning",),
    "evalcore.agent_eval._categories.robustness": ("evaluate_robustness",),
    "evalcore.agent_eval._categories.performance": ("evaluate_performance",),
    "evalcore.agent_eval._matching": ("is_clear_error", "normalize_string", "to_number", "values_match"),
    "evalcore.agent_eval._quality": ("code_quality", "test_quality"),
    "evalcore.agent_eval._output": (
        "figure_caption",
        "figure_category_scores",
        "figure_category_tests",
        "figure_performance",
        "figure_test_distribution",
        "load_results",
        "render_html",
        "save_results",
        "write_outputs",
    ),
    "evalcore.agent_eval._compare": ("compare_results", "format_agent_eval_comparison"),
    "evalcore.agent_eval._sweep": ("SweepResult", "parse_thresholds", "threshold_sweep"),
    "evalcore.agent_eval._oracle": ("FailingAgent", "HonestAgent", "OracleAgent", "WrongAgent", "perturb"),
    "evalcore.agent_eval._self_test": ("run_self_test",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
