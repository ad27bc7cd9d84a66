"""Performance: speed, memory and throughput, counting only correct answers."""

from __future__ import annotations

import random
import secrets
import statistics
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from evalcore import metrics
from evalcore.agent_eval._calling import call_agent, is_correct, reset_agent
from evalcore.agent_eval._case_results import CategoryResult, make_test
from evalcore.agent_eval._cases.kinds import (
    VARIABLE_SLOTS,
    render_query,
    sample_inputs,
    solve_kind,
)
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._categories._common import drawn_case
from evalcore.agent_eval._config import AgentEvalConfig, AgentEvalData

if TYPE_CHECKING:
    from evalcore.agents import Agent


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def fresh_requests(cases: Sequence[AgentCase], n: int, rng: random.Random) -> list[AgentCase]:
    """``n`` requests cycling through ``cases``, each single-step case of a known kind with
    fresh inputs of that kind drawn from ``rng`` (canonical phrasing, the evaluator's answer);
    other cases (multi-step) as they are. Timing the load on the very requests the agent has
    just answered let an agent that caches its responses by text look fast (a 0.6 s-a-request
    agent scored throughput 1.0 at 164 answers/s)."""
    out: list[AgentCase] = []
    seen: set[str] = {c.query for c in cases}
    for i in range(max(0, n)):
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
                f"load-{i}-{case.kind}",
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


def evaluate_performance(agent: Agent, data: AgentEvalData, config: AgentEvalConfig) -> CategoryResult:
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
    at once (a wrong answer under load counts for nothing). The memory and load requests are
    fresh (:func:`fresh_requests`: the kinds of the cases, inputs drawn from a secret seed, each
    request new to the agent), so a cache of earlier responses neither answers them nor hides
    its growth.

    Args:
        agent: The agent.
        data: Cases hinted ``performance``.
        config: Evaluation settings.

    Returns:
        The category result; metrics ``median_latency_s``, ``p95_latency_s``,
        ``memory_growth_mb``, ``qps``, ``success_rate_under_load``.
    """
    res = CategoryResult("performance", threshold=config.pass_threshold)
    if not reset_agent(agent, res):
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
        fok = is_correct(first, case)
        calls = [
            call_agent(agent, case.query, config.request_timeout_s) for _ in range(max(1, config.timing_repetitions))
        ]
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
        res.tests.append(
            make_test(
                f"latency:{case.id}",
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
        )
    # memory growth: the RSS of the process the agent runs in (the hosting process of a hosted
    # agent; this process for an in-process one; unknown behind a plain URL)
    from evalcore.agents import HttpAgent

    growth: float | None = None
    rss = getattr(agent, "rss_mb", None)
    read_rss = (
        rss
        if callable(rss) and type(agent).__name__ == "HostedAgent"
        else (None if isinstance(agent, HttpAgent) else _rss_mb)
    )
    if read_rss is None or read_rss() is None:
        res.notes.append(
            "memory test not run: the agent runs behind a URL, in a process whose memory the evaluator cannot read"
        )
    rng = random.Random(secrets.randbits(64))
    if read_rss is not None and read_rss() is not None:
        mem_cases = fresh_requests(cases, config.memory_requests, rng)
        before = read_rss()
        ok = 0
        crit_m: list[str] = []
        for i in range(config.memory_requests):
            case = mem_cases[i]
            c = call_agent(agent, case.query, config.request_timeout_s)
            ok += is_correct(c, case)
            if c.critical:
                crit_m.append(c.exception or "")
        growth = (read_rss() or before) - before
        frac_m = ok / config.memory_requests if config.memory_requests else 0.0
        mscore = float(metrics.memory_score(max(growth, 0.0)))
        res.tests.append(
            make_test(
                "memory",
                mscore * frac_m,
                threshold=config.pass_threshold,
                critical=bool(crit_m),
                error=crit_m[0] if crit_m else None,
                details={
                    "rss_before_mb": before,
                    "growth_mb": growth,
                    "memory_score": mscore,
                    "requests": config.memory_requests,
                    "correct_fraction": frac_m,
                },
            )
        )
    # throughput under concurrent load
    load_cases = fresh_requests(cases, config.load_requests, rng)
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
    srt = sorted(all_lat)
    res.metrics = {
        "median_latency_s": statistics.median(srt),
        "median_first_sight_s": statistics.median(first_lat),
        "p95_latency_s": srt[min(len(srt) - 1, int(round(0.95 * (len(srt) - 1))))],
        "memory_growth_mb": growth,
        "qps": qps,
        "success_rate_under_load": frac_l,
        "workers": config.workers,
    }
    return res


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
