"""Session-wide settings for the whole suite."""

from __future__ import annotations

import os

# The sandbox pool keeps test durations on disk for later processes (see
# evalcore.sandbox.pool.durations_file); the suite keeps nothing there, so that no
# test's order depends on an earlier run (tests that check the file name one themselves).
os.environ.setdefault("EVALCORE_SANDBOX_DURATIONS", "")
