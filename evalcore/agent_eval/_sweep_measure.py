"""The threshold sweep's measurement of one threshold: serve the cases, label the registered tools
by behaviour, search every item (see :mod:`evalcore.agent_eval._sweep` for the definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore import metrics
from evalcore.agent_eval._calling import call_agent, is_correct
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._measure import ToolChecker, answering_step, infer_binding
from evalcore.agent_eval._observed import ToolRecord, registry_snapshot
from evalcore.errors import EvalcoreError


def _matches(registry: Any, query: str, k: int, threshold: float) -> list[str]:
    """Names of the search's matches with score ≥ ``threshold`` (checked here, not trusted)."""
    from evalcore.agent_eval._categories.retrieval import MalformedSearch, _search

    try:
        ranked = _search(registry, query, k, threshold)
    except MalformedSearch as exc:
        raise EvalcoreError(f"the agent's registry.{exc}", field="agent") from exc
    return [name for name, score in ranked if score >= threshold]


N_LABEL_REQUESTS = 4
"""Held-out requests per kind that a tool must answer to be relevant to the kind's cases."""


def behaviour_labels(
    tools: dict[str, ToolRecord],
    cases: Sequence[AgentCase],
    held_out: dict[str, list[dict[str, Any]]],
    observed: dict[tuple[str, str], dict[str, Any]],
    checker: ToolChecker,
    verdicts: dict[tuple[Any, ...], bool],
) -> dict[str, set[str]]:
    """Relevant tools per kind, by behaviour: a registered tool is relevant to a kind when the
    evaluator ran it in the sandbox on the kind's held-out requests (inputs no case used, drawn
    from a secret seed) and it answered every one of them rightly (bound as the agent bound it
    when it used the tool on a case of that kind, else by its signature). Its name counts for
    nothing: an agent that registered junk tools named like the kinds only while a sweep ran
    looked perfect when a tool named like the kind was relevant.

    Args:
        tools: The registry after the cases were served.
        cases: The sweep's cases (their kinds are labelled).
        held_out: Held-out inputs per kind.
        observed: ``(tool, kind)`` → ``{"args", "inputs"}`` of a step in which the agent used it.
        checker: Runs the tools.
        verdicts: Cache of verdicts by (code hash, name, kind, binding), kept across thresholds.

    Returns:
        Kind → the names of its relevant tools (absent: none).
    """
    labels: dict[str, set[str]] = {}
    for kind in dict.fromkeys(c.kind for c in cases):
        inputs = held_out.get(kind) or []
        for name, record in tools.items():
            if not inputs or record.code is None:
                continue
            seen = observed.get((name, kind))
            binding = infer_binding(seen["args"], kind, seen["inputs"]) if seen is not None else None
            key = (record.hash, name, kind, repr(sorted(binding.items())) if binding else None)
            if key not in verdicts:
                verdicts[key] = all(checker.relevant(record, kind, binding, inputs))
            if verdicts[key]:
                labels.setdefault(kind, set()).add(name)
    return labels


def _serve(
    agent: Any, use: Sequence[AgentCase], request_timeout_s: float | None, bar: Any
) -> tuple[list[tuple[AgentCase, bool, Any, bool]], dict[tuple[str, str], dict[str, Any]]]:
    """Send every case once (one bar step each).

    Returns:
        Per case (case, answered correctly, response, critical), and per ``(tool, kind)`` the
        arguments and inputs of a step in which the agent used the tool (how it binds them).
    """
    observed: dict[tuple[str, str], dict[str, Any]] = {}
    answered = []
    for c in use:
        call = call_agent(agent, c.query, request_timeout_s)
        bar.update(1)
        ok = is_correct(call, c)
        r = call.response
        answered.append((c, ok, r, call.critical))
        for st in r.steps if r is not None and not c.is_multi_step else []:
            if st.tool and st.error is None and isinstance(st.args, dict):
                observed.setdefault((st.tool, c.kind), {"args": st.args, "inputs": c.inputs})
    return answered, observed


def _measured_synthesis(
    answered: list[tuple[AgentCase, bool, Any, bool]],
    at_reset: dict[str, ToolRecord],
    after: dict[str, ToolRecord],
    checker: ToolChecker,
) -> list[tuple[AgentCase, bool, bool, bool, bool]]:
    """Per case (case, correct, built, claimed synthesized, critical): ``built`` is measured,
    never the agent's flag: a case needing a new tool answered correctly by a tool registered
    (or rewritten) during the session that passes the evaluator's run on held-out inputs."""
    served = []
    for c, ok, r, critical in answered:
        built = False
        if c.needs_synthesis and ok and r is not None and r.tool_used:
            step = answering_step(r, r.tool_used)
            check = checker.verify(after.get(r.tool_used), c.kind, c.inputs, step.args if step is not None else None)
            before = at_reset.get(r.tool_used)
            built = check.passed and (before is None or before.hash != check.hash)
        served.append((c, ok, built, bool(r is not None and r.synthesized), critical))
    return served


