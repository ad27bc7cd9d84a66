"""``tests/_processes.alive``, which the agent containment and host isolation tests share, finds
a living process by a token of its command line and leaves out one that has died (a zombie)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from _processes import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_alive_finds_a_process_by_its_token_and_not_once_it_died() -> None:
    token = uuid.uuid4().hex
    assert alive(token) == []
    proc = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(60)  # {token}"])
    try:
        deadline = time.monotonic() + 30  # until the child has exec'd (its command line is the parent's before)
        while not alive(token) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert alive(token) == [proc.pid]
        proc.kill()
        deadline = time.monotonic() + 5
        while alive(token) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert alive(token) == []  # a zombie (killed, not yet waited for) counts as gone
        assert proc.poll() is not None
    finally:
        proc.kill()
        proc.wait()
