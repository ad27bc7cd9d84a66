"""Edge cases (the generator's ``edge`` cases, the robustness category): invalid input that needs
a clear error, ambiguous requests that need a clarification, and boundary values."""

from __future__ import annotations

import math
import random
from typing import Any

from evalcore.agent_eval._cases.kinds import WORDS

CLARIFICATION_TERMS: tuple[str, ...] = (
    "ambiguous",
    "unclear",
    "clarif",
    "missing",
    "which",
    "specify",
    "provide",
    "what value",
    "what number",
    "what text",
    "not given",
    "no value",
    "no number",
)
"""Words of which a clear answer to an ambiguous request names at least one (the reason)."""


def edge_pool(rng: random.Random) -> list[dict[str, Any]]:
    """Every edge case the generator can produce, in a seeded order within each behaviour."""
    w = rng.choice(WORDS)
    x = rng.choice([40, 80, 250, 640])
    neg = rng.randint(1, 9)
    errors = _invalid_requests(neg)
    clar = _ambiguous_requests()
    values = _boundary_requests(x, w)
    for group in (errors, clar, values):
        rng.shuffle(group)
    for e in errors:
        e["behavior"] = "error"
    for c in clar:
        c["behavior"] = "clarification"
        c["terms"] = list(CLARIFICATION_TERMS)
    for v in values:
        v["behavior"] = "answer"
    # Interleave so that any prefix mixes the three behaviours (4 errors, 3 clarifications, 4
    # values for the default 11).
    out: list[dict[str, Any]] = []
    order: list[list[dict[str, Any]]] = [errors, values, clar]
    while any(order):
        for g in order:
            if g:
                out.append(g.pop(0))
    return out


def _invalid_requests(neg: int) -> list[dict[str, Any]]:
    """Invalid requests that need a clear error (``neg``: the drawn negative factorial)."""
    errors: list[dict[str, Any]] = [
        {
            "query": f"Calculate the factorial of -{neg}",
            "kind": "invalid_input",
            "tools": ["factorial"],
            "tags": ["negative"],
            "terms": [f"-{neg}", "negative"],
        },
        {
            "query": "Calculate the factorial of 2.5",
            "kind": "invalid_input",
            "tools": ["factorial"],
            "tags": ["non_integer"],
            "terms": ["2.5", "integer", "whole"],
        },
        {
            "query": "Convert abc degrees Celsius to Fahrenheit",
            "kind": "invalid_input",
            "tools": ["temperature_conversion"],
            "tags": ["non_numeric"],
            "terms": ["abc", "number", "numeric"],
        },
        {
            "query": "What is ten% of banana?",
            "kind": "invalid_input",
            "tools": ["percentage"],
            "tags": ["non_numeric"],
            "terms": ["banana", "ten", "number", "numeric"],
        },
        {
            "query": "Convert -500 degrees Celsius to Fahrenheit",
            "kind": "invalid_input",
            "tools": ["temperature_conversion"],
            "tags": ["below_absolute_zero"],
            "terms": ["-500", "absolute zero"],
        },
    ]
    return errors


def _ambiguous_requests() -> list[dict[str, Any]]:
    """Ambiguous requests that need a clarification (a value is missing)."""
    clar: list[dict[str, Any]] = [
        {"query": "Convert it to Fahrenheit", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "Calculate the percentage", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "Reverse it", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "What is the factorial?", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
    ]
    return clar


def _boundary_requests(x: int, w: str) -> list[dict[str, Any]]:
    """Boundary values (``x``: a drawn number, ``w``: a drawn word)."""
    # boundary values whose answers equal no number or string in the request (an agent that
    # echoes its input gets none of them right)
    values: list[dict[str, Any]] = [
        {
            "query": "Calculate the factorial of 0",
            "kind": "factorial",
            "expected": 1,
            "tools": ["factorial"],
            "tags": ["boundary"],
        },
        {
            "query": f"What is 200% of {x}?",
            "kind": "percentage",
            "expected": 2 * x,
            "tools": ["percentage"],
            "tags": ["boundary"],
        },
        {
            "query": f"What is 0.5% of {x}?",
            "kind": "percentage",
            "expected": x / 200,
            "tools": ["percentage"],
            "tags": ["boundary"],
        },
        {
            "query": "Convert -273.15 degrees Celsius to Fahrenheit",
            "kind": "temperature_conversion",
            "expected": -459.67,
            "tools": ["temperature_conversion"],
            "tags": ["boundary", "absolute_zero"],
        },
        {
            "query": "Reverse the string 'ab'",
            "kind": "reverse_string",
            "expected": "ba",
            "tools": ["reverse_string"],
            "tags": ["two_chars"],
        },
        {
            "query": f"Reverse the string '{w.upper()}'",
            "kind": "reverse_string",
            "expected": w.upper()[::-1],
            "tools": ["reverse_string"],
            "tags": ["case"],
        },
        {
            "query": "Calculate the factorial of 20",
            "kind": "factorial",
            "expected": math.factorial(20),
            "tools": ["factorial"],
            "tags": ["boundary", "large"],
        },
    ]
    return values
