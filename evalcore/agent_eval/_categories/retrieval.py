"""Retrieval quality of the agent's tool registry, with relevance labels measured by the evaluator."""

from __future__ import annotations

import itertools
import json
import math
import random
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalcore import metrics
from evalcore.agent_eval._calling import call_agent, reset_agent, snapshot
from evalcore.agent_eval._case_results import CategoryResult, make_test
from evalcore.agent_eval._cases.kinds import STARTER_KINDS
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._measure import ToolChecker, infer_binding
from evalcore.agent_eval._observed import ToolRecord
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _agent_threshold(agent: Agent, config: AgentEvalConfig) -> float:
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
        rows = json.loads(
            json.dumps([[getattr(h, "name", None), getattr(h, "score", None)] for h in hits], default=repr)
        )
    except Exception as exc:
        raise MalformedSearch(f"search raised {type(exc).__name__}: {exc}") from exc
    out: list[tuple[str, float]] = []
    for name, score in rows:
        if (
            not isinstance(name, str)
            or isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(score)
        ):
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


def _teach(
    agent: Agent, cases: Sequence[AgentCase], res: CategoryResult, config: AgentEvalConfig
) -> tuple[dict[str, AgentCase], dict[tuple[str, str], dict[str, Any]]]:
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
            res.tests.append(
                make_test(f"teach:{case.id}", 0.0, critical=True, error=call.exception, details=call.summary())
            )
        r = call.response
        if r is not None and r.success:
            for st in r.steps:
                if st.tool and st.error is None and isinstance(st.args, dict):
                    observed.setdefault((st.tool, case.kind), st.args)
    return taught, observed


def _relevance(
    tools: dict[str, ToolRecord],
    queries: Sequence[AgentCase],
    taught: dict[str, AgentCase],
    observed: dict[tuple[str, str], dict[str, Any]],
    checker: ToolChecker,
) -> dict[str, set[str]]:
    """Relevant tools per query id, measured: the evaluator runs every registered tool on each
    query's own inputs (bound as the agent bound them when it used the tool, else by the tool's
    signature) and a tool is relevant when its output is the query's answer."""
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


