"""MMLU exact match: strict and flexible extraction over realistic response shapes."""

from __future__ import annotations

import pytest

from evalcore.errors import EvalcoreError
from evalcore.evaluators import ExactMatchEvaluator, mmlu_reference

EV = ExactMatchEvaluator("mmlu")
CHOICES = ["Mitochondrion", "Ribosome", "Nucleus", "Golgi apparatus"]

# (response, expected letter or None, method)
STRICT_CASES = [
    ("Answer: C", "C", "answer_is"),
    ("Answer: (C)", "C", "answer_is"),
    ("answer: c", "C", "answer_is"),
    ("I think the answer is (B) because A is wrong", "B", "answer_is"),  # not the later "A"
    ("**Answer:** B", "B", "answer_is"),
    ("Answer:\n\nB", "B", "answer_is"),
    ("The answer is C", "C", "answer_is"),
    ("The answer is C.", "C", "answer_is"),
    ("The answer is (B).", "B", "answer_is"),
    ("answer is (c)", "C", "answer_is"),
    ("The correct answer is D: Golgi apparatus.", "D", "answer_is"),
    ("The correct option is: A", "A", "answer_is"),
    ("The best answer is **B**", "B", "answer_is"),
    ("Final answer: D", "D", "answer_is"),
    ("I believe the answer is A, mitochondrion.", "A", "answer_is"),
    ("The answer is A because it makes ATP.", "A", "answer_is"),
    ("Let me think. Ribosomes make proteins. The answer is A", "A", "answer_is"),
    ("First I thought the answer is B, but the answer is C.", "C", "answer_is"),  # last marker wins
    ("The answer should be [D]", "D", "answer_is"),
    ("Correct choice: B", "B", "answer_is"),
    ("$\\boxed{D}$", "D", "boxed"),
    ("Therefore \\boxed{B}", "B", "boxed"),
    ("\\boxed{(A)}", "A", "boxed"),
    ("C", "C", "lone_letter"),
    ("C.", "C", "lone_letter"),
    ("(C)", "C", "lone_letter"),
    ("**D**", "D", "lone_letter"),
    ("  b  ", "B", "lone_letter"),
    ("A", "A", "lone_letter"),
    ("[B]", "B", "lone_letter"),
    ("D)", "D", "lone_letter"),
    ("C. Nucleus", "C", "letter_start"),
    ("B) Ribosome", "B", "letter_start"),
    ("(A) Mitochondrion, because it produces ATP.", "A", "letter_start"),
    ("D: Golgi apparatus", "D", "letter_start"),
    ("A. Mitochondrion", "A", "letter_start"),
    ("Mitochondria make ATP, so option (A) is correct.", "A", "paren_letter"),
    # nothing clear enough for strict
    ("Both (A) and (C) look plausible", None, "none"),
    ("I think B is right", None, "none"),
    ("Mitochondrion", None, "none"),
    ("A cell's powerhouse is the mitochondrion.", None, "none"),
    ("The answer is Avogadro's number.", None, "none"),
    ("In C++ the answer is unclear", None, "none"),
    ("", None, "none"),
    ("I don't know.", None, "none"),
    ("Option D", None, "none"),
    ("The answer is a prime number.", None, "none"),  # lower-case "a" is the article here
    # shapes produced by the embedded SmolLM2 model on the shipped sample
    ("C. Binary heap\n\nThe answer is D. Binary heap", "D", "answer_is"),
    (
        "A. Optic nerve\n\nThe cranial nerve that carries the sense of smell is the olfactory nerve.",
        "A",
        "letter_start",
    ),
    ("A homozygous recessive is a genetic trait where a recessive allele is present in the offspring.", None, "none"),
    ("Answer: b.", "B", "answer_is"),
    ("The answer is (a) since it makes ATP", "A", "answer_is"),
]

