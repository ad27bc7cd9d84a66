"""Single-tool requests of the kinds an agent has to synthesize a tool for (the generator's
``medium`` cases; also paraphrase groups and the learning curve): one seeded maker per kind,
its inputs drawn from wide ranges (see :mod:`.starter`)."""

from __future__ import annotations

import math
import random
from typing import Any

from evalcore.agent_eval._cases.kinds import WORDS, Maker

_LETTERS = "abcdefghijklmnoprstuvwy"
_MARK = "kxzjq"  # letters no held-out word of kinds.py has: generated words never equal one


def _pseudo_word(rng: random.Random) -> str:
    """A made-up word of 6-12 letters (alternating consonants and vowels), starting with a
    letter of ``_MARK``."""
    out = [rng.choice(_MARK)]
    for i in range(rng.randint(5, 11)):
        out.append(rng.choice("aeiou" if i % 2 == 0 else "bcdfghlmnprstvw"))
    return "".join(out)


def _word_count(rng: random.Random) -> tuple[list[str], Any, float]:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
    text = " ".join(words)
    return (
        [
            f"Count the words in '{text}'",
            f"How many words are in the text '{text}'?",
            f"Give the number of words in '{text}'",
        ],
        len(words),
        0.0,
    )


def _is_prime(rng: random.Random) -> tuple[list[str], Any, float]:
    want = rng.random() < 0.5  # as many primes as not
    while True:
        n = rng.randint(2, 50_000)  # not more: the evaluator may run other tools (factorial) on it
        prime = all(n % d for d in range(2, int(math.isqrt(n)) + 1))
        if prime == want and (prime or n % 2):  # composites odd: not told apart by their last digit
            break
    return (
        [f"Is {n} a prime number?", f"Check whether {n} is prime", f"Tell me if the number {n} is prime"],
        prime,
        0.0,
    )


def _gcd(rng: random.Random) -> tuple[list[str], Any, float]:
    g = rng.randint(2, 60)
    a, b = g * rng.randint(2, 40), g * rng.randint(41, 99)  # below 6,000
    return (
        [
            f"What is the greatest common divisor of {a} and {b}?",
            f"Find the GCD of {a} and {b}",
            f"Compute the greatest common divisor of the numbers {a} and {b}",
        ],
        math.gcd(a, b),
        0.0,
    )


def _lcm(rng: random.Random) -> tuple[list[str], Any, float]:
    a, b = rng.randint(3, 999), rng.randint(1000, 5999)
    return (
        [
            f"What is the least common multiple of {a} and {b}?",
            f"Find the LCM of {a} and {b}",
            f"Compute the least common multiple of the numbers {a} and {b}",
        ],
        a * b // math.gcd(a, b),
        0.0,
    )


def _numbers(rng: random.Random) -> list[int]:
    return [rng.randint(1, 60) for _ in range(rng.randint(3, 6))]


def _sum_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = _numbers(rng)
    lst = ", ".join(map(str, xs))
    return (
        [
            f"What is the sum of the list [{lst}]?",
            f"Add up the numbers [{lst}]",
            f"Compute the total of the numbers in [{lst}]",
        ],
        sum(xs),
        0.0,
    )


def _max_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = _numbers(rng)
    lst = ", ".join(map(str, xs))
    return (
        [
            f"What is the largest number in the list [{lst}]?",
            f"Find the maximum of [{lst}]",
            f"Which number is the biggest in [{lst}]?",
        ],
        max(xs),
        0.0,
    )


def _average_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = [rng.randint(1, 60) for _ in range(rng.choice([4, 5]))]  # the mean has at most 2 decimals
    lst = ", ".join(map(str, xs))
    return (
        [
            f"What is the average of the numbers [{lst}]?",
            f"Compute the mean of [{lst}]",
            f"Find the arithmetic mean of the list [{lst}]",
        ],
        round(sum(xs) / len(xs), 6),
        0.0,
    )


def _kelvin(rng: random.Random) -> tuple[list[str], Any, float]:
    c = rng.randint(-273, 50000)
    return (
        [
            f"Convert {c} degrees Celsius to Kelvin",
            f"What is {c} °C in Kelvin?",
            f"How many Kelvin is {c} degrees Celsius?",
        ],
        round(c + 273.15, 6),
        0.0,
    )


def _vowel_count(rng: random.Random) -> tuple[list[str], Any, float]:
    w = _pseudo_word(rng)
    return (
        [
            f"How many vowels are in the word '{w}'?",
            f"Count the vowels in '{w}'",
            f"Give the number of vowels in '{w}'",
        ],
        sum(ch in "aeiou" for ch in w),
        0.0,
    )


def _is_palindrome(rng: random.Random) -> tuple[list[str], Any, float]:
    if rng.random() < 0.5:
        half = rng.choice(_MARK) + "".join(rng.choice(_LETTERS) for _ in range(rng.randint(1, 4)))
        w = half + rng.choice(["", rng.choice(_LETTERS)]) + half[::-1]  # a palindrome
    else:
        w = _pseudo_word(rng)
        w = w if w != w[::-1] else w + "x"
    return (
        [
            f"Is '{w}' a palindrome?",
            f"Check whether the word '{w}' is a palindrome",
            f"Tell me if '{w}' reads the same backwards",
        ],
        w == w[::-1],
        0.0,
    )


MAKERS: dict[str, Maker] = {
    "word_count": _word_count,
    "is_prime": _is_prime,
    "gcd": _gcd,
    "sum_list": _sum_list,
    "celsius_to_kelvin": _kelvin,
    "lcm": _lcm,
    "max_list": _max_list,
    "vowel_count": _vowel_count,
    "is_palindrome": _is_palindrome,
    "average_list": _average_list,
}
"""Request maker per synthesized kind."""
