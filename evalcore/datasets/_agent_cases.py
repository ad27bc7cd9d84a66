"""Seeded test cases for evaluating tool-building agents.

Every case carries either an expected answer (a number, a string, a boolean or a list) computed
here in Python, or an expected behaviour (``"error"`` for invalid input, ``"clarification"`` for
an ambiguous request). Cases also name the tools a correct agent should use: the four starter
tools of the reference agent (``percentage``, ``reverse_string``, ``factorial``,
``temperature_conversion``) or a *kind* of tool the agent has to synthesize (``word_count``,
``is_prime``, ``gcd`` …). Multi-step cases list the expected answer of every step and which
earlier steps feed it.

The generator owns a ``random.Random(seed)``; :meth:`AgentCaseGenerator.generate` re-seeds it on
every call, so the same seed gives the same cases each time, independent of global state.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from evalcore._io import read_json, write_json_atomic
from evalcore.errors import EvalcoreError

STARTER_TOOLS: tuple[str, ...] = ("percentage", "reverse_string", "factorial", "temperature_conversion")
"""Tool names every reference agent starts with."""

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

COMPLEXITIES: tuple[str, ...] = ("simple", "medium", "complex", "edge")
DEFAULT_COUNTS: dict[str, int] = {"simple": 20, "medium": 15, "complex": 10, "edge": 11}
BEHAVIORS: tuple[str, ...] = ("answer", "error", "clarification")

_WORDS = (
    "python", "agent", "matrix", "orange", "window", "silver", "garden", "planet", "rocket",
    "yellow", "bridge", "castle", "forest", "listen", "marble", "number", "ticket", "violet",
)
_PALINDROMES = ("racecar", "level", "rotor", "civic", "kayak", "refer", "madam", "noon")

_UNRELATED = (
    "What is the capital of France?",
    "Tell me a joke about penguins",
    "Who wrote Pride and Prejudice?",
    "What will the weather be like in Paris tomorrow?",
    "Recommend a good science fiction novel",
    "How do I bake sourdough bread?",
    "Translate good morning into Japanese",
    "Which planet has the most moons?",
    "Book a table for two at seven tonight",
    "Who won the football world cup in 2018?",
    "Summarize the plot of Hamlet",
    "What is the best way to learn the guitar?",
    "Write a haiku about autumn leaves",
    "Which programming language should a beginner learn first?",
    "Where can I buy cheap flights to Rome?",
    "Describe the life cycle of a butterfly",
)


@dataclass
class ExpectedStep:
    """One expected step of a multi-step case.

    Attributes:
        tool: The tool (starter name or synthesized kind) a correct agent uses for the step.
        expected: The step's expected result.
        depends_on: Indices of earlier steps whose result must feed this step's arguments.
    """

    tool: str
    expected: Any
    depends_on: list[int] = field(default_factory=list)


@dataclass
class AgentCase:
    """One agent test case.

    Attributes:
        id: Stable identifier (``<complexity>-<nn>-<kind>``).
        query: The request sent to the agent.
        complexity: ``simple``, ``medium``, ``complex`` or ``edge``.
        kind: What the case exercises (a tool name, ``multi_step``, ``invalid_input`` …).
        categories: Evaluation categories the case is meant for (hints for the suites).
        tags: Free-form labels.
        expected: The expected structured result (None when a behaviour is expected).
        expected_behavior: ``answer``, ``error`` or ``clarification``.
        rel_tol: Relative tolerance for numeric answers (``math.isclose``).
        abs_tol: Absolute tolerance for numeric answers.
        expected_tools: Tools a correct agent uses, in order.
        steps: Expected steps of a multi-step case (empty for single-step cases).
        paraphrase_group: Group id shared by paraphrases of the same request, or None.
        inputs: The request's arguments by name (e.g. ``{"a": 12, "b": 18}`` for ``gcd``), read
            from its canonical phrasing; the evaluator runs an agent's registered tools on them
            (and on held-out inputs of the same kind) to check what the tools compute. Empty for
            multi-step, error and clarification cases.
        error_terms: For ``error`` and ``clarification`` cases: words of which a clear error
            message names at least one (the invalid value or the reason), case-insensitive.
    """

    id: str
    query: str
    complexity: str
    kind: str
    categories: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    expected: Any = None
    expected_behavior: str = "answer"
    rel_tol: float = 1e-9
    abs_tol: float = 1e-6
    expected_tools: list[str] = field(default_factory=list)
    steps: list[ExpectedStep] = field(default_factory=list)
    paraphrase_group: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    error_terms: list[str] = field(default_factory=list)

    @property
    def is_multi_step(self) -> bool:
        """True when the case has more than one expected step."""
        return len(self.steps) > 1

    @property
    def needs_synthesis(self) -> bool:
        """True when a correct agent must use a tool that is not a starter tool."""
        return any(t not in STARTER_TOOLS for t in self.expected_tools)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON dictionary of the case."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, path: str | None = None, index: int | None = None) -> "AgentCase":
        """Build and validate a case from a dictionary.

        Args:
            d: The dictionary (as written by :meth:`to_dict`).
            path: File the dictionary came from (for error messages).
            index: 0-based position of the case in that file (for error messages).

        Returns:
            The validated case.

        Raises:
            EvalcoreError: A required field is missing or has the wrong type or value.
        """

        def bad(msg: str, fld: str) -> EvalcoreError:
            where = f"cases[{index}]." if index is not None else ""
            return EvalcoreError(msg, path=path, field=where + fld)

        if not isinstance(d, Mapping):
            raise bad("a case must be a JSON object", "case")
        for key in ("id", "query", "complexity", "kind"):
            if not isinstance(d.get(key), str):
                raise bad("missing or not a string", key)
        if d["complexity"] not in COMPLEXITIES:
            raise bad(f"must be one of {list(COMPLEXITIES)}, got {d['complexity']!r}", "complexity")
        behavior = d.get("expected_behavior", "answer")
        if behavior not in BEHAVIORS:
            raise bad(f"must be one of {list(BEHAVIORS)}, got {behavior!r}", "expected_behavior")
        if behavior == "answer" and d.get("expected") is None:
            raise bad("an 'answer' case needs an expected value", "expected")
        for key in ("categories", "tags", "expected_tools"):
            val = d.get(key, [])
            if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
                raise bad("must be a list of strings", key)
        for key in ("rel_tol", "abs_tol"):
            val = d.get(key, 1e-9 if key == "rel_tol" else 1e-6)
            if isinstance(val, bool) or not isinstance(val, (int, float)) or val < 0:
                raise bad("must be a non-negative number", key)
        steps_raw = d.get("steps", [])
        if not isinstance(steps_raw, list):
            raise bad("must be a list", "steps")
        steps: list[ExpectedStep] = []
        for i, s in enumerate(steps_raw):
            if not isinstance(s, Mapping) or not isinstance(s.get("tool"), str):
                raise bad(f"step {i} needs a 'tool' string", "steps")
            deps = s.get("depends_on", [])
            if not isinstance(deps, list) or not all(isinstance(j, int) and 0 <= j < i for j in deps):
                raise bad(f"step {i}: depends_on must list indices of earlier steps", "steps")
            steps.append(ExpectedStep(tool=s["tool"], expected=s.get("expected"), depends_on=list(deps)))
        group = d.get("paraphrase_group")
        if group is not None and not isinstance(group, str):
            raise bad("must be a string or null", "paraphrase_group")
        inputs = d.get("inputs", {})
        if not isinstance(inputs, Mapping) or not all(isinstance(k, str) for k in inputs):
            raise bad("must be an object with string keys", "inputs")
        terms = d.get("error_terms", [])
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise bad("must be a list of strings", "error_terms")
        return cls(
            id=d["id"],
            query=d["query"],
            complexity=d["complexity"],
            kind=d["kind"],
            categories=list(d.get("categories", [])),
            tags=list(d.get("tags", [])),
            expected=d.get("expected"),
            expected_behavior=behavior,
            rel_tol=float(d.get("rel_tol", 1e-9)),
            abs_tol=float(d.get("abs_tol", 1e-6)),
            expected_tools=list(d.get("expected_tools", [])),
            steps=steps,
            paraphrase_group=group,
            inputs=dict(inputs),
            error_terms=list(terms),
        )


# --------------------------------------------------------------------------------------------
# Single-tool request makers: each returns (templates, answer, numeric tolerance override).
# Templates are paraphrases of one request; the first is the canonical phrasing.
# --------------------------------------------------------------------------------------------

_Maker = Callable[[random.Random], tuple[list[str], Any, float]]


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
    s = rng.choice(_WORDS) + rng.choice(["", " " + rng.choice(_WORDS)])
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


def _word_count(rng: random.Random) -> tuple[list[str], Any, float]:
    words = rng.sample(_WORDS, rng.randint(2, 6))
    text = " ".join(words)
    return (
        [f"Count the words in '{text}'", f"How many words are in the text '{text}'?",
         f"Give the number of words in '{text}'"],
        len(words),
        0.0,
    )


def _is_prime(rng: random.Random) -> tuple[list[str], Any, float]:
    n = rng.choice([2, 9, 13, 15, 17, 21, 29, 33, 37, 49, 51, 53, 91, 97, 101, 119, 127])
    prime = n > 1 and all(n % d for d in range(2, int(math.isqrt(n)) + 1))
    return (
        [f"Is {n} a prime number?", f"Check whether {n} is prime", f"Tell me if the number {n} is prime"],
        prime,
        0.0,
    )


def _gcd(rng: random.Random) -> tuple[list[str], Any, float]:
    g = rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12])
    a, b = g * rng.randint(2, 9), g * rng.randint(10, 19)
    return (
        [f"What is the greatest common divisor of {a} and {b}?", f"Find the GCD of {a} and {b}",
         f"Compute the greatest common divisor of the numbers {a} and {b}"],
        math.gcd(a, b),
        0.0,
    )


def _lcm(rng: random.Random) -> tuple[list[str], Any, float]:
    a, b = rng.randint(3, 15), rng.randint(16, 30)
    return (
        [f"What is the least common multiple of {a} and {b}?", f"Find the LCM of {a} and {b}",
         f"Compute the least common multiple of the numbers {a} and {b}"],
        a * b // math.gcd(a, b),
        0.0,
    )


def _numbers(rng: random.Random) -> list[int]:
    return [rng.randint(1, 60) for _ in range(rng.randint(3, 6))]


def _sum_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = _numbers(rng)
    lst = ", ".join(map(str, xs))
    return (
        [f"What is the sum of the list [{lst}]?", f"Add up the numbers [{lst}]",
         f"Compute the total of the numbers in [{lst}]"],
        sum(xs),
        0.0,
    )


def _max_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = _numbers(rng)
    lst = ", ".join(map(str, xs))
    return (
        [f"What is the largest number in the list [{lst}]?", f"Find the maximum of [{lst}]",
         f"Which number is the biggest in [{lst}]?"],
        max(xs),
        0.0,
    )


def _average_list(rng: random.Random) -> tuple[list[str], Any, float]:
    xs = [rng.randint(1, 60) for _ in range(rng.choice([4, 5]))]  # the mean has at most 2 decimals
    lst = ", ".join(map(str, xs))
    return (
        [f"What is the average of the numbers [{lst}]?", f"Compute the mean of [{lst}]",
         f"Find the arithmetic mean of the list [{lst}]"],
        round(sum(xs) / len(xs), 6),
        0.0,
    )


def _kelvin(rng: random.Random) -> tuple[list[str], Any, float]:
    c = rng.choice([-40, -10, 0, 12, 25, 37, 100, 250])
    return (
        [f"Convert {c} degrees Celsius to Kelvin", f"What is {c} °C in Kelvin?",
         f"How many Kelvin is {c} degrees Celsius?"],
        round(c + 273.15, 6),
        0.0,
    )


def _vowel_count(rng: random.Random) -> tuple[list[str], Any, float]:
    w = rng.choice(_WORDS)
    return (
        [f"How many vowels are in the word '{w}'?", f"Count the vowels in '{w}'",
         f"Give the number of vowels in '{w}'"],
        sum(ch in "aeiou" for ch in w),
        0.0,
    )


def _is_palindrome(rng: random.Random) -> tuple[list[str], Any, float]:
    w = rng.choice(_PALINDROMES + _WORDS[:8])
    return (
        [f"Is '{w}' a palindrome?", f"Check whether the word '{w}' is a palindrome",
         f"Tell me if '{w}' reads the same backwards"],
        w == w[::-1],
        0.0,
    )


_MAKERS: dict[str, _Maker] = {
    "percentage": _percentage,
    "reverse_string": _reverse,
    "factorial": _factorial,
    "temperature_conversion": _temperature,
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


CLARIFICATION_TERMS: tuple[str, ...] = (
    "ambiguous", "unclear", "clarif", "missing", "which", "specify", "provide", "what value", "what number",
    "what text", "not given", "no value", "no number",
)
"""Words of which a clear answer to an ambiguous request names at least one (the reason)."""

_NUM = r"-?\d+(?:\.\d+)?"


def _num(text: str) -> int | float:
    v = float(text)
    return int(v) if v.is_integer() and "." not in text else v


_INPUT_PATTERNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "percentage": (rf"({_NUM})\s*(?:%|percent) of ({_NUM})", ("percent", "value")),
    "factorial": (rf"factorial of (?:the number )?({_NUM})", ("n",)),
    "is_prime": (rf"({_NUM}) (?:a prime|is prime)|number ({_NUM}) is prime", ("n",)),
    "gcd": (rf"({_NUM}) and ({_NUM})", ("a", "b")),
    "lcm": (rf"({_NUM}) and ({_NUM})", ("a", "b")),
    "celsius_to_kelvin": (rf"({_NUM})\s*(?:degrees Celsius|°C)", ("celsius",)),
}
_TEXT_KINDS: dict[str, str] = {"reverse_string": "text", "word_count": "text", "vowel_count": "text",
                               "is_palindrome": "text"}
_LIST_KINDS = ("sum_list", "max_list", "average_list")

VARIABLE_SLOTS: dict[str, tuple[str, ...]] = {
    "percentage": ("percent", "value"), "factorial": ("n",), "is_prime": ("n",), "gcd": ("a", "b"),
    "lcm": ("a", "b"), "celsius_to_kelvin": ("celsius",), "temperature_conversion": ("value",),
    "reverse_string": ("text",), "word_count": ("text",), "vowel_count": ("text",), "is_palindrome": ("text",),
    "sum_list": ("numbers",), "max_list": ("numbers",), "average_list": ("numbers",),
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
    import re

    if kind in _TEXT_KINDS:
        m = re.search(r"'([^']*)'", query)
        return {_TEXT_KINDS[kind]: m.group(1)} if m else {}
    if kind in _LIST_KINDS:
        m = re.search(r"\[([^\]]*)\]", query)
        return {"numbers": [_num(x.strip()) for x in m.group(1).split(",")]} if m else {}
    if kind == "temperature_conversion":
        m = re.search(rf"({_NUM})\s*(?:degrees\s+|°)(C|F)\w*\s+(?:to|in|into)\s+(C|F)", query)
        return {"value": _num(m.group(1)), "from_unit": m.group(2), "to_unit": m.group(3)} if m else {}
    pat = _INPUT_PATTERNS.get(kind)
    if pat is None:
        return {}
    m = re.search(pat[0], query)
    if not m:
        return {}
    groups = [g for g in m.groups() if g is not None]
    return {name: _num(g) for name, g in zip(pat[1], groups)}


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
        n = int(x["n"])
        return n > 1 and all(n % d for d in range(2, int(math.isqrt(n)) + 1))
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


_HELD_OUT_WORDS = ("lantern", "harbor", "meadow", "copper", "thunder", "saddle", "pepper", "canyon",
                   "glacier", "mosaic", "tunnel", "velvet", "anchor", "blossom", "falcon", "quartz")
_HELD_OUT_PALINDROMES = ("stats", "radar", "solos", "tenet", "minim", "deified", "repaper", "sagas")


def sample_inputs(kind: str, rng: random.Random, like: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fresh inputs of ``kind`` drawn from values the generated requests never use (held out).

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
        return {"percent": rng.choice([3, 7, 35, 55, 65, 85, 95, 150]), "value": rng.choice([36, 56, 88, 96, 300, 700])}
    if kind in ("factorial",):
        return {"n": rng.randint(13, 18)}
    if kind == "temperature_conversion":
        return {"value": rng.choice([-35, -15, 45, 60, 75, 120]) if like.get("from_unit", "C") == "C"
                else rng.choice([-22, 41, 59, 77, 95, 122]),
                "from_unit": like.get("from_unit", "C"), "to_unit": like.get("to_unit", "F")}
    if kind in ("reverse_string", "word_count", "vowel_count"):
        k = 1 if kind != "word_count" else rng.randint(2, 5)
        return {"text": " ".join(rng.sample(_HELD_OUT_WORDS, k))}
    if kind == "is_palindrome":
        return {"text": rng.choice(_HELD_OUT_PALINDROMES + _HELD_OUT_WORDS[:8])}
    if kind == "is_prime":
        return {"n": rng.choice([131, 133, 137, 139, 143, 149, 161, 163, 169, 173, 187, 191])}
    if kind in ("gcd", "lcm"):
        g = rng.choice([3, 5, 7, 11])
        return {"a": g * rng.randint(20, 29), "b": g * rng.randint(31, 40)}
    if kind in _LIST_KINDS:
        return {"numbers": [rng.randint(61, 99) for _ in range(rng.choice([4, 5]))]}
    if kind == "celsius_to_kelvin":
        return {"celsius": rng.choice([-60, -25, 7, 42, 63, 180, 300])}
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
        "temperature_conversion": lambda: (f"Convert {x['value']} degrees {unit[x['from_unit']]} to "
                                           f"{unit[x['to_unit']]}"),
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
    import re

    out: list[Any] = [_num(n) for n in re.findall(_NUM, query)]
    out += re.findall(r"'([^']*)'", query)
    return out


NUMERIC_REL_TOL = 1e-9
NUMERIC_ABS_TOL = 1e-6


def _tol(answer: Any, override: float) -> tuple[float, float]:
    """(rel_tol, abs_tol) of an answer: every numeric answer here is exact to a few decimals, so
    a tight tolerance only forgives float representation and rounding to 6 decimals."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return 0.0, 0.0
    return NUMERIC_REL_TOL, max(NUMERIC_ABS_TOL, override)


