"""Letters A-J (issue 36): a question with five to ten options is read with its own letters; a
four-option question (and one whose options are unknown) is read exactly as before."""

from __future__ import annotations

import pytest

from evalcore.datasets import CHOICE_LETTERS, choice_reference, choices_text
from evalcore.errors import EvalcoreError
from evalcore.evaluators import ExactMatchEvaluator

MMLU = ExactMatchEvaluator("mmlu")
FIVE = ["Mercury", "Venus", "Earth", "Mars", "Jupiter"]
TEN = [f"option text number {w}" for w in "one two three four five six seven eight nine ten".split()]


def _read(text: str, choices, mode: str = "flexible"):
    return MMLU.extract_answer(text, mode, choices=choices).value


@pytest.mark.parametrize("mode", ["strict", "flexible"])
@pytest.mark.parametrize(
    "text",
    [
        "The answer is E",
        "Answer: E",
        "E",
        "(E)",
        "**Final answer:** E",
        "After checking each planet, the answer is (E).",
    ],
)
def test_a_fifth_option_is_read_on_a_five_option_question(text, mode):
    assert _read(text, FIVE, mode) == "E"
    assert _read(text, FIVE[:4], mode) is None  # four options: E is no answer, as before
    assert _read(text, None, mode) is None


def test_every_letter_up_to_j_on_a_ten_option_question():
    for i, letter in enumerate(CHOICE_LETTERS):
        assert _read(f"The answer is {letter}.", TEN) == letter
        assert _read(f"Answer: ({letter})", TEN, "strict") == letter
        assert _read(f"I pick {TEN[i]}.", TEN) == letter or i == 0  # the option's text


def test_the_option_text_of_a_later_option_names_its_letter():
    assert _read("Jupiter", FIVE) == "E"
    assert _read("The answer is Jupiter.", FIVE) == "E"


def test_the_pronoun_i_is_not_the_ninth_option():
    assert _read("I think the answer is C.", TEN) == "C"
    assert _read("Answer: I think it is B", TEN) == "B"
    assert _read("Answer: I", TEN) == "I"
    assert _read("I", TEN) == "I"


def test_letters_beyond_the_options_stay_unread_and_four_options_are_unchanged():
    assert _read("The answer is F", FIVE) is None
    assert _read("The answer is D", FIVE) == "D"
    assert _read("A cell membrane surrounds it, so the answer is B", FIVE[:4]) == "B"


def test_choices_text_runs_to_j_and_refuses_more():
    assert choices_text(TEN).splitlines()[-1] == "(J) option text number ten"
    with pytest.raises(EvalcoreError, match="at most 10 options"):
        choices_text(TEN + ["eleven"])


def test_choice_reference_reads_the_stated_labels_and_shifts_nothing_unasked():
    assert choice_reference("e", 5) == "E" and choice_reference("(J)", 10) == "J"
    with pytest.raises(EvalcoreError, match="is a number but the labels are letters"):
        choice_reference(2, 4)
    with pytest.raises(EvalcoreError, match="is a number but the labels are letters"):
        choice_reference("3", 4)
    with pytest.raises(EvalcoreError, match="names no option"):
        choice_reference("E", 4)
    assert [choice_reference(v, 4, labels="numbers", base=1) for v in ("1", 2, 3.0, "4")] == list("ABCD")
    assert [choice_reference(v, 5, labels="numbers", base=0) for v in (0, "4")] == ["A", "E"]
    with pytest.raises(EvalcoreError, match="option numbers 1-4"):
        choice_reference(0, 4, labels="numbers", base=1)
    with pytest.raises(EvalcoreError, match="option numbers 0-3"):
        choice_reference("B", 4, labels="numbers", base=0)
    with pytest.raises(EvalcoreError, match="base of 0 or 1"):
        choice_reference(1, 4, labels="numbers", base=2)
    with pytest.raises(EvalcoreError, match="unknown labels"):
        choice_reference("A", 4, labels="roman")