def _case_row(
    t: float, c: AgentCase, split: str, served: tuple[Any, ...], labels: dict[str, set[str]], hits: list[str]
) -> dict[str, Any]:
    """One case's row at threshold ``t``: retrieval against the behaviour labels and utility
    ``0.5·correct + 0.5·F1`` (no relevant tool: ``0.5·correct + 0.5·(1 − any match)``)."""
    _c, ok, synthesized, claimed, critical = served
    if c.kind in labels:
        p, rcl, f1 = (float(x) for x in metrics.precision_recall_f1(hits, labels[c.kind]))
        fp, retrieval = np.nan, f1
    else:  # no tool of this kind exists: the right answer of the search is no match
        p, rcl, f1 = np.nan, np.nan, np.nan
        fp = float(bool(hits))
        retrieval = 1.0 - fp
    return {
        "threshold": t,
        "item": c.id,
        "split": split,
        "type": "case",
        "kind": c.kind,
        "needs_synthesis": c.needs_synthesis,
        "correct": float(ok),
        "synthesized": float(synthesized),
        "claimed_synthesized": float(claimed),
        "relevant": sorted(labels.get(c.kind, ())),
        "precision": p,
        "recall": rcl,
        "f1": f1,
        "false_positive": fp,
        "n_matches": len(hits),
        "critical": critical,
        "utility": 0.5 * float(ok) + 0.5 * retrieval,
    }


def _unrelated_row(t: float, iid: str, split: str, n_hits: int) -> dict[str, Any]:
    """One unrelated query's row at threshold ``t``: utility ``1 − false_positive``."""
    fp = float(bool(n_hits))
    return {
        "threshold": t,
        "item": iid,
        "split": split,
        "type": "unrelated",
        "kind": "",
        "needs_synthesis": False,
        "correct": np.nan,
        "synthesized": np.nan,
        "claimed_synthesized": np.nan,
        "relevant": [],
        "precision": np.nan,
        "recall": np.nan,
        "f1": np.nan,
        "false_positive": fp,
        "n_matches": n_hits,
        "critical": False,
        "utility": 1.0 - fp,
    }


@dataclass
class SweepPlan:
    """What every threshold of a sweep is measured on: the cases, the unrelated queries, the
    dev/held-out split, the held-out requests per kind, the checker and its verdict cache."""

    use: list[AgentCase]
    unrelated: list[str]
    split: dict[str, str]
    held_out: dict[str, list[dict[str, Any]]]
    checker: ToolChecker
    k: int
    request_timeout_s: float | None
    verdicts: dict[tuple[Any, ...], bool] = field(default_factory=dict)


def measure_threshold(agent: Any, t: float, plan: SweepPlan, bar: Any) -> list[dict[str, Any]]:
    """Measure one (fresh, reset) agent at threshold ``t``: serve every case, label the tools
    by behaviour, search every case and unrelated query; one row per item.

    Raises:
        EvalcoreError: The agent has no searchable registry, or a search breaks the protocol.
    """
    at_reset, _ = registry_snapshot(agent)
    answered, observed = _serve(agent, plan.use, plan.request_timeout_s, bar)
    after, _ = registry_snapshot(agent)
    served = _measured_synthesis(answered, at_reset, after, plan.checker)
    registry = getattr(agent, "registry", None)
    if registry is None or not callable(getattr(registry, "search", None)):
        raise EvalcoreError("the agent exposes no searchable registry; a threshold sweep needs one", field="agent")
    labels = behaviour_labels(after, plan.use, plan.held_out, observed, plan.checker, plan.verdicts)
    rows = []
    for s in served:
        c = s[0]
        rows.append(_case_row(t, c, plan.split[c.id], s, labels, _matches(registry, c.query, plan.k, t)))
    for i, q in enumerate(plan.unrelated):
        n_hits = len(_matches(registry, q, plan.k, t))
        iid = f"unrelated-{i:02d}"
        rows.append(_unrelated_row(t, iid, plan.split[iid], n_hits))
    return rows
