"""Calling the agent under evaluation: one timed request (:func:`call_agent`) whose response is
checked against the protocol and reduced to plain JSON values, a reset, the agent's registry
read as tools with their code, and the test of a request's answer."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalcore._io import bounded, excerpt, to_json_native
from evalcore.agent_eval._case_results import CaseResult, CategoryResult, make_test
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._matching import values_match
from evalcore.agent_eval._observed import ToolRecord, plain_response, registry_snapshot
from evalcore.agents import AgentResponse, StepRecord

if TYPE_CHECKING:
    from evalcore.agents import Agent


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
            "result": to_json_native(r.result) if r is not None else None,
            "tool_used": r.tool_used if r is not None else None,
            "synthesized": bool(r.synthesized) if r is not None else False,
            "reused": bool(r.reused) if r is not None else False,
            "needs_clarification": bool(r.needs_clarification) if r is not None else False,
            "error": (r.error if r is not None else None),
            "exception": self.exception,
            "elapsed_s": self.elapsed_s,
        }


def call_agent(agent: Agent, query: str, timeout_s: float | None = None) -> Call:
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
    left = category_time_left()
    if left is not None:
        if left <= 0:
            return Call(query, None, f"TimeoutError: {_cap_message()}: the request was not sent", 0.0)
        timeout_s = left if timeout_s is None else min(timeout_s, left)
    t0 = time.perf_counter()
    resp: Any
    if timeout_s is None:
        try:
            resp = agent.process_request(query)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an escaped exception (SystemExit too) is the agent's critical failure
            return Call(query, None, describe_exception(exc), time.perf_counter() - t0)
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
            return Call(query, None, describe_exception(box["exception"]), time.perf_counter() - t0)
        resp = box.get("response")
    elapsed = time.perf_counter() - t0
    if not isinstance(resp, AgentResponse):
        return Call(
            query, None, f"ProtocolError: process_request returned {type(resp).__name__}, not AgentResponse", elapsed
        )
    try:
        problem = _protocol_problem(resp)
    except Exception as exc:  # (an in-process agent's objects may raise on being looked at)
        problem = f"the response could not be checked: {describe_exception(exc)}"
    if problem is not None:
        return Call(query, None, f"ProtocolError: {problem}", elapsed)
    try:
        plain = bounded_response(plain_response(resp))  # matching only ever sees plain JSON values
    except Exception as exc:
        return Call(query, None, f"ProtocolError: the response is not JSON data: {describe_exception(exc)}", elapsed)
    return Call(query, plain, None, elapsed)


def bounded_response(resp: AgentResponse) -> AgentResponse:
    """A response with every text cut to an excerpt plus its SHA-256 and every value bounded
    (:func:`evalcore._io.bounded`: 32 levels, 2,000 characters a string, 1,000 items a list),
    before the evaluator keeps it: twenty replies of 8 MiB each are no longer kept whole (in
    memory and in the results). No expected answer comes near these caps, so what is bounded
    could not have matched one anyway."""
    text = lambda v: None if v is None else excerpt(str(v))  # noqa: E731
    name = lambda v: None if v is None else excerpt(str(v), 200)  # noqa: E731
    return AgentResponse(
        success=resp.success,
        response=excerpt(resp.response or ""),
        result=bounded(resp.result),
        tool_used=name(resp.tool_used),
        synthesized=resp.synthesized,
        reused=resp.reused,
        steps=[
            StepRecord(
                tool=excerpt(st.tool, 200),
                args=bounded(st.args),
                result=bounded(st.result),
                error=text(st.error),
                depends_on=list(st.depends_on[:1000]),
            )
            for st in resp.steps[:1000]
        ],
        error=text(resp.error),
        needs_clarification=resp.needs_clarification,
    )


def describe_exception(exc: BaseException, limit: int = 2000) -> str:
    """``"Type: message"`` of an exception the agent raised or caused, never raising itself (an
    in-process agent's exception may fail to print) and at most ``limit`` characters."""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:  # its __str__ raised
        text = f"{type(exc).__name__}: (the exception could not be printed)"
    return text if len(text) <= limit else text[:limit] + " …"


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
        if (
            not isinstance(st.tool, str)
            or not isinstance(st.args, dict)
            or not (st.error is None or isinstance(st.error, str))
            or not isinstance(st.depends_on, list)
            or not all(isinstance(j, int) and not isinstance(j, bool) for j in st.depends_on)
        ):
            return f"AgentResponse.steps[{i}] needs tool: str, args: dict, error: str or None, depends_on: list of int"
    return None


def is_correct(call: Call, case: AgentCase) -> bool:
    """The request succeeded and its structured result matches the case's expected answer."""
    return call.success and values_match(call.response.result, case.expected, case.rel_tol, case.abs_tol)  # type: ignore[union-attr]


def reset_agent(agent: Agent, result: CategoryResult) -> bool:
    """Reset the agent; a failing reset is recorded in ``result`` as a critical ``reset`` test."""
    try:
        agent.reset()
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        result.tests.append(make_test("reset", 0.0, critical=True, error=f"reset() raised {describe_exception(exc)}"))
        return False


def answer_test(name: str, call: Call, case: AgentCase, threshold: float, **details: Any) -> CaseResult:
    """The test of a request with an expected answer: 1 when it is right, else 0 with the reason."""
    ok = is_correct(call, case)
    if call.critical:
        err = f"exception escaped the agent: {call.exception}"
    elif not call.success:
        err = f"agent reported failure: {call.response.error if call.response else None}"
    elif not ok:
        err = "result does not match the expected answer"
    else:
        err = None
    return make_test(
        name,
        1.0 if ok else 0.0,
        threshold=threshold,
        critical=call.critical,
        error=err,
        duration_s=call.elapsed_s,
        details={"case_id": case.id, "expected": case.expected, **call.summary(), **details},
    )


def snapshot(agent: Agent, res: CategoryResult) -> dict[str, ToolRecord]:
    """The agent's registered tools with their code; why it could not be read goes to ``res.notes``
    (past the category's time cap the registry is not read)."""
    left = category_time_left()
    tools, why = registry_snapshot(agent) if left is None or left > 0 else ({}, _cap_message() + ": registry not read")
    if why is not None and why not in res.notes:
        res.notes.append(why)
    return tools


# ------------------------------------------------------------------------------ category time cap
CATEGORY_TIME_CAP_S = 1200.0
"""Wall time one category may spend on the agent (seconds): past it no request is sent and the
registry is not read (those tests fail, critically, saying so); a request under way is cut at
the cap. A category so ends within the cap plus one registry read (twice the request timeout)
and its tool time budget; an honest agent's categories take seconds to a few minutes."""

_category_end: float | None = None
_category_cap: float | None = None


def category_time_left() -> float | None:
    """Seconds left of the category's time cap (None outside :func:`category_time_cap`)."""
    return None if _category_end is None else _category_end - time.monotonic()


def _cap_message() -> str:
    return f"the category's time cap of {_category_cap:g} s was reached (CATEGORY_TIME_CAP_S)"


@contextlib.contextmanager
def category_time_cap(seconds: float | None) -> Iterator[None]:
    """Hold the agent calls of the block to ``seconds`` of wall time (None = no cap)."""
    global _category_end, _category_cap
    before = (_category_end, _category_cap)
    _category_end = None if seconds is None else time.monotonic() + float(seconds)
    _category_cap = seconds
    try:
        yield
    finally:
        _category_end, _category_cap = before


# ------------------------------------------------------------------------------ tool time budget
DEFAULT_TOOL_BUDGET_S = 40.0
"""Total sandbox time the agent's registered tools may take in one category (seconds); seven
categories of tools that all sleep for ever then end within 7 × 40 s, under five minutes."""


class ToolBudgetSpent(RuntimeError):
    """The category's tool time budget is spent: the tool was not run (or was stopped)."""


class ToolBudget:
    """The total time the agent's registered code may run in the sandbox during one category.

    Every run of the agent's code (tool calls on held-out inputs, workflow steps, the tools'
    own tests) is charged its wall time, and none may run past what is left: a run that would
    is stopped at the end of the budget, and once it is spent no more runs start. A check that
    cannot run for this reason fails, and says so.
    """

    def __init__(self, total_s: float | None) -> None:
        self.total_s = None if total_s is None else float(total_s)
        self.spent_s = 0.0
        self.refused = 0
        self._lock = threading.Lock()

    def left_s(self) -> float | None:
        """Seconds left (None = no limit)."""
        with self._lock:
            return None if self.total_s is None else max(0.0, self.total_s - self.spent_s)

    def charge(self, seconds: float) -> None:
        with self._lock:
            self.spent_s += max(0.0, float(seconds))

    def spent_message(self) -> str:
        return (
            f"the category's tool time budget of {self.total_s:g} s is spent (the agent's tools ran "
            f"{self.spent_s:.1f} s in the sandbox; see tool_budget_s)"
        )


_active_budget: ToolBudget | None = None


def active_tool_budget() -> ToolBudget | None:
    """The budget of the category being evaluated (None outside :func:`tool_budget`)."""
    return _active_budget


@contextlib.contextmanager
def tool_budget(config: Any) -> Iterator[ToolBudget]:
    """Give the agent's tools ``config.tool_budget_s`` seconds of sandbox time (default
    :data:`DEFAULT_TOOL_BUDGET_S`; None = no limit) for the duration of the block."""
    global _active_budget
    budget = ToolBudget(getattr(config, "tool_budget_s", DEFAULT_TOOL_BUDGET_S))
    before, _active_budget = _active_budget, budget
    try:
        yield budget
    finally:
        _active_budget = before


def budgeted_run_python(source: str, *, timeout_s: float = 10.0, **kw: Any) -> Any:
    """:func:`evalcore.evaluators.run_python` charged to the active :class:`ToolBudget`.

    Raises:
        ToolBudgetSpent: The budget was spent before the run, or the run was stopped when it
            ran out.
    """
    from evalcore.sandbox import run_python

    budget = _active_budget
    left = budget.left_s() if budget is not None else None
    if budget is not None and left is not None and left < 0.05:
        budget.refused += 1
        raise ToolBudgetSpent(budget.spent_message())
    cut = left is not None and left < timeout_s
    t0 = time.monotonic()
    try:
        res = run_python(source, timeout_s=min(timeout_s, left) if cut and left is not None else timeout_s, **kw)
    finally:
        if budget is not None:
            budget.charge(time.monotonic() - t0)
    if cut and getattr(res, "timed_out", False) and budget is not None:
        raise ToolBudgetSpent(budget.spent_message() + "; this run was stopped when it ran out")
    return res
