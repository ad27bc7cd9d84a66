"""Run the categories on an agent (:class:`AgentEvaluator`) and score the whole
(:class:`EvaluationResult`)."""

from __future__ import annotations

import datetime as _dt
import platform
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalcore._io import bounded, to_json_native
from evalcore.agent_eval._calling import CATEGORY_TIME_CAP_S, category_time_cap, describe_exception, tool_budget
from evalcore.agent_eval._case_results import CategoryResult, make_test, overall_score
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._categories import CATEGORY_FUNCTIONS
from evalcore.agent_eval._config import CATEGORIES, CATEGORY_WEIGHTS, PASS_THRESHOLD, AgentEvalConfig, AgentEvalData
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.agents import Agent


@dataclass
class EvaluationResult:
    """The outcome of :meth:`AgentEvaluator.run`.

    Attributes:
        categories: Result per category that was run (in run order).
        config: The evaluation settings and provenance.
        weights: Default weights (renormalized over the categories run for ``overall``).
        started_at: UTC start time (ISO 8601).
        duration_s: Wall time of the evaluation.
    """

    categories: dict[str, CategoryResult]
    config: dict[str, Any] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=lambda: dict(CATEGORY_WEIGHTS))
    started_at: str = ""
    duration_s: float = 0.0
    pass_threshold: float = PASS_THRESHOLD
    category_floor: float = 0.5
    trusted: bool = False

    @property
    def category_scores(self) -> dict[str, float]:
        return {name: c.score for name, c in self.categories.items()}

    @property
    def overall(self) -> float:
        """Weighted mean of category scores (weights renormalized over the categories run)."""
        return overall_score(self.category_scores, self.weights)[0] if self.categories else 0.0

    @property
    def critical_failures(self) -> list[dict[str, Any]]:
        return [f for c in self.categories.values() for f in c.critical_failures]

    @property
    def complete(self) -> bool:
        """All seven categories were run."""
        return set(CATEGORIES) <= set(self.categories)

    @property
    def below_floor(self) -> list[str]:
        """Categories scoring under the category floor."""
        return [n for n, c in self.categories.items() if c.score < self.category_floor]

    @property
    def status(self) -> str:
        """``"PASSED"``, ``"FAILED"`` or ``"partial"`` (not every category was run: a partial run
        never passes the system, whatever its scores)."""
        if not self.complete:
            return "partial"
        ok = self.overall >= self.pass_threshold and not self.critical_failures and not self.below_floor
        return "PASSED" if ok else "FAILED"

    @property
    def passed(self) -> bool:
        """All seven categories run, overall ≥ pass threshold, every category ≥ the category floor
        and no critical failures."""
        return self.status == "PASSED"

    def test_scores(self) -> dict[str, float]:
        """Every test's score keyed ``"<category>/<test>"``."""
        return {f"{c}/{t.name}": t.score for c, r in self.categories.items() for t in r.tests}

    @property
    def weights_used(self) -> dict[str, float]:
        """The weight of each category run in the overall score (renormalized to sum to one)."""
        return overall_score(self.category_scores, self.weights)[1] if self.categories else {}

    def summary(self) -> dict[str, Any]:
        tests = [t for r in self.categories.values() for t in r.tests]
        return {
            "overall_score": self.overall,
            "passed": self.passed,
            "status": self.status,
            "trusted": self.trusted,
            "pass_threshold": self.pass_threshold,
            "category_floor": self.category_floor,
            "categories_below_floor": self.below_floor,
            "category_scores": self.category_scores,
            "categories_passed": {n: c.passed for n, c in self.categories.items()},
            "weights": dict(self.weights),
            "weights_used": self.weights_used,
            "n_tests": len(tests),
            "n_tests_passed": sum(t.passed for t in tests),
            "critical_failures": self.critical_failures,
            "n_critical_failures": len(self.critical_failures),
            "started_at": self.started_at,
            "duration_s": self.duration_s,
        }

    def to_dict(self, **caps: int) -> dict[str, Any]:
        """``{"summary", "detailed_results", "config"}`` with native JSON types only, every value
        bounded (:func:`evalcore._io.bounded`; ``caps`` tighten the tests' bounds: see
        :func:`evalcore.agent_eval.save_results`)."""
        return {
            "summary": bounded(self.summary(), items=10_000, nodes=200_000),
            "detailed_results": {n: c.to_dict(**caps) for n, c in self.categories.items()},
            "config": bounded(self.config, items=10_000, nodes=200_000),
        }


