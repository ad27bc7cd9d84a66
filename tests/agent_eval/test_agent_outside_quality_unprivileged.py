"""Issue 37's outside-the-tool test quality and verified-tool credit, rerun as an unprivileged
user.

Run as root (``pytest -m integration``), this reruns ``test_agent_outside_quality.py`` under
``runuser -u nobody`` (the sandbox then isolates through a user namespace: the test process,
the router and the tool's process are forked inside it). Skipped (with the reason) when not
root, without ``runuser``/``unshare`` or ``nobody``.
"""

from __future__ import annotations

import pytest

from _as_nobody import rerun_as_nobody

pytestmark = pytest.mark.integration


def test_outside_test_quality_and_verified_credit_as_nobody() -> None:
    rerun_as_nobody(["tests/agent_eval/test_agent_outside_quality.py"], timeout=400)
