"""Exact match is named for what it reads: ``answer="number"`` / ``"letter"``; the benchmark names
and the old ``dataset_type=`` keyword stay accepted (issue 40)."""

from __future__ import annotations

import pytest

from evalcore.datasets import gsm8k_reference, letter_reference, mmlu_reference, number_reference
from evalcore.errors import EvalcoreError
from evalcore.evaluators import ExactMatchEvaluator


@pytest.mark.parametrize(
    "make,kind",
    [
        (lambda: ExactMatchEvaluator(answer="number"), "number"),
        (lambda: ExactMatchEvaluator("number"), "number"),
        (lambda: ExactMatchEvaluator(dataset_type="gsm8k"), "number"),
        (lambda: ExactMatchEvaluator("gsm8k"), "number"),
        (lambda: ExactMatchEvaluator(), "number"),
        (lambda: ExactMatchEvaluator(answer="letter"), "letter"),
        (lambda: ExactMatchEvaluator(dataset_type="mmlu"), "letter"),
    ],
)
def test_each_spelling_reads_the_same_kind(make, kind):
    evaluator = make()
    assert evaluator.kind == kind
    if kind == "number":
        scores = evaluator.score("So the total is $1,248.00.\n#### 1248", "#### 1,248")
        assert (scores["strict"], scores["extracted_strict"], scores["reference"]) == (1.0, "1248", "1248")
    else:
        scores = evaluator.score("The answer is (C).", 2)
        assert (scores["strict"], scores["extracted_strict"], scores["reference"]) == (1.0, "C", "C")


def test_the_old_keyword_keeps_what_was_given():
    assert repr(ExactMatchEvaluator(dataset_type="mmlu")) == "ExactMatchEvaluator('mmlu')"
    assert ExactMatchEvaluator(answer="letter").dataset_type == "letter"


def test_bad_kinds_name_the_keyword():
    with pytest.raises(EvalcoreError) as err:
        ExactMatchEvaluator(answer="words")  # type: ignore[arg-type]
    assert err.value.field == "answer"
    with pytest.raises(EvalcoreError) as err:
        ExactMatchEvaluator(dataset_type="squad")  # type: ignore[arg-type]
    assert err.value.field == "dataset_type"
    with pytest.raises(EvalcoreError, match="not both"):
        ExactMatchEvaluator(answer="number", dataset_type="gsm8k")


def test_reference_readers_under_both_names():
    assert number_reference("2 + 3 = 5\n#### 5") == gsm8k_reference("#### 5") == "5"
    assert letter_reference(3) == mmlu_reference("(d)") == "D"
