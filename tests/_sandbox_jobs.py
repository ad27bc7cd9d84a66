"""Sandbox job dicts that several test files build (``evalcore.sandbox`` job shape)."""

from __future__ import annotations

PROBE_PROMPT = "def f():\n    '''probe'''\n"
"""The prompt of a probe check: the candidate is ``f``, its body the test's code."""


def script_job(source: str, timeout_s: float, **limits: object) -> dict:
    """A script-mode job: ``source`` runs as a program (``limits``: e.g. ``memory_mb``)."""
    return {"mode": "script", "source": source, "timeout_s": timeout_s, **limits}


def probe_check(body: str, test: str, timeout_s: float) -> dict:
    """A check-mode job whose candidate ``f`` has ``body``, judged by ``test``."""
    return {
        "mode": "check",
        "source": PROBE_PROMPT + body,
        "prompt": PROBE_PROMPT,
        "test": test,
        "entry_point": "f",
        "timeout_s": timeout_s,
    }
