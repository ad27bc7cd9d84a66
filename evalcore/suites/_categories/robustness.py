"""Robustness: invalid, ambiguous and boundary requests."""

from __future__ import annotations

from typing import Any

from evalcore.suites._calling import Call, answer_test, call_agent, reset_agent
from evalcore.suites._case_results import CaseResult, CategoryResult, make_test
from evalcore.suites._cases.kinds import request_values
from evalcore.suites._cases.records import AgentCase
from evalcore.suites._config import SuiteConfig, SuiteData
from evalcore.suites._matching import is_clear_error, values_match


def evaluate_robustness(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Invalid, ambiguous and boundary requests.

    Raw score per case: ``error`` cases 1 when ``success`` is False with a clear error message
    (:func:`is_clear_error` with the case's ``error_terms``: it names the invalid value or the
    reason), 0 when it fails without one or claims success; ``clarification`` cases 1 when the
    agent asks for clarification (``success`` False) or fails with a clear error, 0 when it fails
    with a vague error or claims success (answering while asking is a guess); ``answer``
    (boundary) cases 1 when the
    result matches (their answers equal no value of the request, so echoing the input fails). An escaped
    exception scores 0 and is a critical failure.

    A failure without a clear message earns nothing (it once earned half): not answering is what
    every broken agent does too, and a fixed string such as ``"Error!!!"`` tells the user neither
    what was wrong nor what to change, so half credit for it rewarded nothing the category
    measures (the ``vague_errors`` gaming agent passed the category floor on it alone).

    Refusing is only worth something from an agent that does not refuse everything: the score
    of an ``error`` or ``clarification`` case is ``raw · c``, where ``c`` is the share of the
    category's valid requests answered correctly (its boundary cases; when the selection has
    none, up to three simple single-step cases are sent as ``control:<id>`` tests). An agent
    that fails every request therefore scores 0.

    Args:
        agent: The agent.
        data: Cases hinted ``robustness`` (and, for controls, the other cases).
        config: Evaluation settings.

    Returns:
        The category result; metrics ``error_handling``, ``clarification`` (raw means),
        ``boundary_accuracy``, ``control_accuracy``, ``exceptions``.
    """
    res = CategoryResult("robustness", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    selected = data.for_category("robustness", config.limit)
    controls: list[AgentCase] = []
    if not any(c.expected_behavior == "answer" for c in selected):
        controls = [c for c in data.cases if c.expected_behavior == "answer" and not c.is_multi_step
                    and c.complexity == "simple" and c not in selected
                    and not any(values_match(v, c.expected, c.rel_tol, c.abs_tol) for v in request_values(c.query))][:3]
    raw: list[tuple[AgentCase, Call, float, str | None]] = []
    answer_tests: list[CaseResult] = []
    for case in selected + controls:
        call = call_agent(agent, case.query, config.request_timeout_s)
        r = call.response
        if case.expected_behavior == "answer":
            name = case.id if case in selected else f"control:{case.id}"
            answer_tests.append(answer_test(name, call, case, config.pass_threshold, expected_behavior="answer"))
            raw.append((case, call, answer_tests[-1].score, None))
            continue
        err: str | None = None
        if call.critical:
            score, err = 0.0, f"exception escaped the agent: {call.exception}"
        elif r is not None and r.success:
            score, err = 0.0, ("answered while asking for clarification: a guess" if r.needs_clarification
                               else "claimed success on a request that should fail or ask")
        elif case.expected_behavior == "clarification" and r is not None and r.needs_clarification:
            score = 1.0
        elif r is not None and is_clear_error(r.error, case.error_terms):
            score = 1.0
        else:
            score, err = 0.0, ("failed without a clear error message (one naming "
                               f"{' or '.join(repr(t) for t in case.error_terms[:4]) or 'the reason'})")
        raw.append((case, call, score, err))
    valid = [t.score for t in answer_tests]
    control = sum(valid) / len(valid) if valid else 0.0
    by: dict[str, list[float]] = {"error": [], "clarification": [], "answer": []}
    answers = iter(answer_tests)
    for case, call, score, err in raw:
        if case.expected_behavior == "answer":
            t = next(answers)
            if case in selected:
                by["answer"].append(t.score)
        else:
            by[case.expected_behavior].append(score)
            if score > 0 and control < 1.0 and err is None:
                err = (f"refusal credit scaled by {control:.2f}, the share of valid requests "
                       "answered correctly")
            t = make_test(case.id, score * control, threshold=config.pass_threshold, critical=call.critical,
                          error=err, duration_s=call.elapsed_s,
                          details={"case_id": case.id, "expected_behavior": case.expected_behavior,
                                   "raw_score": score, "control_accuracy": control, **call.summary()})
        res.tests.append(t)
    if controls:
        res.notes.append(f"no boundary case in the selection; {len(controls)} simple case(s) sent as controls")
    elif not valid:
        res.notes.append("no valid request to control against; error and clarification tests score 0")

    def avg(v: list[float]) -> float | None:
        return sum(v) / len(v) if v else None

    res.metrics = {"error_handling": avg(by["error"]), "clarification": avg(by["clarification"]),
                   "boundary_accuracy": avg(by["answer"]), "control_accuracy": control if valid else None,
                   "exceptions": sum(t.critical for t in res.tests)}
    return res
