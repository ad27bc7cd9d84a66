"""Synthesis specifications drawn per run: a tool to write, named in the request, that applies a
drawn composition of integer operations with drawn constants.

A library of tools written in advance answers none of them: the name, the operations, their
order and their constants are drawn from the run's seed (a fresh secret one by default), from
about 10^9 combinations per spec. A generic tool told what to compute (the steps passed as an
argument) is not one built for the request: the evaluator calls the tool with the request's one
input, ``x``, and nothing else (:meth:`~evalcore.agent_eval._measure.ToolChecker.verify_spec`).

The request text is canonical: :func:`parse_spec` reads the spec back from it (the evaluator
does, and so may any agent: parsing a specification is part of synthesizing from it).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SPEC_KIND = "spec_pipeline"
"""The ``kind`` of a synthesis-spec case."""

_OPS: dict[str, tuple[str, Callable[[int, int], int], tuple[int, int] | None, str]] = {
    # op: (phrase, function, range of its constant, Python statement on x)
    "mul": ("multiply it by {c}", lambda x, c: x * c, (2, 19), "x = x * {c}"),
    "add": ("add {c}", lambda x, c: x + c, (1, 99), "x = x + {c}"),
    "sub": ("subtract {c}", lambda x, c: x - c, (1, 99), "x = x - {c}"),
    "mod": ("take the remainder after dividing by {c}", lambda x, c: x % c, (3, 29), "x = x % {c}"),
    "div": ("divide it by {c}, rounding down", lambda x, c: x // c, (2, 9), "x = x // {c}"),
    "square": ("square it", lambda x, c: x * x, None, "x = x * x"),
    "digits": (
        "replace it by the sum of its decimal digits",
        lambda x, c: sum(int(d) for d in str(abs(x))),
        None,
        "x = sum(int(d) for d in str(abs(x)))",
    ),
    "negate": ("negate it", lambda x, c: -x, None, "x = -x"),
}

_STEP_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (op, re.compile("^" + re.escape(phrase).replace(re.escape("{c}"), r"(\d+)") + "$"))
    for op, (phrase, _f, _r, _s) in _OPS.items()
]

_QUERY = re.compile(
    r"^Write a tool named ([a-z][a-z0-9_]*) that takes an integer x and applies these steps in "
    r"order: (.+)\. What does \1 return for x = (-?\d+)\?$"
)

_NAME_SYLLABLES = ("ka", "lo", "mi", "ru", "ve", "zo", "ta", "ni", "sa", "pe", "qu", "dra", "fi", "go", "hu", "jel")
_NAME_NOUNS = ("transform", "score", "map", "code", "fold", "mix", "shift", "key")


@dataclass(frozen=True)
class Spec:
    """One drawn synthesis spec: the tool's name and its steps ``(op, constant or None)``."""

    name: str
    ops: tuple[tuple[str, int | None], ...]

    def apply(self, x: int) -> int:
        """The spec's answer for input ``x`` (the evaluator's own solver)."""
        for op, c in self.ops:
            x = _OPS[op][1](x, c or 0)
        return x

    def steps_text(self) -> str:
        return "; then ".join(_OPS[op][0].format(c=c) for op, c in self.ops)

    def query(self, x: int) -> str:
        return (
            f"Write a tool named {self.name} that takes an integer x and applies these steps in order: "
            f"{self.steps_text()}. What does {self.name} return for x = {x}?"
        )


def parse_spec(query: Any) -> tuple[Spec, int] | None:
    """``(spec, x)`` from a request in the canonical phrasing of :meth:`Spec.query`, else None."""
    if not isinstance(query, str) or len(query) > 2000:
        return None
    m = _QUERY.match(query.strip())
    if m is None:
        return None
    ops: list[tuple[str, int | None]] = []
    for part in m.group(2).split("; then "):
        for op, pat in _STEP_PATTERNS:
            pm = pat.match(part)
            if pm is not None:
                ops.append((op, int(pm.group(1)) if pm.groups() else None))
                break
        else:
            return None
    return Spec(m.group(1), tuple(ops)), int(m.group(3))


def draw_spec(rng: random.Random, taken: set[str]) -> Spec:
    """A spec of 2–4 steps (at most one squaring, never first so values stay small) with a name
    not in ``taken``."""
    while True:
        name = "".join(rng.choice(_NAME_SYLLABLES) for _ in range(rng.randint(2, 3))) + "_" + rng.choice(_NAME_NOUNS)
        if name not in taken:
            break
    ops: list[tuple[str, int | None]] = []
    n = rng.randint(2, 4)
    while len(ops) < n:
        op = rng.choice(list(_OPS))
        if op == "square" and (not ops or any(o == "square" for o, _ in ops)):
            continue
        if ops and ops[-1][0] == op:  # two of a kind in a row read as one
            continue
        rng_c = _OPS[op][2]
        ops.append((op, rng.randint(*rng_c) if rng_c else None))
    if not any(o in ("mul", "add", "sub", "mod", "div") for o, _ in ops):  # at least one drawn constant
        ops[-1] = ("add", rng.randint(1, 99))
    return Spec(name, tuple(ops))


def spec_inputs(rng: random.Random) -> dict[str, int]:
    """One input of a spec (the request's own, or a held-out one)."""
    return {"x": rng.randint(-999, 999)}


def spec_source(spec: Spec, test_inputs: tuple[int, ...] = (0, 1, -7, 12, 250)) -> tuple[str, str]:
    """A documented implementation of ``spec`` written from it, and tests of it: ``(code, tests)``
    (what an honest agent builds; the self-test agents use it)."""
    body = "".join(f"    {_OPS[op][3].format(c=c)}\n" for op, c in spec.ops)
    code = (
        f"def {spec.name}(x: int) -> int:\n"
        f'    """Apply, in order: {spec.steps_text()}.\n\n    Args:\n        x: The input integer.\n\n'
        '    Returns:\n        The result of the steps.\n    """\n'
        f"{body}    return x\n"
    )
    tests = f"def test_{spec.name}() -> None:\n" + "".join(
        f"    assert {spec.name}({x}) == {spec.apply(x)}\n" for x in test_inputs
    )
    return code, tests
