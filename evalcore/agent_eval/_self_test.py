"""The evaluator's self-test: agents with known scores (:mod:`evalcore.agent_eval._oracle`) and agents
that game one category each (:mod:`evalcore.agent_eval._gaming`) must score as expected."""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Sequence
from typing import Any

from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._config import CATEGORIES, AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._evaluator import AgentEvaluator
from evalcore.agent_eval._gaming import GAMING_AGENTS, GAMING_MEASURES, make_seed_guesser
from evalcore.agent_eval._oracle import SELF_TEST_AGENTS, FailingAgent, HonestAgent, OracleAgent, WrongAgent

_GUESSED_SEEDS = 16  # the seed guesser tries 0 .. 15
TIMED = "performance"  # the category that times the agent: no other process starts or ends beside it


def run_self_test(
    cases: Sequence[AgentCase] | None = None,
    *,
    config: AgentEvalConfig | None = None,
    gaming: bool = True,
    hosted: bool = False,
) -> dict[str, Any]:
    """Check the evaluator on agents with known scores.

    * the oracle and the honest agent must score ≥ 0.9 on every category but performance
      (≥ 0.7 there, timings vary) and the oracle 1.0 on functional and workflow;
    * the plausibly-wrong agent must score ≤ 0.1 on functional;
    * the failing agent must score 0 on functional and performance;
    * every gaming agent of :data:`~evalcore.agent_eval._gaming.GAMING_AGENTS` (with ``gaming``)
      must score < the category floor in the category it games, so that it fails the system
      whatever its other scores (the frame reader and the
      monkeypatcher only when ``hosted``: in process they can reach the evaluator, which is why
      hosted is the default for Python agents);
    * every agent of :data:`~evalcore.agent_eval._gaming.GAMING_MEASURES` (with ``gaming``), whose
      strategy cannot sink a category, must score at most its bound on the measure it games
      (tests that never call the tool: test quality 0);
    * the seed guesser (with ``gaming``), which rebuilds the cases of the seeds 0–15 with the
      generator shipped in evalcore and answers only from them, must score < the category floor
      on functional: it does unless ``config.seed`` is one it guesses (see
      :class:`AgentEvalConfig`: a guessable seed is a public answer key).

    Args:
        cases: Cases (default: the generator's with ``config.seed``/``config.counts``).
        config: Evaluation settings.
        gaming: Also run the gaming agents.
        hosted: Run every agent hosted in a process of its own (else in process).

    Returns:
        ``{"scores": {agent: {category: score}}, "checks": {check: bool}, "passed": bool}``.
    """
    config = config or AgentEvalConfig()
    data = AgentEvalData.build(config, cases)
    cases, groups = data.cases, data.paraphrase_groups
    keyed = cases + data.specs  # the answer key the self-test agents are given (the drawn specs too)
    factory_kw: dict[str, Any] = {
        "cases": [c.to_dict() for c in keyed],
        "groups": [[c.to_dict() for c in g] for g in groups],
    }
    guesser_kw: dict[str, Any] = {
        "seeds": list(range(_GUESSED_SEEDS)),
        "counts": config.counts,
        "n_paraphrase_groups": config.n_paraphrase_groups,
    }
    plan = _plan(keyed, groups, guesser_kw, gaming=gaming, hosted=hosted)
    scores: dict[str, dict[str, float]] = {}
    measured: dict[str, dict[str, Any]] = {}
    with _Line(plan, (lambda name: _hosted(name, factory_kw, guesser_kw, config)) if hosted else None) as line:
        for name, (_make, cats) in plan.items():
            agent = line.take(name)
            try:
                res = AgentEvaluator(agent, cases, config=config, agent_name=name).run(cats, progress=False)
            finally:
                line.done(agent)
            scores[name] = res.category_scores
            measured[name] = {c: dict(r.metrics) for c, r in res.categories.items()}
    checks = _checks(scores, measured, plan, config)
    return {"scores": scores, "checks": checks, "passed": all(checks.values())}


