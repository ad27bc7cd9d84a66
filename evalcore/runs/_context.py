"""Run-wide context flags."""

from __future__ import annotations

import contextvars

IN_BENCHMARK: contextvars.ContextVar[bool] = contextvars.ContextVar("evalcore_in_benchmark",
                                                                    default=False)
"""True while a benchmark run executes (an LLM judge refuses to work inside one)."""
