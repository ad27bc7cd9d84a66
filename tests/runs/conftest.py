"""Shared helpers of the runs tests: a counting in-memory model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from evalcore.benchmarks import load
from evalcore.models import Completion, CompletionError, GenerationParams, Usage


class CountingModel:
    """Answers from a table keyed by the item's question; counts calls; can fail on purpose."""

    def __init__(
        self, answer: Callable[[str], str], fail: Callable[[str], bool] = lambda q: False, name: str = "counting:test"
    ) -> None:
        self.answer = answer
        self.fail = fail
        self._name = name
        self.calls = 0
        self.seen: list[tuple[list[dict[str, str]], GenerationParams]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def endpoint(self) -> str:
        return "memory"

    def complete(self, messages: Sequence[dict[str, str]], params: GenerationParams) -> Completion:
        self.calls += 1
        self.seen.append((list(messages), params))
        q = messages[-1]["content"]
        if self.fail(q):
            return Completion(text="", retries=3, error=CompletionError(type="HTTP500", message="boom"))
        text = self.answer(q)
        return Completion(
            text=text, usage=Usage(len(q.split()), len(text.split())), cost_usd=0.001, latency_s=0.01, model="counting"
        )

    async def acomplete(self, messages: Sequence[dict[str, str]], params: GenerationParams) -> Completion:
        return self.complete(messages, params)


def gsm8k_answerer(right: Callable[[int], bool]) -> tuple[Callable[[str], str], dict[str, Any]]:
    """An answer function that is right for item index i when right(i); returns it and truth."""
    items = load("gsm8k", source="sample")
    truth = {}
    table = {}
    for i, it in enumerate(items):
        ok = right(i)
        truth[it.id] = ok
        table[it.fields["question"]] = f"Step by step.\n#### {it.reference if ok else '-999'}"

    def answer(user_text: str) -> str:
        for q, a in table.items():
            if q in user_text:
                return a
        return "no idea"

    return answer, truth


@pytest.fixture
def counting_model() -> type[CountingModel]:
    return CountingModel


@pytest.fixture
def make_gsm8k_answerer() -> Callable[..., Any]:
    return gsm8k_answerer
