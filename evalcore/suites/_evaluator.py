"""Run the seven categories on an agent and score the whole."""

from __future__ import annotations

import datetime as _dt
import platform
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from evalcore.datasets._agent_cases import AgentCase, AgentCaseGenerator
from evalcore.errors import EvalcoreError
from evalcore.suites._categories import CATEGORY_FUNCTIONS, SuiteConfig, SuiteData
from evalcore.suites._results import CATEGORIES, CATEGORY_WEIGHTS, CategoryResult, jsonable, overall_score


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
    pass_threshold: float = 0.7
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

    def summary(self) -> dict[str, Any]:
        used = overall_score(self.category_scores, self.weights)[1] if self.categories else {}
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
            "weights_used": used,
            "n_tests": len(tests),
            "n_tests_passed": sum(t.passed for t in tests),
            "critical_failures": self.critical_failures,
            "n_critical_failures": len(self.critical_failures),
            "started_at": self.started_at,
            "duration_s": self.duration_s,
        }

    def to_dict(self) -> dict[str, Any]:
        """``{"summary", "detailed_results", "config"}`` with native JSON types only."""
        return jsonable({"summary": self.summary(),
                         "detailed_results": {n: c.to_dict() for n, c in self.categories.items()},
                         "config": self.config})


class AgentEvaluator:
    """Evaluate an agent on seeded test cases in up to seven categories.

    Args:
        agent: Any object meeting the :class:`~evalcore.agents.Agent` protocol.
        cases: The cases (default: ``AgentCaseGenerator(config.seed, config.counts).generate()``).
        config: Evaluation settings.
        weights: Category weights (default :data:`CATEGORY_WEIGHTS`).
        agent_name: Name recorded in the results.
        extra_config: More provenance to record (agent spec, model …).
    """

    def __init__(self, agent: Any, cases: Sequence[AgentCase] | None = None, *, config: SuiteConfig | None = None,
                 weights: Mapping[str, float] | None = None, agent_name: str | None = None,
                 extra_config: Mapping[str, Any] | None = None) -> None:
        for attr in ("process_request", "reset"):
            if not callable(getattr(agent, attr, None)):
                raise EvalcoreError(f"the agent has no {attr}() method", field="agent")
        self.agent = agent
        self.config = config or SuiteConfig()
        gen = AgentCaseGenerator(self.config.seed, self.config.counts)
        self.data = SuiteData(
            cases=list(cases) if cases is not None else gen.generate(),
            paraphrase_groups=gen.paraphrase_groups(self.config.n_paraphrase_groups, self.config.paraphrase_size)
            if self.config.n_paraphrase_groups else [],
            unrelated=gen.unrelated_queries(self.config.n_unrelated),
        )
        self.weights = dict(weights or CATEGORY_WEIGHTS)
        self.agent_name = agent_name or type(agent).__name__
        self.extra_config = dict(extra_config or {})

    def run(self, categories: Iterable[str] | None = None, *, progress: bool | None = None) -> EvaluationResult:
        """Run the categories (default: all seven), each on a freshly reset agent.

        Args:
            categories: Category names to run.
            progress: Show a progress bar (None = only in a terminal).

        Returns:
            The evaluation result.

        Raises:
            EvalcoreError: An unknown category name.
        """
        cats = list(categories) if categories is not None else list(CATEGORIES)
        unknown = [c for c in cats if c not in CATEGORY_FUNCTIONS]
        if unknown or not cats:
            raise EvalcoreError(f"unknown categories {unknown}; choose from {list(CATEGORIES)}", field="categories")
        from tqdm.auto import tqdm

        started = _dt.datetime.now(_dt.timezone.utc)
        t0 = time.perf_counter()
        results: dict[str, CategoryResult] = {}
        bar = tqdm(cats, desc="agent-eval", disable=(not progress) if progress is not None else None)
        for name in bar:
            bar.set_postfix_str(name)
            t = time.perf_counter()
            res = CATEGORY_FUNCTIONS[name](self.agent, self.data, self.config)
            res.duration_s = time.perf_counter() - t
            results[name] = res
        import evalcore

        process = _agent_process(self.agent)
        config = {
            "agent": self.agent_name,
            "agent_process": process,
            "trusted": process != "in-process",
            **({"agent_isolation": getattr(self.agent, "isolation", "weak"),
                "agent_isolation_notes": list(getattr(self.agent, "isolation_notes", []))}
               if process == "hosted" else {}),
            "categories": cats,
            "suite": self.config.to_dict(),
            "n_cases": len(self.data.cases),
            "case_ids": [c.id for c in self.data.cases],
            "evalcore_version": evalcore.__version__,
            "python": platform.python_version(),
            **jsonable(self.extra_config),
        }
        return EvaluationResult(categories=results, config=config, weights=self.weights,
                                started_at=started.isoformat(timespec="seconds"),
                                duration_s=time.perf_counter() - t0, pass_threshold=self.config.pass_threshold,
                                category_floor=self.config.category_floor, trusted=process != "in-process")


