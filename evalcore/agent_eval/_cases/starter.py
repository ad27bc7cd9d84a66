"""Single-tool requests of the starter kinds (the generator's ``simple`` cases; also paraphrase
groups): one seeded maker per kind, each returning ``(templates, answer, tolerance override)``.

Inputs come from wide ranges: the generator ships with evalcore, so an agent can run it over
thousands of seeds and learn every request it makes; with narrow pools that table would hold
most of the requests of any seed, a drawn one too (``tests/agent_eval/test_agent_answer_key.py``
measures it)."""

from __future__ import annotations

import math
import random
from typing import Any

from evalcore.agent_eval._cases.kinds import WORDS, Maker
from evalcore.agent_eval._cases.kinds import tenths as _tenths


def _percentage(rng: random.Random) -> tuple[list[str], Any, float]:
    p = rng.randint(1, 99)
    x = 20 * rng.randint(1, 300)  # p% of a multiple of 20 has at most one decimal
    ans = p * x / 100
    return (
        [
            f"What is {p}% of {x}?",
            f"Calculate {p} percent of {x}",
            f"Find {p}% of {x}",
            f"How much is {p} percent of {x}?",
        ],
        int(ans) if float(ans).is_integer() else ans,
        0.0,
    )


def _reverse(rng: random.Random) -> tuple[list[str], Any, float]:
    s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))) + f" {rng.randint(10, 9999)}"
    return (
        [
            f"Reverse the string '{s}'",
            f"Write '{s}' backwards",
            f"Reverse the text '{s}'",
            f"Give me the string '{s}' in reverse order",
        ],
        s[::-1],
        0.0,
    )


def _factorial(rng: random.Random) -> tuple[list[str], Any, float]:
    n = rng.randint(2, 20)
    return (
        [
            f"Calculate the factorial of {n}",
            f"What is {n} factorial?",
            f"Compute the factorial of {n}",
            f"What is the factorial of the number {n}?",
        ],
        math.factorial(n),
        0.0,
    )


def _temperature(rng: random.Random) -> tuple[list[str], Any, float]:
    if rng.random() < 0.6:
        c = _tenths(rng.randint(-2731, 50000))  # at or above absolute zero (-273.15 °C): below it
        # is an invalid request the robustness category expects refused, never a right answer
        f = c * 9 / 5 + 32
        return (
            [
                f"Convert {c} degrees Celsius to Fahrenheit",
                f"What is {c} °C in Fahrenheit?",
                f"Change {c} degrees Celsius into Fahrenheit",
                f"How many degrees Fahrenheit is {c} Celsius?",
            ],
            round(f, 6),
            0.0,
        )
    fahr = _tenths(320 + 9 * rng.randint(-546, 20000))  # a half degree Celsius, >= -459.67 °F
    c2 = (fahr - 32) * 5 / 9
    return (
        [
            f"Convert {fahr} degrees Fahrenheit to Celsius",
            f"What is {fahr} °F in Celsius?",
            f"Change {fahr} degrees Fahrenheit into Celsius",
            f"How many degrees Celsius is {fahr} Fahrenheit?",
        ],
        round(c2, 6),
        0.0,
    )


MAKERS: dict[str, Maker] = {
    "percentage": _percentage,
    "reverse_string": _reverse,
    "factorial": _factorial,
    "temperature_conversion": _temperature,
}
"""Request maker per starter kind."""
