"""Parsers of what lm-eval and inspect_ai print at the end of a run (their own summaries)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest


def parse_lm_eval_table(stdout: str, task: str, metric: str, flt: str) -> float:
    """The value lm-eval printed in its results table for (task, filter, metric)."""
    cols: dict[str, int] = {}
    current = ""
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if {"Tasks", "Filter", "Metric", "Value"} <= set(cells):
            cols = {name: cells.index(name) for name in ("Tasks", "Filter", "Metric", "Value")}
            continue
        if not cols or len(cells) <= cols["Value"] or set(line.strip()) <= {"|", "-", ":"}:
            continue
        current = cells[cols["Tasks"]].lstrip(" -") or current
        if current == task and cells[cols["Filter"]] == flt and cells[cols["Metric"]] == metric:
            return float(cells[cols["Value"]])
    raise AssertionError(f"lm_eval printed no {metric} ({flt}) for {task}:\n{stdout[-2000:]}")


def parse_inspect_summary(stdout: str, name: str = "accuracy") -> float:
    """The last value inspect printed for a metric (``accuracy  0.125`` in its summary)."""
    found = re.findall(rf"\b{name}\W+([0-9]*\.?[0-9]+)", stdout)
    assert found, f"inspect printed no {name}:\n{stdout[-2000:]}"
    return float(found[-1])


@pytest.fixture()
def lm_eval_printed() -> Callable[..., float]:
    return parse_lm_eval_table


@pytest.fixture()
def inspect_printed() -> Callable[..., float]:
    return parse_inspect_summary