FLEXIBLE_CASES = [
    ("I think the answer is (B) because A is wrong", "B", "answer_is"),
    # everything strict finds, flexible finds the same way
    ("Answer: C", "C", "answer_is"),
    ("The answer is (B).", "B", "answer_is"),
    ("C", "C", "lone_letter"),
    ("C. Nucleus", "C", "letter_start"),
    ("$\\boxed{D}$", "D", "boxed"),
    ("Mitochondria make ATP, so option (A) is correct.", "A", "paren_letter"),
    # option text matched back to its letter
    ("Mitochondrion", "A", "option_text"),
    ("mitochondrion.", "A", "option_text"),
    ("Golgi apparatus", "D", "option_text"),
    ("The answer is ribosome", "B", "option_text"),
    ("The answer is the nucleus.", "C", "option_text"),
    ("The correct answer is: Golgi Apparatus", "D", "option_text"),
    ("A cell's powerhouse is the mitochondrion.", "A", "option_text"),  # not the article "A"
    ("A ribosome builds proteins, which is what is asked.", "B", "option_text"),
    ("It's the Golgi apparatus", "D", "option_text"),
    ("A nucleus stores DNA, so that must be it.", "C", "option_text"),
    # first standalone letter
    ("I think B is right", "B", "first_letter"),
    ("Option D", "D", "first_letter"),
    ("Both (A) and (C) look plausible", None, "hedged"),  # two letters offered: no answer
    ("My pick would be C, since the nucleus holds DNA.", "C", "first_letter"),
    ("A is correct", "A", "first_letter"),
    ("A good guess: D", "D", "first_letter"),  # "A good" is the article
    ("A nice question. D", "D", "first_letter"),
    ("I'd go with b)", "B", "first_letter"),
    ("A cell is small; I pick (b)", "B", "first_letter"),
    ("Looking at the options, B fits best.", "B", "first_letter"),
    ("Hmm... D?", "D", "first_letter"),
    ("I choose **C** here.", "C", "first_letter"),
    ("between B and C, B", "B", "first_letter"),
    ("Given the data, C seems right", "C", "first_letter"),
    ("Choice-wise: C", "C", "first_letter"),
    ("Vitamin-rich? No. C", "C", "first_letter"),
    # letters inside words, code names or numbers are not answers
    ("In C++ the answer is unclear", None, "none"),
    ("B12 deficiency causes anemia.", None, "none"),
    ("The DNA is in there", None, "none"),
    ("CAD and ABC are acronyms", None, "none"),
    ("A cell needs energy.", None, "none"),
    ("I don't know.", None, "none"),
    ("", None, "none"),
    ("Nucleus and ribosome are both organelles, but mitochondrion makes ATP.", None, "none"),
    ("A vitamin deficiency", None, "none"),
    ("The answer is a prime number.", None, "none"),
    ("A homozygous recessive is a genetic trait where a recessive allele is present in the offspring.", None, "none"),
    # an echo of the options is no answer by its first letter; the line after it concludes
    ("A. 6\nB. 8\nC. 9\nD. 12\nA. 6", "A", "conclusion"),
]


@pytest.mark.parametrize("response,expected,method", STRICT_CASES)
def test_mmlu_strict_extraction(response: str, expected: str | None, method: str) -> None:
    ex = EV.extract_answer(response, mode="strict", choices=CHOICES)
    assert (ex.value, ex.method) == (expected, method)


@pytest.mark.parametrize("response,expected,method", FLEXIBLE_CASES)
def test_mmlu_flexible_extraction(response: str, expected: str | None, method: str) -> None:
    ex = EV.extract_answer(response, mode="flexible", choices=CHOICES)
    assert (ex.value, ex.method) == (expected, method)


def test_tables_have_at_least_40_shapes_each() -> None:
    assert len(STRICT_CASES) >= 40
    assert len(FLEXIBLE_CASES) >= 40


def test_option_text_needs_choices() -> None:
    assert EV.extract_answer("Mitochondrion", choices=None).value is None
    assert EV.extract_answer("Mitochondrion", choices=CHOICES).value == "A"


def test_option_text_prefers_the_longest_contained_option() -> None:
    choices = ["Iron", "Iron and zinc", "Calcium", "Zinc"]
    ex = EV.extract_answer("It is iron and zinc, clearly.", choices=choices)
    assert (ex.value, ex.method) == ("B", "option_text")


@pytest.mark.parametrize(
    "truth,letter", [("C", "C"), ("c", "C"), ("(C)", "C"), (2, "C"), ("2", "C"), (0, "A"), ("3", "D"), (1.0, "B")]
)
def test_ground_truth_as_letter_or_index(truth: object, letter: str) -> None:
    assert mmlu_reference(truth) == letter
    assert EV.evaluate(f"Answer: {letter}", truth) == 1.0
    other = "A" if letter != "A" else "B"
    assert EV.evaluate(f"Answer: {other}", truth) == 0.0


