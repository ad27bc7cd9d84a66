"""The seven evaluation categories.

Each ``evaluate_<category>(agent, data, config)`` resets the agent first (a fresh, isolated state
with a temporary registry), runs its tests and returns a :class:`CategoryResult`. Every test
scores in [0, 1]; a request whose ``process_request`` raises scores 0 and is recorded as a
critical failure. Answers are compared with :func:`values_match` against
``AgentResponse.result``, never as substrings of the response text.
"""

from __future__ import annotations

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
from evalcore.suites._matching import is_clear_error, values_match
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
            a critical failure (None = no limit).
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
    request_timeout_s: float | None = None

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
    return Call(query, resp, None, elapsed)


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
def _describe(agent: Any, name: str | None) -> dict[str, Any] | None:
    reg = getattr(agent, "registry", None)
    if not name or reg is None or not hasattr(reg, "describe"):
        return None
    try:
        info = reg.describe(name)
    except Exception:
        return None
    return info if isinstance(info, dict) else None


def evaluate_synthesis(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Tool synthesis: success rate and the quality of the synthesized code and tests.

    Success for a case = a correct structured result from a synthesized (or, for a kind seen
    earlier in the category, reused) tool. Test score = ``success · (0.5 + 0.25·code_quality +
    0.25·test_quality)``; when the registry cannot ``describe`` the tool its code and tests cannot
    be read, both qualities count as 0 (score ``0.5·success``, noted in the category), so hiding
    the code never scores better than showing it.

    Args:
        agent: The agent.
        data: Cases (those hinted ``synthesis``).
        config: Evaluation settings.

    Returns:
        The category result; metrics ``synthesis_rate``, ``mean_code_quality``,
        ``mean_test_quality``.
    """
    res = CategoryResult("synthesis", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    successes: list[float] = []
    code_q: list[float] = []
    test_q: list[float] = []
    no_describe = 0
    for case in data.for_category("synthesis", config.limit):
        call = call_agent(agent, case.query, config.request_timeout_s)
        r = call.response
        correct = _correct(call, case)
        made = r is not None and (bool(r.synthesized) or bool(r.reused)) and bool(r.tool_used)
        success = correct and made
        successes.append(float(success))
        details: dict[str, Any] = {"case_id": case.id, "kind": case.kind, "expected": case.expected,
                                   **call.summary(), "correct": correct}
        score = 0.0
        err: str | None = None
        if success:
            info = _describe(agent, r.tool_used)  # type: ignore[union-attr]
            if info is None:
                no_describe += 1
                score = 0.5
                details["quality"] = None
                err = "the synthesized tool's code and tests could not be read (no describe()); quality counts as 0"
            else:
                cq = code_quality(info.get("code"))
                tq = test_quality(info.get("tests"), r.tool_used)  # type: ignore[union-attr]
                code_q.append(cq["score"])
                test_q.append(tq["score"])
                details["code_quality"] = cq
                details["test_quality"] = tq
                score = 0.5 + 0.25 * cq["score"] + 0.25 * tq["score"]
        elif call.critical:
            err = f"exception escaped the agent: {call.exception}"
        elif not correct:
            err = "no correct result" + (f": {r.error}" if r is not None and r.error else "")
        else:
            err = "correct result but no tool was synthesized or reused"
        res.tests.append(make_test(case.id, score, threshold=config.pass_threshold, critical=call.critical,
                                   error=err, duration_s=call.elapsed_s, details=details))
    if no_describe:
        res.notes.append(f"{no_describe} synthesized tool(s) could not be described (the registry has no "
                         "describe(), or it failed); their code and test quality count as 0")
    res.metrics = {
        "synthesis_rate": sum(successes) / len(successes) if successes else 0.0,
        "mean_code_quality": sum(code_q) / len(code_q) if code_q else None,
        "mean_test_quality": sum(test_q) / len(test_q) if test_q else None,
        "n_cases": len(successes),
    }
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


def _search(registry: Any, query: str, k: int, threshold: float) -> list[tuple[str, float]]:
    hits = registry.search(query, k=k, threshold=threshold)
    return [(h.name, float(h.score)) for h in hits][:k]


def _label_tools(agent: Any, registry: Any, cases: Sequence[AgentCase], res: CategoryResult,
                 config: SuiteConfig) -> tuple[dict[str, str], set[str]]:
    """Relevant tool per kind: a registered tool named like the kind (or an alias of it), else the
    tool the agent used when it answered the kind's first case correctly (that teaching query is
    then not evaluated)."""
    labels: dict[str, str] = {}
    tried: set[str] = set()
    teach: set[str] = set()
    try:
        names = set(registry.list_tools())
    except Exception as exc:
        res.notes.append(f"list_tools() raised {type(exc).__name__}: {exc}")
        names = set()
    for case in cases:
        if case.kind in labels or case.kind in tried:
            continue
        tried.add(case.kind)
        named = [n for n in config.aliases(case.kind) if n in names]
        if named:
            labels[case.kind] = named[0]
            continue
        call = call_agent(agent, case.query, config.request_timeout_s)
        teach.add(case.query)
        if call.critical:
            res.tests.append(make_test(f"teach:{case.id}", 0.0, critical=True, error=call.exception,
                                       details=call.summary()))
        tool = call.response.tool_used if call.response is not None else None
        try:
            names = set(registry.list_tools())
        except Exception:
            pass
        if _correct(call, case) and tool and tool in names:
            labels[case.kind] = tool
    return labels, teach


def evaluate_retrieval(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Retrieval quality of the agent's tool registry.

    Relevant tool per query: the starter tool named like the case's kind, or the tool the agent
    built when it first answered a case of that kind correctly (kinds it never answered have no
    relevant tool and are left out, noted). Per query: the thresholded top-k gives precision,
    recall and F1 (the test score); the unthresholded top-k gives reciprocal rank and NDCG@k.
    Further tests: ``false_positive_rate`` (score ``(1 − FPR) · R̄``, FPR = share of unrelated
    queries with any match at or above the threshold, R̄ = mean recall of the labelled queries at
    the same threshold, 0 when none is labelled — a search that returns nothing has no false
    positives but finds nothing either) and one ``paraphrase:<group>`` test per group
    (share of paraphrases whose thresholded top-1 equals the group's modal top-1, 0 when that
    modal tool is not the relevant one).

    Args:
        agent: The agent (``agent.registry`` must answer ``search`` and ``list_tools``).
        data: Cases hinted ``retrieval``, paraphrase groups, unrelated queries.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``precision``, ``recall``, ``f1``, ``mrr``, ``ndcg_at_k``,
        ``fpr``, ``paraphrase_robustness`` and the threshold used.
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
    cases = [c for c in data.for_category("retrieval", config.limit)
             if c.expected_behavior == "answer" and not c.is_multi_step]
    group_cases = [c for g in data.paraphrase_groups for c in g]
    labels, teach = _label_tools(agent, registry, cases + group_cases, res, config)
    unlabelled = sorted({c.kind for c in cases + group_cases} - set(labels))
    if unlabelled:
        res.notes.append(f"no relevant tool exists for kinds {unlabelled} (the agent never answered them "
                         "correctly); their queries are not scored for retrieval")
    per_query: list[dict[str, float]] = []
    for case in cases + group_cases:
        if case.kind not in labels or case.query in teach:
            continue
        relevant = {labels[case.kind]}
        try:
            ranked = _search(registry, case.query, k, 0.0)
            above = [n for n, s in ranked if s >= thr]
        except Exception as exc:
            res.tests.append(make_test(f"query:{case.id}", 0.0, critical=True,
                                       error=f"search raised {type(exc).__name__}: {exc}"))
            continue
        names = [n for n, _ in ranked]
        p, r, f1 = _prf(above, relevant)
        rr = float(metrics.mrr(names, relevant))
        nd = float(metrics.ndcg_at_k(names, relevant, k))
        per_query.append({"precision": p, "recall": r, "f1": f1, "rr": rr, "ndcg": nd})
        res.tests.append(make_test(f"query:{case.id}", f1, threshold=config.pass_threshold, details={
            "query": case.query, "relevant": sorted(relevant), "ranked": ranked, "above_threshold": above,
            "precision": p, "recall": r, "f1": f1, "reciprocal_rank": rr, "ndcg_at_k": nd}))
    # false positives on unrelated queries
    fp_flags: list[bool] = []
    fp_detail: list[dict[str, Any]] = []
    for q in data.unrelated:
        try:
            hits = _search(registry, q, k, thr)
        except Exception as exc:
            res.tests.append(make_test("false_positive_rate", 0.0, critical=True,
                                       error=f"search raised {type(exc).__name__}: {exc}"))
            fp_flags = []
            break
        fp_flags.append(bool(hits))
        fp_detail.append({"query": q, "matches": hits})
    fpr = None
    if fp_flags:
        fpr = float(metrics.fpr([0] * len(fp_flags), [int(f) for f in fp_flags]))
        # a search that never returns anything has FPR 0: the test also needs the same threshold
        # to let the relevant tools through (mean recall of the labelled queries), so it cannot
        # pass by returning nothing
        recall_at_thr = (sum(q["recall"] for q in per_query) / len(per_query)) if per_query else 0.0
        res.tests.append(make_test(
            "false_positive_rate", (1.0 - fpr) * recall_at_thr, threshold=config.pass_threshold,
            error=None if per_query else "no labelled query shows that relevant tools pass this threshold",
            details={"fpr": fpr, "threshold": thr, "recall_at_threshold": recall_at_thr if per_query else None,
                     "queries": fp_detail}))
    # paraphrase robustness
    robust: list[float] = []
    for group in data.paraphrase_groups:
        kind = group[0].kind
        if kind not in labels:
            continue
        tops: list[str | None] = []
        for c in group:
            try:
                hits = _search(registry, c.query, 1, thr)
            except Exception:
                hits = []
            tops.append(hits[0][0] if hits else None)
        modal, count = Counter(tops).most_common(1)[0]
        score = count / len(tops) if modal is not None and modal == labels[kind] else 0.0
        robust.append(score)
        res.tests.append(make_test(f"paraphrase:{group[0].paraphrase_group}", score,
                                   threshold=config.pass_threshold,
                                   details={"queries": [c.query for c in group], "top1": tops,
                                            "relevant": labels[kind]}))
    def mean(key: str) -> float | None:
        return sum(q[key] for q in per_query) / len(per_query) if per_query else None

    res.metrics = {"precision": mean("precision"), "recall": mean("recall"), "f1": mean("f1"),
                   "mrr": mean("rr"), "ndcg_at_k": mean("ndcg"), "k": k, "threshold": thr, "fpr": fpr,
                   "paraphrase_robustness": sum(robust) / len(robust) if robust else None,
                   "n_queries": len(per_query), "labels": labels}
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
def evaluate_learning(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Learning from use.

    Tests: ``reuse:<group>`` per paraphrase group (after the first query, the share of
    paraphrases answered correctly by reusing the tool the first one used); ``learning_curve``
    (a request needing a tool of a kind not met before, repeated ``learning_repeats`` times:
    improvement = 1 −
    median(later timings) / first timing; score = share of correct repeats ×
    min(1, max(0, improvement) / learning_target)); ``patterns`` when the agent has
    ``workflow_patterns()`` (a dependent multi-step request sent ``pattern_repeats`` times must
    show up as a pattern with that many counts: 1, fewer counts: 0.5, absent: 0; 0 when the
    last answer is wrong).

    Args:
        agent: The agent.
        data: Paraphrase groups and cases.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``reuse_rate``, ``learning_improvement``,
        ``patterns_recorded``.
    """
    res = CategoryResult("learning", threshold=config.pass_threshold)
    if not _reset(agent, res):
        return res
    reuse_flags: list[bool] = []
    for group in data.paraphrase_groups:
        calls = [call_agent(agent, c.query, config.request_timeout_s) for c in group]
        first = calls[0]
        tool = first.response.tool_used if first.response is not None else None
        flags = [_correct(cl, c) and cl.response is not None and bool(cl.response.reused)
                 and tool is not None and cl.response.tool_used == tool
                 for cl, c in zip(calls[1:], group[1:], strict=True)]
        reuse_flags.extend(flags)
        crit = [cl.exception for cl in calls if cl.critical]
        res.tests.append(make_test(
            f"reuse:{group[0].paraphrase_group}", sum(flags) / len(flags) if flags else 0.0,
            threshold=config.pass_threshold, critical=bool(crit), error=crit[0] if crit else None,
            details={"first_tool": tool, "calls": [cl.summary() for cl in calls], "reused_correctly": flags}))
    # learning curve
    grouped = {c.query for g in data.paraphrase_groups for c in g}
    group_kinds = {c.kind for g in data.paraphrase_groups for c in g}
    single = [c for c in data.cases if c.expected_behavior == "answer" and not c.is_multi_step
              and c.query not in grouped]
    # prefer a request needing a tool the agent has not met yet (its first encounter must build it)
    pool = ([c for c in single if c.needs_synthesis and c.kind not in group_kinds]
            or [c for c in single if c.needs_synthesis] or single)
    improvement = None
    if pool and config.learning_repeats >= 2:
        case = pool[0]
        calls = [call_agent(agent, case.query, config.request_timeout_s) for _ in range(config.learning_repeats)]
        times = [c.elapsed_s for c in calls]
        later = statistics.median(times[1:])
        improvement = float(metrics.learning_curve_improvement([[times[0]], times[1:]]))
        correct = [_correct(c, case) for c in calls[1:]]
        frac = sum(correct) / len(correct)
        score = frac * min(1.0, max(0.0, improvement) / config.learning_target)
        crit = [cl.exception for cl in calls if cl.critical]
        res.tests.append(make_test("learning_curve", score, threshold=config.pass_threshold,
                                   critical=bool(crit), error=crit[0] if crit else None,
                                   details={"query": case.query, "timings_s": times, "first_s": times[0],
                                            "median_later_s": later, "improvement": improvement,
                                            "correct_repeats": correct}))
    # workflow patterns
    patterns_recorded = None
    if hasattr(agent, "workflow_patterns"):
        dep = [c for c in data.cases if "dependent" in c.tags]
        if dep:
            case = dep[0]
            calls = [call_agent(agent, case.query, config.request_timeout_s) for _ in range(max(1, config.pattern_repeats))]
            tools = ([s.tool for s in calls[-1].response.steps] if calls[-1].response is not None else [])
            try:
                patterns = dict(agent.workflow_patterns())
            except Exception as exc:
                patterns = {}
                res.notes.append(f"workflow_patterns() raised {type(exc).__name__}: {exc}")
            best = 0
            for key, count in patterns.items():
                if tools and len(tools) > 1 and _in_order(str(key), tools):
                    best = max(best, int(count))
            final_ok = calls[-1].response is not None and bool(score_workflow(case, calls[-1].response, config)["final"])
            score = (1.0 if best >= config.pattern_repeats else (0.5 if best > 0 else 0.0)) * final_ok
            patterns_recorded = best
            crit = [cl.exception for cl in calls if cl.critical]
            res.tests.append(make_test("patterns", score, threshold=config.pass_threshold, critical=bool(crit),
                                       error=crit[0] if crit else None,
                                       details={"query": case.query, "step_tools": tools,
                                                "patterns": patterns, "best_count": best,
                                                "repeats": config.pattern_repeats}))
    else:
        res.notes.append("the agent has no workflow_patterns(); the patterns test was not run")
    res.metrics = {"reuse_rate": float(metrics.reuse_rate(reuse_flags)) if reuse_flags else None,
                   "learning_improvement": improvement, "patterns_recorded": patterns_recorded}
    return res


