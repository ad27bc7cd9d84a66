"""Kinds of request: their names, their inputs, the evaluator's own solver, held-out inputs and
the canonical phrasing (the helpers every case maker and the evaluator share).

A *kind* names what a single-tool request asks for. The four starter kinds are served by the
tools an agent starts with; every other kind needs a tool the agent writes. A request's inputs
are read from its canonical phrasing (:func:`parse_inputs`), solved by the evaluator
(:func:`solve_kind`), and drawn afresh from values no generated request uses
(:func:`sample_inputs`) when the evaluator runs an agent's registered tool on held-out inputs.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

STARTER_KINDS: tuple[str, ...] = ("percentage", "reverse_string", "factorial", "temperature_conversion")
"""Kinds of request the starter tools serve (every agent is expected to start with a tool for each)."""

SYNTHESIZED_KINDS: tuple[str, ...] = (
    "word_count",
    "is_prime",
    "gcd",
    "sum_list",
    "celsius_to_kelvin",
    "lcm",
    "max_list",
    "vowel_count",
    "is_palindrome",
    "average_list",
)
"""Kinds of tools a correct agent has to synthesize (not among the starter tools)."""

Maker = Callable[[random.Random], tuple[list[str], Any, float]]
"""A single-tool request maker: ``rng -> (templates, answer, numeric tolerance override)``; the
templates are paraphrases of one request, the first its canonical phrasing."""

WORDS = (
    "python",
    "agent",
    "matrix",
    "orange",
    "window",
    "silver",
    "garden",
    "planet",
    "rocket",
    "yellow",
    "bridge",
    "castle",
    "forest",
    "listen",
    "marble",
    "number",
    "ticket",
    "violet",
)
"""Words the generated requests use (held-out inputs use others)."""


def tenths(t: int) -> int | float:
    """``t`` tenths, as an int when whole (a request then shows ``40``, not ``40.0``)."""
    return t // 10 if t % 10 == 0 else t / 10


NUM = r"-?\d+(?:\.\d+)?"
"""A number as written in a request."""


def num(text: str) -> int | float:
    """The number ``text`` as an int when it is written without a decimal point, else a float."""
    v = float(text)
    return int(v) if v.is_integer() and "." not in text else v


_INPUT_PATTERNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "percentage": (rf"({NUM})\s*(?:%|percent) of ({NUM})", ("percent", "value")),
    "factorial": (rf"factorial of (?:the number )?({NUM})", ("n",)),
    "is_prime": (rf"({NUM}) (?:a prime|is prime)|number ({NUM}) is prime", ("n",)),
    "gcd": (rf"({NUM}) and ({NUM})", ("a", "b")),
    "lcm": (rf"({NUM}) and ({NUM})", ("a", "b")),
    "celsius_to_kelvin": (rf"({NUM})\s*(?:degrees Celsius|°C)", ("celsius",)),
}
_TEXT_KINDS: dict[str, str] = {
    "reverse_string": "text",
    "word_count": "text",
    "vowel_count": "text",
    "is_palindrome": "text",
}
_LIST_KINDS = ("sum_list", "max_list", "average_list")

VARIABLE_SLOTS: dict[str, tuple[str, ...]] = {
    "percentage": ("percent", "value"),
    "factorial": ("n",),
    "is_prime": ("n",),
    "gcd": ("a", "b"),
    "lcm": ("a", "b"),
    "celsius_to_kelvin": ("celsius",),
    "temperature_conversion": ("value",),
    "reverse_string": ("text",),
    "word_count": ("text",),
    "vowel_count": ("text",),
    "is_palindrome": ("text",),
    "sum_list": ("numbers",),
    "max_list": ("numbers",),
    "average_list": ("numbers",),
}
"""Per tool kind, the inputs that vary between requests (a tool must take each as a parameter);
other inputs (temperature units) are fixed by the phrasing."""


def parse_inputs(kind: str, query: str) -> dict[str, Any]:
    """The named inputs of a single-tool request of ``kind`` in its canonical phrasing.

    Args:
        kind: A tool kind (starter name or synthesized kind).
        query: The request text.

    Returns:
        The inputs (e.g. ``{"a": 12, "b": 18}``), or ``{}`` when the text does not parse.
    """
    if kind in _TEXT_KINDS:
        m = re.search(r"'([^']*)'", query)
        return {_TEXT_KINDS[kind]: m.group(1)} if m else {}
    if kind in _LIST_KINDS:
        m = re.search(r"\[([^\]]*)\]", query)
        return {"numbers": [num(x.strip()) for x in m.group(1).split(",")]} if m else {}
    if kind == "temperature_conversion":
        m = re.search(rf"({NUM})\s*(?:degrees\s+|°)(C|F)\w*\s+(?:to|in|into)\s+(C|F)", query)
        return {"value": num(m.group(1)), "from_unit": m.group(2), "to_unit": m.group(3)} if m else {}
    pat = _INPUT_PATTERNS.get(kind)
    if pat is None:
        return {}
    m = re.search(pat[0], query)
    if not m:
        return {}
    groups = [g for g in m.groups() if g is not None]
    return {name: num(g) for name, g in zip(pat[1], groups)}


def solve_kind(kind: str, inputs: Mapping[str, Any]) -> Any:
    """The correct answer of a request of ``kind`` with ``inputs`` (the evaluator's own solver).

    Raises:
        KeyError: An unknown kind or a missing input.
    """
    x = inputs
    if kind == "percentage":
        v = x["percent"] * x["value"] / 100
        return int(v) if float(v).is_integer() else v
    if kind == "factorial":
        return math.factorial(int(x["n"]))
    if kind == "temperature_conversion":
        v = x["value"]
        return round(v * 9 / 5 + 32 if x["from_unit"] == "C" else (v - 32) * 5 / 9, 6)
    if kind == "reverse_string":
        return x["text"][::-1]
    if kind == "word_count":
        return len(x["text"].split())
    if kind == "vowel_count":
        return sum(ch in "aeiou" for ch in x["text"].lower())
    if kind == "is_palindrome":
        return x["text"] == x["text"][::-1]
    if kind == "is_prime":
        return _is_prime(int(x["n"]))
    if kind == "gcd":
        return math.gcd(int(x["a"]), int(x["b"]))
    if kind == "lcm":
        return math.lcm(int(x["a"]), int(x["b"]))
    if kind == "sum_list":
        return sum(x["numbers"])
    if kind == "max_list":
        return max(x["numbers"])
    if kind == "average_list":
        return round(sum(x["numbers"]) / len(x["numbers"]), 6)
    if kind == "celsius_to_kelvin":
        return round(x["celsius"] + 273.15, 6)
    raise KeyError(kind)


_HELD_OUT_LETTERS = "abcdefghilmnoprstuvwy"  # no k, x, z, j, q: a generated made-up word starts with one


def _held_out_word(rng: random.Random, lo: int = 5, hi: int = 10) -> str:
    """A random string of ``lo``-``hi`` letters that no generated request uses (generated
    made-up words start with one of k, x, z, j, q; the real words are :data:`WORDS`)."""
    while True:
        w = "".join(rng.choice(_HELD_OUT_LETTERS) for _ in range(rng.randint(lo, hi)))
        if w not in WORDS:
            return w


def _held_out_palindrome(rng: random.Random) -> str:
    half = "".join(rng.choice(_HELD_OUT_LETTERS) for _ in range(rng.randint(2, 5)))
    return half + rng.choice(["", rng.choice(_HELD_OUT_LETTERS)]) + half[::-1]


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(math.isqrt(n)) + 1))


def sample_inputs(kind: str, rng: random.Random, like: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fresh inputs of ``kind`` drawn from values the generated requests never use (held out).

    Every kind draws from a space far too large to tabulate (random strings, wide numeric
    ranges): an earlier version drew from small pools written in this file (7 Celsius values,
    16 words, 24 palindrome candidates), so a "synthesized" tool that was a literal table of the
    request's inputs plus those pools passed the evaluator's held-out run (synthesis 1.0) while
    computing nothing. ``is_prime`` draws as many primes as composites (a tool answering False
    to everything would pass most random odd numbers).

    Args:
        kind: A tool kind.
        rng: The random source (the evaluator draws it from a secret seed).
        like: Inputs of a request of the kind; its fixed inputs (temperature units) are kept.

    Returns:
        Inputs for :func:`solve_kind`.

    Raises:
        KeyError: An unknown kind.
    """
    like = dict(like or {})
    if kind == "percentage":
        # generated values are multiples of 20 up to 6,000 (multi-step ones below 6,000)
        value = rng.randrange(6001, 60000)
        while value % 20 == 0:
            value = rng.randrange(6001, 60000)
        return {"percent": rng.randint(1, 400), "value": value}
    if kind in ("factorial",):
        return {"n": rng.randint(21, 150)}  # generated: 2-20
    if kind == "temperature_conversion":
        # generated: tenths of a degree; held out: quarter degrees (x.25, x.75)
        return {
            "value": rng.randrange(-540, 20000) / 2 + rng.choice([0.25, -0.25]),  # above absolute zero
            "from_unit": like.get("from_unit", "C"),
            "to_unit": like.get("to_unit", "F"),
        }
    if kind in ("reverse_string", "vowel_count"):
        return {"text": _held_out_word(rng)}
    if kind == "word_count":
        return {"text": " ".join(_held_out_word(rng, 3, 8) for _ in range(rng.randint(2, 9)))}
    if kind == "is_palindrome":
        if rng.random() < 0.5:
            return {"text": _held_out_palindrome(rng)}
        w = _held_out_word(rng)
        return {"text": w if w != w[::-1] else w + "ab"}
    if kind == "is_prime":
        want = rng.random() < 0.5  # as many primes as not
        for _ in range(10_000):
            n = rng.randrange(50_001, 5_000_000, 2)  # generated: 2-50,000
            if _is_prime(n) == want:
                break
        return {"n": n}
    if kind in ("gcd", "lcm"):
        g = rng.choice([3, 5, 7, 11])  # generated: gcd below 6,000, lcm pairs a < 1,000
        return {"a": g * rng.randint(2000, 2999), "b": g * rng.randint(3001, 4000)}
    if kind in _LIST_KINDS:
        return {"numbers": [rng.randint(61, 99) for _ in range(rng.choice([4, 5]))]}
    if kind == "celsius_to_kelvin":
        return {"celsius": rng.randrange(-545, 100_001, 2) / 2}  # x.5; generated: whole degrees
    raise KeyError(kind)


def render_query(kind: str, inputs: Mapping[str, Any]) -> str:
    """The canonical phrasing of a request of ``kind`` with ``inputs`` (:func:`parse_inputs`
    reads the inputs back from it).

    Raises:
        KeyError: An unknown kind or a missing input.
    """
    x = inputs
    lst = ", ".join(map(str, x.get("numbers", [])))
    unit = {"C": "Celsius", "F": "Fahrenheit"}
    table = {
        "percentage": lambda: f"What is {x['percent']}% of {x['value']}?",
        "factorial": lambda: f"Calculate the factorial of {x['n']}",
        "temperature_conversion": lambda: (
            f"Convert {x['value']} degrees {unit[x['from_unit']]} to {unit[x['to_unit']]}"
        ),
        "reverse_string": lambda: f"Reverse the string '{x['text']}'",
        "word_count": lambda: f"Count the words in '{x['text']}'",
        "is_prime": lambda: f"Is {x['n']} a prime number?",
        "gcd": lambda: f"What is the greatest common divisor of {x['a']} and {x['b']}?",
        "lcm": lambda: f"What is the least common multiple of {x['a']} and {x['b']}?",
        "sum_list": lambda: f"What is the sum of the list [{lst}]?",
        "max_list": lambda: f"What is the largest number in the list [{lst}]?",
        "average_list": lambda: f"What is the average of the numbers [{lst}]?",
        "celsius_to_kelvin": lambda: f"Convert {x['celsius']} degrees Celsius to Kelvin",
        "vowel_count": lambda: f"How many vowels are in the word '{x['text']}'?",
        "is_palindrome": lambda: f"Is '{x['text']}' a palindrome?",
    }
    return table[kind]()


def recognize(query: str) -> tuple[str, dict[str, Any]] | None:
    """The kind and inputs of a request in canonical phrasing (None for any other text)."""
    for kind in VARIABLE_SLOTS:
        inputs = parse_inputs(kind, query)
        if inputs:
            try:
                if render_query(kind, inputs) == query.strip():
                    return kind, inputs
            except (KeyError, TypeError):
                continue
    return None


def request_values(query: str) -> list[Any]:
    """Every number and quoted string in a request (what an agent that echoes its input returns)."""
    out: list[Any] = [num(n) for n in re.findall(NUM, query)]
    out += re.findall(r"'([^']*)'", query)
    return out
