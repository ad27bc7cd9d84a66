"""Multi-step requests: final answer, every step's answer, data passed between steps, planning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalcore._io import to_json_native
from evalcore.agent_eval._calling import call_agent, reset_agent, snapshot
from evalcore.agent_eval._case_results import CategoryResult, make_test
from evalcore.agent_eval._cases.kinds import STARTER_KINDS
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._config import DEFAULT_TOOL_ALIASES, AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._matching import values_match
from evalcore.agent_eval._measure import ToolChecker, verify_steps
from evalcore.agents import AgentResponse, StepRecord

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _tool_matches(actual: str, expected: str, aliases: Sequence[str] = ()) -> bool:
    if actual == expected or (actual and actual in aliases):
        return True
    if expected in STARTER_KINDS:
        return False
    starter_names = set(STARTER_KINDS) | {a for k in STARTER_KINDS for a in DEFAULT_TOOL_ALIASES.get(k, ())}
    return bool(actual) and actual not in starter_names


def _arg_values(args: Any) -> list[Any]:
    out: list[Any] = []
    stack = [args]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


def score_workflow(
    case: AgentCase,
    response: AgentResponse | None,
    config: AgentEvalConfig | None = None,
    executed: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """Score one multi-step response.

    Components: ``final`` (the overall result matches, 0/1), ``steps`` (share of expected steps
    whose result matches, compared by position), ``dataflow`` (share of expected dependencies
    j←i where the agent's step j lists i in ``depends_on`` and one of its arguments equals step
    i's expected result), ``planning`` (1 when the agent ran exactly the expected number of steps
    with the expected tools in order: a starter kind matches its name or an alias from
    ``config``, a synthesized kind any tool that is not a starter tool).
    ``score = 0.4·final + 0.3·steps + 0.15·dataflow + 0.15·planning``, weights renormalized when
    the case has no dependencies.

    With ``executed`` (one flag per reported step, from :func:`~evalcore.agent_eval._measure.verify_steps`:
    the evaluator ran the step's registered tool on its arguments and got its result) a step the
    evaluator could not reproduce counts for nothing in ``steps``, ``dataflow`` and
    ``planning``: the trace is the agent's report, believed only where it was re-run.
    :func:`evaluate_workflow` always passes it; without it the trace is taken as reported.

    Args:
        case: The multi-step case.
        response: The agent's response (None when it raised).
        config: Settings (tool aliases); default :class:`AgentEvalConfig`.
        executed: Per reported step, whether the evaluator reproduced it (None: not checked).

    Returns:
        Dict of the components and ``score``.
    """
    config = config or AgentEvalConfig()
    if response is None or not response.success:
        return {
            "score": 0.0,
            "final": 0.0,
            "steps": 0.0,
            "dataflow": 0.0 if _n_deps(case) else None,
            "planning": 0.0,
            "step_results": [],
        }
    steps: list[StepRecord] = list(response.steps or [])
    ran = [True] * len(steps) if executed is None else [bool(x) for x in executed] + [False] * len(steps)
    final = float(values_match(response.result, case.expected, case.rel_tol, case.abs_tol))
    step_ok = [
        i < len(steps)
        and ran[i]
        and steps[i].error is None
        and values_match(steps[i].result, s.expected, case.rel_tol, max(case.abs_tol, 1e-6))
        for i, s in enumerate(case.steps)
    ]
    deps_ok, deps_total = _dataflow(case, steps, ran)
    planning = float(
        len(steps) == len(case.steps)
        and all(ran[: len(steps)])
        and all(_tool_matches(a.tool, e.tool, config.aliases(e.tool)) for a, e in zip(steps, case.steps, strict=True))
    )
    comp: dict[str, Any] = {
        "final": final,
        "steps": sum(step_ok) / len(step_ok) if step_ok else final,
        "dataflow": deps_ok / deps_total if deps_total else None,
        "planning": planning,
    }
    w = {"final": 0.4, "steps": 0.3, "dataflow": 0.15, "planning": 0.15}
    if comp["dataflow"] is None:
        del w["dataflow"]
    total = sum(w.values())
    comp["score"] = sum(w[key] * float(comp[key]) for key in w) / total
    comp["step_results"] = [to_json_native(s.result) for s in steps]
    comp["step_tools"] = [s.tool for s in steps]
    if executed is not None:
        comp["steps_executed"] = ran[: len(steps)]
    return comp


def _dataflow(case: AgentCase, steps: list[StepRecord], ran: list[bool]) -> tuple[int, int]:
    """The expected dependencies j←i that the agent's (reproduced) step j shows: it lists i in
    ``depends_on`` and one of its arguments equals step i's expected result; returns how many
    of them, and how many are expected."""
    deps_total = deps_ok = 0
    for j, s in enumerate(case.steps):
        for i in s.depends_on:
            deps_total += 1
            if j < len(steps) and ran[j] and i < len(steps) and ran[i] and i in (steps[j].depends_on or []):
                if any(
                    values_match(v, case.steps[i].expected, case.rel_tol, max(case.abs_tol, 1e-6))
                    for v in _arg_values(steps[j].args)
                ):
                    deps_ok += 1
    return deps_ok, deps_total


def _n_deps(case: AgentCase) -> int:
    return sum(len(s.depends_on) for s in case.steps)


def evaluate_workflow(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Multi-step requests: final answer, every step's answer, data passed between dependent
    steps, and planning (see :func:`score_workflow`).

    The trace is checked, not believed (:func:`~evalcore.agent_eval._measure.verify_steps`): the
    evaluator reads the registry before and after each request and runs every reported step's
    registered tool on the step's arguments; a step it cannot reproduce earns nothing. (An
    agent with no tool at all that computed the answers itself and reported a fabricated trace
    once scored 1.0 here.)

    Args:
        agent: The agent.
        data: Cases hinted ``workflow``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``final_accuracy``, ``step_accuracy``,
        ``dataflow_accuracy``, ``planning_accuracy``.
    """
    res = CategoryResult("workflow", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    at_reset = snapshot(agent, res)
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    comps: list[dict[str, Any]] = []
    for case in data.for_category("workflow", config.limit):
        before = snapshot(agent, res)
        call = call_agent(agent, case.query, config.request_timeout_s)
        trace: list[dict[str, Any]] = []
        if call.response is not None and call.response.success:
            trace = verify_steps(call.response, case, before, snapshot(agent, res), at_reset, checker)
        comp = score_workflow(case, call.response, config, [t["executed"] for t in trace])
        comp["trace_check"] = trace
        comps.append(comp)
        err = (
            f"exception escaped the agent: {call.exception}"
            if call.critical
            else None
            if comp["score"] >= config.pass_threshold
            else "steps, data flow or plan do not match"
        )
        res.tests.append(
            make_test(
                case.id,
                comp["score"],
                threshold=config.pass_threshold,
                critical=call.critical,
                error=err,
                duration_s=call.elapsed_s,
                details={
                    "case_id": case.id,
                    "expected": case.expected,
                    "expected_steps": [s.__dict__ for s in case.steps],
                    **call.summary(),
                    **comp,
                },
            )
        )

    def avg(key: str) -> float | None:
        vals = [c[key] for c in comps if c.get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    res.metrics = {
        "final_accuracy": avg("final"),
        "step_accuracy": avg("steps"),
        "dataflow_accuracy": avg("dataflow"),
        "planning_accuracy": avg("planning"),
        "n_cases": len(comps),
    }
    return res
