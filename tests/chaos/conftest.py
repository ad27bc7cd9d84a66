"""Fixtures of the chaos tests; their tools are in ``_chaos.py`` (this folder is put on the path)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chaos import ChaosServer, capital_of  # noqa: E402


@pytest.fixture
def chaos_server() -> Iterator[ChaosServer]:
    """A :class:`ChaosServer` answering ``capital_of``, started for the test and stopped after it."""
    with ChaosServer(responder=capital_of) as srv:
        yield srv