def evaluate_retrieval(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Retrieval quality of the agent's tool registry, with relevance labels from the evaluator.

    First each kind's first query that no tool registered at the reset computes is sent once (a
    teaching request) so the agent can build its tool; every query is then scored. Then the
    relevant tools of each query are measured: the evaluator runs every
    registered tool on the query's own inputs in the sandbox and a tool is relevant when it gives
    the expected answer. A query no registered tool answers counts as a miss (score 0), never
    dropped. Every query (related, paraphrase and unrelated alike) is searched once, with the
    same ``k`` and threshold 0 (the evaluator applies the threshold to the scores), in an order
    drawn from a secret seed that interleaves the kinds: no kind of test is recognisable from its
    call, only from its query (a search that answered from ``k`` and the threshold scored 1.0).
    Per query: the thresholded top-k gives precision, recall and F1 (the test score);
    the unthresholded top-k gives reciprocal rank and NDCG@k. Every related query's and
    paraphrase group's credit is scaled by the *discrimination*, the share of unrelated queries
    left without a match at the threshold, so a search whose answer does not depend on the
    query (one tool for everything, or nothing) earns nothing. Further tests: one
    ``unrelated:<i>`` test per unrelated query (score 0 when any tool matches at or above the
    threshold, else R̄, the mean recall of the queries at the same threshold: a search that
    never answers earns nothing for its silence; the metric ``fpr`` is the share of unrelated
    queries with a match) and one ``paraphrase:<group>`` test per group (share of paraphrases
    whose thresholded top-1 equals
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
        ``fpr``, ``discrimination``, ``paraphrase_robustness``, the threshold and ``n_misses``.
    """
    res = CategoryResult("retrieval", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    registry = getattr(agent, "registry", None)
    if registry is None or not hasattr(registry, "search"):
        res.tests.append(make_test("registry_available", 0.0, error="the agent exposes no searchable registry"))
        return res
    sc = _label_and_search(agent, registry, data, config, res)
    per_query = _query_tests(sc)
    # false positives: one test per unrelated query, worth as much as a related one (a search
    # that answers its one tool to everything fails each); the credit for staying silent is the
    # mean recall at the same threshold, so a search that never answers earns none
    _unrelated_tests(sc, data.unrelated, per_query)
    fpr = float(metrics.fpr([0] * len(sc.fp_flags), [int(f) for f in sc.fp_flags])) if sc.fp_flags else None
    robust = _paraphrase_tests(sc, data.paraphrase_groups)

    def mean(key: str) -> float | None:
        return sum(q[key] for q in per_query) / len(per_query) if per_query else None

    res.metrics = {
        "precision": mean("precision"),
        "recall": mean("recall"),
        "f1": mean("f1"),
        "mrr": mean("rr"),
        "ndcg_at_k": mean("ndcg"),
        "k": sc.k,
        "threshold": sc.thr,
        "fpr": fpr,
        "paraphrase_robustness": sum(robust) / len(robust) if robust else None,
        "discrimination": sc.discrimination,
        "n_queries": len(per_query),
        "n_misses": sum(not sc.labels.get(c.id) for c in sc.scored),
        "labels": {c.id: sorted(sc.labels.get(c.id, set())) for c in sc.scored},
    }
    return res


@dataclass
class _Scoring:
    """What the retrieval tests are scored from: the threshold and ``k``, the scored queries,
    their measured relevance labels, every search's answer (or why it was malformed), and the
    credit factors (see :func:`evaluate_retrieval`)."""

    res: CategoryResult
    config: AgentEvalConfig
    thr: float
    k: int
    scored: list[AgentCase]
    labels: dict[str, set[str]]
    answers: dict[str, list[tuple[str, float]] | str] = field(default_factory=dict)
    served_at_reset: set[str] = field(default_factory=set)
    built_credit: float = 1.0
    fp_flags: list[bool] = field(default_factory=list)
    discrimination: float = 1.0


def _retrieval_cases(data: AgentEvalData, config: AgentEvalConfig) -> tuple[list[AgentCase], list[AgentCase]]:
    """The single-step answer cases hinted ``retrieval`` (starter and other kinds interleaved,
    at most ``config.limit``) and every paraphrase group's cases."""
    pool = [c for c in data.for_category("retrieval") if c.expected_behavior == "answer" and not c.is_multi_step]
    starter = [c for c in pool if c.kind in STARTER_KINDS]
    other = [c for c in pool if c.kind not in STARTER_KINDS]
    mixed = [c for pair in itertools.zip_longest(starter, other) for c in pair if c is not None]
    cases = mixed[: config.limit] if config.limit is not None else mixed
    return cases, [c for g in data.paraphrase_groups for c in g]


def _label_and_search(
    agent: Agent, registry: Any, data: AgentEvalData, config: AgentEvalConfig, res: CategoryResult
) -> _Scoring:
    """Teach, label and search: each kind's first query that no tool registered at the reset
    computes is sent once; every registered tool is then run on every scored query's inputs
    (the relevance labels); every query is searched once; the credit factors follow."""
    thr = _agent_threshold(agent, config)
    cases, group_cases = _retrieval_cases(data, config)
    checker = ToolChecker(config.n_held_out, config.sandbox_timeout_s)
    # kinds whose first query no tool registered at the reset computes are taught once
    firsts: dict[str, AgentCase] = {}
    for c in cases + group_cases:
        firsts.setdefault(c.kind, c)
    initial = _relevance(snapshot(agent, res), list(firsts.values()), {}, {}, checker)
    to_teach = [c for c in firsts.values() if not initial.get(c.id)]
    taught, observed = _teach(agent, to_teach, res, config)
    scored = cases + group_cases
    tools = snapshot(agent, res)
    labels = _relevance(tools, scored, taught, observed, checker)
    if checker.stalled:
        stalled = sorted({(name, kind) for _h, name, kind in checker.stalled})
        res.notes.append(
            f"tools that ran out of time ({config.sandbox_timeout_s:g} s) on a kind's queries, not run on "
            "that kind again: " + ", ".join(f"{n} on {k}" for n, k in stalled)
        )
    misses = sorted({c.kind for c in scored if not labels.get(c.id)})
    if misses:
        res.notes.append(
            f"no registered tool computes kinds {misses} (the evaluator ran every tool on their "
            "queries); those queries count as misses"
        )
    sc = _Scoring(res, config, thr, config.k, scored, labels)
    sc.answers = _search_all(registry, [c.query for c in scored] + list(data.unrelated), sc.k)
    sc.served_at_reset = {c.kind for c in firsts.values() if initial.get(c.id)}
    _built_credit(sc)
    _discrimination(sc, data.unrelated)
    return sc


def _search_all(registry: Any, queries: list[str], k: int) -> dict[str, list[tuple[str, float]] | str]:
    """Search every query once, each answer or the reason it was malformed.

    Every search is one call with the same k and threshold (0: the evaluator applies the
    threshold to the scores itself), related, paraphrase and unrelated queries interleaved in
    an order drawn from a secret seed, each query searched once: no test kind is recognisable
    from its call or its place, only from its text.
    """
    probes = list(dict.fromkeys(queries))
    random.Random(secrets.randbits(64)).shuffle(probes)
    answers: dict[str, list[tuple[str, float]] | str] = {}
    for q in probes:
        try:
            answers[q] = _search(registry, q, k, 0.0)
        except (MalformedSearch, EvalcoreError) as exc:
            answers[q] = str(exc)
    return answers


def _built_credit(sc: _Scoring) -> None:
    """Set ``sc.built_credit``: queries of kinds a tool registered at the reset already served
    earn in proportion to how well the search finds the tools the agent built during the
    session (the mean F1 of those queries at the threshold; 1 when every kind was served)."""
    built_f1: list[float] = []
    for case in sc.scored:
        if case.kind in sc.served_at_reset:
            continue
        relevant = sc.labels.get(case.id, set())
        ranked_or_err = sc.answers[case.query]
        if isinstance(ranked_or_err, str) or not relevant:
            built_f1.append(0.0)
            continue
        built_f1.append(_prf([n for n, s in ranked_or_err if s >= sc.thr], relevant)[2])
    sc.built_credit = sum(built_f1) / len(built_f1) if built_f1 else 1.0
    if sc.built_credit < 1.0 and sc.served_at_reset:
        sc.res.notes.append(
            f"queries served by tools registered at the reset ({sorted(sc.served_at_reset)}) are credited "
            f"× {sc.built_credit:.2f}, the mean F1 on the tools the agent built during the session"
        )


def _discrimination(sc: _Scoring, unrelated: Sequence[str]) -> None:
    """Set ``sc.fp_flags`` and ``sc.discrimination``: telling related from unrelated queries,
    the share of unrelated queries left without a match at the threshold. Every related
    query's credit is scaled by it, so a search that answers the same whatever the query (its
    one tool to everything, or nothing) earns nothing."""
    for q in unrelated:
        got = sc.answers[q]
        if isinstance(got, str):
            sc.fp_flags.append(True)  # a malformed answer tells nothing apart
        else:
            sc.fp_flags.append(any(s >= sc.thr for _n, s in got))
    sc.discrimination = 1.0 - sum(sc.fp_flags) / len(sc.fp_flags) if sc.fp_flags else 1.0
    if not sc.fp_flags:
        sc.res.notes.append(
            "no unrelated query: whether the search's answers depend on the query is not measured (n_unrelated = 0)"
        )
    if sc.discrimination < 1.0:
        sc.res.notes.append(
            f"related queries are credited × {sc.discrimination:.2f}, the share of unrelated queries the "
            "search left without a match at the threshold"
        )


def _query_tests(sc: _Scoring) -> list[dict[str, float]]:
    """One ``query:<id>`` test per scored query (F1 at the threshold, scaled by the credit
    factors); returns per query its precision, recall, F1, reciprocal rank and NDCG@k."""
    per_query: list[dict[str, float]] = []
    for case in sc.scored:
        relevant = sc.labels.get(case.id, set())
        factor = (sc.built_credit if case.kind in sc.served_at_reset else 1.0) * sc.discrimination
        got = sc.answers[case.query]
        if isinstance(got, str):
            per_query.append({"precision": 0.0, "recall": 0.0, "f1": 0.0, "rr": 0.0, "ndcg": 0.0})
            sc.res.tests.append(make_test(f"query:{case.id}", 0.0, error=f"malformed search answer: {got}"))
            continue
        ranked = got
        above = [n for n, s in ranked if s >= sc.thr]
        names = [n for n, _ in ranked]
        if relevant:
            p, r, f1 = (factor * v for v in _prf(above, relevant))
            rr = factor * float(metrics.mrr(names, relevant))
            nd = factor * float(metrics.ndcg_at_k(names, relevant, sc.k))
        else:
            p = r = f1 = rr = nd = 0.0
        per_query.append({"precision": p, "recall": r, "f1": f1, "rr": rr, "ndcg": nd})
        sc.res.tests.append(
            make_test(
                f"query:{case.id}",
                f1,
                threshold=sc.config.pass_threshold,
                error=None if relevant else "miss: no registered tool computes this request",
                details={
                    "query": case.query,
                    "kind": case.kind,
                    "relevant": sorted(relevant),
                    "ranked": ranked,
                    "above_threshold": above,
                    "precision": p,
                    "recall": r,
                    "f1": f1,
                    "reciprocal_rank": rr,
                    "ndcg_at_k": nd,
                    "discrimination": sc.discrimination,
                },
            )
        )
    return per_query


def _unrelated_tests(sc: _Scoring, unrelated: Sequence[str], per_query: list[dict[str, float]]) -> None:
    """One ``unrelated:<i>`` test per unrelated query: 0 on a match at the threshold, else the
    related queries' mean recall at that threshold (silence alone earns nothing)."""
    recall_at_thr = (sum(q["recall"] for q in per_query) / len(per_query)) if per_query else 0.0
    for i, q in enumerate(unrelated):
        got = sc.answers[q]
        if isinstance(got, str):
            sc.res.tests.append(
                make_test(f"unrelated:{i}", 0.0, error=f"malformed search answer: {got}", details={"query": q})
            )
            continue
        matched = [h for h in got if h[1] >= sc.thr]
        sc.res.tests.append(
            make_test(
                f"unrelated:{i}",
                0.0 if matched else recall_at_thr,
                threshold=sc.config.pass_threshold,
                error=(
                    f"false positive: {matched[0][0]} matched at {matched[0][1]:.3g}"
                    if matched
                    else "no query shows that relevant tools pass this threshold"
                    if not per_query
                    else "no match, but the related queries' mean recall at this threshold is 0: silence earns nothing"
                    if recall_at_thr == 0
                    else None
                ),
                details={
                    "query": q,
                    "matches": got,
                    "threshold": sc.thr,
                    "recall_at_threshold": recall_at_thr if per_query else None,
                },
            )
        )


def _paraphrase_tests(sc: _Scoring, groups: Sequence[Sequence[AgentCase]]) -> list[float]:
    """One ``paraphrase:<group>`` test per group: the share of members whose thresholded top-1
    (of their shared search) is the group's modal top-1, 0 unless that tool is relevant,
    scaled by the credit factors; returns the scores."""
    robust: list[float] = []
    for group in groups:
        tops: list[str | None] = []
        malformed = None
        for c in group:
            got = sc.answers[c.query]
            if isinstance(got, str):
                hits, malformed = [], got
            else:
                hits = [h for h in got if h[1] >= sc.thr]
            tops.append(hits[0][0] if hits else None)
        modal, count = Counter(tops).most_common(1)[0]
        relevant_all = set.intersection(*[sc.labels.get(c.id, set()) for c in group]) if group else set()
        score = count / len(tops) if modal is not None and modal in relevant_all else 0.0
        if group and group[0].kind in sc.served_at_reset:
            score *= sc.built_credit
        score *= sc.discrimination
        robust.append(score)
        sc.res.tests.append(
            make_test(
                f"paraphrase:{group[0].paraphrase_group}",
                score,
                threshold=sc.config.pass_threshold,
                error=(
                    f"malformed search answer: {malformed}"
                    if malformed
                    else None
                    if score
                    else "the modal top-1 tool is not relevant"
                ),
                details={"queries": [c.query for c in group], "top1": tops, "relevant": sorted(relevant_all)},
            )
        )
    return robust


def _prf(retrieved: Sequence[str], relevant: set[str]) -> tuple[float, float, float]:
    out = metrics.precision_recall_f1(list(retrieved), relevant)
    if isinstance(out, dict):
        return float(out["precision"]), float(out["recall"]), float(out["f1"])
    p, r, f = out
    return float(p), float(r), float(f)
