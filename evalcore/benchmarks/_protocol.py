"""The :class:`Benchmark` protocol: everything evalcore needs to know about one benchmark.

A benchmark says how its items are loaded, which prompt template and generation settings it
uses by default, where its few-shot examples come from, how one reply is scored, whether two
answers are equal, and what its summary adds. Runs, rescoring, routing, reporting and imports
ask the registry (:mod:`evalcore.benchmarks._registry`) for the benchmark of a run and call
these methods; none of them compares benchmark names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from evalcore._yaml import YamlDoc
    from evalcore.datasets import Item

SCORERS = ("exact_match", "code_execution")
"""What ``Benchmark.scorer`` may be (recorded as ``config["scorer"]``)."""


@runtime_checkable
class Benchmark(Protocol):
    """One benchmark.

    Attributes:
        name: The name runs record as ``config["dataset"]`` and every sample as ``dataset``.
        scorer: ``"exact_match"`` (an answer is read from the reply) or ``"code_execution"``
            (the reply is code run against the item's tests in the sandbox).
        default_max_tokens: Completion token limit when the user gives none.
        supports_likelihood: Whether ``choice_mode="likelihood"`` (the most probable option
            letter) applies: a letter-choice benchmark with ``choices``.
    """

    name: str
    scorer: str
    default_max_tokens: int
    supports_likelihood: bool

    def load(
        self,
        split: str = "test",
        limit: int | None = None,
        seed: int = 0,
        source: str = "auto",
        path: str | Path | None = None,
    ) -> list[Item]:
        """The items of ``split`` (a seeded subset of ``limit`` items), with stable ids."""
        ...

    def default_params(self) -> dict[str, Any]:
        """Generation settings a run uses where the user gives none (``max_tokens`` ...)."""
        ...

    def few_shot_pool(self) -> list[Item]:
        """Worked examples for few-shot prompts, never from the evaluated split."""
        ...

    def template_doc(self) -> YamlDoc:
        """The default prompt template as a YAML document (keys name, dataset, system, user,
        answer)."""
        ...

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """Values a template may use beyond the item's own fields (``choices_text`` ...)."""
        ...

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Scores of one reply: ``score``, ``strict``, ``flexible`` and, for exact match, the
        extracted answers, extraction methods and parse failures per mode."""
        ...

    def score_records(
        self, records: Sequence[dict[str, Any]], *, timeout_s: float = 10.0, workers: int | None = None
    ) -> list[dict[str, Any]]:
        """Scores of recorded samples (no model called), one per record, in order."""
        ...

    def answers_equal(self, answer: Any, reference: Any) -> bool:
        """Whether an answer (e.g. a majority vote over epochs) equals the reference."""
        ...

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Keys a run summary adds for this benchmark (parse-failure rates, pass@k, per-subject
        accuracy), from the scored records whose call succeeded."""
        ...

    def to_config(self) -> dict[str, Any] | None:
        """What a run records to find this benchmark again (None: its name is enough)."""
        ...
