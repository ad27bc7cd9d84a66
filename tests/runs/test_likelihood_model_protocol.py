"""A likelihood-mode call types its model with a Protocol of what it asks of it (``LetterScorer``:
a name and ``letter_logprobs``; ``count_tokens`` with ``chat_prompt`` when present), not ``Any``."""

from __future__ import annotations

import typing

from evalcore.runs import _execute

MESSAGES = [{"role": "user", "content": "Which?"}]


class _Letters:
    name = "letters"

    def letter_logprobs(self, messages, letters):  # noqa: ANN001, ANN201 - a stand-in model
        return {letter: -float(i + 1) for i, letter in enumerate(reversed(letters))}


class _CountingLetters(_Letters):
    def chat_prompt(self, messages):  # noqa: ANN001, ANN201
        return "|".join(m["content"] for m in messages) + " prompt"

    def count_tokens(self, text):  # noqa: ANN001, ANN201
        return len(text.split())


def test_the_model_is_typed_with_the_letter_scorer_protocol() -> None:
    for function in (_execute._likelihood, _execute._likelihood_call):
        assert typing.get_type_hints(function)["model"] is _execute.LetterScorer
    assert typing.Protocol in _execute.LetterScorer.__mro__
    members = {n for n in vars(_execute.LetterScorer) if not n.startswith("_")}
    assert members == {"name", "letter_logprobs"}


def test_the_prompt_tokens_are_counted_only_when_the_model_can() -> None:
    plain = _execute._likelihood(_Letters(), MESSAGES, ["w", "x", "y"])
    assert (plain.text, plain.usage.prompt_tokens, plain.model) == ("C", 0, "letters")
    counted = _execute._likelihood(_CountingLetters(), MESSAGES, ["w", "x"])
    assert (counted.text, counted.usage.prompt_tokens) == ("B", 2)
    assert counted.logprobs == [{"token": "B", "logprob": -1.0, "top": {"B": -1.0, "A": -2.0}}]
