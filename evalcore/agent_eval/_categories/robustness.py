"""Robustness: invalid, ambiguous and boundary requests."""

from __future__ import annotations

import random
import re
import secrets
from typing import TYPE_CHECKING, Any

from evalcore.agent_eval._calling import Call, answer_test, call_agent, reset_agent
from evalcore.agent_eval._case_results import CaseResult, CategoryResult, make_test
from evalcore.agent_eval._cases.edge import CLARIFICATION_TERMS
from evalcore.agent_eval._cases.kinds import STARTER_KINDS, render_query, request_values, sample_inputs, solve_kind
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._categories._common import drawn_case
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._matching import values_match

if TYPE_CHECKING:
    from evalcore.agents import Agent


ROBUSTNESS_KINDS: dict[str, str] = {
    "error": "malformed_input",
    "clarification": "ambiguity",
    "answer": "boundary_values",
    "control": "valid_requests",
}
"""Expected behaviour (or ``control``) → the robustness kind it tests; each kind has its own floor."""

REASON_TERMS: dict[str, tuple[str, ...]] = {
    "negative": ("negative", "below zero", "less than zero", "less than 0", "below 0", "at least 0", "positive"),
    "non_integer": ("integer", "whole", "fraction", "decimal"),
    "non_numeric": ("number", "numeric", "a value for"),
    "below_absolute_zero": ("absolute zero", "-273", "273.15", "0 k", "kelvin", "lowest possible"),
}
"""Edge tag → words naming what is wrong with an invalid request (added to the case's own
``error_terms``). Only the terms that do not occur in the request count: a refusal that echoes the
request back names its values without saying what is wrong with them."""

MISSING_TERMS: tuple[str, ...] = (
    "ambiguous",
    "unclear",
    "missing",
    "which",
    "what",
    "not given",
    "no value",
    "no number",
    "no text",
    "needs a value",
    "need a value",
    "without a value",
)
"""Words saying what is wrong with an ambiguous request (a value is missing or unclear). Words that
only ask for something ("please specify", "provide", "clarify") are not among them: they say
nothing about what is missing, and an agent that echoed every request back with "please specify"
was credited for every edge kind."""

ASKING_TERMS: frozenset[str] = frozenset(CLARIFICATION_TERMS) - frozenset(MISSING_TERMS)
"""The generator's clarification terms that only ask ("specify", "provide", "clarif"): dropped
from a clarification case's own terms."""

N_CONTROLS = 3
"""Fresh valid requests (drawn per run from a secret seed) sent as ``control:<i>`` tests."""


def _fresh_controls(n: int) -> list[AgentCase]:
    """``n`` valid single-step requests of the starter kinds with inputs from a secret seed (no
    table written in advance holds them) whose answers equal no value of the request."""
    rng = random.Random(secrets.randbits(64))
    out: list[AgentCase] = []
    for i in range(200):
        if len(out) >= n:
            break
        kind = STARTER_KINDS[(len(out) + i) % len(STARTER_KINDS)]
        try:
            x = sample_inputs(kind, rng)
            q = render_query(kind, x)
            ans = solve_kind(kind, x)
        except (KeyError, ValueError, ArithmeticError):
            continue
        case = drawn_case(
            f"control-{len(out)}", kind, x, q, ans, complexity="simple", category="robustness", tag="control"
        )
        if any(values_match(v, ans, case.rel_tol, case.abs_tol) for v in request_values(q)):
            continue
        out.append(case)
    return out


def refusal_terms(case: AgentCase) -> list[str]:
    """The words of which a right refusal of ``case`` names one: the reason terms of its kind
    (:data:`REASON_TERMS` by tag for ``error`` cases, :data:`MISSING_TERMS` for ``clarification``
    ones) and the case's own ``error_terms``, less every term that occurs in the request
    (case-insensitive): those the evaluator gave away."""
    query = case.query.lower()
    if case.expected_behavior == "clarification":
        base: list[str] = list(MISSING_TERMS)
    else:
        base = [t for tag in case.tags for t in REASON_TERMS.get(tag, ())]
    own = [t for t in case.error_terms if case.expected_behavior != "clarification" or t not in ASKING_TERMS]
    terms = [str(t) for t in [*base, *own] if str(t).strip()]
    if not terms:  # no term known for this case: names_reason takes any word beyond the request
        return []
    return [t for t in dict.fromkeys(terms) if t.lower() not in query]


_WORD = re.compile(r"[^\W\d_]{3,}")
_ASKING_WORDS = frozenset({"please", "specify", "provide", "clarify", "clarification", "request", "the", "and"})


