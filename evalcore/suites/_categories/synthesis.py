"""Tool synthesis, measured: the evaluator runs the registered code of the tool that answered."""

from __future__ import annotations

from typing import Any

from evalcore.suites._calling import call_agent, is_correct, reset_agent, snapshot
from evalcore.suites._case_results import CategoryResult, make_test
from evalcore.suites._config import SuiteConfig, SuiteData
from evalcore.suites._measure import ToolChecker, ToolRecord, answering_step, run_tool_tests
from evalcore.suites._quality import code_quality, test_quality


def _quality(record: ToolRecord, config: SuiteConfig) -> dict[str, Any]:
    """Code and test quality of a tool whose code passed the evaluator's check; the tests count
    only when they run and pass against that code in the sandbox."""
    cq = code_quality(record.code)
    ran, detail = run_tool_tests(record.code, record.tests, timeout_s=config.sandbox_timeout_s)
    tq = test_quality(record.tests, record.name) if ran else {**test_quality(None), "not_run": detail}
    return {"code_quality": cq, "test_quality": tq, "tests_pass": ran, "tests_detail": detail}


def evaluate_synthesis(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Tool synthesis, measured: a tool counts when the evaluator ran its registered code.

    For each case (a kind of tool no starter tool covers) the tool that answered (``tool_used``,
    with the arguments of the step that used it) is read from the agent's registry and run by
    the evaluator in the sandbox on the request's inputs and on ``n_held_out`` held-out inputs of
    the same kind the agent never saw; every output must be right. It counts as *synthesized*
    when it was not in the registry (with that code) right after the reset, and as *reused* when
    it is the tool verified earlier in the category for the same kind with the same code hash.
    Flags the agent sets (``synthesized``, ``reused``) are recorded, never believed.

    Test score = ``success · (0.5 + 0.25·code_quality + 0.25·test_quality)``, qualities read
    only from code that passed (test quality only for tests that pass against it in the sandbox).

    Args:
        agent: The agent.
        data: Cases (those hinted ``synthesis``).
        config: Evaluation settings.

    Returns:
        The category result; metrics ``synthesis_rate``, ``n_synthesized``, ``n_reused``,
        ``mean_code_quality``, ``mean_test_quality``.
    """
    res = CategoryResult("synthesis", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    initial = snapshot(agent, res)
    verified: dict[str, str | None] = {}  # kind -> code hash of the tool verified for it
    successes: list[float] = []
    code_q: list[float] = []
    test_q: list[float] = []
    n_new = n_reused = 0
    for case in data.for_category("synthesis", config.limit):
        call = call_agent(agent, case.query, config.request_timeout_s)
        r = call.response
        correct = is_correct(call, case)
        details: dict[str, Any] = {"case_id": case.id, "kind": case.kind, "expected": case.expected,
                                   **call.summary(), "correct": correct}
        score, err, how = 0.0, None, None
        if call.critical:
            err = f"exception escaped the agent: {call.exception}"
        elif not correct:
            err = "no correct result" + (f": {r.error}" if r is not None and r.error else "")
        elif not r.tool_used:  # type: ignore[union-attr]
            err = "correct result but no tool named as used"
        else:
            tools = snapshot(agent, res)
            name = r.tool_used  # type: ignore[union-attr]
            record = tools.get(name)
            step = answering_step(r, name)
            check = checker.verify(record, case.kind, case.inputs, step.args if step is not None else None)
            details["check"] = check.to_dict()
            before = initial.get(name)
            if not check.passed:
                err = f"the evaluator ran tool {name!r} on held-out inputs: {check.error}"
            elif verified.get(case.kind) == check.hash:
                how = "reused"
            elif before is None or before.hash != check.hash:
                how = "synthesized"
            else:
                err = (f"answered with {name!r}, a tool the agent had before the test (unchanged since "
                       "the reset): nothing was synthesized")
            if how is not None:
                verified.setdefault(case.kind, check.hash)
                n_new += how == "synthesized"
                n_reused += how == "reused"
                q = _quality(record, config)  # type: ignore[arg-type]
                code_q.append(q["code_quality"]["score"])
                test_q.append(q["test_quality"]["score"])
                details.update(q)
                score = 0.5 + 0.25 * q["code_quality"]["score"] + 0.25 * q["test_quality"]["score"]
        details["measured"] = how
        successes.append(float(how is not None))
        res.tests.append(make_test(case.id, score, threshold=config.pass_threshold, critical=call.critical,
                                   error=err, duration_s=call.elapsed_s, details=details))
    res.metrics = {
        "synthesis_rate": sum(successes) / len(successes) if successes else 0.0,
        "n_synthesized": n_new, "n_reused": n_reused,
        "mean_code_quality": sum(code_q) / len(code_q) if code_q else None,
        "mean_test_quality": sum(test_q) / len(test_q) if test_q else None,
        "n_cases": len(successes),
    }
    if successes and not any(successes):
        res.notes.append("no tool was verified: the evaluator found no registered code that computes these "
                         "requests on held-out inputs")
    return res
