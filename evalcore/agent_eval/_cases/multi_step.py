"""Multi-step requests (the generator's ``complex`` cases): each maker returns ``(query, expected
steps, final answer, tags)``; a step lists the earlier steps whose result feeds it. Inputs are
drawn from wide ranges (see :mod:`.starter`)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from evalcore.agent_eval._cases.kinds import WORDS
from evalcore.agent_eval._cases.kinds import tenths as _tenths
from evalcore.agent_eval._cases.records import ExpectedStep

_COPRIME = tuple((m, k) for m in range(2, 40) for k in range(m + 1, 80) if math.gcd(m, k) == 1)


def _ms_fact_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 12)
    p = _tenths(rng.randint(1, 999))
    a = math.factorial(n)
    b = p * a / 100
    b = int(b) if float(b).is_integer() else b
    return (
        f"Calculate the factorial of {n}, then find {p}% of the result",
        [ExpectedStep("factorial", a), ExpectedStep("percentage", b, [0])],
        b,
        ["dependent"],
    )


def _ms_pct_then_fact(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    p = rng.choice([2, 4, 5, 10, 20, 25, 50])  # divisors of 100: p% of x is the whole number n
    n = rng.randint(3, 15)
    x = int(n * 100 / p)
    a = p * x / 100
    a = int(a) if float(a).is_integer() else a
    return (
        f"Find {p}% of {x}, then calculate the factorial of the result",
        [ExpectedStep("percentage", a), ExpectedStep("factorial", math.factorial(int(a)), [0])],
        math.factorial(int(a)),
        ["dependent"],
    )


def _ms_temp_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    c = rng.randint(-273, 2000)  # at or above absolute zero: an agent refusing below it is right
    p = rng.randint(1, 99)
    f = c * 9 / 5 + 32
    f = int(f) if float(f).is_integer() else f
    b = round(p * f / 100, 6)
    return (
        f"Convert {c} degrees Celsius to Fahrenheit, then calculate {p}% of that value",
        [ExpectedStep("temperature_conversion", f), ExpectedStep("percentage", b, [0])],
        b,
        ["dependent"],
    )


def _ms_independent(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 15)
    s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))) + f" {rng.randint(10, 9999)}"
    return (
        f"Calculate the factorial of {n} and also reverse the string '{s}'",
        [ExpectedStep("factorial", math.factorial(n)), ExpectedStep("reverse_string", s[::-1])],
        [math.factorial(n), s[::-1]],
        ["sequential", "independent"],
    )


def _ms_three_steps(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 10)
    p = _tenths(rng.randint(1, 999))
    a = math.factorial(n)
    b = p * a / 100
    b = int(b) if float(b).is_integer() else b
    c = b * 9 / 5 + 32
    c = int(c) if float(c).is_integer() else round(c, 6)
    return (
        f"Calculate the factorial of {n}, then find {p}% of the result, then convert that many "
        f"degrees Celsius to Fahrenheit",
        [
            ExpectedStep("factorial", a),
            ExpectedStep("percentage", b, [0]),
            ExpectedStep("temperature_conversion", c, [1]),
        ],
        c,
        ["dependent", "three_steps"],
    )


def _ms_sum_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    xs = [rng.randint(5, 50) for _ in range(4)]
    p = rng.randint(1, 99)
    s = sum(xs)
    b = p * s / 100
    b = int(b) if float(b).is_integer() else b
    return (
        f"What is the sum of the list [{', '.join(map(str, xs))}], then find {p}% of the result",
        [ExpectedStep("sum_list", s), ExpectedStep("percentage", b, [0])],
        b,
        ["dependent", "synthesis"],
    )


def _ms_gcd_then_fact(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    g = rng.randint(3, 10)
    m, k = rng.choice(_COPRIME)
    a, b = g * m, g * k  # their greatest common divisor is g
    return (
        f"Find the greatest common divisor of {a} and {b}, then calculate the factorial of the result",
        [ExpectedStep("gcd", g), ExpectedStep("factorial", math.factorial(g), [0])],
        math.factorial(g),
        ["dependent", "synthesis"],
    )


MAKERS: tuple[Callable[[random.Random], tuple[str, list[ExpectedStep], Any, list[str]]], ...] = (
    _ms_fact_then_pct,
    _ms_temp_then_pct,
    _ms_independent,
    _ms_pct_then_fact,
    _ms_three_steps,
    _ms_sum_then_pct,
    _ms_gcd_then_fact,
)
"""The multi-step makers, cycled in this order."""