def names_reason(response: Any, terms: list[str], query: str = "") -> str | None:
    """The first of ``terms`` that the refusal's message (``error``, then the response text)
    names, case-insensitive; None when it names none, is under 8 characters or is a raw
    traceback. A case without any term (a user's case with neither ``error_terms`` nor a known
    tag) takes any word of three letters or more that is not in ``query`` and does not merely
    ask ("please", "specify", …): something said beyond the request."""
    parts = [getattr(response, "error", None), getattr(response, "response", None)]
    text = " ".join(p for p in parts if isinstance(p, str)).strip()
    if len(text) < 8 or "Traceback (most recent call last)" in text:
        return None
    low = text.lower()
    if not terms:
        given = set(_WORD.findall(query.lower())) | _ASKING_WORDS
        return next((w for w in _WORD.findall(low) if w not in given), None)
    return next((t for t in terms if t.lower() in low), None)


def evaluate_robustness(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Invalid, ambiguous and boundary requests, each kind with its own floor.

    Raw score per case: ``error`` and ``clarification`` cases 1 when the agent refuses
    (``success`` False) with a message (its ``error``, else its response text) that says what is
    wrong in words the request did not give away (:func:`refusal_terms`, :func:`names_reason`):
    an invalid request's reason (``negative``, ``integer``, ``number``, ``absolute zero`` …), an
    ambiguous request's missing value (``missing``, ``which``, ``ambiguous`` …); 0 when it claims
    success (answering while asking is a guess) or refuses without such words. Naming the
    request's own values is no diagnosis, and a bare ``needs_clarification`` flag or "please
    specify" asks without saying what is missing: an agent that echoed every request back with
    "please specify" (``tests/agent_eval/_hostile_r3:EchoSpecify``) was credited for every edge
    kind. ``answer`` (boundary) cases 1 when the result matches (their answers equal no value of
    the request, so echoing the input fails). An escaped exception scores 0 and is a critical
    failure.

    A failure without a clear message earns nothing (it once earned half): not answering is what
    every broken agent does too, and a fixed string such as ``"Error!!!"`` tells the user neither
    what was wrong nor what to change, so half credit for it rewarded nothing the category
    measures (the ``vague_errors`` gaming agent passed the category floor on it alone).

    Controls: :data:`N_CONTROLS` fresh valid requests of the starter kinds, inputs drawn from a
    secret seed per run, are always sent (``control:<i>`` tests). The boundary texts are few
    and fixed, so a table of their answers is no evidence of handling valid requests: an agent
    that answered only them (and refused everything else with an error quoting the request)
    once scored 1.0 while failing every functional case.

    Refusing is only worth something from an agent that does not refuse everything: the score
    of an ``error`` or ``clarification`` case is ``raw · c``, where ``c`` is the share of the
    category's valid requests (boundary cases and controls) answered correctly. An agent that
    fails every request therefore scores 0.

    Kinds and floors: the tests fall into :data:`ROBUSTNESS_KINDS` (malformed input, ambiguity,
    boundary values, valid requests); each kind present must score (mean of its tests) at least
    ``config.category_floor``. When one does not, every test is scaled so that the category
    scores as its weakest kind: strength in one kind does not pass the category for another
    (an agent that guesses on every ambiguous request once passed on its boundary answers).

    Args:
        agent: The agent.
        data: Cases hinted ``robustness``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``error_handling``, ``clarification`` (raw means),
        ``boundary_accuracy``, ``control_accuracy``, ``kinds`` (per kind: score, floor, passed,
        n) and ``exceptions``.
    """
    res = CategoryResult("robustness", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    selected = data.for_category("robustness", config.limit)
    controls = _fresh_controls(N_CONTROLS)
    raw, answer_tests = _run_cases(agent, selected, controls, config)
    valid = [t.score for t in answer_tests]
    control = sum(valid) / len(valid) if valid else 0.0
    by, kind_of = _record_tests(res, raw, answer_tests, selected, control, config)
    if not controls:
        res.notes.append("no fresh control request could be drawn")
    kinds = _apply_floors(res, kind_of, config)
    res.metrics = {
        "error_handling": _avg(by["error"]),
        "clarification": _avg(by["clarification"]),
        "boundary_accuracy": _avg(by["answer"]),
        "control_accuracy": control if valid else None,
        "kinds": kinds,
        "exceptions": sum(t.critical for t in res.tests),
    }
    return res


def _avg(v: list[float]) -> float | None:
    return sum(v) / len(v) if v else None


def _refusal_score(case: AgentCase, call: Call) -> tuple[float, str | None]:
    """Raw score of an ``error`` or ``clarification`` case (see :func:`evaluate_robustness`) and
    why it fell short (None when it did not)."""
    r = call.response
    terms = refusal_terms(case)
    if call.critical:
        return 0.0, f"exception escaped the agent: {call.exception}"
    if r is not None and r.success:
        return 0.0, (
            "answered while asking for clarification: a guess"
            if r.needs_clarification
            else "claimed success on a request that should fail or ask"
        )
    if r is not None and names_reason(r, terms, case.query) is not None:
        return 1.0, None
    return 0.0, (
        "refused without saying what is wrong in words the request did not give (naming "
        f"{' or '.join(repr(t) for t in terms[:4]) or 'a word beyond the request'})"
    )


def _run_cases(
    agent: Agent, selected: list[AgentCase], controls: list[AgentCase], config: AgentEvalConfig
) -> tuple[list[tuple[AgentCase, Call, float, str | None]], list[CaseResult]]:
    """Send every selected case, then the controls; per request (case, call, raw score, why),
    and the tests of the requests to be answered (boundary cases and controls)."""
    raw: list[tuple[AgentCase, Call, float, str | None]] = []
    answer_tests: list[CaseResult] = []
    for case in selected + controls:
        call = call_agent(agent, case.query, config.request_timeout_s)
        if case.expected_behavior == "answer":
            name = case.id if case in selected else f"control:{case.id.split('-')[-1]}"
            answer_tests.append(answer_test(name, call, case, config.pass_threshold, expected_behavior="answer"))
            raw.append((case, call, answer_tests[-1].score, None))
            continue
        score, err = _refusal_score(case, call)
        raw.append((case, call, score, err))
    return raw, answer_tests


def _record_tests(
    res: CategoryResult,
    raw: list[tuple[AgentCase, Call, float, str | None]],
    answer_tests: list[CaseResult],
    selected: list[AgentCase],
    control: float,
    config: AgentEvalConfig,
) -> tuple[dict[str, list[float]], list[str]]:
    """Add one test per request to ``res``, a refusal's raw score scaled by ``control`` (the
    share of valid requests answered correctly); returns the raw scores per expected behaviour
    and each test's robustness kind."""
    by: dict[str, list[float]] = {"error": [], "clarification": [], "answer": [], "control": []}
    kind_of: list[str] = []
    answers = iter(answer_tests)
    for case, call, score, err in raw:
        if case.expected_behavior == "answer":
            t = next(answers)
            key = "answer" if case in selected else "control"
            by[key].append(t.score)
        else:
            key = case.expected_behavior
            by[key].append(score)
            if score > 0 and control < 1.0 and err is None:
                err = f"refusal credit scaled by {control:.2f}, the share of valid requests answered correctly"
            t = make_test(
                case.id,
                score * control,
                threshold=config.pass_threshold,
                critical=call.critical,
                error=err,
                duration_s=call.elapsed_s,
                details={
                    "case_id": case.id,
                    "expected_behavior": case.expected_behavior,
                    "raw_score": score,
                    "control_accuracy": control,
                    **call.summary(),
                },
            )
        t.details["robustness_kind"] = ROBUSTNESS_KINDS[key]
        kind_of.append(ROBUSTNESS_KINDS[key])
        res.tests.append(t)
    return by, kind_of


