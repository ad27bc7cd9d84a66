"""Seeded test cases for evaluating tool-building agents.

Every case carries either an expected answer (a number, a string, a boolean or a list) computed
here in Python, or an expected behaviour (``"error"`` for invalid input, ``"clarification"`` for
an ambiguous request). Cases also name the tools a correct agent should use: a starter kind,
served by a tool every agent starts with (``percentage``, ``reverse_string``, ``factorial``,
``temperature_conversion``), or a *kind* of tool the agent has to synthesize (``word_count``,
``is_prime``, ``gcd`` …). Multi-step cases list the expected answer of every step and which
earlier steps feed it.

The generator owns a ``random.Random(seed)``; :meth:`AgentCaseGenerator.generate` re-seeds it on
every call, so the same seed gives the same cases each time, independent of global state.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.agent_eval._cases import multi_step, specs, starter, synthesized
from evalcore.agent_eval._cases.edge import edge_pool
from evalcore.agent_eval._cases.kinds import STARTER_KINDS, SYNTHESIZED_KINDS, Maker, parse_inputs
from evalcore.agent_eval._cases.records import COMPLEXITIES, AgentCase, load_cases, save_cases
from evalcore.errors import EvalcoreError

DEFAULT_COUNTS: dict[str, int] = {"simple": 20, "medium": 15, "complex": 10, "edge": 11}
"""Cases per complexity when none are given (56 in all)."""

# Unrelated queries (no calculation or text tool is relevant to them), drawn per seed from these
# 18 templates and their fillers (172 distinct queries), so that the negatives of a run are not
# known in advance: a fixed list of 16 let a search that ignores its query answer "nothing" to
# exactly those and its one tool to everything else. No template or filler holds a digit.
_UNRELATED_TEMPLATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "What is the capital of {}?",
        (
            "France",
            "Peru",
            "Kenya",
            "Norway",
            "Vietnam",
            "Chile",
            "Egypt",
            "Canada",
            "Portugal",
            "Mongolia",
            "Ghana",
            "Finland",
        ),
    ),
    (
        "Tell me a joke about {}",
        (
            "penguins",
            "dentists",
            "pirates",
            "accountants",
            "cats",
            "astronauts",
            "robots",
            "librarians",
            "chickens",
            "wizards",
        ),
    ),
    (
        "Who wrote {}?",
        (
            "Pride and Prejudice",
            "Moby Dick",
            "War and Peace",
            "Don Quixote",
            "The Odyssey",
            "Frankenstein",
            "Jane Eyre",
            "The Trial",
            "Middlemarch",
            "Ulysses",
        ),
    ),
    (
        "What will the weather be like in {} tomorrow?",
        ("Paris", "Lagos", "Oslo", "Lima", "Hanoi", "Denver", "Perth", "Cairo", "Seoul", "Glasgow"),
    ),
    (
        "Recommend a good {} novel",
        (
            "science fiction",
            "mystery",
            "historical",
            "fantasy",
            "romance",
            "horror",
            "detective",
            "coming-of-age",
            "spy",
            "gothic",
        ),
    ),
    (
        "How do I bake {}?",
        (
            "sourdough bread",
            "a lemon tart",
            "croissants",
            "banana bread",
            "bagels",
            "a pavlova",
            "focaccia",
            "scones",
            "a carrot cake",
            "pretzels",
        ),
    ),
    (
        "Translate good morning into {}",
        ("Japanese", "Swahili", "Portuguese", "Finnish", "Korean", "Greek", "Hindi", "Turkish", "Dutch", "Icelandic"),
    ),
    (
        "Which planet {}?",
        (
            "has the most moons",
            "is the hottest",
            "has the longest day",
            "has rings",
            "is closest to the sun",
            "has the strongest winds",
            "is the coldest",
            "is the largest",
        ),
    ),
    (
        "Book a table for {} tonight",
        (
            "two at seven",
            "four on the terrace",
            "a birthday dinner",
            "six by the window",
            "a quiet lunch",
            "three at eight",
            "my parents",
            "a team dinner",
        ),
    ),
    (
        "Who won {}?",
        (
            "the football world cup last time",
            "the Tour de France",
            "the best picture award",
            "the chess championship",
            "the Wimbledon final",
            "the Eurovision song contest",
            "the Nobel prize in literature",
            "the marathon in Boston",
        ),
    ),
    (
        "Summarize the plot of {}",
        (
            "Hamlet",
            "Macbeth",
            "The Great Gatsby",
            "Beloved",
            "Dune",
            "Emma",
            "Persuasion",
            "The Tempest",
            "Othello",
            "Rebecca",
        ),
    ),
    (
        "What is the best way to learn {}?",
        (
            "the guitar",
            "to swim",
            "Italian",
            "the violin",
            "to juggle",
            "watercolour painting",
            "to sail",
            "calligraphy",
            "the cello",
            "to knit",
        ),
    ),
    (
        "Write a haiku about {}",
        (
            "autumn leaves",
            "the sea",
            "a sleepy cat",
            "morning fog",
            "city lights",
            "a thunderstorm",
            "cherry blossoms",
            "an old bridge",
            "snowfall",
            "the desert",
        ),
    ),
    (
        "Where can I buy cheap flights to {}?",
        ("Rome", "Tokyo", "Madrid", "Nairobi", "Bangkok", "Vienna", "Quito", "Dublin", "Istanbul", "Auckland"),
    ),
    (
        "Describe the life cycle of {}",
        (
            "a butterfly",
            "a frog",
            "a star",
            "a salmon",
            "a fern",
            "a mosquito",
            "a honeybee",
            "an oak tree",
            "a jellyfish",
            "a volcano",
        ),
    ),
    (
        "Why do {}?",
        (
            "cats purr",
            "leaves change colour",
            "birds migrate",
            "onions make us cry",
            "we dream",
            "stars twinkle",
            "bees dance",
            "zebras have stripes",
            "we yawn",
            "owls hoot at night",
        ),
    ),
    (
        "Suggest a name for {}",
        (
            "my new puppy",
            "a bakery",
            "a sailing boat",
            "a fantasy kingdom",
            "a jazz band",
            "a garden cafe",
            "a pet tortoise",
            "a mountain cabin",
        ),
    ),
    (
        "How should I prepare for {}?",
        (
            "a job interview",
            "a long hike",
            "a wedding speech",
            "a camping trip",
            "a first date",
            "a piano recital",
            "a move abroad",
            "a debate",
        ),
    ),
)
_UNRELATED_MAX = 64

_MAKERS: dict[str, Maker] = {**starter.MAKERS, **synthesized.MAKERS}

NUMERIC_REL_TOL = 1e-9
NUMERIC_ABS_TOL = 1e-6


def answer_tolerance(answer: Any, override: float = 0.0) -> tuple[float, float]:
    """(rel_tol, abs_tol) of an answer: every numeric answer here is exact to a few decimals, so
    a tight tolerance only forgives float representation and rounding to 6 decimals. A whole
    number gets no relative tolerance: 1e-9 of a factorial would forgive answers that are off
    by millions (an agent's float result still matches it within ``abs_tol``)."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return 0.0, 0.0
    return (0.0 if isinstance(answer, int) else NUMERIC_REL_TOL), max(NUMERIC_ABS_TOL, override)


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
            kind = STARTER_KINDS[i % len(STARTER_KINDS)]
            cases.append(self._single(rng, kind, "simple", i, seen, ["functional", "performance", "retrieval"]))
        for i in range(self.counts["medium"]):
            kind = SYNTHESIZED_KINDS[i % len(SYNTHESIZED_KINDS)]
            # not hinted synthesis: a tool for these ten kinds can be written in advance, so
            # synthesis runs on specs drawn per run (synthesis_specs)
            cases.append(self._single(rng, kind, "medium", i, seen, ["retrieval"]))
        for i in range(self.counts["complex"]):
            maker = multi_step.MAKERS[i % len(multi_step.MAKERS)]
            for _ in range(200):
                query, steps, answer, tags = maker(rng)
                if query not in seen:
                    break
            else:
                raise EvalcoreError(f"cannot make {self.counts['complex']} distinct complex cases", field="counts")
            seen.add(query)
            rel, abs_ = answer_tolerance(answer, 0.0)
            cases.append(
                AgentCase(
                    id=f"complex-{i:02d}-multi_step",
                    query=query,
                    complexity="complex",
                    kind="multi_step",
                    categories=["workflow"],
                    tags=["multi_step", *tags],
                    expected=answer,
                    rel_tol=rel,
                    abs_tol=abs_,
                    expected_tools=[s.tool for s in steps],
                    steps=steps,
                )
            )
        pool = edge_pool(rng)
        if self.counts["edge"] > len(pool):
            raise EvalcoreError(
                f"at most {len(pool)} edge cases exist, asked for {self.counts['edge']}", field="counts"
            )
        for i, e in enumerate(pool[: self.counts["edge"]]):
            if e["query"] in seen:
                continue
            seen.add(e["query"])
            answer = e.get("expected")
            rel, abs_ = answer_tolerance(answer, 0.0)
            cases.append(
                AgentCase(
                    id=f"edge-{i:02d}-{e['kind']}",
                    query=e["query"],
                    complexity="edge",
                    kind=e["kind"],
                    categories=["robustness"],
                    tags=["edge", *e["tags"]],
                    expected=answer,
                    expected_behavior=e["behavior"],
                    rel_tol=rel,
                    abs_tol=abs_,
                    expected_tools=list(e["tools"]),
                    inputs=parse_inputs(e["kind"], e["query"]) if e["behavior"] == "answer" else {},
                    error_terms=list(e.get("terms", [])),
                )
            )
        return cases

    def _single(
        self, rng: random.Random, kind: str, complexity: str, i: int, seen: set[str], categories: list[str]
    ) -> AgentCase:
        for _ in range(200):
            templates, answer, tol = _MAKERS[kind](rng)
            query = templates[rng.randrange(len(templates))] if complexity == "simple" and i >= 4 else templates[0]
            if query not in seen:
                break
        else:
            raise EvalcoreError(f"cannot make enough distinct {kind!r} cases", field="counts")
        seen.add(query)
        rel, abs_ = answer_tolerance(answer, tol)
        return AgentCase(
            id=f"{complexity}-{i:02d}-{kind}",
            query=query,
            complexity=complexity,
            kind=kind,
            categories=list(categories),
            tags=[("starter" if kind in STARTER_KINDS else "synthesized"), kind],
            expected=answer,
            rel_tol=rel,
            abs_tol=abs_,
            expected_tools=[kind],
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
    def paraphrase_groups(
        self, n_groups: int = 3, size: int = 3, kinds: Sequence[str] | None = None
    ) -> list[list[AgentCase]]:
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
            kinds = [k for pair in zip(STARTER_KINDS * 3, SYNTHESIZED_KINDS, strict=False) for k in pair]
        unknown = [k for k in kinds if k not in _MAKERS]
        if unknown:
            raise EvalcoreError(f"unknown tool kinds {unknown}", field="kinds")
        groups: list[list[AgentCase]] = []
        for g in range(n_groups):
            kind = kinds[g % len(kinds)]
            templates, answer, tol = _MAKERS[kind](rng)
            rel, abs_ = answer_tolerance(answer, tol)
            gid = f"para-{g:02d}-{kind}"
            groups.append(
                [
                    AgentCase(
                        id=f"{gid}-{j}",
                        query=templates[j],
                        complexity="simple" if kind in STARTER_KINDS else "medium",
                        kind=kind,
                        categories=["learning", "retrieval"],
                        tags=["paraphrase", kind],
                        expected=answer,
                        rel_tol=rel,
                        abs_tol=abs_,
                        expected_tools=[kind],
                        paraphrase_group=gid,
                        inputs=parse_inputs(kind, templates[0]),
                    )
                    for j in range(size)
                ]
            )
        return groups

    def synthesis_specs(self, n: int = 8) -> list[AgentCase]:
        """Requests to write a tool from a spec drawn for this seed (:mod:`.specs`): a name, a
        composition of 2–4 integer operations and their constants, and one input ``x``.

        Args:
            n: How many (distinct names).

        Returns:
            ``n`` cases of kind ``spec_pipeline`` hinted ``synthesis``, the same for the same seed.
        """
        rng = random.Random(f"{self.seed}-synthesis-specs")
        taken: set[str] = set()
        out: list[AgentCase] = []
        for i in range(max(0, n)):
            spec = specs.draw_spec(rng, taken)
            taken.add(spec.name)
            x = specs.spec_inputs(rng)["x"]
            out.append(
                AgentCase(
                    id=f"spec-{i:02d}-{spec.name}",
                    query=spec.query(x),
                    complexity="medium",
                    kind=specs.SPEC_KIND,
                    categories=["synthesis"],
                    tags=["synthesis_spec"],
                    expected=spec.apply(x),
                    rel_tol=0.0,
                    abs_tol=0.0,
                    expected_tools=[spec.name],
                    inputs={"x": x},
                )
            )
        return out

    def unrelated_queries(self, n: int = 8) -> list[str]:
        """Queries no calculation or text tool is relevant to (for false-positive rates).

        Drawn per seed from 18 templates and their fillers (172 distinct queries), so that a
        search cannot know a run's negatives in advance; two queries share a template only when
        ``n`` exceeds 18.

        Args:
            n: How many (at most 64).

        Returns:
            ``n`` distinct queries, the same for the same seed.
        """
        if n > _UNRELATED_MAX:
            raise EvalcoreError(f"at most {_UNRELATED_MAX} unrelated queries at a time", field="n")
        rng = random.Random(f"{self.seed}-unrelated")
        order = list(range(len(_UNRELATED_TEMPLATES)))
        rng.shuffle(order)
        out: list[str] = []
        while len(out) < n:
            template, fillers = _UNRELATED_TEMPLATES[order[len(out) % len(order)]]
            query = template.format(rng.choice(fillers))
            if query not in out:
                out.append(query)
        return out
