"""Issue 29's value-crossing and bounded-decoding tests, rerun as an unprivileged user.

As ``test_sandbox_unprivileged.py`` does for the boundary subset: run as root (``pytest -m
integration``), this reruns ``test_sandbox_value_crossing.py`` and
``test_sandbox_bounded_decoding.py`` under ``runuser -u nobody`` (user-namespace isolation), in a
private mount namespace where an interpreter under a directory ``nobody`` cannot enter is bound
back alone. Skipped (with the reason) when not root, without ``runuser``/``unshare`` or ``nobody``.
"""

from __future__ import annotations

import pytest

from _as_nobody import rerun_as_nobody

pytestmark = pytest.mark.integration

FILES = ("tests/sandbox/test_sandbox_value_crossing.py", "tests/sandbox/test_sandbox_bounded_decoding.py")


def test_values_cross_and_decoding_is_bounded_as_nobody() -> None:
    rerun_as_nobody(FILES)
