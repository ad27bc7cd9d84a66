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

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.routing._aiq import aiq_paper as aiq_paper
    from evalcore.routing._aiq import aiq_routerbench as aiq_routerbench
    from evalcore.routing._aiq import flat_end as flat_end
    from evalcore.routing._aiq import nondecreasing_hull as nondecreasing_hull
    from evalcore.routing._aiq import zero_router_points as zero_router_points
    from evalcore.routing._algorithms import ALGORITHMS as ALGORITHMS
    from evalcore.routing._algorithms import ROUTERS as ROUTERS
    from evalcore.routing._algorithms import UCB1 as UCB1
    from evalcore.routing._algorithms import AlwaysBest as AlwaysBest
    from evalcore.routing._algorithms import AlwaysCheapest as AlwaysCheapest
    from evalcore.routing._algorithms import ContextualThompson as ContextualThompson
    from evalcore.routing._algorithms import DuelingBandit as DuelingBandit
    from evalcore.routing._algorithms import EpsilonGreedy as EpsilonGreedy
    from evalcore.routing._algorithms import Hybrid as Hybrid
    from evalcore.routing._algorithms import LinUCB as LinUCB
    from evalcore.routing._algorithms import Oracle as Oracle
    from evalcore.routing._algorithms import RandomRouter as RandomRouter
    from evalcore.routing._algorithms import ReplayEnv as ReplayEnv
    from evalcore.routing._algorithms import Router as Router
    from evalcore.routing._algorithms import ThompsonSampling as ThompsonSampling
    from evalcore.routing._algorithms import make_router as make_router
    from evalcore.routing._algorithms import random_argmax as random_argmax
    from evalcore.routing._apgr import CPT_LEVELS as CPT_LEVELS
    from evalcore.routing._apgr import cpt as cpt
    from evalcore.routing._apgr import pgr as pgr
    from evalcore.routing._apgr import quantile_thresholds as quantile_thresholds
    from evalcore.routing._apgr import random_router_sweep as random_router_sweep
    from evalcore.routing._apgr import routellm_apgr as routellm_apgr
    from evalcore.routing._apgr import routellm_pair as routellm_pair
    from evalcore.routing._apgr import threshold_curve as threshold_curve
    from evalcore.routing._columns import COLUMN_DEFINITIONS as COLUMN_DEFINITIONS
    from evalcore.routing._columns import describe_columns as describe_columns
    from evalcore.routing._columns import headline_checks as headline_checks
    from evalcore.routing._compare import RoutingComparison as RoutingComparison
    from evalcore.routing._compare import compare_routing as compare_routing
    from evalcore.routing._compare import format_routing_comparison as format_routing_comparison
    from evalcore.routing._compare import is_routing_result as is_routing_result
    from evalcore.routing._compare import write_routing_comparison as write_routing_comparison
    from evalcore.routing._default import DEFAULT_STRATEGIES as DEFAULT_STRATEGIES
    from evalcore.routing._default import Strategy as Strategy
    from evalcore.routing._default import build_default_outcomes as build_default_outcomes
    from evalcore.routing._default import expected_samples as expected_samples
    from evalcore.routing._default import outcome_matrix as outcome_matrix
    from evalcore.routing._features import length_features as length_features
    from evalcore.routing._features import query_features as query_features
    from evalcore.routing._features import reduce_features as reduce_features
    from evalcore.routing._margins import ZERO_ROUTER as ZERO_ROUTER
    from evalcore.routing._margins import AIQBootstrap as AIQBootstrap
    from evalcore.routing._margins import aiq_bootstrap as aiq_bootstrap
    from evalcore.routing._margins import aiq_table as aiq_table
    from evalcore.routing._matrix import NoSignalWarning as NoSignalWarning
    from evalcore.routing._matrix import OutcomeMatrix as OutcomeMatrix
    from evalcore.routing._matrix import no_signal_reason as no_signal_reason
    from evalcore.routing._matrix import read_long_table as read_long_table
    from evalcore.routing._metrics import aiq as aiq
    from evalcore.routing._metrics import convergence_point as convergence_point
    from evalcore.routing._metrics import interval as interval
    from evalcore.routing._metrics import pairwise_comparisons as pairwise_comparisons
    from evalcore.routing._metrics import pareto_frontier as pareto_frontier
    from evalcore.routing._outcomes import find_run_dirs as find_run_dirs
    from evalcore.routing._outcomes import majority_vote as majority_vote
    from evalcore.routing._outcomes import outcomes_from_runs as outcomes_from_runs
    from evalcore.routing._outcomes import read_outcomes as read_outcomes
    from evalcore.routing._pickle import read_frame_pickle as read_frame_pickle
    from evalcore.routing._plots import ROUTER_COLORS as ROUTER_COLORS
    from evalcore.routing._plots import arm_colors as arm_colors
    from evalcore.routing._plots import bootstrap_figure as bootstrap_figure
    from evalcore.routing._plots import pareto_figure as pareto_figure
    from evalcore.routing._plots import regret_figure as regret_figure
    from evalcore.routing._plots import router_color as router_color
    from evalcore.routing._plots import selection_share_figure as selection_share_figure
    from evalcore.routing._plots import sweep_figure as sweep_figure
    from evalcore.routing._published import OUTCOME_FORMATS as OUTCOME_FORMATS
    from evalcore.routing._published import detect_format as detect_format
    from evalcore.routing._published import load_outcomes as load_outcomes
    from evalcore.routing._published import load_routellm as load_routellm
    from evalcore.routing._published import load_routerbench as load_routerbench
    from evalcore.routing._published import parse_costs as parse_costs
    from evalcore.routing._replay import make_orderings as make_orderings
    from evalcore.routing._replay import parse_algorithms as parse_algorithms
    from evalcore.routing._replay import replay as replay
    from evalcore.routing._result import AlgorithmTrace as AlgorithmTrace
    from evalcore.routing._result import ReplayResult as ReplayResult
    from evalcore.routing._reward import compute_rewards as compute_rewards
    from evalcore.routing._reward import normalized_cost as normalized_cost
    from evalcore.routing._simulate import simulate_contextual as simulate_contextual
    from evalcore.routing._simulate import simulate_outcomes as simulate_outcomes
    from evalcore.routing._studies import ItemBootstrap as ItemBootstrap
    from evalcore.routing._studies import item_bootstrap as item_bootstrap
    from evalcore.routing._studies import lambda_sweep as lambda_sweep
    from evalcore.routing._tables import write_tables as write_tables

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
