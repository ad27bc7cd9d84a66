"""Performance: speed, memory and throughput, counting only correct answers."""

from __future__ import annotations

import random
import secrets
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from evalcore import metrics
from evalcore.agent_eval._calling import call_agent, is_correct, reset_agent, snapshot
from evalcore.agent_eval._case_results import CaseResult, CategoryResult, make_test
from evalcore.agent_eval._cases.kinds import (
    VARIABLE_SLOTS,
    render_query,
    sample_inputs,
    solve_kind,
)
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._categories._common import drawn_case
from evalcore.agent_eval._categories._reset_check import cache_check, registry_carried
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData
from evalcore.agent_eval._observed import HeldMemory, held_memory

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _memory_reader(agent: Agent) -> tuple[Callable[[], HeldMemory | None] | None, str]:
    """How the memory the agent holds is read, and of what: the process tree of a hosted agent
    (its host process and every process below it), this process for an in-process agent
    (debugging only: the evaluator's own memory is in it), nothing behind a plain URL."""
    import os

    from evalcore.agents import HttpAgent

    pid = getattr(agent, "pid", None)
    if type(agent).__name__ == "HostedAgent" and isinstance(pid, int):
        return (lambda: held_memory(pid, children=True)), "the hosted agent's process tree"
    if isinstance(agent, HttpAgent):
        return None, ""
    me = os.getpid()
    return (lambda: held_memory(me, children=False)), "this process (the agent runs in the evaluator's)"


def fresh_requests(
    cases: Sequence[AgentCase], n: int, rng: random.Random, seen: set[str] | None = None
) -> list[AgentCase]:
    """``n`` requests cycling through ``cases``, each single-step case of a known kind
    redrawn: a request of that kind with fresh inputs drawn from ``rng`` (canonical phrasing,
    the evaluator's answer, id ``fresh-…``) whose text is in neither ``seen`` (updated) nor the
    cases. A case that cannot be redrawn (multi-step, unknown kind, no inputs: a user's cases
    file) is used as it is (:func:`is_fresh` tells them apart). Timing the load on the very
    requests the agent had just answered let an agent that caches its responses by text look
    fast (a 0.6 s-a-request agent scored throughput 1.0 at 164 answers/s), and so did timing
    first sight on requests the functional category had sent (a 2.2 s-a-request agent with a
    cache kept across ``reset()`` scored 1 ms)."""
    seen = set() if seen is None else seen
    seen.update(c.query for c in cases)
    out: list[AgentCase] = []
    for i in range(max(0, n) if cases else 0):
        case = cases[i % len(cases)]
        if case.is_multi_step or case.kind not in VARIABLE_SLOTS or not case.inputs:
            out.append(case)
            continue
        for _ in range(50):
            x = sample_inputs(case.kind, rng, case.inputs)
            q = render_query(case.kind, x)
            if q not in seen:
                break
        seen.add(q)
        out.append(
            drawn_case(
                f"fresh-{i}-{case.kind}",
                case.kind,
                x,
                q,
                solve_kind(case.kind, x),
                complexity=case.complexity,
                category="performance",
                tag="load",
                expected_tools=case.expected_tools,
            )
        )
    return out


def is_fresh(case: AgentCase) -> bool:
    """Whether ``case`` is a request :func:`fresh_requests` drew (not a case it kept as it is)."""
    return case.id.startswith("fresh-") and case.categories == ["performance"] and case.tags[:1] == ["load"]


N_PROBES = 3
"""Fresh requests sent before the verified reset and again after it (see :mod:`._reset_check`)."""


