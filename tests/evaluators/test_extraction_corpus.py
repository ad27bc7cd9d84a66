"""Answer extraction on a corpus of realistic replies (issue 14): every case in both modes."""

from __future__ import annotations

from collections import Counter

import pytest

from evalcore.evaluators import ExactMatchEvaluator
from evalcore.evaluators._exact_match import DECLARED_METHODS, METHODS

from .extraction_corpus import CORPUS, Case

EVALUATORS = {"gsm8k": ExactMatchEvaluator("gsm8k"), "mmlu": ExactMatchEvaluator("mmlu")}


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_corpus_case_in_both_modes(case: Case) -> None:
    ev = EVALUATORS[case.dataset]
    got = {}
    for mode in ("strict", "flexible"):
        ex = ev.extract_answer(case.response, mode=mode, choices=case.choices)  # type: ignore[arg-type]
        got[mode] = (ex.value, ex.method)
        assert ex.failed is (ex.value is None)
    assert got == {"strict": case.strict, "flexible": case.flexible}


def test_corpus_size_and_coverage() -> None:
    assert len(CORPUS) >= 300
    assert len({c.id for c in CORPUS}) == len(CORPUS)
    by_dataset = Counter(c.dataset for c in CORPUS)
    assert by_dataset["gsm8k"] >= 120 and by_dataset["mmlu"] >= 120
    methods = {m for c in CORPUS for _v, m in (c.strict, c.flexible)}
    assert methods == set(METHODS)  # every method appears in the corpus
    long_replies = sum(len(c.response) >= 300 for c in CORPUS)
    assert long_replies >= 150  # mostly whole worked replies, not one-liners


def test_corpus_expectations_are_consistent() -> None:
    """A declared answer reads the same in both modes; strict never reads more than flexible."""
    for c in CORPUS:
        assert c.strict[1] in METHODS and c.flexible[1] in METHODS, c.id
        if c.strict[1] in DECLARED_METHODS or c.strict[1] == "hedged" or c.strict[0] is not None:
            assert c.flexible == c.strict, c.id


def test_corpus_scores_match_expected_values() -> None:
    """Scoring a reply against its expected value gives 1.0; against another value 0.0."""
    for c in CORPUS:
        ev = EVALUATORS[c.dataset]
        value = c.flexible[0]
        if value is None:
            assert ev.score(c.response, "1" if c.dataset == "gsm8k" else "A", choices=c.choices)[
                "parse_failure_flexible"
            ]
            continue
        assert ev.evaluate(c.response, value, mode="flexible", choices=c.choices) == 1.0, c.id
        other = "B" if value == "A" else "A"
        if c.dataset == "gsm8k":
            other = str(2 * int(float(value)) + 1)
        assert ev.evaluate(c.response, other, mode="flexible", choices=c.choices) == 0.0, c.id