# ----------------------------- multi-step makers ---------------------------------------------

def _ms_fact_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 8)
    p = rng.choice([10, 20, 25, 50, 75])
    a = math.factorial(n)
    b = p * a / 100
    b = int(b) if float(b).is_integer() else b
    return (f"Calculate the factorial of {n}, then find {p}% of the result",
            [ExpectedStep("factorial", a), ExpectedStep("percentage", b, [0])], b, ["dependent"])


def _ms_pct_then_fact(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    p = rng.choice([10, 20, 25, 50])
    n = rng.randint(3, 7)
    x = int(n * 100 / p)
    a = p * x / 100
    a = int(a) if float(a).is_integer() else a
    return (f"Find {p}% of {x}, then calculate the factorial of the result",
            [ExpectedStep("percentage", a), ExpectedStep("factorial", math.factorial(int(a)), [0])],
            math.factorial(int(a)), ["dependent"])


def _ms_temp_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    c = rng.choice([0, 10, 20, 30, 40, 100])
    p = rng.choice([10, 50, 25])
    f = c * 9 / 5 + 32
    f = int(f) if float(f).is_integer() else f
    b = round(p * f / 100, 6)
    return (f"Convert {c} degrees Celsius to Fahrenheit, then calculate {p}% of that value",
            [ExpectedStep("temperature_conversion", f), ExpectedStep("percentage", b, [0])], b, ["dependent"])


def _ms_independent(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 9)
    s = rng.choice(_WORDS)
    return (f"Calculate the factorial of {n} and also reverse the string '{s}'",
            [ExpectedStep("factorial", math.factorial(n)), ExpectedStep("reverse_string", s[::-1])],
            [math.factorial(n), s[::-1]], ["sequential", "independent"])


def _ms_three_steps(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    n = rng.randint(3, 5)
    p = rng.choice([50, 25])
    a = math.factorial(n)
    b = p * a / 100
    b = int(b) if float(b).is_integer() else b
    c = b * 9 / 5 + 32
    c = int(c) if float(c).is_integer() else round(c, 6)
    return (f"Calculate the factorial of {n}, then find {p}% of the result, then convert that many "
            f"degrees Celsius to Fahrenheit",
            [ExpectedStep("factorial", a), ExpectedStep("percentage", b, [0]),
             ExpectedStep("temperature_conversion", c, [1])], c, ["dependent", "three_steps"])


def _ms_sum_then_pct(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    xs = [rng.randint(5, 50) for _ in range(4)]
    p = rng.choice([10, 20, 50])
    s = sum(xs)
    b = p * s / 100
    b = int(b) if float(b).is_integer() else b
    return (f"What is the sum of the list [{', '.join(map(str, xs))}], then find {p}% of the result",
            [ExpectedStep("sum_list", s), ExpectedStep("percentage", b, [0])], b, ["dependent", "synthesis"])


def _ms_gcd_then_fact(rng: random.Random) -> tuple[str, list[ExpectedStep], Any, list[str]]:
    g = rng.randint(3, 7)
    a, b = g * 2, g * 3
    return (f"Find the greatest common divisor of {a} and {b}, then calculate the factorial of the result",
            [ExpectedStep("gcd", g), ExpectedStep("factorial", math.factorial(g), [0])],
            math.factorial(g), ["dependent", "synthesis"])


_MULTI_MAKERS: tuple[Callable[[random.Random], tuple[str, list[ExpectedStep], Any, list[str]]], ...] = (
    _ms_fact_then_pct,
    _ms_temp_then_pct,
    _ms_independent,
    _ms_pct_then_fact,
    _ms_three_steps,
    _ms_sum_then_pct,
    _ms_gcd_then_fact,
)


# ----------------------------- edge cases ------------------------------------------------------

def _edge_pool(rng: random.Random) -> list[dict[str, Any]]:
    """Every edge case the generator can produce, in a seeded order within each behaviour."""
    w = rng.choice(_WORDS)
    x = rng.choice([40, 80, 250, 640])
    neg = rng.randint(1, 9)
    errors: list[dict[str, Any]] = [
        {"query": f"Calculate the factorial of -{neg}", "kind": "invalid_input",
         "tools": ["factorial"], "tags": ["negative"], "terms": [f"-{neg}", "negative"]},
        {"query": "Calculate the factorial of 2.5", "kind": "invalid_input", "tools": ["factorial"],
         "tags": ["non_integer"], "terms": ["2.5", "integer", "whole"]},
        {"query": "Convert abc degrees Celsius to Fahrenheit", "kind": "invalid_input",
         "tools": ["temperature_conversion"], "tags": ["non_numeric"], "terms": ["abc", "number", "numeric"]},
        {"query": "What is ten% of banana?", "kind": "invalid_input", "tools": ["percentage"],
         "tags": ["non_numeric"], "terms": ["banana", "ten", "number", "numeric"]},
        {"query": "Convert -500 degrees Celsius to Fahrenheit", "kind": "invalid_input",
         "tools": ["temperature_conversion"], "tags": ["below_absolute_zero"],
         "terms": ["-500", "absolute zero"]},
    ]
    clar: list[dict[str, Any]] = [
        {"query": "Convert it to Fahrenheit", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "Calculate the percentage", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "Reverse it", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
        {"query": "What is the factorial?", "kind": "ambiguous", "tools": [], "tags": ["missing_value"]},
    ]
    # boundary values whose answers equal no number or string in the request (an agent that
    # echoes its input gets none of them right)
    values: list[dict[str, Any]] = [
        {"query": "Calculate the factorial of 0", "kind": "factorial", "expected": 1,
         "tools": ["factorial"], "tags": ["boundary"]},
        {"query": f"What is 200% of {x}?", "kind": "percentage", "expected": 2 * x, "tools": ["percentage"],
         "tags": ["boundary"]},
        {"query": f"What is 0.5% of {x}?", "kind": "percentage", "expected": x / 200, "tools": ["percentage"],
         "tags": ["boundary"]},
        {"query": "Convert -273.15 degrees Celsius to Fahrenheit", "kind": "temperature_conversion",
         "expected": -459.67, "tools": ["temperature_conversion"], "tags": ["boundary", "absolute_zero"]},
        {"query": "Reverse the string 'ab'", "kind": "reverse_string", "expected": "ba",
         "tools": ["reverse_string"], "tags": ["two_chars"]},
        {"query": f"Reverse the string '{w.upper()}'", "kind": "reverse_string", "expected": w.upper()[::-1],
         "tools": ["reverse_string"], "tags": ["case"]},
        {"query": "Calculate the factorial of 20", "kind": "factorial", "expected": math.factorial(20),
         "tools": ["factorial"], "tags": ["boundary", "large"]},
    ]
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


class AgentCaseGenerator:
    """Seeded generator of agent test cases.

    Args:
        seed: Seed of the generator's own ``random.Random``.
        counts: Cases per complexity, e.g. ``{"simple": 4, "edge": 2}``; missing keys take the
            defaults (20 simple, 15 medium, 10 complex, 11 edge = 56).

    Raises:
        EvalcoreError: An unknown complexity, a negative count, or more edge cases than exist.
    """

    def __init__(self, seed: int = 0, counts: Mapping[str, int] | None = None) -> None:
        self.seed = int(seed)
        self.counts = dict(DEFAULT_COUNTS)
        for key, val in (counts or {}).items():
            if key not in DEFAULT_COUNTS:
                raise EvalcoreError(f"unknown complexity {key!r}; use {list(COMPLEXITIES)}", field="counts")
            if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                raise EvalcoreError(f"count for {key!r} must be a non-negative integer", field="counts")
            self.counts[key] = val
        self._rng = random.Random(self.seed)

    # ------------------------------------------------------------------ main cases
    def generate(self) -> list[AgentCase]:
        """Generate the cases (same seed and counts → identical cases on every call).

        Returns:
            Cases ordered simple, medium, complex, edge, with unique queries.
        """
        self._rng.seed(self.seed)
        rng = self._rng
        seen: set[str] = set()
        cases: list[AgentCase] = []

        for i in range(self.counts["simple"]):
            kind = STARTER_TOOLS[i % len(STARTER_TOOLS)]
            cases.append(self._single(rng, kind, "simple", i, seen, ["functional", "performance", "retrieval"]))
        for i in range(self.counts["medium"]):
            kind = SYNTHESIZED_KINDS[i % len(SYNTHESIZED_KINDS)]
            cases.append(self._single(rng, kind, "medium", i, seen, ["synthesis", "retrieval"]))
        for i in range(self.counts["complex"]):
            maker = _MULTI_MAKERS[i % len(_MULTI_MAKERS)]
            for _ in range(200):
                query, steps, answer, tags = maker(rng)
                if query not in seen:
                    break
            else:
                raise EvalcoreError(f"cannot make {self.counts['complex']} distinct complex cases", field="counts")
            seen.add(query)
            numeric = not isinstance(answer, (list, str, bool))
            cases.append(AgentCase(
                id=f"complex-{i:02d}-multi_step", query=query, complexity="complex", kind="multi_step",
                categories=["workflow"], tags=["multi_step", *tags], expected=answer,
                rel_tol=NUMERIC_REL_TOL if numeric else 0.0, abs_tol=NUMERIC_ABS_TOL if numeric else 0.0,
                expected_tools=[s.tool for s in steps], steps=steps,
            ))
        pool = _edge_pool(rng)
        if self.counts["edge"] > len(pool):
            raise EvalcoreError(f"at most {len(pool)} edge cases exist, asked for {self.counts['edge']}",
                                field="counts")
        for i, e in enumerate(pool[: self.counts["edge"]]):
            if e["query"] in seen:
                continue
            seen.add(e["query"])
            answer = e.get("expected")
            cases.append(AgentCase(
                id=f"edge-{i:02d}-{e['kind']}", query=e["query"], complexity="edge", kind=e["kind"],
                categories=["robustness"], tags=["edge", *e["tags"]], expected=answer,
                expected_behavior=e["behavior"],
                rel_tol=NUMERIC_REL_TOL if isinstance(answer, (int, float)) and not isinstance(answer, bool) else 0.0,
                abs_tol=NUMERIC_ABS_TOL if isinstance(answer, (int, float)) and not isinstance(answer, bool) else 0.0,
                expected_tools=list(e["tools"]),
                inputs=parse_inputs(e["kind"], e["query"]) if e["behavior"] == "answer" else {},
                error_terms=list(e.get("terms", [])),
            ))
        return cases

    def _single(self, rng: random.Random, kind: str, complexity: str, i: int, seen: set[str],
                categories: list[str]) -> AgentCase:
        for _ in range(200):
            templates, answer, tol = _MAKERS[kind](rng)
            query = templates[rng.randrange(len(templates))] if complexity == "simple" and i >= 4 else templates[0]
            if query not in seen:
                break
        else:
            raise EvalcoreError(f"cannot make enough distinct {kind!r} cases", field="counts")
        seen.add(query)
        rel, abs_ = _tol(answer, tol)
        return AgentCase(
            id=f"{complexity}-{i:02d}-{kind}", query=query, complexity=complexity, kind=kind,
            categories=list(categories),
            tags=[("starter" if kind in STARTER_TOOLS else "synthesized"), kind],
            expected=answer, rel_tol=rel, abs_tol=abs_, expected_tools=[kind],
            inputs=parse_inputs(kind, templates[0]),
        )

    @staticmethod
    def save(cases: Sequence[AgentCase], path: str | os.PathLike[str]) -> Path:
        """Write cases to JSON; see :func:`save_cases`."""
        return save_cases(cases, path)

    @staticmethod
    def load(path: str | os.PathLike[str]) -> list[AgentCase]:
        """Read cases from JSON; see :func:`load_cases`."""
        return load_cases(path)

    # ------------------------------------------------------------------ extras
    def paraphrase_groups(self, n_groups: int = 3, size: int = 3,
                          kinds: Sequence[str] | None = None) -> list[list[AgentCase]]:
        """Groups of paraphrases of one request each (same arguments, same answer).

        Args:
            n_groups: Number of groups.
            size: Paraphrases per group (at most 3 for every kind).
            kinds: Tool kinds to draw from, cycled (default: starter tools then synthesized kinds,
                alternating).

        Returns:
            ``n_groups`` lists of ``size`` cases sharing ``paraphrase_group``.
        """
        if size < 2 or size > 3:
            raise EvalcoreError("a paraphrase group has 2 or 3 members", field="size")
        rng = random.Random(f"{self.seed}-paraphrase")
        if kinds is None:
            kinds = [k for pair in zip(STARTER_TOOLS * 3, SYNTHESIZED_KINDS, strict=False) for k in pair]
        unknown = [k for k in kinds if k not in _MAKERS]
        if unknown:
            raise EvalcoreError(f"unknown tool kinds {unknown}", field="kinds")
        groups: list[list[AgentCase]] = []
        for g in range(n_groups):
            kind = kinds[g % len(kinds)]
            templates, answer, tol = _MAKERS[kind](rng)
            rel, abs_ = _tol(answer, tol)
            gid = f"para-{g:02d}-{kind}"
            groups.append([
                AgentCase(id=f"{gid}-{j}", query=templates[j], complexity="simple" if kind in STARTER_TOOLS
                          else "medium", kind=kind, categories=["learning", "retrieval"],
                          tags=["paraphrase", kind], expected=answer, rel_tol=rel, abs_tol=abs_,
                          expected_tools=[kind], paraphrase_group=gid,
                          inputs=parse_inputs(kind, templates[0]))
                for j in range(size)
            ])
        return groups

    def unrelated_queries(self, n: int = 8) -> list[str]:
        """Queries no calculation or text tool is relevant to (for false-positive rates).

        Args:
            n: How many (at most 16).

        Returns:
            ``n`` distinct queries in a seeded order.
        """
        if n > len(_UNRELATED):
            raise EvalcoreError(f"at most {len(_UNRELATED)} unrelated queries exist", field="n")
        pool = list(_UNRELATED)
        random.Random(f"{self.seed}-unrelated").shuffle(pool)
        return pool[:n]


def save_cases(cases: Sequence[AgentCase], path: str | os.PathLike[str]) -> Path:
    """Write cases to a JSON file atomically (temporary file, then ``os.replace``).

    Args:
        cases: The cases.
        path: Destination file.

    Returns:
        The written path.
    """
    path = Path(path)
    payload = {"format": "evalcore-agent-cases", "version": 1, "cases": [c.to_dict() for c in cases]}
    write_json_atomic(path, payload, indent=1)
    return path


def load_cases(path: str | os.PathLike[str]) -> list[AgentCase]:
    """Read and validate cases written by :func:`save_cases` (or a bare JSON list of cases).

    Args:
        path: The JSON file.

    Returns:
        The cases.

    Raises:
        EvalcoreError: Missing file, invalid JSON, a malformed case, or duplicate ids/queries.
    """
    p = Path(path)
    if not p.is_file():
        raise EvalcoreError("no such file", path=p)
    data = read_json(p)
    items = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise EvalcoreError("expected a list of cases or an object with a 'cases' list", path=p, field="cases")
    cases = [AgentCase.from_dict(d, path=str(p), index=i) for i, d in enumerate(items)]
    ids, queries = set(), set()
    for i, c in enumerate(cases):
        if c.id in ids:
            raise EvalcoreError(f"duplicate id {c.id!r}", path=p, field=f"cases[{i}].id")
        if c.query in queries:
            raise EvalcoreError(f"duplicate query {c.query!r}", path=p, field=f"cases[{i}].query")
        ids.add(c.id)
        queries.add(c.query)
    return cases

