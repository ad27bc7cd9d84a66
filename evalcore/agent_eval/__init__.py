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

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.agent_eval._entry": ("case_records", "evaluate", "resolve_agent", "agent_eval_records"),
    "evalcore.agent_eval._config": (
        "CATEGORIES",
        "CATEGORY_WEIGHTS",
        "PASS_THRESHOLD",
        "AgentEvalConfig",
        "AgentEvalData",
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