def _in_order(key: str, tools: Sequence[str]) -> bool:
    """Whether ``tools`` appear in order among the tool names of a pattern key such as
    ``"factorial -> percentage"`` (separators ``->``, ``,``, ``|`` or whitespace)."""
    parts = iter(p for p in re.split(r"\s*(?:->|,|\|)\s*|\s+", key.strip()) if p)
    return all(any(p == t for p in parts) for t in tools)


# =========================================================================== robustness
def evaluate_robustness(agent: Any, data: SuiteData, config: SuiteConfig) -> CategoryResult:
    """Invalid, ambiguous and boundary requests.

    Raw score per case: ``error`` cases 1 when ``success`` is False with a clear error message
    (:func:`is_clear_error`), 0.5 when it fails without one, 0 when it claims success;
    ``clarification`` cases 1 when the agent asks for clarification or fails with a clear error,
    0 when it claims success; ``answer`` (boundary) cases 1 when the result matches. An escaped
    exception scores 0 and is a critical failure.

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
        controls = [c for c in data.cases if c.expected_behavior == "answer" and not c.is_multi_step
                    and c.complexity == "simple" and c not in selected][:3]
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
        elif r is not None and r.success and not (case.expected_behavior == "clarification"
                                                  and r.needs_clarification):
            score, err = 0.0, "claimed success on a request that should fail or ask"
        elif case.expected_behavior == "clarification" and r is not None and r.needs_clarification:
            score = 1.0
        elif r is not None and is_clear_error(r.error):
            score = 1.0
        else:
            score, err = 0.5, "failed without a clear error message"
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

    Tests: ``latency:<case>`` = ``response_time_score(median latency of timing_repetitions
    runs)`` × share of correct runs; ``memory`` = ``memory_score(RSS growth in MB over
    memory_requests requests)`` × share of correct requests (RSS of this process, so the test
    is left out, with a note, for an :class:`~evalcore.agents.HttpAgent`); ``throughput`` =
    ``throughput_score(QPS)`` where QPS = correct answers / wall time of ``load_requests``
    requests sent by ``workers`` threads at once.

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
    for case in cases:
        calls = [call_agent(agent, case.query, config.request_timeout_s) for _ in range(max(1, config.timing_repetitions))]
        lat = [c.elapsed_s for c in calls]
        all_lat.extend(lat)
        med = statistics.median(lat)
        frac = sum(_correct(c, case) for c in calls) / len(calls)
        crit = [c.exception for c in calls if c.critical]
        tier = float(metrics.response_time_score(med, "complex" if case.is_multi_step else "simple"))
        res.tests.append(make_test(f"latency:{case.id}", tier * frac, threshold=config.pass_threshold,
                                   critical=bool(crit), error=crit[0] if crit else None,
                                   details={"query": case.query, "latencies_s": lat, "median_s": med,
                                            "time_score": tier, "correct_fraction": frac}))
    # memory growth (this process's RSS: it says nothing about an agent behind HTTP)
    from evalcore.agents._http import HttpAgent

    growth: float | None = None
    if isinstance(agent, HttpAgent):
        res.notes.append("memory test not run: the agent runs in another process (HTTP), whose memory "
                         "this process cannot read")
    else:
        before = _rss_mb()
        ok = 0
        crit_m: list[str] = []
        for i in range(config.memory_requests):
            case = cases[i % len(cases)]
            c = call_agent(agent, case.query, config.request_timeout_s)
            ok += _correct(c, case)
            if c.critical:
                crit_m.append(c.exception or "")
        growth = _rss_mb() - before
        frac_m = ok / config.memory_requests if config.memory_requests else 0.0
        mscore = float(metrics.memory_score(max(growth, 0.0)))
        res.tests.append(make_test("memory", mscore * frac_m, threshold=config.pass_threshold,
                                   critical=bool(crit_m), error=crit_m[0] if crit_m else None,
                                   details={"rss_before_mb": before, "growth_mb": growth, "memory_score": mscore,
                                            "requests": config.memory_requests, "correct_fraction": frac_m}))
    # throughput under concurrent load
    qps, frac_l, crit_l = _load_test(agent, cases, config.load_requests, config.workers,
                                      config.request_timeout_s)
    tscore = float(metrics.throughput_score(qps))
    res.tests.append(make_test("throughput", tscore, threshold=config.pass_threshold, critical=bool(crit_l),
                               error=crit_l[0] if crit_l else None,
                               details={"qps": qps, "workers": config.workers, "requests": config.load_requests,
                                        "correct_fraction": frac_l, "throughput_score": tscore}))
    srt = sorted(all_lat)
    res.metrics = {"median_latency_s": statistics.median(srt),
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
