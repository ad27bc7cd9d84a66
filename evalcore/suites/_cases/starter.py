"""Single-tool requests of the starter kinds (the generator's ``simple`` cases; also paraphrase
groups): one seeded maker per kind, each returning ``(templates, answer, tolerance override)``."""

from __future__ import annotations

import math
import random
from typing import Any

from evalcore.suites._cases.kinds import WORDS, Maker


def _percentage(rng: random.Random) -> tuple[list[str], Any, float]:
    p = rng.choice([5, 10, 12, 15, 20, 25, 30, 40, 45, 60, 75, 80, 90])
    x = rng.choice([20, 40, 60, 80, 120, 150, 200, 240, 360, 400, 480, 640, 800, 1200])
    ans = p * x / 100
    return (
        [f"What is {p}% of {x}?", f"Calculate {p} percent of {x}", f"Find {p}% of {x}",
         f"How much is {p} percent of {x}?"],
        int(ans) if float(ans).is_integer() else ans,
        0.0,
    )


def _reverse(rng: random.Random) -> tuple[list[str], Any, float]:
    s = rng.choice(WORDS) + rng.choice(["", " " + rng.choice(WORDS)])
    return (
        [f"Reverse the string '{s}'", f"Write '{s}' backwards", f"Reverse the text '{s}'",
         f"Give me the string '{s}' in reverse order"],
        s[::-1],
        0.0,
    )


def _factorial(rng: random.Random) -> tuple[list[str], Any, float]:
    n = rng.randint(2, 12)
    return (
        [f"Calculate the factorial of {n}", f"What is {n} factorial?", f"Compute the factorial of {n}",
         f"What is the factorial of the number {n}?"],
        math.factorial(n),
        0.0,
    )


def _temperature(rng: random.Random) -> tuple[list[str], Any, float]:
    if rng.random() < 0.6:
        c = rng.choice([-20, -10, 0, 5, 15, 25, 30, 37, 50, 100, 150, 200])
        f = c * 9 / 5 + 32
        return (
            [f"Convert {c} degrees Celsius to Fahrenheit", f"What is {c} °C in Fahrenheit?",
             f"Change {c} degrees Celsius into Fahrenheit", f"How many degrees Fahrenheit is {c} Celsius?"],
            round(f, 6),
            0.0,
        )
    fahr = rng.choice([-4, 14, 32, 50, 68, 86, 104, 212, 302])
    c2 = (fahr - 32) * 5 / 9
    return (
        [f"Convert {fahr} degrees Fahrenheit to Celsius", f"What is {fahr} °F in Celsius?",
         f"Change {fahr} degrees Fahrenheit into Celsius", f"How many degrees Celsius is {fahr} Fahrenheit?"],
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