def _agent_process(agent: Any) -> str:
    """Where the agent runs: ``"hosted"`` (a fresh interpreter the evaluator started), ``"http"``
    (behind a URL) or ``"in-process"`` (this interpreter: the agent could reach the evaluator,
    so such results are marked ``trusted: false``)."""
    from evalcore.agents._host import HostedAgent
    from evalcore.agents._http import HttpAgent

    if type(agent) is HostedAgent:
        return "hosted"
    if type(agent) is HttpAgent:
        return "http"
    return "in-process"


def evaluate_agent(agent: Any, categories: Iterable[str] | None = None, *, cases: Sequence[AgentCase] | None = None,
                   config: SuiteConfig | None = None, **kwargs: Any) -> EvaluationResult:
    """Shortcut for ``AgentEvaluator(agent, cases, config=config, **kwargs).run(categories)``."""
    return AgentEvaluator(agent, cases, config=config, **kwargs).run(categories)


_SELF_TEST = ("oracle", "honest", "wrong", "failing")


def resolve_agent(spec: str, *, model: str | None = None, threshold: float | None = None, seed: int = 0,
                  cases: Sequence[AgentCase] | None = None,
                  paraphrase_groups: Sequence[Sequence[AgentCase]] = (),
                  options: Mapping[str, Any] | None = None, in_process: bool = False,
                  timeout_s: float = 30.0) -> Any:
    """Build an agent from a specification.

    A Python agent runs hosted in a fresh interpreter of its own and is reached over the HTTP
    JSON protocol (:class:`~evalcore.agents.HostedAgent`); ``in_process=True`` builds it in this
    process instead, for debugging (its results then say ``trusted: false``).

    Args:
        spec: ``"reference"`` (the reference agent; ``model`` = a model spec or ``"none"`` for its
            no-LLM mode), ``"oracle"``, ``"honest"``, ``"wrong"``, ``"failing"`` (self-test agents,
            answering ``cases``), ``"module:function"`` or ``"http://…"`` (via
            :func:`evalcore.agents.load_agent`; a given ``threshold`` is passed to the factory).
        model: Model spec for the reference agent (default ``"local:smollm2"``).
        threshold: Similarity threshold for the reference agent.
        seed: Seed for the reference agent.
        cases: Cases the self-test agents answer.
        paraphrase_groups: More cases for the self-test agents.
        options: Further keyword arguments for the reference agent's ``make_agent`` or a
            ``module:function`` factory (e.g. ``{"synthesis_max_tokens": 256}``).
        in_process: Build a Python agent in this process.
        timeout_s: Per-request timeout of a hosted or HTTP agent.

    Returns:
        The agent.

    Raises:
        EvalcoreError: An unknown or unloadable specification.
    """
    from evalcore.agents import load_agent

    kw: dict[str, Any] = dict(options or {})
    if spec == "reference":
        kw = {"model": "local:smollm2" if model is None else (None if model.lower() == "none" else model),
              "seed": seed, "threshold": 0.6 if threshold is None else threshold, **kw}
        return load_agent("reference", in_process=in_process, timeout_s=timeout_s, **kw)
    if spec in _SELF_TEST:
        kw.update(cases=[c.to_dict() for c in cases or []],
                  groups=[[c.to_dict() for c in g] for g in paraphrase_groups])
        return load_agent(f"evalcore.agents._oracle:make_{spec}", in_process=in_process, timeout_s=timeout_s, **kw)
    if ":" in spec:
        if threshold is not None:
            kw["threshold"] = threshold
        return load_agent(spec, in_process=in_process, timeout_s=timeout_s, **kw)
    raise EvalcoreError(f"unknown agent {spec!r}: use reference, oracle, honest, wrong, failing, module:function "
                        "or http://…", field="agent")


