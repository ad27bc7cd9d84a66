"""Calling the agent under evaluation: one timed request (:func:`call_agent`) whose response is
checked against the protocol and reduced to plain JSON values, a reset, the agent's registry
read as tools with their code, and the test of a request's answer."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from evalcore._io import to_json_native
from evalcore.agents import AgentResponse, StepRecord
from evalcore.suites._case_results import CaseResult, CategoryResult, make_test
from evalcore.suites._cases.records import AgentCase
from evalcore.suites._matching import values_match
from evalcore.suites._measure import ToolRecord, plain_response, registry_snapshot


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


def is_correct(call: Call, case: AgentCase) -> bool:
    """The request succeeded and its structured result matches the case's expected answer."""
    return call.success and values_match(call.response.result, case.expected, case.rel_tol, case.abs_tol)  # type: ignore[union-attr]


def reset_agent(agent: Any, result: CategoryResult) -> bool:
    """Reset the agent; a failing reset is recorded in ``result`` as a critical ``reset`` test."""
    try:
        agent.reset()
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        result.tests.append(make_test("reset", 0.0, critical=True, error=f"reset() raised {type(exc).__name__}: {exc}"))
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
    return make_test(name, 1.0 if ok else 0.0, threshold=threshold, critical=call.critical, error=err,
                     duration_s=call.elapsed_s,
                     details={"case_id": case.id, "expected": case.expected, **call.summary(), **details})


def snapshot(agent: Any, res: CategoryResult) -> dict[str, ToolRecord]:
    """The agent's registered tools with their code; why it could not be read goes to ``res.notes``."""
    tools, why = registry_snapshot(agent)
    if why is not None and why not in res.notes:
        res.notes.append(why)
    return tools