class _Line:
    """The self-test's agents one after another; hosted, the next one's process starts (and the
    last one's closes) in a helper thread while an agent is evaluated (26 processes: 0.2 s to
    start and 0.13 s to close each, about a third of the self-test), except beside a category
    that times the agent (performance): nothing else runs then."""

    def __init__(self, plan: dict[str, tuple[Any, list[str]]], host: Any) -> None:
        self._plan = plan
        self._names = list(plan)
        self._host = host
        self._helper = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="evalcore-self-test") if host else None
        )
        self._started: dict[str, concurrent.futures.Future[Any]] = {}
        self._closing: list[concurrent.futures.Future[Any]] = []

    def __enter__(self) -> _Line:
        return self

    def take(self, name: str) -> Any:
        """The agent ``name``, started (and the next one starting, unless this one is timed)."""
        if self._host is None:
            return self._plan[name][0]()
        future = self._started.pop(name, None)
        agent = future.result() if future is not None else self._host(name)
        assert self._helper is not None
        if TIMED in self._plan[name][1]:
            self._settle()
        else:
            later = self._names[self._names.index(name) + 1 :]
            if later:
                self._started[later[0]] = self._helper.submit(self._host, later[0])
        return agent

    def done(self, agent: Any) -> None:
        """Close a hosted agent (in the helper thread)."""
        if self._helper is not None:
            self._closing.append(self._helper.submit(agent.close))

    def _settle(self) -> None:
        for future in self._closing:
            future.result()
        self._closing.clear()

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._helper is None:
            return
        for future in self._started.values():  # started for an agent that will not run now
            with contextlib.suppress(Exception):
                future.result().close()
        self._helper.shutdown(wait=True)
        if exc_type is None:  # else the error that stopped the self-test is the one raised
            self._settle()


def _plan(
    keyed: list[AgentCase], groups: list[list[AgentCase]], guesser_kw: dict[str, Any], *, gaming: bool, hosted: bool
) -> dict[str, tuple[Any, list[str]]]:
    """Agent name → (its in-process factory, the categories it is run on)."""
    all_cats = list(CATEGORIES)
    plan: dict[str, tuple[Any, list[str]]] = {
        "oracle": (lambda: OracleAgent(keyed, groups), all_cats),
        "honest": (lambda: HonestAgent(keyed, groups), all_cats),
        "wrong": (lambda: WrongAgent(keyed, groups), ["functional"]),
        "failing": (lambda: FailingAgent(), ["functional", "performance"]),
    }
    if gaming:
        for name, (cls, cat) in GAMING_AGENTS.items():
            if name in ("frame_reader", "monkeypatcher") and not hosted:
                continue
            if name == "slow_first_sight":
                continue  # 5.5 s a request: checked by the test suite, not here
            plan[name] = ((lambda cls=cls: cls(keyed, groups)), [cat])
        for name, (cls, cat, _metric, _most) in GAMING_MEASURES.items():
            plan[name] = ((lambda cls=cls: cls(keyed, groups)), [cat])
        plan["seed_guesser"] = (lambda: make_seed_guesser(**guesser_kw), ["functional"])
    return plan


def _hosted(name: str, factory_kw: dict[str, Any], guesser_kw: dict[str, Any], config: AgentEvalConfig) -> Any:
    """The self-test agent ``name`` hosted in a process of its own."""
    from evalcore.agents import HostedAgent

    if name == "seed_guesser":
        spec, kw = "evalcore.agent_eval._gaming:make_seed_guesser", guesser_kw
    else:
        spec = (
            f"evalcore.agent_eval._oracle:make_{name}"
            if name in SELF_TEST_AGENTS
            else "evalcore.agent_eval._gaming:make_gaming"
        )
        kw = dict(factory_kw, **({} if name in SELF_TEST_AGENTS else {"name": name}))
    return HostedAgent(spec, kw, timeout_s=config.request_timeout_s or 30.0)


def _checks(
    scores: dict[str, dict[str, float]],
    measured: dict[str, dict[str, Any]],
    plan: dict[str, Any],
    config: AgentEvalConfig,
) -> dict[str, bool]:
    """The self-test's checks (see :func:`run_self_test`), each by its description."""
    checks: dict[str, bool] = {
        "oracle functional == 1": scores["oracle"]["functional"] == 1.0,
        "oracle workflow == 1": scores["oracle"]["workflow"] == 1.0,
        "wrong functional <= 0.1": scores["wrong"]["functional"] <= 0.1,
        "failing functional == 0": scores["failing"]["functional"] == 0.0,
        "failing performance == 0": scores["failing"]["performance"] == 0.0,
    }
    for good in ("oracle", "honest"):
        for cat, sc in scores[good].items():
            checks[f"{good} {cat} >= {0.7 if cat == 'performance' else 0.9}"] = sc >= (
                0.7 if cat == "performance" else 0.9
            )
    for name in plan:
        if name in GAMING_AGENTS:
            cat = GAMING_AGENTS[name][1]
            checks[f"{name} {cat} < {config.category_floor}"] = scores[name][cat] < config.category_floor
    for name, (_cls, cat, metric, most) in GAMING_MEASURES.items():
        if name in measured:
            value = measured[name][cat].get(metric)
            checks[f"{name} {cat} {metric} <= {most:g}"] = value is not None and value <= most
    if "seed_guesser" in scores:
        checks[f"seed_guesser functional < {config.category_floor} (the answer key out of reach)"] = (
            scores["seed_guesser"]["functional"] < config.category_floor
        )
    return checks
