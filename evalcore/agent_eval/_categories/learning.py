"""Learning from use, from observed behaviour only: reuse, the learning curve, workflow patterns."""

from __future__ import annotations

import math
import random
import secrets
import statistics
from typing import TYPE_CHECKING, Any

from evalcore import metrics
from evalcore.agent_eval._calling import Call, call_agent, is_correct, reset_agent, snapshot
from evalcore.agent_eval._case_results import CategoryResult, make_test
from evalcore.agent_eval._cases.kinds import SYNTHESIZED_KINDS, VARIABLE_SLOTS, render_query, sample_inputs, solve_kind
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._categories._common import drawn_case
from evalcore.agent_eval._categories.workflow import score_workflow
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._measure import ToolChecker, answering_step, verify_steps
from evalcore.agent_eval._observed import ToolRecord

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _tool_of(call: Call) -> str | None:
    r = call.response
    return r.tool_used if r is not None and r.success and r.tool_used else None


def _learning_instances(data: AgentEvalData, config: AgentEvalConfig) -> list[list[AgentCase]]:
    """Per kind met for the first time: ``learning_repeats`` + 1 requests of that kind with
    different inputs (seeded by the run's seed; kinds of the paraphrase groups left out)."""
    used = {c.kind for g in data.paraphrase_groups for c in g}
    kinds = [k for k in SYNTHESIZED_KINDS if k not in used][: max(0, config.learning_kinds)]
    rng = random.Random(f"{config.seed}-learning")
    out: list[list[AgentCase]] = []
    for kind in kinds:
        seen: set[str] = set()
        row: list[AgentCase] = []
        for _ in range(200):
            if len(row) > max(1, config.learning_repeats):
                break
            x = sample_inputs(kind, rng)
            q = render_query(kind, x)
            if q in seen:
                continue
            seen.add(q)
            row.append(
                drawn_case(
                    f"learn-{kind}-{len(row)}",
                    kind,
                    x,
                    q,
                    solve_kind(kind, x),
                    complexity="medium",
                    category="learning",
                    tag="learning",
                )
            )
        out.append(row)
    return out


