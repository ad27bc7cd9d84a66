"""The one entry point of an agent evaluation: :func:`evaluate` builds the cases and the agent
(from its specification, :func:`resolve_agent`) and runs the categories; :func:`agent_eval_records`
and :func:`case_records` are the rows the CLI prints and the notebooks tabulate."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalcore.agent_eval._cases.records import AgentCase, load_cases
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._evaluator import AgentEvaluator, EvaluationResult
from evalcore.agent_eval._oracle import SELF_TEST_AGENTS
from evalcore.agents import load_agent
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.agents import Agent


def evaluate(
    agent: Agent,
    config: AgentEvalConfig | None = None,
    *,
    categories: Iterable[str] | None = None,
    cases: Sequence[AgentCase] | str | os.PathLike[str] | None = None,
    model: str | None = None,
    threshold: float | None = None,
    options: Mapping[str, Any] | None = None,
    in_process: bool = False,
    extra_config: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    hide: Sequence[str | os.PathLike[str]] = (),
) -> EvaluationResult:
    """Evaluate an agent: the cases, the agent and the run, as ``evalcore agent-eval`` and the agent
    notebooks do it.

    The cases are ``cases`` (a list, or a cases file written by :func:`save_cases`) or generated
    from ``config.seed`` and ``config.counts``, with the paraphrase groups and unrelated queries
    of ``config``. An agent given by its specification is built by :func:`resolve_agent` (a
    Python agent hosted in an interpreter of its own unless ``in_process``; the self-test agents
    answering these cases) and closed afterwards. No agent is given the case seed, and a hosted
    one cannot read the cases file nor the paths in ``hide``.

    Args:
        agent: An agent specification (``"reference"``, ``"oracle"``, ``"module:function"``,
            ``"http://…"``, see :func:`resolve_agent`), or an object meeting the
            :class:`~evalcore.agents.Agent` protocol.
        config: Evaluation settings (default :class:`AgentEvalConfig`).
        categories: Categories to run (default all seven).
        cases: The cases, or the path of a cases file.
        model: Model of the reference agent (a model spec, or ``"none"``).
        threshold: Similarity threshold of the agent's tool search.
        options: More keyword arguments for the reference agent or a factory.
        in_process: Build a Python agent in this process (its results say ``trusted: false``).
        extra_config: More provenance to record in the results' ``config``.
        progress: Show a progress bar (None = only in a terminal).
        hide: Paths a hosted agent must not read besides the cases file, which is always hidden
            from it (e.g. the results folder: earlier results record their seeds).

    Returns:
        The evaluation result.

    Raises:
        EvalcoreError: No cases, an unreadable cases file, an unknown category or agent.
    """
    config = config or AgentEvalConfig()
    path = cases if isinstance(cases, (str, os.PathLike)) else None
    data = AgentEvalData.build(config, load_cases(cases) if isinstance(cases, (str, os.PathLike)) else cases)
    if not data.cases:
        raise EvalcoreError("no test cases to evaluate", path=path, field=None if path is not None else "counts")
    name = agent if isinstance(agent, str) else None
    if name == "reference":
        check_agent_model(model)
    if name is not None:
        # The agent never learns the case seed (with it, the generator rebuilds the answer key).
        agent = resolve_agent(
            name,
            model=model,
            threshold=threshold,
            cases=data.cases,
            paraphrase_groups=data.paraphrase_groups,
            options=options,
            in_process=in_process,
            timeout_s=config.request_timeout_s or 30.0,
            hide=[*([path] if path is not None else []), *hide],
        )
    try:
        return AgentEvaluator(agent, data.cases, config=config, agent_name=name, extra_config=extra_config).run(
            categories, progress=progress
        )
    finally:
        close = getattr(agent, "close", None)
        if name is not None and callable(close):
            close()


def check_agent_model(model: str | None) -> None:
    """Check, before an evaluation starts, that the reference agent's endpoint model answers.

    The reference agent runs in an interpreter of its own and falls back to its rule-based
    path when a model call fails, so a dead endpoint used to go unnoticed: the cases it
    answers without a model still passed (``agent-eval`` scored 1.000 with the model never
    used). ``evalcore run`` asks the endpoint first; so does this. Only endpoint models
    (``openai:``, ``openai-compatible:``) are asked; a spec that is malformed is refused.

    Args:
        model: The reference agent's model spec, ``"none"`` or None (the default local model).

    Raises:
        EvalcoreError: A malformed spec, or an endpoint that cannot be reached or refuses the key.
    """
    if not isinstance(model, str) or model.split(":", 1)[0] not in ("openai", "openai-compatible"):
        return
    from evalcore.models import check_reachable, from_spec

    try:
        check_reachable(from_spec(model))
    except EvalcoreError as exc:
        raise EvalcoreError(f"the reference agent's model: {exc.reason}", field=exc.field) from None


def resolve_agent(
    spec: str,
    *,
    model: str | None = None,
    threshold: float | None = None,
    seed: int = 0,
    cases: Sequence[AgentCase] | None = None,
    paraphrase_groups: Sequence[Sequence[AgentCase]] = (),
    options: Mapping[str, Any] | None = None,
    in_process: bool = False,
    timeout_s: float = 30.0,
    hide: Sequence[str | os.PathLike[str]] = (),
) -> Any:
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
        seed: Generation seed of the reference agent's model calls (not the case seed, which no
            agent is given).
        cases: Cases the self-test agents answer.
        paraphrase_groups: More cases for the self-test agents.
        options: Further keyword arguments for the reference agent's ``make_agent`` or a
            ``module:function`` factory (e.g. ``{"synthesis_max_tokens": 256}``).
        in_process: Build a Python agent in this process.
        timeout_s: Per-request timeout of a hosted or HTTP agent.
        hide: Paths a hosted agent must not read (its mount namespace covers them).

    Returns:
        The agent.

    Raises:
        EvalcoreError: An unknown or unloadable specification.
    """
    kw: dict[str, Any] = dict(options or {})
    if spec == "reference":
        kw = {
            "model": "local:smollm2" if model is None else (None if model.lower() == "none" else model),
            "seed": seed,
            "threshold": 0.6 if threshold is None else threshold,
            **kw,
        }
        return load_agent("reference", in_process=in_process, timeout_s=timeout_s, hide=hide, **kw)
    if spec in SELF_TEST_AGENTS:
        kw.update(
            cases=[c.to_dict() for c in cases or []], groups=[[c.to_dict() for c in g] for g in paraphrase_groups]
        )
        return load_agent(
            f"evalcore.agent_eval._oracle:make_{spec}", in_process=in_process, timeout_s=timeout_s, hide=hide, **kw
        )
    if ":" in spec:
        if threshold is not None:
            kw["threshold"] = threshold
        return load_agent(spec, in_process=in_process, timeout_s=timeout_s, hide=hide, **kw)
    raise EvalcoreError(
        f"unknown agent {spec!r}: use reference, oracle, honest, wrong, failing, module:function or http://…",
        field="agent",
    )


