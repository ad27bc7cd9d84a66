"""evalcore.routing: bandit routers replayed counterfactually over an outcome matrix.

Build an :class:`OutcomeMatrix` (items × arms: quality, cost, latency, tokens, error flag)
from recorded runs (:func:`outcomes_from_runs`), an external table (:func:`load_outcomes`) or
the embedded default (:func:`build_default_outcomes`: the local model × four inference
strategies), then :func:`replay` the eleven routers in ``ALGORITHMS`` over R random orderings
at once and read regret, convergence, intervals and pairwise tests off the
:class:`ReplayResult`. The objective is ``reward = quality − λ · normalized cost``
(:func:`compute_rewards`).
"""

from evalcore.routing._algorithms import (
    ALGORITHMS,
    ROUTERS,
    AlwaysBest,
    AlwaysCheapest,
    ContextualThompson,
    DuelingBandit,
    EpsilonGreedy,
    Hybrid,
    LinUCB,
    Oracle,
    RandomRouter,
    ReplayEnv,
    Router,
    ThompsonSampling,
    UCB1,
    make_router,
    random_argmax,
)
from evalcore.routing._default import (
    DEFAULT_STRATEGIES,
    Strategy,
    build_default_outcomes,
    outcome_matrix,
)
from evalcore.routing._features import length_features, query_features, reduce_features
from evalcore.routing._metrics import (
    aiq,
    aiq_table,
    apgr,
    convergence_point,
    interval,
    pairwise_comparisons,
    pareto_frontier,
)
from evalcore.routing._outcomes import (
    OutcomeMatrix,
    find_run_dirs,
    load_outcomes,
    majority_vote,
    outcomes_from_runs,
    read_outcomes,
)
from evalcore.routing._plots import (
    pareto_figure,
    regret_figure,
    selection_share_figure,
    sweep_figure,
)
from evalcore.routing._replay import (
    AlgorithmTrace,
    ReplayResult,
    lambda_sweep,
    make_orderings,
    parse_algorithms,
    replay,
)
from evalcore.routing._reward import compute_rewards, normalized_cost
from evalcore.routing._simulate import simulate_contextual, simulate_outcomes

__all__: list[str] = [
    "ALGORITHMS",
    "AlgorithmTrace",
    "AlwaysBest",
    "AlwaysCheapest",
    "ContextualThompson",
    "DEFAULT_STRATEGIES",
    "DuelingBandit",
    "EpsilonGreedy",
    "Hybrid",
    "LinUCB",
    "OutcomeMatrix",
    "Oracle",
    "ROUTERS",
    "RandomRouter",
    "ReplayEnv",
    "ReplayResult",
    "Router",
    "Strategy",
    "ThompsonSampling",
    "UCB1",
    "aiq",
    "aiq_table",
    "apgr",
    "build_default_outcomes",
    "compute_rewards",
    "convergence_point",
    "find_run_dirs",
    "interval",
    "lambda_sweep",
    "length_features",
    "load_outcomes",
    "majority_vote",
    "make_orderings",
    "make_router",
    "normalized_cost",
    "outcome_matrix",
    "outcomes_from_runs",
    "pairwise_comparisons",
    "parse_algorithms",
    "pareto_figure",
    "pareto_frontier",
    "query_features",
    "random_argmax",
    "read_outcomes",
    "reduce_features",
    "regret_figure",
    "replay",
    "simulate_contextual",
    "selection_share_figure",
    "simulate_outcomes",
    "sweep_figure",
]