def evaluate_learning(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Learning from use, from observed behaviour only (no flag or self-report is believed).

    Tests:

    * ``reuse:<group>`` per paraphrase group whose first request adds a tool to the registry (a
      group answered with a tool the agent already had is noted, not scored): that tool must
      pass the evaluator's own run on held-out inputs of the kind; each later paraphrase
      scores when it is answered correctly with that same tool, its code hash unchanged and no
      tool added to the registry by the request.
    * ``learning_curve``: ``learning_kinds`` kinds met for the first time, each requested
      ``learning_repeats`` + 1 times with different inputs; every point of the curve (encounter
      number) holds one timing per kind, with a t-interval. Per kind the log ratio of the first
      timing to the median later one; their mean with a 95 % t-interval gives the improvement
      ``1 − exp(−mean)``. An interval that reaches 0 is *no improvement* (score 0: within
      noise). Otherwise score = ``min(1, improvement / learning_target)`` × the share of later
      requests answered correctly with the tool that the first request added to the registry
      (verified on held-out inputs, same code hash): a speed-up without a learned tool earns
      nothing, and a kind that gave no verified new tool on first sight is not repeated (its
      later requests could earn nothing); the curve is timed over the kinds that were learned.
    * ``patterns``: a dependent multi-step request that needs a tool of a kind the agent must
      build (one of ``SYNTHESIZED_KINDS``) sent ``pattern_repeats`` + 1 times; each repeat
      scores when it is right, runs the same tool sequence as the first right answer, every tool
      of it is registered with unchanged code, the registry did not grow, and the sequence holds
      a tool the agent added to its registry during the session (absent from the registry
      snapshot taken at the reset, or with other code). Repeating a sequence of tools the agent
      had from the start shows nothing learned: a stateless agent with built-in tools did so
      and once scored patterns 1.0. The tools are run, not read: a request is right only when
      the evaluator re-ran each step's registered tool on the step's arguments and got the
      step's result (:func:`verify_steps`), and every tool the sequence credits (added in the
      session) must pass a run on held-out inputs of the kind its step computes (tools that
      return None once scored 1.0 next to answers from the key), and so must every other tool
      of the sequence, whenever it was registered (identity relays present at the reset, fed
      answers computed elsewhere, once passed). Without such a request in the cases the test
      is not run (a note says so).

    Args:
        agent: The agent.
        data: Paraphrase groups and cases.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``reuse_rate``, ``learning_improvement`` (with
        ``learning_ci``), ``learning_curve`` (per encounter: mean, interval, n) and
        ``pattern_consistency``.
    """
    res = CategoryResult("learning", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    at_reset = snapshot(agent, res)  # the tools the agent starts the session with
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    reuse_flags: list[bool] = []
    for group in data.paraphrase_groups:
        flags = _reuse_test(agent, group, res, config, checker)
        if flags is not None:
            reuse_flags.extend(flags)
    improvement, ci, curve = _learning_curve_test(agent, _learning_instances(data, config), res, config, checker)
    consistency = _patterns_test(agent, data, res, config, checker, at_reset)
    res.metrics = {
        "reuse_rate": float(metrics.reuse_rate(reuse_flags)) if reuse_flags else None,
        "learning_improvement": improvement,
        "learning_ci": ci,
        "learning_curve": curve,
        "pattern_consistency": consistency,
    }
    return res


def _reuse_test(
    agent: Agent, group: list[AgentCase], res: CategoryResult, config: AgentEvalConfig, checker: ToolChecker
) -> list[bool] | None:
    """Send one paraphrase group and score its later paraphrases (see :func:`evaluate_learning`).

    Returns:
        One flag per later paraphrase (right, with the first request's verified, unchanged tool
        and no tool added), or None when the first request used a tool the agent already had
        (noted, not scored).
    """
    calls: list[Call] = []
    snaps: list[dict[str, ToolRecord]] = [snapshot(agent, res)]
    for c in group:
        calls.append(call_agent(agent, c.query, config.request_timeout_s))
        snaps.append(snapshot(agent, res))
    tool = _tool_of(calls[0])
    check = None
    if tool is not None and tool in snaps[0] and tool in snaps[1] and snaps[0][tool].hash == snaps[1][tool].hash:
        res.notes.append(
            f"reuse:{group[0].paraphrase_group}: the first request used {tool!r}, a tool the agent "
            "had before the group; reusing it says nothing about learning (not scored)"
        )
        return None
    if tool is not None and is_correct(calls[0], group[0]):
        step = answering_step(calls[0].response, tool)
        check = checker.verify(
            snaps[1].get(tool) if tool is not None else None,
            group[0].kind,
            group[0].inputs,
            step.args if step is not None else None,
        )
    flags: list[bool] = []
    for j in range(1, len(group)):
        ok = (
            tool is not None
            and check is not None
            and check.passed
            and is_correct(calls[j], group[j])
            and _tool_of(calls[j]) == tool
            and snaps[j + 1].get(tool) is not None
            and snaps[j + 1][tool].hash == check.hash
            and set(snaps[j + 1]) == set(snaps[j])
        )
        flags.append(ok)
    crit = [cl.exception for cl in calls if cl.critical]
    err = (
        crit[0]
        if crit
        else (
            None
            if all(flags)
            else "first tool not verified on held-out inputs"
            if check is None or not check.passed
            else "a paraphrase was not answered with the same, unchanged tool"
        )
    )
    res.tests.append(
        make_test(
            f"reuse:{group[0].paraphrase_group}",
            sum(flags) / len(flags) if flags else 0.0,
            threshold=config.pass_threshold,
            critical=bool(crit),
            error=err,
            details={
                "first_tool": tool,
                "check": check.to_dict() if check else None,
                "calls": [cl.summary() for cl in calls],
                "reused_correctly": flags,
            },
        )
    )
    return flags


def _learn_kind(
    agent: Agent, row: list[AgentCase], res: CategoryResult, config: AgentEvalConfig, checker: ToolChecker
) -> tuple[list[Call], list[bool] | None, dict[str, Any]]:
    """One kind of the learning curve: its first request, and its later ones only when the first
    added a tool that passed the evaluator's run on held-out inputs.

    Returns:
        The calls, the later requests' reuse flags (None when nothing was learned on first
        sight, so the later requests were not sent) and the kind's record for the details.
    """
    before = snapshot(agent, res)
    calls = [call_agent(agent, row[0].query, config.request_timeout_s)]
    after = snapshot(agent, res)
    tool = _tool_of(calls[0])
    new_tool = tool is not None and tool in after and (tool not in before or before[tool].hash != after[tool].hash)
    check = None
    if new_tool and is_correct(calls[0], row[0]):
        step = answering_step(calls[0].response, tool)
        check = checker.verify(
            after.get(tool) if tool is not None else None,
            row[0].kind,
            row[0].inputs,
            step.args if step is not None else None,
        )
    if check is None or not check.passed:
        # nothing learned on first sight: later requests cannot earn credit, so they are not sent
        record: dict[str, Any] = {
            "kind": row[0].kind,
            "queries": [row[0].query],
            "timings_s": [calls[0].elapsed_s],
            "new_tool": tool if new_tool else None,
            "verified": False,
            "reused": [],
        }
        return calls, None, record
    reused: list[bool] = []
    for case in row[1:]:
        prev = after
        calls.append(call_agent(agent, case.query, config.request_timeout_s))
        after = snapshot(agent, res)
        reused.append(
            bool(
                check is not None
                and check.passed
                and is_correct(calls[-1], case)
                and _tool_of(calls[-1]) == tool
                and tool in after
                and after[tool].hash == check.hash
                and set(after) == set(prev)
            )
        )
    record = {
        "kind": row[0].kind,
        "queries": [c.query for c in row],
        "timings_s": [cl.elapsed_s for cl in calls],
        "new_tool": tool if new_tool else None,
        "verified": bool(check is not None and check.passed),
        "reused": reused,
    }
    return calls, reused, record


def _curve_points(times: list[list[float]]) -> list[dict[str, Any]]:
    """Per encounter (1, 2, …) the mean timing over the learned kinds, with a t-interval."""
    from evalcore.stats import mean_ci

    curve: list[dict[str, Any]] = []
    n_points = min(len(t) for t in times) if times else 0
    for e in range(n_points):
        col = [t[e] for t in times]
        m = mean_ci(col, method="t") if len(col) >= 2 else {"mean": col[0], "ci_low": None, "ci_high": None}
        curve.append(
            {"encounter": e + 1, "mean_s": m["mean"], "ci_low": m["ci_low"], "ci_high": m["ci_high"], "n": len(col)}
        )
    return curve


def _curve_score(
    times: list[list[float]], learned: list[float], n_rows: int, config: AgentEvalConfig
) -> tuple[float, str | None, float | None, list[float] | None]:
    """Score the learning curve: improvement ``1 − exp(−mean log ratio)`` of the first timing to
    the median later one, with a 95 % t-interval; 0 when the interval reaches 0, else
    ``min(1, improvement / learning_target)`` × the mean share of learned reuse.

    Returns:
        The score, why it failed (or None), the improvement and its interval.
    """
    from evalcore.stats import mean_ci

    improvement = ci = None
    ratios = [math.log(max(t[0], 1e-9) / max(statistics.median(t[1:]), 1e-9)) for t in times if len(t) > 1]
    score, err = 0.0, None
    if len(ratios) >= 2:
        fit = mean_ci(ratios, method="t")
        improvement = 1.0 - math.exp(-fit["mean"])
        ci = [1.0 - math.exp(-fit["ci_low"]), 1.0 - math.exp(-fit["ci_high"])] if math.isfinite(fit["ci_low"]) else None
        if ci is None or ci[0] <= 0:
            err = "no improvement: the speed-up is within noise (its 95% interval reaches 0)"
        else:
            score = min(1.0, improvement / config.learning_target) * (sum(learned) / len(learned))
            if score < config.pass_threshold:
                err = "faster, but later requests did not reuse a tool learned on first sight"
    elif len(times) < n_rows:
        err = (
            f"{n_rows - len(times)} of {n_rows} kinds gave no tool on first sight that the evaluator "
            "could verify on held-out inputs; fewer than two learned kinds leave nothing to time"
        )
    else:
        err = "fewer than two kinds: no interval"
    return score, err, improvement, ci


def _learning_curve_test(
    agent: Agent, rows: list[list[AgentCase]], res: CategoryResult, config: AgentEvalConfig, checker: ToolChecker
) -> tuple[float | None, list[float] | None, list[dict[str, Any]]]:
    """Run the ``learning_curve`` test (see :func:`evaluate_learning`) when there are kinds to
    learn and repeats to time.

    Returns:
        The improvement, its interval and the curve (None, None, [] when not run).
    """
    if not rows or config.learning_repeats < 1:
        return None, None, []
    times: list[list[float]] = []
    learned: list[float] = []
    per_kind: list[dict[str, Any]] = []
    crit_l: list[str] = []
    for row in rows:
        calls, reused, record = _learn_kind(agent, row, res, config, checker)
        crit_l += [cl.exception or "" for cl in calls if cl.critical]
        if reused is None:
            learned.append(0.0)
        else:
            times.append([cl.elapsed_s for cl in calls])
            learned.append(sum(reused) / len(reused) if reused else 0.0)
        per_kind.append(record)
    curve = _curve_points(times)
    score, err, improvement, ci = _curve_score(times, learned, len(rows), config)
    if len(times) < 5:
        res.notes.append(
            f"the learning curve timed {len(times)} learned kind(s) of {len(rows)}; at least 5 give a reliable interval"
        )
    res.tests.append(
        make_test(
            "learning_curve",
            score,
            threshold=config.pass_threshold,
            critical=bool(crit_l),
            error=crit_l[0] if crit_l else err,
            details={
                "curve": curve,
                "improvement": improvement,
                "improvement_ci": ci,
                "learned_share": learned,
                "kinds": per_kind,
            },
        )
    )
    return improvement, ci, curve


def _pattern_case(data: AgentEvalData, res: CategoryResult) -> AgentCase | None:
    """The dependent multi-step request the ``patterns`` test repeats: one that needs a tool of
    a kind the agent must build (None, with a note when dependent requests exist, otherwise)."""
    dep = [
        c
        for c in data.cases
        if "dependent" in c.tags
        and c.expected_behavior == "answer"
        and any(st.tool in SYNTHESIZED_KINDS for st in c.steps)
    ]
    if not dep and any("dependent" in c.tags for c in data.cases):
        res.notes.append(
            "patterns not scored: no dependent multi-step request needs a tool the agent must build "
            "(a sequence of the tools it starts with shows nothing learned)"
        )
    return dep[0] if dep else None


def _held_out_sequence(
    case: AgentCase, seq: list[str], hashes: dict[str, str | None], snap: dict[str, ToolRecord], checker: ToolChecker
) -> dict[str, Any]:
    """Run every tool of the sequence, whenever registered (a relay present at the reset too),
    on held-out inputs of the kind its step computes; tool name → the check's record."""
    held_out: dict[str, Any] = {}
    rng = random.Random(secrets.randbits(64))
    for i, t in enumerate(seq):
        if t in hashes and t not in held_out and i < len(case.steps) and case.steps[i].tool in VARIABLE_SLOTS:
            kind = case.steps[i].tool
            check = checker.verify(snap.get(t), kind, sample_inputs(kind, rng), None)
            held_out[t] = check.to_dict()
    return held_out