def agent_eval_records(result: EvaluationResult) -> list[dict[str, Any]]:
    """One row per category run, in run order: ``category``, ``score``, ``passed``, ``weight``
    (its weight in the overall score), ``tests``, ``tests_passed``, ``critical_failures`` and
    ``seconds``."""
    return [
        {
            "category": name,
            "score": cat.score,
            "passed": cat.passed,
            "weight": result.weights_used[name],
            "tests": len(cat.tests),
            "tests_passed": sum(t.passed for t in cat.tests),
            "critical_failures": len(cat.critical_failures),
            "seconds": cat.duration_s,
        }
        for name, cat in result.categories.items()
    ]


def case_records(result: EvaluationResult, category: str | None = None) -> list[dict[str, Any]]:
    """One row per test (of ``category``, or of every category run): ``category``, ``test``,
    ``score``, ``passed``, ``critical``, ``seconds`` and ``why`` (the reason it scored low; text
    the agent sent is made printable: a lone surrogate becomes its escape, so a notebook that
    shows the rows can still be saved as UTF-8)."""
    from evalcore.agent_eval._output import printable

    return [
        {
            "category": name,
            "test": printable(t.name),
            "score": t.score,
            "passed": t.passed,
            "critical": t.critical,
            "seconds": t.duration_s,
            "why": printable(t.error),
        }
        for name, cat in result.categories.items()
        if category in (None, name)
        for t in cat.tests
    ]
