"""Agent evaluation: seeded cases, the seven categories, scoring, outputs, comparison, threshold
sweeps and the evaluator's self-test. It evaluates agents of :mod:`evalcore.agents` (which imports
nothing of this package).

Quick start::

    from evalcore.suites import SuiteConfig, evaluate, suite_records, write_outputs
    result = evaluate("reference", SuiteConfig(limit=5), categories=["functional", "workflow"], model="none")
    print(suite_records(result))
    write_outputs(result, "reports/agent")

Public names are imported when first used (see :mod:`evalcore._lazy`): the results pull in numpy,
the figures matplotlib, the sweep pandas, which ``evalcore --help`` should not pay for.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.suites._entry": ("case_records", "evaluate", "resolve_agent", "suite_records"),
    "evalcore.suites._config": ("CATEGORIES", "CATEGORY_WEIGHTS", "PASS_THRESHOLD", "SuiteConfig", "SuiteData"),
    "evalcore.suites._cases.generator": ("AgentCaseGenerator",),
    "evalcore.suites._cases.kinds": ("STARTER_KINDS", "SYNTHESIZED_KINDS"),
    "evalcore.suites._cases.records": ("AgentCase", "ExpectedStep", "load_cases", "save_cases"),
    "evalcore.suites._evaluator": ("AgentEvaluator", "EvaluationResult"),
    "evalcore.suites._case_results": ("CaseResult", "CategoryResult", "make_test", "overall_score"),
    "evalcore.suites._calling": ("Call", "call_agent"),
    "evalcore.suites._categories": ("CATEGORY_FUNCTIONS",),
    "evalcore.suites._categories.functional": ("evaluate_functional",),
    "evalcore.suites._categories.synthesis": ("evaluate_synthesis",),
    "evalcore.suites._categories.retrieval": ("evaluate_retrieval",),
    "evalcore.suites._categories.workflow": ("evaluate_workflow", "score_workflow"),
    "evalcore.suites._categories.learning": ("evaluate_learning",),
    "evalcore.suites._categories.robustness": ("evaluate_robustness",),
    "evalcore.suites._categories.performance": ("evaluate_performance",),
    "evalcore.suites._matching": ("is_clear_error", "normalize_string", "to_number", "values_match"),
    "evalcore.suites._quality": ("code_quality", "test_quality"),
    "evalcore.suites._output": (
        "figure_category_scores", "figure_category_tests", "figure_performance", "figure_test_distribution",
        "load_results", "render_html", "save_results", "write_outputs",
    ),
    "evalcore.suites._compare": ("compare_results", "format_comparison"),
    "evalcore.suites._sweep": ("SweepResult", "parse_thresholds", "threshold_sweep"),
    "evalcore.suites._oracle": ("FailingAgent", "HonestAgent", "OracleAgent", "WrongAgent", "perturb"),
    "evalcore.suites._self_test": ("run_self_test",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
