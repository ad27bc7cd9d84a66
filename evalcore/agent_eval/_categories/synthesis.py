"""Tool synthesis, measured and credited per request: the evaluator runs the registered code of
the tool that answered, and a tool counts only for the request it was built for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalcore.agent_eval._calling import call_agent, is_correct, reset_agent, snapshot
from evalcore.agent_eval._case_results import CaseResult, CategoryResult, make_test
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._cases.specs import SPEC_KIND, parse_spec
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._measure import Check, ToolChecker, answering_step
from evalcore.agent_eval._observed import ToolRecord
from evalcore.agent_eval._quality import code_quality, test_quality

#: A synthesized tool's test score: base + code · code quality + tests · test quality.
SYNTHESIS_BASE, SYNTHESIS_CODE, SYNTHESIS_TESTS = 0.3, 0.2, 0.5

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _quality(record: ToolRecord, config: AgentEvalConfig) -> dict[str, Any]:
    """Code quality read from the code; test quality measured by running the tests against the
    code and against mutants of it in the sandbox (:func:`test_quality`)."""
    cq = code_quality(record.code)
    tq = test_quality(record.tests, record.name, record.code, timeout_s=config.sandbox_timeout_s)
    return {"code_quality": cq, "test_quality": tq, "tests_pass": bool(tq["passes"])}


def synthesis_cases(data: AgentEvalData, config: AgentEvalConfig) -> list[AgentCase]:
    """The requests of the category: the specs drawn for the run (``data.specs``) and any case
    hinted ``synthesis`` (first ``config.limit`` of them together)."""
    cases = list(data.specs) + data.for_category("synthesis")
    return cases[: config.limit] if config.limit is not None else cases


def _verify(checker: ToolChecker, record: ToolRecord | None, case: AgentCase, args: dict[str, Any] | None) -> Check:
    if case.kind == SPEC_KIND:
        parsed = parse_spec(case.query)
        if parsed is None:
            return Check(
                record.name if record else "",
                case.kind,
                record.hash if record else None,
                False,
                error="the spec cannot be read from the request",
            )
        return checker.verify_spec(record, parsed[0], case.inputs, args)
    return checker.verify(record, case.kind, case.inputs, args)


def evaluate_synthesis(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Tool synthesis, measured: a tool counts for a request only when it was built for it.

    The requests (:func:`synthesis_cases`) are specs drawn for the run from its seed (a tool to
    write under a drawn name that applies a drawn composition of integer operations with drawn
    constants, :mod:`evalcore.agent_eval._cases.specs`), so that no library written in advance
    answers them, and any case hinted ``synthesis``. For each, the tool that answered
    (``tool_used``) is read from the registry right after the request and counts as
    *synthesized* for it only when all of these hold:

    * it **appeared after that request**: absent from (or with other code in) the registry
      snapshot taken just before it (not the one at the reset: a tool registered at an earlier
      request, or every tool registered at the first, is not synthesized for a later one);
    * it was **built for it**: the evaluator runs it in the sandbox on the request's inputs and
      on ``n_held_out`` held-out inputs of the request's spec (for a spec: called with ``x``
      alone; a tool passed the steps or constants is a generic one told what to compute) and
      every output is right;
    * it is **not a tool that already answered another request** of the category (by name or
      by code hash), credited or not.

    Flags the agent sets (``synthesized``, ``reused``) are recorded, never believed.

    Test score = ``0.3 + 0.2·code_quality + 0.5·test_quality`` for a synthesized tool, else 0;
    test quality is measured by running the tool's tests against it and against mutants of it
    (:func:`~evalcore.agent_eval._quality.test_quality`). Half the credit is the tests': a right
    tool whose tests tell none of its mutants from it (self-checking, site-less, introspecting
    tests) scores at most 0.5 + 0.5·test quality, under the pass threshold below a test quality of
    0.4 (issue 37).

    What the category can tell apart: a tool written after the request that computes the spec
    on inputs the agent never saw, from a tool present before it, a generic tool given the spec
    as arguments, a table of seen inputs, and a tool reused across requests. What it cannot:
    *how* the tool was written (a model, a template filled from the parsed spec, a human), nor
    whether the agent planned it before the request beyond what the drawn spec allows; an agent
    that parses the spec and fills a template is credited, since the tool does compute the spec.

    Args:
        agent: The agent.
        data: The drawn specs (``data.specs``) and cases hinted ``synthesis``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``synthesis_rate``, ``n_synthesized``,
        ``mean_code_quality``, ``mean_test_quality``, ``n_cases``.
    """
    res = CategoryResult("synthesis", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    seen: tuple[set[str], set[str]] = (set(), set())  # names and code hashes that answered a request
    successes: list[float] = []
    code_q: list[float] = []
    test_q: list[float] = []
    for case in synthesis_cases(data, config):
        test, q = _synthesis_test(agent, res, case, config, checker, seen)
        if q is not None:
            code_q.append(q["code_quality"]["score"])
            test_q.append(q["test_quality"]["score"])
        successes.append(float(q is not None))
        res.tests.append(test)
    res.metrics = {
        "synthesis_rate": sum(successes) / len(successes) if successes else 0.0,
        "n_synthesized": len(code_q),
        "mean_code_quality": sum(code_q) / len(code_q) if code_q else None,
        "mean_test_quality": sum(test_q) / len(test_q) if test_q else None,
        "n_cases": len(successes),
    }
    if successes and not any(successes):
        res.notes.append(
            "no tool was credited: none was both new at its request and verified on held-out inputs "
            "of that request's spec"
        )
    return res


def _synthesis_test(
    agent: Agent,
    res: CategoryResult,
    case: AgentCase,
    config: AgentEvalConfig,
    checker: ToolChecker,
    seen: tuple[set[str], set[str]],
) -> tuple[CaseResult, dict[str, Any] | None]:
    """Send one synthesis request and score it (see :func:`evaluate_synthesis`).

    Returns:
        The test, and the tool's code and test quality when the tool counts as synthesized
        (None otherwise).
    """
    before = snapshot(agent, res)
    call = call_agent(agent, case.query, config.request_timeout_s)
    r = call.response
    correct = is_correct(call, case)
    details: dict[str, Any] = {
        "case_id": case.id,
        "kind": case.kind,
        "expected": case.expected,
        **call.summary(),
        "correct": correct,
    }
    score, err, q = 0.0, None, None
    name = r.tool_used if r is not None and r.success and isinstance(r.tool_used, str) else None
    if call.critical:
        err = f"exception escaped the agent: {call.exception}"
    elif not correct:
        err = "no correct result" + (f": {r.error}" if r is not None and r.error else "")
    elif not name:
        err = "correct result but no tool named as used"
    else:
        err, q = _judge_tool(agent, res, case, r, name, before, checker, config, seen, details)
        if q is not None:
            score = SYNTHESIS_BASE + SYNTHESIS_CODE * q["code_quality"]["score"]
            score += SYNTHESIS_TESTS * q["test_quality"]["score"]
    details["measured"] = "synthesized" if q is not None else None
    test = make_test(
        case.id,
        score,
        threshold=config.pass_threshold,
        critical=call.critical,
        error=err,
        duration_s=call.elapsed_s,
        details=details,
    )
    return test, q


def _judge_tool(
    agent: Agent,
    res: CategoryResult,
    case: AgentCase,
    response: Any,
    name: str,
    before: dict[str, ToolRecord],
    checker: ToolChecker,
    config: AgentEvalConfig,
    seen: tuple[set[str], set[str]],
    details: dict[str, Any],
) -> tuple[str | None, dict[str, Any] | None]:
    """Whether the tool ``name`` that rightly answered ``case`` was synthesized for it: in the
    registry with code, new or rewritten at this request, not one that answered another
    request, and verified by the evaluator on held-out inputs of the request's spec.

    Returns:
        Why it does not count (None when it does), and its code and test quality when it does.
    """
    tools = snapshot(agent, res)
    record = tools.get(name)
    prior = before.get(name)
    err, q = None, None
    answered_names, answered_hashes = seen
    if record is None:
        err = f"answered with {name!r}, which is not in the agent's registry"
    elif record.code is None:
        err = f"the registry holds no code for {name!r}: the evaluator has nothing to run"
    elif name in answered_names or (record.hash is not None and record.hash in answered_hashes):
        err = (
            f"answered with {name!r}, a tool that already answered another request of the category: "
            "it was not built for this one"
        )
    elif prior is not None and prior.hash == record.hash:
        err = (
            f"answered with {name!r}, a tool in the registry before this request (unchanged): "
            "nothing was synthesized for it"
        )
    else:
        step = answering_step(response, name)
        check = _verify(checker, record, case, step.args if step is not None else None)
        details["check"] = check.to_dict()
        if not check.passed:
            err = f"the evaluator ran tool {name!r} on held-out inputs of this request's spec: {check.error}"
        else:
            q = _quality(record, config)
            details.update(q)
    if record is not None:
        answered_names.add(name)
        if record.hash is not None:
            answered_hashes.add(record.hash)
    return err, q
