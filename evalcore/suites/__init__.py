"""Agent evaluation: the seven categories, scoring, outputs, comparison and threshold sweeps.

Quick start::

    from evalcore.suites import AgentEvaluator, SuiteConfig, write_outputs
    result = AgentEvaluator(agent, config=SuiteConfig(limit=5)).run(["functional", "workflow"])
    write_outputs(result, "reports/agent")
"""

from evalcore.agents._oracle import FailingAgent, OracleAgent, WrongAgent, perturb
from evalcore.suites._categories import (
    CATEGORY_FUNCTIONS,
    Call,
    SuiteConfig,
    SuiteData,
    call_agent,
    evaluate_functional,
    evaluate_learning,
    evaluate_performance,
    evaluate_retrieval,
    evaluate_robustness,
    evaluate_synthesis,
    evaluate_workflow,
    score_workflow,
)
from evalcore.suites._compare import compare_results, format_comparison
from evalcore.suites._evaluator import (
    AgentEvaluator,
    EvaluationResult,
    evaluate_agent,
    resolve_agent,
    run_self_test,
)
from evalcore.suites._matching import is_clear_error, normalize_string, to_number, values_match
from evalcore.suites._output import (
    figure_category_scores,
    figure_category_tests,
    figure_performance,
    figure_test_distribution,
    load_results,
    render_html,
    save_results,
    write_outputs,
)
from evalcore.suites._quality import code_quality, test_quality
from evalcore.suites._results import (
    CATEGORIES,
    CATEGORY_WEIGHTS,
    PASS_THRESHOLD,
    CategoryResult,
    TestResult,
    jsonable,
    make_test,
    overall_score,
)
from evalcore.suites._sweep import SweepResult, parse_thresholds, threshold_sweep

__all__ = [
    "AgentEvaluator", "CATEGORIES", "CATEGORY_FUNCTIONS", "CATEGORY_WEIGHTS", "Call", "CategoryResult",
    "EvaluationResult", "FailingAgent", "OracleAgent", "PASS_THRESHOLD", "SuiteConfig", "SuiteData",
    "SweepResult", "TestResult", "WrongAgent", "call_agent", "code_quality", "compare_results",
    "evaluate_agent", "evaluate_functional", "evaluate_learning", "evaluate_performance",
    "evaluate_retrieval", "evaluate_robustness", "evaluate_synthesis", "evaluate_workflow",
    "figure_category_scores", "figure_category_tests", "figure_performance", "figure_test_distribution", "format_comparison",
    "is_clear_error", "jsonable", "load_results", "make_test", "normalize_string", "overall_score",
    "parse_thresholds", "perturb", "render_html", "resolve_agent", "run_self_test", "save_results",
    "score_workflow", "test_quality", "threshold_sweep", "to_number", "values_match", "write_outputs",
]
