"""LLM judge (production only): rubrics, parsing, failures, and refusal inside benchmarks."""

from __future__ import annotations

import pytest

from evalcore.errors import EvalcoreError
from evalcore.evaluators.judge import FACTUALITY_SCORES, LLMJudge, judge, parse_verdict
from evalcore.models import Completion, CompletionError, GenerationParams


class ScriptedModel:
    """Returns a fixed answer and remembers the prompt."""

    name = "scripted"

    def __init__(self, text: str = "", error: bool = False) -> None:
        self.text = text
        self.error = error
        self.prompts: list[list[dict]] = []

    def complete(self, messages, params: GenerationParams) -> Completion:
        self.prompts.append(list(messages))
        if self.error:
            return Completion(text="", error=CompletionError("HTTP500", "down"))
        return Completion(text=self.text, model="scripted")

    async def acomplete(self, messages, params):
        return self.complete(messages, params)


def test_semantic_rubric_json_verdict() -> None:
    m = ScriptedModel('{"reasoning": "Both say Paris is the capital.", "score": 0.9}')
    res = LLMJudge(m, "semantic").judge("Capital of France?", "It is Paris.", "Paris")
    assert res.score == 0.9 and res.reasoning == "Both say Paris is the capital." and res.ok
    prompt = m.prompts[0][-1]["content"]
    assert "Capital of France?" in prompt and "It is Paris." in prompt and "Paris" in prompt


def test_semantic_without_reference_and_text_score() -> None:
    m = ScriptedModel("The answer is correct.\nScore: 1")
    res = judge("2+2?", "4", model=m)
    assert res.score == 1.0 and "Reference answer" not in m.prompts[0][-1]["content"]


@pytest.mark.parametrize("choice", list("ABCDE"))
def test_factuality_choices_map_to_scores(choice) -> None:
    m = ScriptedModel(f'```json\n{{"reasoning": "compared", "choice": "{choice}"}}\n```')
    res = LLMJudge(m, "factuality").judge("Q", "sub", "expert")
    assert res.choice == choice and res.score == FACTUALITY_SCORES[choice]
    assert "[Expert]: expert" in m.prompts[0][-1]["content"]


def test_factuality_needs_reference_and_unknown_rubric() -> None:
    with pytest.raises(EvalcoreError, match="reference"):
        LLMJudge(ScriptedModel("x"), "factuality").judge("Q", "a")
    with pytest.raises(EvalcoreError) as info:
        LLMJudge(ScriptedModel("x"), "vibes")
    assert info.value.field == "rubric"


@pytest.mark.parametrize("text", ["I like it", '{"score": 7}', "Score: 2.5", '{"score": "high"}'])
def test_unreadable_or_out_of_range_verdict_has_no_score(text) -> None:
    res = LLMJudge(ScriptedModel(text)).judge("Q", "a", "b")
    assert res.score is None and res.error and not res.ok


def test_failed_judge_call_is_an_error_not_a_zero() -> None:
    res = LLMJudge(ScriptedModel(error=True)).judge("Q", "a", "b")
    assert res.score is None and "HTTP500" in res.error


def test_parse_verdict_text_fallbacks() -> None:
    assert parse_verdict("choice: (D) they disagree", "factuality")[0] == 0.0
    assert parse_verdict("score = 0.25 because", "semantic")[0] == 0.25
    assert parse_verdict("Score: 1.", "semantic")[0] == 1.0


@pytest.mark.parametrize("text", ["score: 15", "Score: 10/10", "score: 0.5.5"])
def test_text_score_that_is_not_a_0_to_1_number_is_not_truncated(text) -> None:
    # "15" must not be read as its first digit "1"
    assert parse_verdict(text, "semantic")[0] is None


def test_json_verdict_with_braces_inside_its_strings() -> None:
    text = 'Verdict:\n{"reasoning": "the set {2, 3} matches {x: 1}", "score": 0.8}'
    assert parse_verdict(text, "semantic")[:2] == (0.8, "the set {2, 3} matches {x: 1}")
    fact = '```json\n{"reasoning": "says {\\"a\\": 1}", "choice": "B"}\n```'
    assert parse_verdict(fact, "factuality")[:3] == (0.6, 'says {"a": 1}', "B")


def test_verdict_is_the_judges_last_word_not_a_draft_or_an_echoed_format() -> None:
    thinking = (
        '<think>\nMaybe {"score": 0.2}? No: the response matches.\n</think>\n{"reasoning": "matches", "score": 0.9}'
    )
    assert parse_verdict(thinking, "semantic")[:2] == (0.9, "matches")
    echoed = (
        'Format: {"reasoning": "why, in one or two sentences", "score": 0.0}\n\n{"reasoning": "correct", "score": 1.0}'
    )
    assert parse_verdict(echoed, "semantic")[:2] == (1.0, "correct")
    nested = '{"reasoning": "partly", "score": 0.5, "meta": {"score": 0.1}}'
    assert parse_verdict(nested, "semantic")[0] == 0.5
    fact = '<think>{"choice": "D"}</think>\n{"reasoning": "superset", "choice": "B"}'
    assert parse_verdict(fact, "factuality")[:3] == (0.6, "superset", "B")


def test_judge_refuses_to_work_inside_a_benchmark_run() -> None:
    from evalcore._runstore import IN_BENCHMARK

    j = LLMJudge(ScriptedModel('{"score": 1}'))
    token = IN_BENCHMARK.set(True)
    try:
        with pytest.raises(EvalcoreError, match="benchmark"):
            j.judge("Q", "a", "b")
    finally:
        IN_BENCHMARK.reset(token)
    assert j.judge("Q", "a", "b").score == 1.0