@pytest.mark.parametrize("bad", ["E", 4, -1, "", None, True, "AB", 1.5])
def test_bad_ground_truth_is_a_user_error(bad: object) -> None:
    with pytest.raises(EvalcoreError) as err:
        EV.evaluate("Answer: A", bad)
    assert err.value.field == "answer"


def test_score_strict_vs_flexible_and_parse_failure() -> None:
    s = EV.score("I think B is right", "B", choices=CHOICES)
    assert (s["strict"], s["flexible"]) == (0.0, 1.0)
    assert s["parse_failure_strict"] is True and s["parse_failure_flexible"] is False
    assert s["method_flexible"] == "first_letter" and s["reference"] == "B"
    wrong = EV.score("Answer: D", 0)
    assert wrong["flexible"] == 0.0 and wrong["parse_failure_flexible"] is False
    assert wrong["extracted_flexible"] == "D" and wrong["reference"] == "A"


HEDGES = [
    # (response, strict, flexible): two letters offered at once are no answer in either mode
    ("The answer is B or C", (None, "hedged"), (None, "hedged")),
    ("The answer is (B) or (C).", (None, "hedged"), (None, "hedged")),
    ("Answer: B/C", (None, "hedged"), (None, "hedged")),
    ("The correct answer is A and D", (None, "hedged"), (None, "hedged")),
    ("The answer is either B or C", (None, "hedged"), (None, "hedged")),  # declared two: a hedge (issue 14)
    ("Both B and C could be right.", (None, "none"), (None, "hedged")),
    # ... but a decision after weighing two letters, or words after the letter, is an answer
    ("Between B and C, I pick C", (None, "none"), ("C", "first_letter")),
    ("The answer is B or C. Final answer: C", ("C", "answer_is"), ("C", "answer_is")),
    ("The answer is B. Or maybe not.", ("B", "answer_is"), ("B", "answer_is")),
    ("The answer is A and it is right", ("A", "answer_is"), ("A", "answer_is")),
    ("The answer is B, because C or D are wrong", ("B", "answer_is"), ("B", "answer_is")),
    ("The answer is B or b", ("B", "answer_is"), ("B", "answer_is")),
]


@pytest.mark.parametrize("response,strict,flexible", HEDGES)
def test_hedged_answers_are_parse_failures(response: str, strict: tuple, flexible: tuple) -> None:
    ev = ExactMatchEvaluator("mmlu")
    got_strict, got_flexible = ev.extract_answer(response, "strict"), ev.extract_answer(response, "flexible")
    assert (got_strict.value, got_strict.method) == strict
    assert (got_flexible.value, got_flexible.method) == flexible
    assert ev.evaluate(response, "B", mode="flexible") == (1.0 if flexible[0] == "B" else 0.0)


# Limits of the extraction-audit rules: what the new rules must *not* change.
AUDIT_GUARDS = [
    # a second letter accepted in its own clause is still a hedge
    ("The answer is **B**, and **D** is also correct.", (None, "hedged"), (None, "hedged")),
    ("The answer is B and C is wrong.", ("B", "answer_is"), ("B", "answer_is")),
    ("The answer is A and C.", (None, "hedged"), (None, "hedged")),
    # one option named with its letter is still that letter
    ("Protein synthesis happens at the ribosome (B).", ("B", "paren_letter"), ("B", "paren_letter")),
    # a letter opening the reply that is no item of a list of options still answers
    ("B) Ribosome. Ribosomes read mRNA and link amino acids.", ("B", "letter_start"), ("B", "letter_start")),
    # "A" after a word (not a number) is no unit
    ("Vitamin-rich? No. C", (None, "none"), ("C", "first_letter")),
    # a contrast after a hypothetical: the declaration after it counts
    ("It's tempting to pick A, but the answer is B.", ("B", "answer_is"), ("B", "answer_is")),
]


@pytest.mark.parametrize("response,strict,flexible", AUDIT_GUARDS)
def test_audit_rule_limits(response: str, strict: tuple, flexible: tuple) -> None:
    got = [EV.extract_answer(response, mode=m, choices=CHOICES) for m in ("strict", "flexible")]
    assert [(g.value, g.method) for g in got] == [strict, flexible]