def run_self_test(cases: Sequence[AgentCase] | None = None, *, config: SuiteConfig | None = None,
                  gaming: bool = True, hosted: bool = False) -> dict[str, Any]:
    """Check the evaluator on agents with known scores.

    * the oracle and the honest agent must score ≥ 0.9 on every category but performance
      (≥ 0.7 there, timings vary) and the oracle 1.0 on functional and workflow;
    * the plausibly-wrong agent must score ≤ 0.1 on functional;
    * the failing agent must score 0 on functional and performance;
    * every gaming agent of :data:`~evalcore.agents._gaming.GAMING_AGENTS` (with ``gaming``)
      must score < the category floor in the category it games, so that it fails the system
      whatever its other scores (the frame reader and the
      monkeypatcher only when ``hosted``: in process they can reach the evaluator, which is why
      hosted is the default for Python agents).

    Args:
        cases: Cases (default: the generator's with ``config.seed``/``config.counts``).
        config: Evaluation settings.
        gaming: Also run the gaming agents.
        hosted: Run every agent hosted in a process of its own (else in process).

    Returns:
        ``{"scores": {agent: {category: score}}, "checks": {check: bool}, "passed": bool}``.
    """
    from evalcore.agents._gaming import GAMING_AGENTS
    from evalcore.agents._oracle import FailingAgent, HonestAgent, OracleAgent, WrongAgent

    config = config or SuiteConfig()
    gen = AgentCaseGenerator(config.seed, config.counts)
    cases = list(cases) if cases is not None else gen.generate()
    groups = gen.paraphrase_groups(config.n_paraphrase_groups, config.paraphrase_size) if config.n_paraphrase_groups else []
    factory_kw = {"cases": [c.to_dict() for c in cases], "groups": [[c.to_dict() for c in g] for g in groups]}
    all_cats = list(CATEGORIES)
    plan: dict[str, tuple[Any, list[str]]] = {
        "oracle": (lambda: OracleAgent(cases, groups), all_cats),
        "honest": (lambda: HonestAgent(cases, groups), all_cats),
        "wrong": (lambda: WrongAgent(cases, groups), ["functional"]),
        "failing": (lambda: FailingAgent(), ["functional", "performance"]),
    }
    if gaming:
        for name, (cls, cat) in GAMING_AGENTS.items():
            if name in ("frame_reader", "monkeypatcher") and not hosted:
                continue
            if name == "slow_first_sight":
                continue  # 5.5 s a request: checked by the test suite, not here
            plan[name] = ((lambda cls=cls: cls(cases, groups)), [cat])
    scores: dict[str, dict[str, float]] = {}
    for name, (make, cats) in plan.items():
        if hosted:
            from evalcore.agents._host import HostedAgent

            spec = (f"evalcore.agents._oracle:make_{name}" if name in _SELF_TEST
                    else "evalcore.agents._gaming:make_gaming")
            kw = dict(factory_kw, **({} if name in _SELF_TEST else {"name": name}))
            agent = HostedAgent(spec, kw, timeout_s=config.request_timeout_s or 30.0)
        else:
            agent = make()
        try:
            res = AgentEvaluator(agent, cases, config=config, agent_name=name).run(cats, progress=False)
        finally:
            close = getattr(agent, "close", None)
            if callable(close) and hosted:
                close()
        scores[name] = res.category_scores
    checks: dict[str, bool] = {
        "oracle functional == 1": scores["oracle"]["functional"] == 1.0,
        "oracle workflow == 1": scores["oracle"]["workflow"] == 1.0,
        "wrong functional <= 0.1": scores["wrong"]["functional"] <= 0.1,
        "failing functional == 0": scores["failing"]["functional"] == 0.0,
        "failing performance == 0": scores["failing"]["performance"] == 0.0,
    }
    for good in ("oracle", "honest"):
        for cat, sc in scores[good].items():
            checks[f"{good} {cat} >= {0.7 if cat == 'performance' else 0.9}"] = sc >= (0.7 if cat == "performance" else 0.9)
    for name in plan:
        if name in GAMING_AGENTS:
            cat = GAMING_AGENTS[name][1]
            checks[f"{name} {cat} < {config.category_floor}"] = scores[name][cat] < config.category_floor
    return {"scores": scores, "checks": checks, "passed": all(checks.values())}
