"""The self-test's hosted agents start and close in a helper thread while another agent is
evaluated (evalcore/agent_eval/_self_test.py, _Line), never beside a timed category."""

from __future__ import annotations

import threading
import time

import pytest

from evalcore.agent_eval._self_test import TIMED, _Line


class _Fake:
    def __init__(self, name: str, log: list[tuple[str, str, str]]) -> None:
        self.name = name
        self._log = log

    def close(self) -> None:
        time.sleep(0.05)
        self._log.append(("close", self.name, threading.current_thread().name))


def _host(log: list[tuple[str, str, str]]):
    def host(name: str) -> _Fake:
        if name == "broken":
            raise RuntimeError("cannot start")
        time.sleep(0.05)
        log.append(("start", name, threading.current_thread().name))
        return _Fake(name, log)

    return host


def _evaluate(line: _Line, plan, log) -> None:
    for name in plan:
        agent = line.take(name)
        log.append(("run", name, ""))
        try:
            time.sleep(0.2)  # evaluated: what the helper does meanwhile is logged before "ran"
        finally:
            log.append(("ran", name, ""))
            line.done(agent)


def test_next_agent_starts_while_one_is_evaluated_but_never_beside_a_timed_category():
    plan = {"a": (None, ["functional"]), "b": (None, [TIMED]), "c": (None, ["learning"]), "d": (None, ["robustness"])}
    log: list[tuple[str, str, str]] = []
    with _Line(plan, _host(log)) as line:
        _evaluate(line, plan, log)
    events = [(what, name) for what, name, _ in log]
    # every agent started once and closed once, each before it ran / after it ran
    assert sorted(n for w, n in events if w == "start") == sorted(plan) == sorted(n for w, n in events if w == "close")
    for name in plan:
        assert events.index(("start", name)) < events.index(("run", name)) < events.index(("ran", name))
        assert events.index(("ran", name)) < events.index(("close", name))
    # while a was evaluated b started; while c was evaluated d started (in the helper thread)
    assert events.index(("run", "a")) < events.index(("start", "b")) < events.index(("ran", "a"))
    assert events.index(("run", "c")) < events.index(("start", "d")) < events.index(("ran", "c"))
    assert {t for w, n, t in log if (w, n) in {("start", "b"), ("start", "d")}} == {"evalcore-self-test_0"}
    # nothing started or closed while b (timed) was evaluated
    during_b = events[events.index(("run", "b")) + 1 : events.index(("ran", "b"))]
    assert during_b == []


def test_an_agent_that_cannot_start_stops_the_self_test_and_every_started_agent_is_closed():
    plan = {"a": (None, ["functional"]), "broken": (None, ["functional"]), "c": (None, ["functional"])}
    log: list[tuple[str, str, str]] = []
    with pytest.raises(RuntimeError, match="cannot start"), _Line(plan, _host(log)) as line:
        _evaluate(line, plan, log)
    events = [(what, name) for what, name, _ in log]
    assert events == [("start", "a"), ("run", "a"), ("ran", "a"), ("close", "a")]


def test_in_process_agents_are_made_in_order_with_nothing_beside():
    made: list[str] = []
    plan = {n: ((lambda n=n: made.append(n) or n), ["functional"]) for n in "xyz"}
    with _Line(plan, None) as line:
        assert [line.take(n) for n in plan] == ["x", "y", "z"]
        line.done("x")
    assert made == ["x", "y", "z"]


def test_an_evaluation_that_fails_closes_the_agent_started_for_the_next_one():
    plan = {"a": (None, ["functional"]), "b": (None, ["functional"])}
    log: list[tuple[str, str, str]] = []
    with pytest.raises(KeyboardInterrupt), _Line(plan, _host(log)) as line:
        agent = line.take("a")  # b starts in the helper thread
        try:
            time.sleep(0.2)
            raise KeyboardInterrupt
        finally:
            line.done(agent)
    assert sorted((w, n) for w, n, _ in log) == [("close", "a"), ("close", "b"), ("start", "a"), ("start", "b")]