def _pattern_repeats(
    agent: Agent,
    case: AgentCase,
    res: CategoryResult,
    config: AgentEvalConfig,
    checker: ToolChecker,
    at_reset: dict[str, ToolRecord],
) -> tuple[list[Call], list[dict[str, ToolRecord]], list[list[str]], list[list[bool]], list[bool]]:
    """Send the request ``pattern_repeats`` + 1 times; a repeat is right only when the evaluator
    re-ran every step's registered tool on the step's arguments and got the step's result (the
    trace is not taken as reported).

    Returns:
        The calls, the registry snapshots (before the first, after each), each call's tool
        sequence, which of its steps the evaluator executed, and whether it was right.
    """
    calls, snaps = [], [snapshot(agent, res)]
    for _ in range(max(1, config.pattern_repeats) + 1):
        calls.append(call_agent(agent, case.query, config.request_timeout_s))
        snaps.append(snapshot(agent, res))
    seqs = [[s.tool for s in cl.response.steps] if cl.response is not None else [] for cl in calls]
    executed = [
        [bool(v["executed"]) for v in verify_steps(cl.response, case, snaps[i], snaps[i + 1], at_reset, checker)]
        for i, cl in enumerate(calls)
    ]
    right = []
    for cl, ran in zip(calls, executed, strict=True):
        sw = score_workflow(case, cl.response, config, executed=ran) if cl.response is not None else None
        right.append(sw is not None and sw["final"] == 1.0 and sw["steps"] == 1.0)
    return calls, snaps, seqs, executed, right


