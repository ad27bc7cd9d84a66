"""The hosted agent's bounds as an unprivileged user: ``test_agent_bounds.py`` rerun as ``nobody``.

Run as root (``pytest -m integration``), this reruns the hosted-agent bounds under ``runuser -u
nobody`` (see ``tests/_as_nobody.py``). ``nobody`` cannot make a cgroup here, so the agent gets
the documented fallback — rlimits (``RLIMIT_DATA`` to its memory, ``RLIMIT_NPROC`` to this user's
processes plus its allowance) — and the same tests must hold: the fork bomb stops under the
allowance, the allocation past the memory fails, the agent's network namespace (an unprivileged
user namespace) keeps the host's services out of reach, its log stays capped, nothing of it
outlives it, and deep or long values, a big registry and terminal commands end in complete,
bounded results. Skipped (with the reason) when not root, without ``runuser``/``unshare`` or
without a ``nobody`` user.
"""

from __future__ import annotations

import pytest

from _as_nobody import rerun_as_nobody

pytestmark = pytest.mark.integration

SUBSET = "memory_processes or log_is_capped or 700_deep or wire_cap or time_cap or escaped or honest or 8_mib or 150000"


def test_the_hosted_agents_bounds_hold_as_nobody() -> None:
    out = rerun_as_nobody(["tests/agents/test_agent_bounds.py", "-k", SUBSET], timeout=500)
    assert "11 passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-2000:]
