"""The seven evaluation categories.

Each ``evaluate_<category>(agent, data, config)`` resets the agent first (a fresh, isolated state
with a temporary registry), runs its tests and returns a :class:`CategoryResult`. Every test
scores in [0, 1]; a request whose ``process_request`` raises scores 0 and is recorded as a
critical failure. Answers are compared with :func:`values_match` against
``AgentResponse.result``, never as substrings of the response text.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from evalcore import metrics
from evalcore.agents._protocol import AgentResponse, StepRecord
from evalcore.datasets._agent_cases import STARTER_TOOLS, AgentCase
from evalcore.errors import EvalcoreError
from evalcore.suites._matching import is_clear_error, values_match
from evalcore.suites._measure import (
    ToolChecker,
    ToolRecord,
    answering_step,
    plain_response,
    registry_snapshot,
    run_tool_tests,
)
from evalcore.suites._quality import code_quality, test_quality
from evalcore.suites._results import CategoryResult, TestResult, jsonable, make_test


DEFAULT_TOOL_ALIASES: dict[str, tuple[str, ...]] = {
    "percentage": ("percent", "calculate_percentage", "percentage_calculator"),
    "reverse_string": ("string_reversal", "reverse_text", "reverse"),
    "factorial": ("compute_factorial", "calculate_factorial"),
    "temperature_conversion": ("convert_temperature", "temperature_converter", "temperature"),
}
"""Other names an agent may give the starter tools (``SuiteConfig.tool_aliases`` overrides)."""


@dataclass
class SuiteConfig:
    """Knobs of an evaluation (all recorded in the results' ``config``).

    Attributes:
        seed: Seed of the case generator.
        counts: Cases per complexity for the generator (None = 20/15/10/11).
        limit: At most this many cases per category (None = all that fit the category).
        k: Depth of the ranked search results for retrieval metrics.
        retrieval_threshold: Similarity threshold for the thresholded retrieval set and the
            false-positive rate; None = the agent's own ``threshold`` attribute, else 0.5.
        n_paraphrase_groups: Paraphrase groups for learning and retrieval.
        paraphrase_size: Members per paraphrase group (2 or 3).
        n_unrelated: Unrelated queries for the false-positive rate.
        timing_repetitions: Repetitions of each timed query (median latency).
        learning_repeats: Repetitions of the learning-curve query.
        pattern_repeats: Repetitions of the multi-step query for the workflow-pattern test.
        memory_requests: Requests between the two RSS readings of the memory test.
        load_requests: Requests of the concurrent load test.
        workers: Worker threads of the load test.
        pass_threshold: Score at which a test and a category pass.
        learning_target: Relative speed-up of repeated queries that earns full learning-curve
            credit (0.5 = repeats take half the time of the first encounter).
        tool_aliases: Tool kind → other names the agent may use for it (None =
            :data:`DEFAULT_TOOL_ALIASES`); used for planning accuracy and retrieval labels.
        request_timeout_s: A request without a response after this many seconds scores 0 and is
            a critical failure (None = no limit; default 30 s).
        category_floor: Every category must score at least this for the system to pass.
        throughput_target: Correct answers per second under load that earn full throughput credit.
        n_held_out: Held-out inputs on which the evaluator runs a registered tool (synthesis,
            reuse, learning) before it counts.
        learning_kinds: Kinds of tool the learning curve meets for the first time (at least 5
            give an interval per point).
        sandbox_timeout_s: Limit of each sandboxed run of an agent's registered code.
    """

    seed: int = 0
    counts: dict[str, int] | None = None
    limit: int | None = None
    k: int = 5
    retrieval_threshold: float | None = None
    n_paraphrase_groups: int = 3
    paraphrase_size: int = 3
    n_unrelated: int = 8
    timing_repetitions: int = 3
    learning_repeats: int = 4
    pattern_repeats: int = 2
    memory_requests: int = 10
    load_requests: int = 20
    workers: int = 4
    pass_threshold: float = 0.7
    learning_target: float = 0.5
    tool_aliases: dict[str, list[str]] | None = None
    request_timeout_s: float | None = 30.0
    category_floor: float = 0.5
    throughput_target: float = 10.0
    n_held_out: int = 3
    learning_kinds: int = 5
    sandbox_timeout_s: float = 20.0

    def aliases(self, kind: str) -> tuple[str, ...]:
        """The kind's own name followed by its aliases."""
        table = DEFAULT_TOOL_ALIASES if self.tool_aliases is None else self.tool_aliases
        return (kind, *[a for a in table.get(kind, ()) if a != kind])

    def to_dict(self) -> dict[str, Any]:
        return {k: jsonable(v) for k, v in self.__dict__.items()}


@dataclass
class SuiteData:
    """The cases an evaluation runs on."""

    cases: list[AgentCase]
    paraphrase_groups: list[list[AgentCase]] = field(default_factory=list)
    unrelated: list[str] = field(default_factory=list)

    def for_category(self, category: str, limit: int | None = None) -> list[AgentCase]:
        """Cases whose ``categories`` hint names ``category`` (first ``limit``)."""
        out = [c for c in self.cases if category in c.categories]
        return out[:limit] if limit is not None else out


@dataclass
class Call:
    """One request and what came back.

    Attributes:
        query: The request.
        response: The agent's response, or None when it raised or broke the protocol.
        exception: ``"Type: message"`` of an escaped exception or a protocol violation.
        elapsed_s: Wall time of ``process_request``.
    """

    query: str
    response: AgentResponse | None
    exception: str | None
    elapsed_s: float

    @property
    def critical(self) -> bool:
        return self.exception is not None

    @property
    def success(self) -> bool:
        return self.response is not None and bool(self.response.success)

    def summary(self) -> dict[str, Any]:
        r = self.response
        return {
            "query": self.query,
            "success": self.success,
            "result": jsonable(r.result) if r is not None else None,
            "tool_used": r.tool_used if r is not None else None,
            "synthesized": bool(r.synthesized) if r is not None else False,
            "reused": bool(r.reused) if r is not None else False,
            "needs_clarification": bool(r.needs_clarification) if r is not None else False,
            "error": (r.error if r is not None else None),
            "exception": self.exception,
            "elapsed_s": self.elapsed_s,
        }


def call_agent(agent: Any, query: str, timeout_s: float | None = None) -> Call:
    """Send one request, timing it and catching anything that escapes.

    Args:
        agent: The agent.
        query: The request.
        timeout_s: Give up waiting after this many seconds (None = wait as long as it takes).
            The request keeps running in a daemon thread (Python cannot stop it); a timeout is
            recorded like an escaped exception.

    Returns:
        The :class:`Call`; an exception (any but ``KeyboardInterrupt``, ``SystemExit`` included),
        a timeout or a non-``AgentResponse`` return value is recorded in ``exception`` (a
        critical failure).
    """
    t0 = time.perf_counter()
    if timeout_s is None:
        try:
            resp = agent.process_request(query)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an escaped exception (SystemExit too) is the agent's critical failure
            return Call(query, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
    else:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["response"] = agent.process_request(query)
            except BaseException as exc:  # the thread ends here; the caller records it as critical
                box["exception"] = exc

        worker = threading.Thread(target=run, daemon=True, name="agent-request")
        worker.start()
        worker.join(timeout_s)
        if worker.is_alive():
            return Call(query, None, f"TimeoutError: no response within {timeout_s:g} s", time.perf_counter() - t0)
        if "exception" in box:
            raised = box["exception"]
            return Call(query, None, f"{type(raised).__name__}: {raised}", time.perf_counter() - t0)
        resp = box.get("response")
    elapsed = time.perf_counter() - t0
    if not isinstance(resp, AgentResponse):
        return Call(query, None, f"ProtocolError: process_request returned {type(resp).__name__}, "
                                 "not AgentResponse", elapsed)
    problem = _protocol_problem(resp)
    if problem is not None:
        return Call(query, None, f"ProtocolError: {problem}", elapsed)
    try:
        plain = plain_response(resp)  # matching only ever sees plain JSON values
    except Exception as exc:
        return Call(query, None, f"ProtocolError: the response is not JSON data: {type(exc).__name__}: {exc}",
                    elapsed)
    return Call(query, plain, None, elapsed)


def _protocol_problem(resp: AgentResponse) -> str | None:
    """Check (and normalize in place) the field types of a response; the problem, or None.

    Flags must be booleans (numpy booleans are converted), ``response`` a string (None reads
    as ""), ``tool_used`` and ``error`` strings or None, ``steps`` a list (None reads as []) of
    :class:`StepRecord` with a string ``tool``, a dict ``args``, a string-or-None ``error`` and
    integer ``depends_on`` (None reads as []).
    """
    import numpy as np

    for name in ("success", "synthesized", "reused", "needs_clarification"):
        v = getattr(resp, name)
        if isinstance(v, np.bool_):
            setattr(resp, name, bool(v))
        elif not isinstance(v, bool):
            return f"AgentResponse.{name} is {type(v).__name__}, not bool"
    if resp.response is None:
        resp.response = ""
    if not isinstance(resp.response, str):
        return f"AgentResponse.response is {type(resp.response).__name__}, not str"
    for name in ("tool_used", "error"):
        v = getattr(resp, name)
        if v is not None and not isinstance(v, str):
            return f"AgentResponse.{name} is {type(v).__name__}, not str or None"
    if resp.steps is None:
        resp.steps = []
    if not isinstance(resp.steps, list) or not all(isinstance(st, StepRecord) for st in resp.steps):
        return "AgentResponse.steps is not a list of StepRecord"
    for i, st in enumerate(resp.steps):
        if st.depends_on is None:
            st.depends_on = []
        if st.args is None:
            st.args = {}
        if not isinstance(st.tool, str) or not isinstance(st.args, dict) or not (
                st.error is None or isinstance(st.error, str)) or not isinstance(st.depends_on, list) or not all(
                isinstance(j, int) and not isinstance(j, bool) for j in st.depends_on):
            return (f"AgentResponse.steps[{i}] needs tool: str, args: dict, error: str or None, "
                    "depends_on: list of int")
    return None


def _correct(call: Call, case: AgentCase) -> bool:
    return call.success and values_match(call.response.result, case.expected, case.rel_tol, case.abs_tol)  # type: ignore[union-attr]


def _reset(agent: Any, result: CategoryResult) -> bool:
    try:
        agent.reset()
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        result.tests.append(make_test("reset", 0.0, critical=True, error=f"reset() raised {type(exc).__name__}: {exc}"))
        return False


def _answer_test(name: str, call: Call, case: AgentCase, threshold: float, **details: Any) -> TestResult:
    ok = _correct(call, case)
    if call.critical:
        err = f"exception escaped the agent: {call.exception}"
    elif not call.success:
        err = f"agent reported failure: {call.response.error if call.response else None}"
    elif not ok:
        err = "result does not match the expected answer"
    else:
        err = None
    return make_test(name, 1.0 if ok else 0.0, threshold=threshold, critical=call.critical, error=err,
                     duration_s=call.elapsed_s,
                     details={"case_id": case.id, "expected": case.expected, **call.summary(), **details})


# =========================================================================== functional
def evaluate_functional(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Functional correctness: each case's structured result against its expected answer.

    Test score: 1 when ``success`` is True and ``values_match(result, expected)``, else 0.

    Args:
        agent: The agent.
        data: Cases (those hinted ``functional``).
        config: Evaluation settings.

    Returns:
        The category result; metrics ``accuracy`` and ``by_kind`` accuracy.
    """
    res = CategoryResult("functional", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    by_kind: dict[str, list[float]] = {}
    for case in data.for_category("functional", config.limit):
        t = _answer_test(case.id, call_agent(agent, case.query, config.request_timeout_s), case, config.pass_threshold)
        res.tests.append(t)
        by_kind.setdefault(case.kind, []).append(t.score)
    res.metrics = {"accuracy": res.score, "n_cases": len(res.tests),
                   "by_kind": {k: sum(v) / len(v) for k, v in by_kind.items()}}
    return res


# =========================================================================== synthesis
def _snapshot(agent: Any, res: CategoryResult) -> dict[str, ToolRecord]:
    tools, why = registry_snapshot(agent)
    if why is not None and why not in res.notes:
        res.notes.append(why)
    return tools


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
    if not _reset(agent, res):
        return res
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    initial = _snapshot(agent, res)
    verified: dict[str, str | None] = {}  # kind -> code hash of the tool verified for it
    successes: list[float] = []
    code_q: list[float] = []
    test_q: list[float] = []
    n_new = n_reused = 0
    for case in data.for_category("synthesis", config.limit):
        call = call_agent(agent, case.query, config.request_timeout_s)
        r = call.response
        correct = _correct(call, case)
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
            tools = _snapshot(agent, res)
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


# =========================================================================== retrieval
def _agent_threshold(agent: Any, config: SuiteConfig) -> float:
    if config.retrieval_threshold is not None:
        return float(config.retrieval_threshold)
    for obj in (agent, getattr(agent, "registry", None)):
        t = getattr(obj, "threshold", None)
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            return float(t)
    return 0.5


class MalformedSearch(ValueError):
    """A search answer that breaks the protocol (the test fails; the run goes on)."""


def _search(registry: Any, query: str, k: int, threshold: float) -> list[tuple[str, float]]:
    """Ranked ``(name, score)`` pairs as plain values.

    Raises:
        MalformedSearch: The search raised, or answered something other than at most ``k``
            matches with distinct string names and finite scores, best first.
    """
    try:
        hits = registry.search(query, k=k, threshold=threshold)
        rows = json.loads(json.dumps([[getattr(h, "name", None), getattr(h, "score", None)] for h in hits],
                                     default=repr))
    except Exception as exc:
        raise MalformedSearch(f"search raised {type(exc).__name__}: {exc}") from exc
    out: list[tuple[str, float]] = []
    for name, score in rows:
        if not isinstance(name, str) or isinstance(score, bool) or not isinstance(score, (int, float)) \
                or not math.isfinite(score):
            raise MalformedSearch(f"search answered a malformed match {[name, score]!r}")
        out.append((name, float(score)))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise MalformedSearch(f"search answered a tool twice: {names}")
    if len(out) > k:
        raise MalformedSearch(f"search answered {len(out)} matches for k={k}")
    if any(a[1] < b[1] for a, b in zip(out, out[1:])):
        raise MalformedSearch("search answered matches that are not sorted best first")
    return out


def _teach(agent: Any, cases: Sequence[AgentCase], res: CategoryResult,
           config: SuiteConfig) -> tuple[dict[str, AgentCase], dict[tuple[str, str], dict[str, Any]]]:
    """Send each kind's first case once (so the agent can build its tool); returns the teaching
    case per kind and the arguments the agent passed each tool per kind (how it binds them)."""
    taught: dict[str, AgentCase] = {}
    observed: dict[tuple[str, str], dict[str, Any]] = {}
    for case in cases:
        if case.kind in taught:
            continue
        taught[case.kind] = case
        call = call_agent(agent, case.query, config.request_timeout_s)
        if call.critical:
            res.tests.append(make_test(f"teach:{case.id}", 0.0, critical=True, error=call.exception,
                                       details=call.summary()))
        r = call.response
        if r is not None and r.success:
            for st in r.steps:
                if st.tool and st.error is None and isinstance(st.args, dict):
                    observed.setdefault((st.tool, case.kind), st.args)
    return taught, observed


def _relevance(tools: dict[str, ToolRecord], queries: Sequence[AgentCase], taught: dict[str, AgentCase],
               observed: dict[tuple[str, str], dict[str, Any]], checker: ToolChecker) -> dict[str, set[str]]:
    """Relevant tools per query id, measured: the evaluator runs every registered tool on each
    query's own inputs (bound as the agent bound them when it used the tool, else by the tool's
    signature) and a tool is relevant when its output is the query's answer."""
    from evalcore.suites._measure import infer_binding

    by_kind: dict[str, list[AgentCase]] = {}
    for q in queries:
        by_kind.setdefault(q.kind, []).append(q)
    out: dict[str, set[str]] = {q.id: set() for q in queries}
    for kind, qs in by_kind.items():
        teach = taught.get(kind)
        for name, record in tools.items():
            binding = None
            if teach is not None and (name, kind) in observed:
                binding = infer_binding(observed[(name, kind)], kind, teach.inputs)
            flags = checker.relevant(record, kind, binding, [q.inputs for q in qs])
            for q, ok in zip(qs, flags, strict=True):
                if ok:
                    out[q.id].add(name)
    return out


def evaluate_retrieval(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Retrieval quality of the agent's tool registry, with relevance labels from the evaluator.

    First each kind's first query that no tool registered at the reset computes is sent once (a
    teaching request) so the agent can build its tool; every query is then scored. Then the relevant tools of each query are measured: the evaluator runs every
    registered tool on the query's own inputs in the sandbox and a tool is relevant when it gives
    the expected answer. A query no registered tool answers counts as a miss (score 0), never
    dropped. Per query: the thresholded top-k gives precision, recall and F1 (the test score);
    the unthresholded top-k gives reciprocal rank and NDCG@k. Further tests:
    ``false_positive_rate`` (score ``(1 − FPR) · R̄``, FPR = share of unrelated queries with any
    match at or above the threshold, R̄ = mean recall of the queries at the same threshold) and
    one ``paraphrase:<group>`` test per group (share of paraphrases whose thresholded top-1 equals
    the group's modal top-1, 0 unless that tool is relevant). A malformed search answer (a name
    twice, a non-numeric score, more than k matches, unsorted) fails its test.

    Queries of kinds that a tool registered at the reset already served (the starter tools)
    and their paraphrase groups are credited × the mean F1 of the queries whose tools the agent
    built during the session (× 1 when every kind was served at the reset). Finding the tools
    an agent starts with needs no retrieval worth the name (a fixed table of four names does it:
    the ``answers_nothing`` gaming agent, which builds nothing, scored 0.6 on them alone); what
    the category measures is whether the search finds the tools the agent adds among the others,
    and the starter queries count only as far as that has been shown.

    Args:
        agent: The agent (``agent.registry`` must answer ``search`` and list its tools with code).
        data: Cases hinted ``retrieval``, paraphrase groups, unrelated queries.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``precision``, ``recall``, ``f1``, ``mrr``, ``ndcg_at_k``,
        ``fpr``, ``paraphrase_robustness``, the threshold and ``n_misses``.
    """
    res = CategoryResult("retrieval", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    registry = getattr(agent, "registry", None)
    if registry is None or not hasattr(registry, "search"):
        res.tests.append(make_test("registry_available", 0.0, error="the agent exposes no searchable registry"))
        return res
    thr = _agent_threshold(agent, config)
    k = config.k
    pool = [c for c in data.for_category("retrieval") if c.expected_behavior == "answer" and not c.is_multi_step]
    starter = [c for c in pool if c.kind in STARTER_TOOLS]
    other = [c for c in pool if c.kind not in STARTER_TOOLS]
    mixed = [c for pair in itertools.zip_longest(starter, other) for c in pair if c is not None]
    cases = mixed[:config.limit] if config.limit is not None else mixed
    group_cases = [c for g in data.paraphrase_groups for c in g]
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    # kinds whose first query no tool registered at the reset computes are taught once
    firsts: dict[str, AgentCase] = {}
    for c in cases + group_cases:
        firsts.setdefault(c.kind, c)
    initial = _relevance(_snapshot(agent, res), list(firsts.values()), {}, {}, checker)
    to_teach = [c for c in firsts.values() if not initial.get(c.id)]
    taught, observed = _teach(agent, to_teach, res, config)
    scored = cases + group_cases
    tools = _snapshot(agent, res)
    labels = _relevance(tools, scored, taught, observed, checker)
    misses = sorted({c.kind for c in scored if not labels.get(c.id)})
    if misses:
        res.notes.append(f"no registered tool computes kinds {misses} (the evaluator ran every tool on their "
                         "queries); those queries count as misses")
    # Queries of kinds a tool registered at the reset already served earn in proportion to how
    # well the search finds the tools the agent built during the session (see the docstring).
    served_at_reset = {c.kind for c in firsts.values() if initial.get(c.id)}
    built_f1: list[float] = []
    for case in scored:
        if case.kind in served_at_reset:
            continue
        relevant = labels.get(case.id, set())
        try:
            ranked = _search(registry, case.query, k, 0.0)
        except (MalformedSearch, EvalcoreError):
            built_f1.append(0.0)
            continue
        built_f1.append(_prf([n for n, sc in ranked if sc >= thr], relevant)[2] if relevant else 0.0)
    built_credit = sum(built_f1) / len(built_f1) if built_f1 else 1.0
    if built_credit < 1.0 and served_at_reset:
        res.notes.append(f"queries served by tools registered at the reset ({sorted(served_at_reset)}) are credited "
                         f"× {built_credit:.2f}, the mean F1 on the tools the agent built during the session")
    per_query: list[dict[str, float]] = []
    for case in scored:
        relevant = labels.get(case.id, set())
        factor = built_credit if case.kind in served_at_reset else 1.0
        try:
            ranked = _search(registry, case.query, k, 0.0)
        except (MalformedSearch, EvalcoreError) as exc:
            per_query.append({"precision": 0.0, "recall": 0.0, "f1": 0.0, "rr": 0.0, "ndcg": 0.0})
            res.tests.append(make_test(f"query:{case.id}", 0.0, error=f"malformed search answer: {exc}"))
            continue
        above = [n for n, s in ranked if s >= thr]
        names = [n for n, _ in ranked]
        if relevant:
            p, r, f1 = (factor * v for v in _prf(above, relevant))
            rr = factor * float(metrics.mrr(names, relevant))
            nd = factor * float(metrics.ndcg_at_k(names, relevant, k))
        else:
            p = r = f1 = rr = nd = 0.0
        per_query.append({"precision": p, "recall": r, "f1": f1, "rr": rr, "ndcg": nd})
        res.tests.append(make_test(f"query:{case.id}", f1, threshold=config.pass_threshold,
                                   error=None if relevant else "miss: no registered tool computes this request",
                                   details={"query": case.query, "kind": case.kind, "relevant": sorted(relevant),
                                            "ranked": ranked, "above_threshold": above, "precision": p,
                                            "recall": r, "f1": f1, "reciprocal_rank": rr, "ndcg_at_k": nd}))
    # false positives on unrelated queries
    fp_flags: list[bool] = []
    fp_detail: list[dict[str, Any]] = []
    for q in data.unrelated:
        try:
            hits = _search(registry, q, k, thr)
        except (MalformedSearch, EvalcoreError) as exc:
            res.tests.append(make_test("false_positive_rate", 0.0, error=f"malformed search answer: {exc}"))
            fp_flags = []
            break
        fp_flags.append(any(s >= thr for _, s in hits))
        fp_detail.append({"query": q, "matches": hits})
    fpr = None
    if fp_flags:
        fpr = float(metrics.fpr([0] * len(fp_flags), [int(f) for f in fp_flags]))
        recall_at_thr = (sum(q["recall"] for q in per_query) / len(per_query)) if per_query else 0.0
        res.tests.append(make_test(
            "false_positive_rate", (1.0 - fpr) * recall_at_thr, threshold=config.pass_threshold,
            error=None if per_query else "no query shows that relevant tools pass this threshold",
            details={"fpr": fpr, "threshold": thr, "recall_at_threshold": recall_at_thr if per_query else None,
                     "queries": fp_detail}))
    # paraphrase robustness
    robust: list[float] = []
    for group in data.paraphrase_groups:
        tops: list[str | None] = []
        malformed = None
        for c in group:
            try:
                hits = [h for h in _search(registry, c.query, 1, thr) if h[1] >= thr]
            except (MalformedSearch, EvalcoreError) as exc:
                hits, malformed = [], str(exc)
            tops.append(hits[0][0] if hits else None)
        modal, count = Counter(tops).most_common(1)[0]
        relevant_all = set.intersection(*[labels.get(c.id, set()) for c in group]) if group else set()
        score = count / len(tops) if modal is not None and modal in relevant_all else 0.0
        if group and group[0].kind in served_at_reset:
            score *= built_credit
        robust.append(score)
        res.tests.append(make_test(f"paraphrase:{group[0].paraphrase_group}", score,
                                   threshold=config.pass_threshold,
                                   error=(f"malformed search answer: {malformed}" if malformed else
                                          None if score else "the modal top-1 tool is not relevant"),
                                   details={"queries": [c.query for c in group], "top1": tops,
                                            "relevant": sorted(relevant_all)}))

    def mean(key: str) -> float | None:
        return sum(q[key] for q in per_query) / len(per_query) if per_query else None

    res.metrics = {"precision": mean("precision"), "recall": mean("recall"), "f1": mean("f1"),
                   "mrr": mean("rr"), "ndcg_at_k": mean("ndcg"), "k": k, "threshold": thr, "fpr": fpr,
                   "paraphrase_robustness": sum(robust) / len(robust) if robust else None,
                   "n_queries": len(per_query), "n_misses": sum(not labels.get(c.id) for c in scored),
                   "labels": {c.id: sorted(labels.get(c.id, set())) for c in scored}}
    return res


def _prf(retrieved: Sequence[str], relevant: set[str]) -> tuple[float, float, float]:
    out = metrics.precision_recall_f1(list(retrieved), relevant)
    if isinstance(out, dict):
        return float(out["precision"]), float(out["recall"]), float(out["f1"])
    p, r, f = out
    return float(p), float(r), float(f)


# =========================================================================== workflow
def _tool_matches(actual: str, expected: str, aliases: Sequence[str] = ()) -> bool:
    if actual == expected or (actual and actual in aliases):
        return True
    if expected in STARTER_TOOLS:
        return False
    starter_names = set(STARTER_TOOLS) | {a for k in STARTER_TOOLS for a in DEFAULT_TOOL_ALIASES.get(k, ())}
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


def score_workflow(case: AgentCase, response: AgentResponse | None,
                   config: SuiteConfig | None = None) -> dict[str, Any]:
    """Score one multi-step response.

    Components: ``final`` (the overall result matches, 0/1), ``steps`` (share of expected steps
    whose result matches, compared by position), ``dataflow`` (share of expected dependencies
    j←i where the agent's step j lists i in ``depends_on`` and one of its arguments equals step
    i's expected result), ``planning`` (1 when the agent ran exactly the expected number of steps
    with the expected tools in order: a starter kind matches its name or an alias from
    ``config``, a synthesized kind any tool that is not a starter tool).
    ``score = 0.4·final + 0.3·steps + 0.15·dataflow + 0.15·planning``, weights renormalized when
    the case has no dependencies.

    Args:
        case: The multi-step case.
        response: The agent's response (None when it raised).
        config: Settings (tool aliases); default :class:`SuiteConfig`.

    Returns:
        Dict of the components and ``score``.
    """
    config = config or SuiteConfig()
    if response is None or not response.success:
        return {"score": 0.0, "final": 0.0, "steps": 0.0, "dataflow": 0.0 if _n_deps(case) else None,
                "planning": 0.0, "step_results": []}
    steps: list[StepRecord] = list(response.steps or [])
    final = float(values_match(response.result, case.expected, case.rel_tol, case.abs_tol))
    step_ok = [i < len(steps) and steps[i].error is None
               and values_match(steps[i].result, s.expected, case.rel_tol, max(case.abs_tol, 1e-6))
               for i, s in enumerate(case.steps)]
    deps_total = deps_ok = 0
    for j, s in enumerate(case.steps):
        for i in s.depends_on:
            deps_total += 1
            if j < len(steps) and i in (steps[j].depends_on or []):
                if any(values_match(v, case.steps[i].expected, case.rel_tol, max(case.abs_tol, 1e-6))
                       for v in _arg_values(steps[j].args)):
                    deps_ok += 1
    planning = float(len(steps) == len(case.steps)
                     and all(_tool_matches(a.tool, e.tool, config.aliases(e.tool))
                             for a, e in zip(steps, case.steps, strict=True)))
    comp: dict[str, Any] = {"final": final, "steps": sum(step_ok) / len(step_ok) if step_ok else final,
            "dataflow": deps_ok / deps_total if deps_total else None, "planning": planning}
    w = {"final": 0.4, "steps": 0.3, "dataflow": 0.15, "planning": 0.15}
    if comp["dataflow"] is None:
        del w["dataflow"]
    total = sum(w.values())
    comp["score"] = sum(w[key] * float(comp[key]) for key in w) / total
    comp["step_results"] = [jsonable(s.result) for s in steps]
    comp["step_tools"] = [s.tool for s in steps]
    return comp


def _n_deps(case: AgentCase) -> int:
    return sum(len(s.depends_on) for s in case.steps)


def evaluate_workflow(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Multi-step requests: final answer, every step's answer, data passed between dependent
    steps, and planning (see :func:`score_workflow`).

    Args:
        agent: The agent.
        data: Cases hinted ``workflow``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``final_accuracy``, ``step_accuracy``,
        ``dataflow_accuracy``, ``planning_accuracy``.
    """
    res = CategoryResult("workflow", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    comps: list[dict[str, Any]] = []
    for case in data.for_category("workflow", config.limit):
        call = call_agent(agent, case.query, config.request_timeout_s)
        comp = score_workflow(case, call.response, config)
        comps.append(comp)
        err = (f"exception escaped the agent: {call.exception}" if call.critical else
               None if comp["score"] >= config.pass_threshold else "steps, data flow or plan do not match")
        res.tests.append(make_test(case.id, comp["score"], threshold=config.pass_threshold,
                                   critical=call.critical, error=err, duration_s=call.elapsed_s,
                                   details={"case_id": case.id, "expected": case.expected,
                                            "expected_steps": [s.__dict__ for s in case.steps],
                                            **call.summary(), **comp}))

    def avg(key: str) -> float | None:
        vals = [c[key] for c in comps if c.get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    res.metrics = {"final_accuracy": avg("final"), "step_accuracy": avg("steps"),
                   "dataflow_accuracy": avg("dataflow"), "planning_accuracy": avg("planning"),
                   "n_cases": len(comps)}
    return res


# =========================================================================== learning
def _tool_of(call: Call) -> str | None:
    r = call.response
    return r.tool_used if r is not None and r.success and r.tool_used else None


def _learning_instances(data: SuiteData, config: SuiteConfig) -> list[list[AgentCase]]:
    """Per kind met for the first time: ``learning_repeats`` + 1 requests of that kind with
    different inputs (seeded by the run's seed; kinds of the paraphrase groups left out)."""
    import random

    from evalcore.datasets._agent_cases import SYNTHESIZED_KINDS, render_query, sample_inputs, solve_kind

    used = {c.kind for g in data.paraphrase_groups for c in g}
    kinds = [k for k in SYNTHESIZED_KINDS if k not in used][:max(0, config.learning_kinds)]
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
            ans = solve_kind(kind, x)
            num = isinstance(ans, (int, float)) and not isinstance(ans, bool)
            row.append(AgentCase(id=f"learn-{kind}-{len(row)}", query=q, complexity="medium", kind=kind,
                                 categories=["learning"], tags=["learning", kind], expected=ans,
                                 rel_tol=1e-9 if num else 0.0, abs_tol=1e-6 if num else 0.0,
                                 expected_tools=[kind], inputs=x))
        out.append(row)
    return out


def evaluate_learning(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
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
      and once scored patterns 1.0. Without such a request in the cases the test is not run
      (a note says so).

    Args:
        agent: The agent.
        data: Paraphrase groups and cases.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``reuse_rate``, ``learning_improvement`` (with
        ``learning_ci``), ``learning_curve`` (per encounter: mean, interval, n) and
        ``pattern_consistency``.
    """
    from evalcore.stats import mean_ci

    res = CategoryResult("learning", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    at_reset = _snapshot(agent, res)  # the tools the agent starts the session with
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    reuse_flags: list[bool] = []
    for group in data.paraphrase_groups:
        calls: list[Call] = []
        snaps: list[dict[str, ToolRecord]] = [_snapshot(agent, res)]
        for c in group:
            calls.append(call_agent(agent, c.query, config.request_timeout_s))
            snaps.append(_snapshot(agent, res))
        tool = _tool_of(calls[0])
        check = None
        if tool is not None and tool in snaps[0] and tool in snaps[1] and snaps[0][tool].hash == snaps[1][tool].hash:
            res.notes.append(f"reuse:{group[0].paraphrase_group}: the first request used {tool!r}, a tool the agent "
                             "had before the group; reusing it says nothing about learning (not scored)")
            continue
        if tool is not None and _correct(calls[0], group[0]):
            step = answering_step(calls[0].response, tool)
            check = checker.verify(snaps[1].get(tool), group[0].kind, group[0].inputs,
                                   step.args if step is not None else None)
        flags: list[bool] = []
        for j in range(1, len(group)):
            ok = (check is not None and check.passed and _correct(calls[j], group[j]) and _tool_of(calls[j]) == tool
                  and snaps[j + 1].get(tool) is not None and snaps[j + 1][tool].hash == check.hash
                  and set(snaps[j + 1]) == set(snaps[j]))
            flags.append(ok)
        reuse_flags.extend(flags)
        crit = [cl.exception for cl in calls if cl.critical]
        err = crit[0] if crit else (None if all(flags) else
                                    "first tool not verified on held-out inputs" if check is None or not check.passed
                                    else "a paraphrase was not answered with the same, unchanged tool")
        res.tests.append(make_test(
            f"reuse:{group[0].paraphrase_group}", sum(flags) / len(flags) if flags else 0.0,
            threshold=config.pass_threshold, critical=bool(crit), error=err,
            details={"first_tool": tool, "check": check.to_dict() if check else None,
                     "calls": [cl.summary() for cl in calls], "reused_correctly": flags}))
    # learning curve
    rows = _learning_instances(data, config)
    improvement = ci = None
    curve: list[dict[str, Any]] = []
    if rows and config.learning_repeats >= 1:
        times: list[list[float]] = []
        learned: list[float] = []
        per_kind: list[dict[str, Any]] = []
        crit_l: list[str] = []
        for row in rows:
            before = _snapshot(agent, res)
            calls = [call_agent(agent, row[0].query, config.request_timeout_s)]
            after = _snapshot(agent, res)
            tool = _tool_of(calls[0])
            new_tool = tool is not None and tool in after and (tool not in before or before[tool].hash != after[tool].hash)
            check = None
            if new_tool and _correct(calls[0], row[0]):
                step = answering_step(calls[0].response, tool)
                check = checker.verify(after.get(tool), row[0].kind, row[0].inputs,
                                       step.args if step is not None else None)
            reused: list[bool] = []
            if check is None or not check.passed:
                # nothing learned on first sight: later requests cannot earn credit, so they are not sent
                crit_l += [cl.exception or "" for cl in calls if cl.critical]
                learned.append(0.0)
                per_kind.append({"kind": row[0].kind, "queries": [row[0].query], "timings_s": [calls[0].elapsed_s],
                                 "new_tool": tool if new_tool else None, "verified": False, "reused": []})
                continue
            for case in row[1:]:
                prev = after
                calls.append(call_agent(agent, case.query, config.request_timeout_s))
                after = _snapshot(agent, res)
                reused.append(bool(check is not None and check.passed and _correct(calls[-1], case)
                                   and _tool_of(calls[-1]) == tool and tool in after
                                   and after[tool].hash == check.hash and set(after) == set(prev)))
            crit_l += [cl.exception or "" for cl in calls if cl.critical]
            times.append([cl.elapsed_s for cl in calls])
            learned.append(sum(reused) / len(reused) if reused else 0.0)
            per_kind.append({"kind": row[0].kind, "queries": [c.query for c in row], "timings_s": times[-1],
                             "new_tool": tool if new_tool else None,
                             "verified": bool(check is not None and check.passed), "reused": reused})
        n_points = min(len(t) for t in times) if times else 0
        for e in range(n_points):
            col = [t[e] for t in times]
            m = mean_ci(col, method="t") if len(col) >= 2 else {"mean": col[0], "ci_low": None, "ci_high": None}
            curve.append({"encounter": e + 1, "mean_s": m["mean"], "ci_low": m["ci_low"], "ci_high": m["ci_high"],
                          "n": len(col)})
        ratios = [math.log(max(t[0], 1e-9) / max(statistics.median(t[1:]), 1e-9)) for t in times if len(t) > 1]
        score, err = 0.0, None
        if len(ratios) >= 2:
            m = mean_ci(ratios, method="t")
            improvement = 1.0 - math.exp(-m["mean"])
            ci = [1.0 - math.exp(-m["ci_low"]), 1.0 - math.exp(-m["ci_high"])] if math.isfinite(m["ci_low"]) else None
            if ci is None or ci[0] <= 0:
                err = "no improvement: the speed-up is within noise (its 95% interval reaches 0)"
            else:
                score = min(1.0, improvement / config.learning_target) * (sum(learned) / len(learned))
                if score < config.pass_threshold:
                    err = "faster, but later requests did not reuse a tool learned on first sight"
        elif len(times) < len(rows):
            err = (f"{len(rows) - len(times)} of {len(rows)} kinds gave no tool on first sight that the evaluator "
                   "could verify on held-out inputs; fewer than two learned kinds leave nothing to time")
        else:
            err = "fewer than two kinds: no interval"
        if len(times) < 5:
            res.notes.append(f"the learning curve timed {len(times)} learned kind(s) of {len(rows)}; at least 5 "
                             "give a reliable interval")
        res.tests.append(make_test("learning_curve", score, threshold=config.pass_threshold, critical=bool(crit_l),
                                   error=crit_l[0] if crit_l else err,
                                   details={"curve": curve, "improvement": improvement, "improvement_ci": ci,
                                            "learned_share": learned, "kinds": per_kind}))
    # workflow patterns, observed
    consistency = None
    from evalcore.datasets._agent_cases import SYNTHESIZED_KINDS

    dep = [c for c in data.cases if "dependent" in c.tags and c.expected_behavior == "answer"
           and any(st.tool in SYNTHESIZED_KINDS for st in c.steps)]
    if not dep and any("dependent" in c.tags for c in data.cases):
        res.notes.append("patterns not scored: no dependent multi-step request needs a tool the agent must build "
                         "(a sequence of the tools it starts with shows nothing learned)")
    if dep:
        case = dep[0]
        calls, snaps = [], [_snapshot(agent, res)]
        for _ in range(max(1, config.pattern_repeats) + 1):
            calls.append(call_agent(agent, case.query, config.request_timeout_s))
            snaps.append(_snapshot(agent, res))
        seqs = [[s.tool for s in cl.response.steps] if cl.response is not None else [] for cl in calls]
        right = [cl.response is not None and score_workflow(case, cl.response, config)["final"] == 1.0
                 and score_workflow(case, cl.response, config)["steps"] == 1.0 for cl in calls]
        first = next((i for i, ok in enumerate(right) if ok), None)
        flags = []
        if first is not None:
            seq = seqs[first]
            hashes = {t: snaps[first + 1][t].hash for t in seq if t in snaps[first + 1]}
            # tools of the sequence the agent added (or rewrote) during the session
            added = [t for t in dict.fromkeys(seq) if t in hashes and (t not in at_reset or at_reset[t].hash != hashes[t])]
            for j in range(first + 1, len(calls)):
                flags.append(bool(right[j] and seqs[j] == seq and len(hashes) == len(set(seq)) and seq and added
                                  and all(t in snaps[j + 1] and snaps[j + 1][t].hash == hashes[t] for t in seq)
                                  and set(snaps[j + 1]) == set(snaps[j])))
        consistency = sum(flags) / len(flags) if flags else 0.0
        crit = [cl.exception for cl in calls if cl.critical]
        res.tests.append(make_test("patterns", consistency, threshold=config.pass_threshold, critical=bool(crit),
                                   error=crit[0] if crit else (None if consistency >= config.pass_threshold else
                                                               "repeats did not run the same registered tools rightly"),
                                   details={"query": case.query, "step_tools": seqs, "right": right,
                                            "repeats": len(calls),
                                            "added_in_session": added if first is not None else []}))
    res.metrics = {"reuse_rate": float(metrics.reuse_rate(reuse_flags)) if reuse_flags else None,
                   "learning_improvement": improvement, "learning_ci": ci, "learning_curve": curve,
                   "pattern_consistency": consistency}
    return res


# =========================================================================== robustness
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
    if not _reset(agent, res):
        return res
    selected = data.for_category("robustness", config.limit)
    controls: list[AgentCase] = []
    if not any(c.expected_behavior == "answer" for c in selected):
        from evalcore.datasets._agent_cases import request_values

        controls = [c for c in data.cases if c.expected_behavior == "answer" and not c.is_multi_step
                    and c.complexity == "simple" and c not in selected
                    and not any(values_match(v, c.expected, c.rel_tol, c.abs_tol) for v in request_values(c.query))][:3]
    raw: list[tuple[AgentCase, Call, float, str | None]] = []
    answer_tests: list[TestResult] = []
    for case in selected + controls:
        call = call_agent(agent, case.query, config.request_timeout_s)
        r = call.response
        if case.expected_behavior == "answer":
            name = case.id if case in selected else f"control:{case.id}"
            answer_tests.append(_answer_test(name, call, case, config.pass_threshold, expected_behavior="answer"))
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


# =========================================================================== performance
def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def evaluate_performance(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Speed, memory and throughput, counting only correct answers.

    Tests: ``latency:<case>`` = the lower of two measurements taken apart: the first sight
    (``response_time_score`` of the case's first request after the reset, 0 when wrong) and the
    repeats (``response_time_score`` of the median of ``timing_repetitions`` further requests ×
    share of correct ones), so a fast repeat cannot hide a slow first answer; ``memory`` =
    ``memory_score(RSS growth in MB over memory_requests requests)`` × share of correct requests
    (the RSS of the process the agent runs in: the hosting process of a hosted agent, this one
    for an in-process agent; left out, with a note, behind a plain URL); ``throughput`` =
    ``throughput_score(QPS, throughput_target)`` × share of correct answers under load, where
    QPS = correct answers / wall time of ``load_requests`` requests sent by ``workers`` threads
    at once (a wrong answer under load counts for nothing).

    Args:
        agent: The agent.
        data: Cases hinted ``performance``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``median_latency_s``, ``p95_latency_s``,
        ``memory_growth_mb``, ``qps``, ``success_rate_under_load``.
    """
    res = CategoryResult("performance", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    cases = data.for_category("performance", config.limit)
    if not cases:
        res.notes.append("no performance cases")
        return res
    all_lat: list[float] = []
    first_lat: list[float] = []
    for case in cases:
        tier_of = "complex" if case.is_multi_step else "simple"
        first = call_agent(agent, case.query, config.request_timeout_s)
        first_lat.append(first.elapsed_s)
        ftier = float(metrics.response_time_score(first.elapsed_s, tier_of))
        fok = _correct(first, case)
        calls = [call_agent(agent, case.query, config.request_timeout_s) for _ in range(max(1, config.timing_repetitions))]
        lat = [c.elapsed_s for c in calls]
        all_lat.extend(lat)
        med = statistics.median(lat)
        frac = sum(_correct(c, case) for c in calls) / len(calls)
        crit = [c.exception for c in [first, *calls] if c.critical]
        tier = float(metrics.response_time_score(med, tier_of))
        score = min(ftier * fok, tier * frac)
        why = crit[0] if crit else (None if score >= config.pass_threshold else
                                    "slow or wrong on first sight" if ftier * fok < tier * frac else "slow or wrong on repeats")
        res.tests.append(make_test(f"latency:{case.id}", score, threshold=config.pass_threshold,
                                   critical=bool(crit), error=why,
                                   details={"query": case.query, "first_sight_s": first.elapsed_s,
                                            "first_sight_score": ftier, "first_sight_correct": fok,
                                            "latencies_s": lat, "median_s": med,
                                            "time_score": tier, "correct_fraction": frac}))
    # memory growth: the RSS of the process the agent runs in (the hosting process of a hosted
    # agent; this process for an in-process one; unknown behind a plain URL)
    from evalcore.agents._http import HttpAgent

    growth: float | None = None
    rss = getattr(agent, "rss_mb", None)
    read_rss = rss if callable(rss) and type(agent).__name__ == "HostedAgent" else (
        None if isinstance(agent, HttpAgent) else _rss_mb)
    if read_rss is None or read_rss() is None:
        res.notes.append("memory test not run: the agent runs behind a URL, in a process whose memory "
                         "the evaluator cannot read")
    else:
        before = read_rss()
        ok = 0
        crit_m: list[str] = []
        for i in range(config.memory_requests):
            case = cases[i % len(cases)]
            c = call_agent(agent, case.query, config.request_timeout_s)
            ok += _correct(c, case)
            if c.critical:
                crit_m.append(c.exception or "")
        growth = (read_rss() or before) - before
        frac_m = ok / config.memory_requests if config.memory_requests else 0.0
        mscore = float(metrics.memory_score(max(growth, 0.0)))
        res.tests.append(make_test("memory", mscore * frac_m, threshold=config.pass_threshold,
                                   critical=bool(crit_m), error=crit_m[0] if crit_m else None,
                                   details={"rss_before_mb": before, "growth_mb": growth, "memory_score": mscore,
                                            "requests": config.memory_requests, "correct_fraction": frac_m}))
    # throughput under concurrent load
    qps, frac_l, crit_l = _load_test(agent, cases, config.load_requests, config.workers,
                                      config.request_timeout_s)
    tscore = float(metrics.throughput_score(qps, config.throughput_target))
    res.tests.append(make_test("throughput", tscore * frac_l, threshold=config.pass_threshold, critical=bool(crit_l),
                               error=crit_l[0] if crit_l else (None if frac_l == 1.0 else
                                                               f"{1 - frac_l:.0%} of the answers under load were wrong"),
                               details={"qps": qps, "target_qps": config.throughput_target, "workers": config.workers,
                                        "requests": config.load_requests, "correct_fraction": frac_l,
                                        "throughput_score": tscore}))
    srt = sorted(all_lat)
    res.metrics = {"median_latency_s": statistics.median(srt),
                   "median_first_sight_s": statistics.median(first_lat),
                   "p95_latency_s": srt[min(len(srt) - 1, int(round(0.95 * (len(srt) - 1))))],
                   "memory_growth_mb": growth, "qps": qps, "success_rate_under_load": frac_l,
                   "workers": config.workers}
    return res


def _load_test(agent: Any, cases: Sequence[AgentCase], n_requests: int, workers: int,
               timeout_s: float | None = None) -> tuple[float, float, list[str]]:
    """Send ``n_requests`` requests from ``workers`` threads started together.

    Returns:
        ``(qps, correct_fraction, exceptions)`` where qps counts correct answers only.
    """
    if n_requests <= 0:
        return 0.0, 0.0, []
    barrier = threading.Barrier(workers + 1)
    lock = threading.Lock()
    counter = iter(range(n_requests))
    correct = 0
    crit: list[str] = []

    def worker() -> None:
        nonlocal correct
        barrier.wait()
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            case = cases[i % len(cases)]
            c = call_agent(agent, case.query, timeout_s)
            with lock:
                correct += _correct(c, case)
                if c.critical:
                    crit.append(c.exception or "")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(worker) for _ in range(workers)]
        barrier.wait()
        t0 = time.perf_counter()
        for f in futures:
            f.result()
        wall = time.perf_counter() - t0
    return (correct / wall if wall > 0 else 0.0), correct / n_requests, crit


CATEGORY_FUNCTIONS: dict[str, Callable[[Any, SuiteData, SuiteConfig], CategoryResult]] = {
    "functional": evaluate_functional,
    "synthesis": evaluate_synthesis,
    "retrieval": evaluate_retrieval,
    "workflow": evaluate_workflow,
    "learning": evaluate_learning,
    "robustness": evaluate_robustness,
    "performance": evaluate_performance,
}