def _patterns_test(
    agent: Agent,
    data: AgentEvalData,
    res: CategoryResult,
    config: AgentEvalConfig,
    checker: ToolChecker,
    at_reset: dict[str, ToolRecord],
) -> float | None:
    """Run the ``patterns`` test (see :func:`evaluate_learning`); its consistency, or None when
    no request fits."""
    case = _pattern_case(data, res)
    if case is None:
        return None
    calls, snaps, seqs, executed, right = _pattern_repeats(agent, case, res, config, checker, at_reset)
    first = next((i for i, ok in enumerate(right) if ok), None)
    flags = []
    held_out: dict[str, Any] = {}
    added: list[str] = []
    if first is not None:
        seq = seqs[first]
        hashes = {t: snaps[first + 1][t].hash for t in seq if t in snaps[first + 1]}
        # tools of the sequence the agent added (or rewrote) during the session
        added = [t for t in dict.fromkeys(seq) if t in hashes and (t not in at_reset or at_reset[t].hash != hashes[t])]
        held_out = _held_out_sequence(case, seq, hashes, snaps[first + 1], checker)
        verified = bool(added) and all(t in held_out and held_out[t]["passed"] for t in dict.fromkeys(seq))
        for j in range(first + 1, len(calls)):
            flags.append(
                bool(
                    right[j]
                    and seqs[j] == seq
                    and len(hashes) == len(set(seq))
                    and seq
                    and added
                    and verified
                    and all(t in snaps[j + 1] and snaps[j + 1][t].hash == hashes[t] for t in seq)
                    and set(snaps[j + 1]) == set(snaps[j])
                )
            )
    consistency = sum(flags) / len(flags) if flags else 0.0
    crit = [cl.exception for cl in calls if cl.critical]
    failed = [t for t, c in held_out.items() if not c["passed"]]
    err = (
        crit[0]
        if crit
        else None
        if consistency >= config.pass_threshold
        else f"tools credited by the sequence failed on held-out inputs: {failed}"
        if failed
        else "repeats did not run the same registered tools rightly"
    )
    res.tests.append(
        make_test(
            "patterns",
            consistency,
            threshold=config.pass_threshold,
            critical=bool(crit),
            error=err,
            details={
                "query": case.query,
                "step_tools": seqs,
                "right": right,
                "executed": executed,
                "repeats": len(calls),
                "held_out": held_out,
                "added_in_session": added if first is not None else [],
            },
        )
    )
    return consistency