def evaluate_performance(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
    """Speed, memory and throughput on requests the agent has never seen, after a verified reset.

    Every timed request is fresh (:func:`fresh_requests`: the kinds of the category's cases,
    inputs drawn from a secret seed per run, no text any category sent): a cache of earlier
    responses neither answers them nor hides its growth. Before timing, :data:`N_PROBES` fresh
    requests are sent, the agent is reset and the reset is verified (:mod:`._reset_check`): the
    registry must be what it was after the category's first reset, and after the timing the
    probes are sent again interleaved with as many unseen requests of the same kinds — answered
    much faster than those, they were cached across the reset. State carried across the reset
    is a critical failure: a critical ``reset`` test scoring 0, and every timing test scores 0
    (its "first sight" was none).

    Tests: ``latency:<case>`` = the lower of two measurements on a fresh request of the case's
    kind: the first sight (``response_time_score`` of its first answer, 0 when wrong) and the
    repeats (``response_time_score`` of the median of ``timing_repetitions`` further requests ×
    share of correct ones), so a fast repeat cannot hide a slow first answer; ``memory`` =
    ``memory_score(growth in MB of everything the agent holds over memory_requests requests)`` ×
    share of correct requests (:func:`~evalcore.agent_eval._observed.held_memory`: Σ PSS of the
    hosted agent's process tree plus its memfd and ``/dev/shm`` files and private tmpfs; this
    process for an in-process agent; left out, with a note, behind a plain URL);
    ``throughput`` = ``throughput_score(QPS, throughput_target)`` × share of correct answers
    under load, where QPS = correct answers / wall time of ``load_requests`` requests sent by
    ``workers`` threads at once (a wrong answer under load counts for nothing).

    Args:
        agent: The agent.
        data: Cases hinted ``performance``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``median_latency_s``, ``median_first_sight_s``,
        ``p95_latency_s``, ``memory_growth_mb``, ``memory_how``, ``qps``,
        ``success_rate_under_load``, ``reset`` (what the reset check saw).
    """
    res = CategoryResult("performance", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
        return res
    cases = data.for_category("performance", config.limit)
    if not cases:
        res.notes.append("no performance cases")
        return res
    rng = random.Random(secrets.randbits(64))
    seen: set[str] = {c.query for c in data.cases}
    baseline = snapshot(agent, res)
    probes, timed = _draw_timed(cases, rng, seen, res)
    for p in probes:
        call_agent(agent, p.query, config.request_timeout_s)
    if not reset_agent(agent, res):
        return res
    survived = registry_carried(baseline, snapshot(agent, res))
    carried = [f"tools added or rewritten before reset() are still registered after it: {survived}"] if survived else []
    all_lat: list[float] = []
    first_lat: list[float] = []
    for case, fresh in zip(cases, timed, strict=True):
        res.tests.append(_latency_test(agent, case.id, fresh, config, all_lat, first_lat))
    why, cache = _cache_check(agent, probes, rng, seen, config)
    if why is not None:
        carried.append(why)
    growth, memory_of = _memory_step(agent, res, cases, rng, seen, config)
    qps, frac_l = _throughput_test(agent, res, fresh_requests(cases, config.load_requests, rng, seen), config)
    if carried:
        _fail_carried(res, carried, probes, cache)
    srt = sorted(all_lat)
    res.metrics = {
        "median_latency_s": statistics.median(srt) if srt else None,
        "median_first_sight_s": statistics.median(first_lat) if first_lat else None,
        "p95_latency_s": srt[min(len(srt) - 1, int(round(0.95 * (len(srt) - 1))))] if srt else None,
        "memory_growth_mb": growth,
        "memory_of": memory_of,
        "qps": qps,
        "success_rate_under_load": frac_l,
        "workers": config.workers,
        "reset": {"carried": carried, "registry_survivors": survived, **cache},
    }
    return res


def _cache_check(
    agent: Agent, probes: list[AgentCase], rng: random.Random, seen: set[str], config: AgentEvalConfig
) -> tuple[str | None, dict[str, Any]]:
    """The probes (the fresh ones) sent again, interleaved with as many unseen requests of their
    kinds (:func:`~._reset_check.cache_check`); why they show a cache that outlived the reset
    (None when they do not) and what was seen."""
    drawn = [p for p in probes if is_fresh(p)]
    if not drawn:
        return None, {}
    return cache_check(agent, drawn, fresh_requests(drawn, len(drawn), rng, seen), config.request_timeout_s)


def _draw_timed(
    cases: list[AgentCase], rng: random.Random, seen: set[str], res: CategoryResult
) -> tuple[list[AgentCase], list[AgentCase]]:
    """The :data:`N_PROBES` probe requests and one fresh request per case to time (a note names
    the cases of which none could be drawn: they are timed on their own request)."""
    probes = fresh_requests(cases, N_PROBES, rng, seen)
    timed = [fresh_requests([c], 1, rng, seen)[0] for c in cases]
    stale = [c.id for c, t in zip(cases, timed, strict=True) if not is_fresh(t)]
    if stale:
        res.notes.append(
            f"no fresh request of the kind of {stale} can be drawn (multi-step, unknown kind or no inputs): "
            "timed on the case's own request, which other categories may have sent"
        )
    return probes, timed


def _memory_step(
    agent: Agent,
    res: CategoryResult,
    cases: list[AgentCase],
    rng: random.Random,
    seen: set[str],
    config: AgentEvalConfig,
) -> tuple[float | None, str | None]:
    """Run the ``memory`` test where the agent's memory can be read (a note otherwise).

    Returns:
        The growth in MB and what was measured (both None when not run).
    """
    reader, of_what = _memory_reader(agent)
    reading = reader() if reader is not None else None
    if reading is None:
        res.notes.append(
            "memory test not run: the agent runs behind a URL, in a process whose memory the evaluator cannot read"
        )
        return None, None
    assert reader is not None
    growth = _memory_test(
        agent, res, reader, reading, of_what, fresh_requests(cases, config.memory_requests, rng, seen), config
    )
    return growth, of_what


def _throughput_test(
    agent: Agent, res: CategoryResult, load_cases: list[AgentCase], config: AgentEvalConfig
) -> tuple[float, float]:
    """The ``throughput`` test (appended to ``res``); returns the QPS and the share of correct
    answers under load."""
    qps, frac_l, crit_l = _load_test(agent, load_cases, config.load_requests, config.workers, config.request_timeout_s)
    tscore = float(metrics.throughput_score(qps, config.throughput_target))
    res.tests.append(
        make_test(
            "throughput",
            tscore * frac_l,
            threshold=config.pass_threshold,
            critical=bool(crit_l),
            error=crit_l[0]
            if crit_l
            else (None if frac_l == 1.0 else f"{1 - frac_l:.0%} of the answers under load were wrong"),
            details={
                "qps": qps,
                "target_qps": config.throughput_target,
                "workers": config.workers,
                "requests": config.load_requests,
                "correct_fraction": frac_l,
                "throughput_score": tscore,
            },
        )
    )
    return qps, frac_l


def _fail_carried(res: CategoryResult, carried: list[str], probes: list[AgentCase], cache: dict[str, Any]) -> None:
    """State carried across the reset: every test scores 0 and a critical ``reset`` test leads."""
    why_all = "state carried across reset(): " + "; ".join(carried)
    for t in res.tests:
        t.details["score_before_reset_check"] = t.score
        t.score, t.passed, t.error = 0.0, False, t.error or why_all
    res.tests.insert(
        0,
        make_test("reset", 0.0, critical=True, error=why_all, details={"probes": [p.query for p in probes], **cache}),
    )
    res.notes.append(why_all)


def _latency_test(
    agent: Agent, case_id: str, case: AgentCase, config: AgentEvalConfig, all_lat: list[float], first_lat: list[float]
) -> CaseResult:
    """``latency:<case_id>`` on the fresh request ``case`` (see :func:`evaluate_performance`)."""
    tier_of: Literal["simple", "complex"] = "complex" if case.is_multi_step else "simple"
    first = call_agent(agent, case.query, config.request_timeout_s)
    first_lat.append(first.elapsed_s)
    ftier = float(metrics.response_time_score(first.elapsed_s, tier_of))
    fok = is_correct(first, case)
    calls = [call_agent(agent, case.query, config.request_timeout_s) for _ in range(max(1, config.timing_repetitions))]
    lat = [c.elapsed_s for c in calls]
    all_lat.extend(lat)
    med = statistics.median(lat)
    frac = sum(is_correct(c, case) for c in calls) / len(calls)
    crit = [c.exception for c in [first, *calls] if c.critical]
    tier = float(metrics.response_time_score(med, tier_of))
    score = min(ftier * fok, tier * frac)
    why = (
        crit[0]
        if crit
        else (
            None
            if score >= config.pass_threshold
            else "slow or wrong on first sight"
            if ftier * fok < tier * frac
            else "slow or wrong on repeats"
        )
    )
    return make_test(
        f"latency:{case_id}",
        score,
        threshold=config.pass_threshold,
        critical=bool(crit),
        error=why,
        details={
            "query": case.query,
            "first_sight_s": first.elapsed_s,
            "first_sight_score": ftier,
            "first_sight_correct": fok,
            "latencies_s": lat,
            "median_s": med,
            "time_score": tier,
            "correct_fraction": frac,
        },
    )


def _memory_test(
    agent: Agent,
    res: CategoryResult,
    reader: Callable[[], HeldMemory | None],
    before: HeldMemory,
    of_what: str,
    mem_cases: Sequence[AgentCase],
    config: AgentEvalConfig,
) -> float:
    """The ``memory`` test (appended to ``res``); returns the growth in MB."""
    ok = 0
    crit_m: list[str] = []
    for case in mem_cases:
        c = call_agent(agent, case.query, config.request_timeout_s)
        ok += is_correct(c, case)
        if c.critical:
            crit_m.append(c.exception or "")
    after = reader() or before
    growth = after.total_mb - before.total_mb
    frac_m = ok / len(mem_cases) if mem_cases else 0.0
    mscore = float(metrics.memory_score(max(growth, 0.0)))
    for note in dict.fromkeys([*before.notes, *after.notes]):
        res.notes.append(f"memory: {note}")
    res.tests.append(
        make_test(
            "memory",
            mscore * frac_m,
            threshold=config.pass_threshold,
            critical=bool(crit_m),
            error=crit_m[0]
            if crit_m
            else (None if mscore * frac_m >= config.pass_threshold else f"held memory grew {growth:.1f} MB"),
            details={
                "held_before_mb": before.total_mb,
                "growth_mb": growth,
                "of": of_what,
                "how": after.how,
                "pss_mb": [before.pss / 2**20, after.pss / 2**20],
                "shared_objects_mb": [before.shared_objects / 2**20, after.shared_objects / 2**20],
                "memory_score": mscore,
                "requests": len(mem_cases),
                "correct_fraction": frac_m,
            },
        )
    )
    return growth


def _load_test(
    agent: Agent, cases: Sequence[AgentCase], n_requests: int, workers: int, timeout_s: float | None = None
) -> tuple[float, float, list[str]]:
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
                correct += is_correct(c, case)
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