def _apply_floors(res: CategoryResult, kind_of: list[str], config: AgentEvalConfig) -> dict[str, dict[str, Any]]:
    """Score each robustness kind (mean of its tests) against ``config.category_floor``; when
    one is below, scale every test so that the category scores as its weakest kind. Returns
    per kind its score, floor, whether it passed and n."""
    floor = config.category_floor
    kinds: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(kind_of):
        scores = [t.score for t, k in zip(res.tests, kind_of, strict=True) if k == name]
        m = sum(scores) / len(scores)
        kinds[name] = {"score": m, "floor": floor, "passed": m >= floor, "n": len(scores)}
    weakest = min(kinds, key=lambda n: kinds[n]["score"]) if kinds else None
    mean_all = res.score
    if weakest is not None and not kinds[weakest]["passed"] and mean_all > kinds[weakest]["score"]:
        factor = kinds[weakest]["score"] / mean_all
        below = [n for n in kinds if not kinds[n]["passed"]]
        why = (
            f"kind {weakest} scored {kinds[weakest]['score']:.2f}, below its floor {floor:g}: every test "
            f"scaled × {factor:.2f} so that the category scores as its weakest kind"
        )
        for t in res.tests:
            t.details["score_before_floor"] = t.score
            t.score = t.score * factor
            t.passed = t.score >= config.pass_threshold
            t.error = t.error or why
        res.notes.append(f"kinds below their floor {floor:g}: {below}; {why}")
    return kinds
