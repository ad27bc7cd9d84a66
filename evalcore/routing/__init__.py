"""evalcore.routing: bandit routers replayed counterfactually over an outcome matrix.

Build an :class:`OutcomeMatrix` (items × arms: quality, cost, latency, tokens, error flag)
from recorded runs (:func:`outcomes_from_runs`), an external table (:func:`load_outcomes`:
evalcore's long table, RouterBench's wide table or RouteLLM's correctness CSVs) or
the embedded default (:func:`build_default_outcomes`: the local model × four inference
strategies), then :func:`replay` the eleven routers in ``ALGORITHMS`` over R random orderings
at once and read regret, convergence, intervals and order-variability checks off the
:class:`ReplayResult`; :func:`item_bootstrap` resamples the items (orderings nested) for the
comparison that generalizes beyond the items at hand. The objective is ``reward = quality − λ · normalized cost``
(:func:`compute_rewards`). :func:`write_tables` writes a study's tables (``summary.csv`` and the
rest), for ``evalcore route`` and the routing notebook alike.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.routing._algorithms": (
        "ALGORITHMS",
        "ROUTERS",
        "AlwaysBest",
        "AlwaysCheapest",
        "ContextualThompson",
        "DuelingBandit",
        "EpsilonGreedy",
        "Hybrid",
        "LinUCB",
        "Oracle",
        "RandomRouter",
        "ReplayEnv",
        "Router",
        "ThompsonSampling",
        "UCB1",
        "make_router",
        "random_argmax",
    ),
    "evalcore.routing._columns": ("COLUMN_DEFINITIONS", "describe_columns", "headline_checks"),
    "evalcore.routing._compare": (
        "RoutingComparison",
        "compare_routing",
        "format_routing_comparison",
        "is_routing_result",
        "write_routing_comparison",
    ),
    "evalcore.routing._default": (
        "DEFAULT_STRATEGIES",
        "Strategy",
        "build_default_outcomes",
        "expected_samples",
        "outcome_matrix",
    ),
    "evalcore.routing._features": ("length_features", "query_features", "reduce_features"),
    "evalcore.routing._aiq": (
        "aiq_paper",
        "aiq_routerbench",
        "flat_end",
        "nondecreasing_hull",
        "zero_router_points",
    ),
    "evalcore.routing._apgr": (
        "CPT_LEVELS",
        "cpt",
        "pgr",
        "quantile_thresholds",
        "random_router_sweep",
        "routellm_apgr",
        "routellm_pair",
        "threshold_curve",
    ),
    "evalcore.routing._margins": ("ZERO_ROUTER", "AIQBootstrap", "aiq_bootstrap", "aiq_table"),
    "evalcore.routing._metrics": (
        "aiq",
        "convergence_point",
        "interval",
        "pairwise_comparisons",
        "pareto_frontier",
    ),
    "evalcore.routing._matrix": ("NoSignalWarning", "OutcomeMatrix", "no_signal_reason", "read_long_table"),
    "evalcore.routing._published": (
        "OUTCOME_FORMATS",
        "detect_format",
        "load_outcomes",
        "load_routellm",
        "load_routerbench",
        "parse_costs",
    ),
    "evalcore.routing._pickle": ("read_frame_pickle",),
    "evalcore.routing._outcomes": (
        "find_run_dirs",
        "majority_vote",
        "outcomes_from_runs",
        "read_outcomes",
    ),
    "evalcore.routing._plots": (
        "ROUTER_COLORS",
        "arm_colors",
        "bootstrap_figure",
        "pareto_figure",
        "regret_figure",
        "router_color",
        "selection_share_figure",
        "sweep_figure",
    ),
    "evalcore.routing._result": ("AlgorithmTrace", "ReplayResult"),
    "evalcore.routing._replay": (
        "make_orderings",
        "parse_algorithms",
        "replay",
    ),
    "evalcore.routing._studies": ("ItemBootstrap", "item_bootstrap", "lambda_sweep"),
    "evalcore.routing._reward": ("compute_rewards", "normalized_cost"),
    "evalcore.routing._simulate": ("simulate_contextual", "simulate_outcomes"),
    "evalcore.routing._tables": ("write_tables",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