class AgentEvaluator:
    """Evaluate an agent on seeded test cases in up to seven categories.

    Args:
        agent: Agent object meeting the :class:`~evalcore.agents.Agent` protocol.
        cases: The cases (default: ``AgentCaseGenerator(config.seed, config.counts).generate()``; the
            seed is a fresh secret one unless ``config`` names one, see :class:`AgentEvalConfig`).
        config: Evaluation settings.
        weights: Category weights (default :data:`CATEGORY_WEIGHTS`).
        agent_name: Name recorded in the results.
        extra_config: More provenance to record (agent spec, model …).
        category_time_cap_s: Wall time each category may spend on the agent
            (:data:`~evalcore.agent_eval._calling.CATEGORY_TIME_CAP_S` by default; None = no cap).
    """

    def __init__(
        self,
        agent: Agent,
        cases: Sequence[AgentCase] | None = None,
        *,
        config: AgentEvalConfig | None = None,
        weights: Mapping[str, float] | None = None,
        agent_name: str | None = None,
        extra_config: Mapping[str, Any] | None = None,
        category_time_cap_s: float | None = CATEGORY_TIME_CAP_S,
    ) -> None:
        for attr in ("process_request", "reset"):
            if not callable(getattr(agent, attr, None)):
                raise EvalcoreError(f"the agent has no {attr}() method", field="agent")
        self.agent = agent
        self.config = config or AgentEvalConfig()
        self.data = AgentEvalData.build(self.config, cases)
        self.weights = dict(weights or CATEGORY_WEIGHTS)
        self.agent_name = agent_name or type(agent).__name__
        self.extra_config = dict(extra_config or {})
        self.category_time_cap_s = category_time_cap_s

    def run(self, categories: Iterable[str] | None = None, *, progress: bool | None = None) -> EvaluationResult:
        """Run the categories (default: all seven), each on a freshly reset agent.

        Args:
            categories: Category names to run.
            progress: Show a progress bar (None: on a terminal or in JupyterLab, see
                :func:`evalcore._progress.progress_enabled`).

        Returns:
            The evaluation result.

        Raises:
            EvalcoreError: An unknown category name.
        """
        cats = list(categories) if categories is not None else list(CATEGORIES)
        unknown = [c for c in cats if c not in CATEGORY_FUNCTIONS]
        if unknown or not cats:
            raise EvalcoreError(f"unknown categories {unknown}; choose from {list(CATEGORIES)}", field="categories")
        from evalcore._progress import progress_bar

        started = _dt.datetime.now(_dt.UTC)
        t0 = time.perf_counter()
        results: dict[str, CategoryResult] = {}
        bar = progress_bar(cats, desc="agent-eval", unit="category", progress=progress, tick_s=1.0)
        for name in bar:
            bar.set_postfix_str(name)
            t = time.perf_counter()
            with tool_budget(self.config) as budget, category_time_cap(self.category_time_cap_s):
                res = run_category(name, self.agent, self.data, self.config)
            res.duration_s = time.perf_counter() - t
            if self.category_time_cap_s is not None and res.duration_s >= self.category_time_cap_s:
                res.notes.append(
                    f"the category's time cap of {self.category_time_cap_s:g} s was reached: later "
                    "requests were not sent and their tests failed"
                )
            res.metrics["tool_time_s"] = round(budget.spent_s, 3)
            if budget.refused or (budget.total_s is not None and budget.spent_s >= budget.total_s):
                res.notes.append(
                    f"{budget.spent_message()}: {budget.refused} run(s) of the agent's code not "
                    "started, the checks that needed them failed"
                )
            results[name] = res
        import evalcore

        process = _agent_process(self.agent)
        config = {
            "agent": self.agent_name,
            "agent_process": process,
            "trusted": process != "in-process",
            **(
                {
                    "agent_isolation": getattr(self.agent, "isolation", "weak"),
                    "agent_isolation_notes": list(getattr(self.agent, "isolation_notes", [])),
                }
                if process == "hosted"
                else {}
            ),
            "categories": cats,
            "suite": self.config.to_dict(),
            "category_time_cap_s": self.category_time_cap_s,
            "n_cases": len(self.data.cases),
            "case_ids": [c.id for c in self.data.cases],
            "cases_digest": self.data.digest(),
            "evalcore_version": evalcore.__version__,
            "python": platform.python_version(),
            **to_json_native(self.extra_config),
        }
        return EvaluationResult(
            categories=results,
            config=config,
            weights=self.weights,
            started_at=started.isoformat(timespec="seconds"),
            duration_s=time.perf_counter() - t0,
            pass_threshold=self.config.pass_threshold,
            category_floor=self.config.category_floor,
            trusted=process != "in-process",
        )


def run_category(name: str, agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Run one category; whatever escapes it is that category's failure, never the evaluation's.

    Every value an agent sends is data: the categories score it or record it as a test's
    failure. Should one of them still raise on something an agent sent (a value no check
    foresaw), the category is recorded with one critical test, ``evaluation``, that says what
    was raised, and the evaluation goes on to the next category and writes its results.
    """
    try:
        return CATEGORY_FUNCTIONS[name](agent, data, config)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # RecursionError, OverflowError, MemoryError … on the agent's data
        res = CategoryResult(name)
        res.tests.append(
            make_test(
                "evaluation",
                0.0,
                critical=True,
                error=f"the category could not be evaluated on what the agent sent: {describe_exception(exc, 500)}",
            )
        )
        res.notes.append("the category stopped on a value the agent sent; its other tests were not scored")
        return res


def _agent_process(agent: Agent) -> str:
    """Where the agent runs: ``"hosted"`` (a fresh interpreter the evaluator started), ``"http"``
    (behind a URL) or ``"in-process"`` (this interpreter: the agent could reach the evaluator,
    so such results are marked ``trusted: false``)."""
    from evalcore.agents import HostedAgent, HttpAgent

    if type(agent) is HostedAgent:
        return "hosted"
    if type(agent) is HttpAgent:
        return "http"
    return "in-process"
