"""Verifying ``reset()``: nothing the agent learned before a reset may survive it.

The performance category times first sight on requests the agent has never seen; that is only
first sight when a reset really clears what the agent kept. Two observations, both made by the
evaluator:

* the registry: after the reset it must hold exactly the tools (names and code hashes) it held
  after the category's first reset; a tool added or rewritten before the reset that survives it
  is carried state;
* behaviour: the requests sent before the reset (the *probes*) are sent again after it,
  interleaved with as many requests of the same kinds never sent before; a cache kept across
  the reset answers the probes much faster than the unseen requests.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalcore.agent_eval._calling import Call, call_agent
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._observed import ToolRecord

if TYPE_CHECKING:
    from evalcore.agents import Agent

CACHE_RATIO = 4.0
"""A probe's median latency this many times below the unseen requests' flags carried state …"""

CACHE_MARGIN_S = 0.05
"""… when the difference is also above this many seconds (scheduling noise on a fast agent)."""


def registry_carried(baseline: dict[str, ToolRecord], after: dict[str, ToolRecord]) -> list[str]:
    """Tools in ``after`` that are not in ``baseline`` with the same code (by name and hash)."""
    return sorted(n for n, t in after.items() if n not in baseline or baseline[n].hash != t.hash)


def cache_check(
    agent: Agent, probes: Sequence[AgentCase], unseen: Sequence[AgentCase], timeout_s: float | None
) -> tuple[str | None, dict[str, Any]]:
    """Send the probes (seen before the reset) and the unseen requests, interleaved; a reason
    when the probes are answered faster than the unseen beyond noise, else None.

    Carried when ``median(unseen) > CACHE_RATIO · median(probes)`` and
    ``median(unseen) − median(probes) > CACHE_MARGIN_S``. An honest agent answers both alike:
    after the reset neither set is known to it, and they are of the same kinds.
    """
    seen_s: list[float] = []
    new_s: list[float] = []
    for i in range(max(len(probes), len(unseen))):
        for group, out in ((probes, seen_s), (unseen, new_s)):
            if i < len(group):
                c: Call = call_agent(agent, group[i].query, timeout_s)
                if not c.critical:
                    out.append(c.elapsed_s)
    details: dict[str, Any] = {"probe_latencies_s": seen_s, "unseen_latencies_s": new_s}
    if not seen_s or not new_s:
        return None, details
    ms, mn = statistics.median(seen_s), statistics.median(new_s)
    details.update(probe_median_s=ms, unseen_median_s=mn)
    if mn > CACHE_RATIO * ms and mn - ms > CACHE_MARGIN_S:
        return (
            f"requests sent before the reset were answered in {ms:.3f} s (median) after it, unseen ones "
            f"of the same kinds in {mn:.3f} s: a cache kept across reset()"
        ), details
    return None, details
