"""The seven evaluation categories, one module each.

Each ``evaluate_<category>(agent, data, config)`` resets the agent first (a fresh, isolated state
with a temporary registry), runs its tests and returns a :class:`CategoryResult`. Every test
scores in [0, 1]; a request whose ``process_request`` raises scores 0 and is recorded as a
critical failure. Answers are compared with :func:`values_match` against
``AgentResponse.result``, never as substrings of the response text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalcore.agent_eval._case_results import CategoryResult
from evalcore.agent_eval._categories.functional import evaluate_functional
from evalcore.agent_eval._categories.learning import evaluate_learning
from evalcore.agent_eval._categories.performance import evaluate_performance
from evalcore.agent_eval._categories.retrieval import evaluate_retrieval
from evalcore.agent_eval._categories.robustness import evaluate_robustness
from evalcore.agent_eval._categories.synthesis import evaluate_synthesis
from evalcore.agent_eval._categories.workflow import evaluate_workflow
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData

CATEGORY_FUNCTIONS: dict[str, Callable[[Any, AgentEvalData, AgentEvalConfig], CategoryResult]] = {
    "functional": evaluate_functional,
    "synthesis": evaluate_synthesis,
    "retrieval": evaluate_retrieval,
    "workflow": evaluate_workflow,
    "learning": evaluate_learning,
    "robustness": evaluate_robustness,
    "performance": evaluate_performance,
}
"""Category name → the function that runs it."""
