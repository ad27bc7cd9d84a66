"""GSM8K exact match: strict and flexible extraction over realistic response shapes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from evalcore.errors import EvalcoreError
from evalcore.evaluators import (
    ExactMatchEvaluator,
    canonical_number,
    gsm8k_reference,
    numbers_equal,
    parse_number,
    summarize_exact_match,
)

EV = ExactMatchEvaluator("gsm8k")

# (response, expected value or None)
STRICT_CASES = [
    ("Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips.\n#### 72", "72"),
    ("#### 72", "72"),
    ("####72", "72"),
    ("#### 72%", "72"),
    ("Work...\n#### -1,000,000", "-1000000"),
    ("#### 72.", "72"),
    ("#### 72.00", "72"),
    ("#### $72", "72"),
    ("#### $1,248.00", "1248"),
    ("#### 1,248", "1248"),
    ("#### -5", "-5"),
    ("#### 0.5", "0.5"),
    ("#### .75", "0.75"),
    ("#### 3/4", "0.75"),
    ("#### 18 dollars", "18"),
    ("#### **18**", "18"),
    ("The answer is\n#### 42\n", "42"),
    ("Step 1: 3*4=12\nStep 2: 12+6=18\n#### 18\nThis is the final answer.", "18"),
    ("We first guess #### 9 but recheck.\nFinal:\n#### 11", "11"),
    ("#### The answer is 64", "64"),
    ("#### 100%", "100"),
    ("#### 1000000", "1000000"),
    ("#### 1,000,000", "1000000"),
    ("#### 2.50", "2.5"),
    ("####   7   ", "7"),
    ("She has 5 apples.\n\n#### 5", "5"),
    ("#### −3", "-3"),  # unicode minus
    ("#### $ 15", "15"),
    ("Total = 3 + 4 = 7\n#### 7 apples", "7"),
    ("#### seventy-two", "72"),  # a number in words
    # no usable '####': strict must fail even if a number is present
    ("72", None),
    ("A: 72", None),
    ("[72]", None),
    ("$1,248.00", None),
    ("So she made 72 dollars.", None),
    ("####", None),
    ("", None),
    ("I don't know.", None),
    ("### 72", None),  # three hashes is not the marker
    # "answer" only as a word of its own followed by a number (issue 14)
    ("12600 is the answer.", None),
    ("Q: How many?\nA: 72", None),
    ("Here is how I arrived at the answer:\n\n1. First, 48/2 = 24 clips.", None),
    ("Points from long-answer = 5 * 60% * 5 = 15", None),
    ("The questions he could answer: 40 + 30 = 70", None),
]

FLEXIBLE_CASES = [
    # (response, expected value, expected method)
    ("She sold 72 clips.\n#### 72", "72", "hash"),
    ("The answer is 72.", "72", "answer_is"),
    ("The answer is: 72", "72", "answer_is"),
    ("The final answer is 72", "72", "answer_is"),
    ("So the answer is $18.", "18", "answer_is"),
    ("The answer is: **$1,248.00**", "1248", "answer_is"),
    ("Final Answer: 3.5", "3.5", "answer_is"),
    ("answer = 64", "64", "answer_is"),
    ("The answer is 72. It took her 3 days.", "72", "answer_is"),
    ("The answer is -12 degrees.", "-12", "answer_is"),
    ("So the answer is 5 + 3 = 8.", "8", "answer_is"),
    ("The answer is 48 / 2 = 24 clips. Then she rested 3 days.", "24", "answer_is"),
    ("**Final Answer:** 18 dollars", "18", "answer_is"),
    # shapes produced by the embedded SmolLM2 model on the shipped sample
    ("312 * 45 = 12600\n\nSo, 12600 is the answer.", "12600", "last_number"),
    ("So, the final answer is 11 kilograms of apples and 1 kilogram of bananas.", "11", "answer_is"),
    ("So, the company spends $1,850,000 on rent and $1,850,000 on salaries in a year.", "1850000", "last_number"),
    ("Q: How many?\nA: 72", "72", "answer_prefix"),
    ("A: 1,500", "1500", "answer_prefix"),
    ("\\boxed{72}", "72", "boxed"),
    ("The final answer is $\\boxed{1,248}$.", "1248", "boxed"),
    ("So we get $\\boxed{\\$18}$ in total, after 3 steps.", "18", "boxed"),
    ("Thus \\boxed{\\frac{3}{4}} of the pie.", "0.75", "boxed"),
    ("\\boxed{72 \\text{ clips}}", "72", "boxed"),
    ("$$\\boxed{-4}$$", "-4", "boxed"),
    ("\\boxed{0.5}", "0.5", "boxed"),
    ("[72]", "72", "bracket"),
    ("Result: [1,024]", "1024", "bracket"),
    ("The number of clips is [72].", "72", "bracket"),
    ("$1,248.00", "1248", "last_number"),
    ("72.", "72", "last_number"),
    ("72", "72", "last_number"),
    ("She made $72.", "72", "last_number"),
    ("48 + 24 = 72", "72", "last_number"),
    ("First 48/2 = 24, then 48 + 24 = 72 clips in total.", "72", "last_number"),
    ("The temperature ends at -4 degrees", "-4", "last_number"),
    ("So 10-3=7 apples remain", "7", "last_number"),
    ("He ate 3/4 of it", "0.75", "last_number"),
    ("It costs 2.50 dollars", "2.5", "last_number"),
    ("The tank is 50% full", "50", "last_number"),
    ("**18**", "18", "last_number"),
    ("Steps:\n- 5 apples\n- 3 pears", "3", "last_number"),  # a bullet dash is no minus sign
    ("The total is 30. Then subtract 5 to get 25.", "25", "last_number"),
    ("See [1] and [2]; the total is 5 boxes", "5", "last_number"),
    ("Speed is 1,000,000 meters", "1000000", "last_number"),
    ("I think it's about .5", "0.5", "last_number"),
    ("€ 15", "15", "last_number"),
    ("The list 1,2,3 has 3 items", "3", "last_number"),
    ("The answer is 1,000,000.", "1000000", "answer_is"),  # thousands commas, final period
    ("The answer is -5.", "-5", "answer_is"),
    ("The price rose by 72%", "72", "last_number"),
    ("The answer is 5... wait, the answer is 8", "8", "answer_is"),  # the last statement wins
    # parse failures
    ("I cannot solve this.", None, "none"),
    ("", None, "none"),
    ("The answer is seventy-two.", "72", "answer_is"),
    ("#### unknown", None, "none"),
]


# Issue 14: a declared answer is the strongest pattern in *both* modes, so strict reads
# "The answer is 72", \boxed{72} and "Answer: $18" too (these were strict parse failures before),
# and two different declared answers without a correction between them are a hedge (before:
# the last "####" won).
STRICT_DECLARED = [
    ("The answer is 72.", "72", "answer_is"),
    ("\\boxed{72}", "72", "boxed"),
    ("The final answer: 72", "72", "answer_is"),
    ("Answer: $18", "18", "answer_is"),
    ('{"reasoning": "48/2 = 24, 48 + 24 = 72", "answer": 72}', "72", "json_field"),
    ("#### 10\n#### 12", None, "hedged"),
    ("#### 10\nWait, I forgot the last box.\n#### 12", "12", "hash"),
]


@pytest.mark.parametrize("response,expected,method", STRICT_DECLARED)
def test_gsm8k_strict_reads_declared_answers(response: str, expected: str | None, method: str) -> None:
    for mode in ("strict", "flexible"):
        ex = EV.extract_answer(response, mode=mode)
        assert (ex.value, ex.method) == (expected, method)


@pytest.mark.parametrize("response,expected", STRICT_CASES)
def test_gsm8k_strict_extraction(response: str, expected: str | None) -> None:
    ex = EV.extract_answer(response, mode="strict")
    assert ex.value == expected
    assert ex.method == ("hash" if expected is not None else "none")


@pytest.mark.parametrize("response,expected,method", FLEXIBLE_CASES)
def test_gsm8k_flexible_extraction(response: str, expected: str | None, method: str) -> None:
    ex = EV.extract_answer(response, mode="flexible")
    assert (ex.value, ex.method) == (expected, method)
    assert ex.failed is (expected is None)


def test_tables_have_at_least_40_shapes_each() -> None:
    assert len(STRICT_CASES) >= 40
    assert len(FLEXIBLE_CASES) >= 40


@pytest.mark.parametrize(
    "response",
    ["72", "72.0", "72.00", "$72", "$72.00", "#### 72.000", "The answer is 72.", "\\boxed{72.0}", "[72]", "A: $72"],
)
def test_numeric_equivalence_to_72(response: str) -> None:
    assert EV.evaluate(response, "blah blah\n#### 72") == 1.0
    assert EV.evaluate(response, 72) == 1.0
    assert EV.evaluate(response, "72") == 1.0


@pytest.mark.parametrize(
    "a,b,equal",
    [
        ("1,248", "1248", True),
        ("$1,248.00", "1248", True),
        ("0.5", "1/2", True),
        ("-3", "−3", True),
        ("72", "72.0000001", True),  # float tolerance (relative 1e-6)
        ("72", "72.01", False),
        ("0.1", "0.10000000001", True),
        ("1000000", "1000001", True),  # within 1e-6 relative
        ("100", "101", False),
        ("-5", "5", False),
    ],
)
def test_numbers_equal(a: str, b: str, equal: bool) -> None:
    pa, pb = parse_number(a), parse_number(b)
    assert pa is not None and pb is not None
    assert numbers_equal(pa, pb) is equal


def test_parse_number_and_canonical_form() -> None:
    assert parse_number("$1,248.00") == Fraction(1248)
    assert parse_number("72.") == Fraction(72)
    assert parse_number("3/4") == Fraction(3, 4)
    assert parse_number("1/0") is None
    assert parse_number("seventy") is None
    assert parse_number("1 2") is None
    assert canonical_number(Fraction(1248)) == "1248"
    assert canonical_number(Fraction(-13, 4)) == "-3.25"
    assert canonical_number(Fraction(1, 3)) == "0.333333333333"
    assert canonical_number(Fraction("0.10")) == "0.1"


def test_reference_is_number_after_last_hashes() -> None:
    solution = "He had 10 #### not this\nThen 2,000 + 500 = <<2000+500=2500>>2,500\n#### 2,500"
    assert gsm8k_reference(solution) == "2500"
    assert gsm8k_reference("72") == "72"
    assert gsm8k_reference(72) == "72"
    assert gsm8k_reference(" $1,000 ") == "1000"
    assert gsm8k_reference(2.5) == "2.5"
    for bad in ("no number here", "#### none", None, True):
        with pytest.raises(EvalcoreError) as err:
            gsm8k_reference(bad)
        assert err.value.field == "answer"


def test_parse_failure_is_told_apart_from_a_wrong_answer() -> None:
    wrong = EV.score("The answer is 71.", "#### 72")
    failed = EV.score("I am not sure.", "#### 72")
    assert wrong["flexible"] == 0.0 and failed["flexible"] == 0.0
    assert wrong["parse_failure_flexible"] is False and wrong["extracted_flexible"] == "71"
    assert failed["parse_failure_flexible"] is True and failed["extracted_flexible"] is None
    assert failed["method_flexible"] == "none"


def test_score_dict_keys_and_modes_disagree() -> None:
    s = EV.score("Let me think: 48 + 24 = 72", "Natalia ... #### 72")
    assert set(s) == {
        "strict",
        "flexible",
        "extracted_strict",
        "extracted_flexible",
        "method_strict",
        "method_flexible",
        "parse_failure_strict",
        "parse_failure_flexible",
        "reference",
    }
    assert s["strict"] == 0.0 and s["flexible"] == 1.0
    assert s["parse_failure_strict"] is True
    assert s["reference"] == "72"
    both = EV.score("blah\n#### 72", "72")
    assert both["strict"] == both["flexible"] == 1.0 and both["method_strict"] == "hash"


def test_evaluate_modes_and_errors() -> None:
    assert EV.evaluate("She sold 72 clips.", "72", mode="strict") == 0.0
    assert EV.evaluate("She sold 72 clips.", "72", mode="flexible") == 1.0
    assert EV.evaluate("The answer is 72", "72", mode="strict") == 1.0  # declared: both modes
    assert EV.evaluate(None, "72") == 0.0
    with pytest.raises(EvalcoreError):
        EV.extract_answer("72", mode="lenient")  # type: ignore[arg-type]
    with pytest.raises(EvalcoreError):
        ExactMatchEvaluator("math")  # type: ignore[arg-type]


def test_summarize_counts_accuracy_and_parse_failures() -> None:
    responses = ["#### 72", "The answer is 72", "The answer is 70", "no idea", "[72]"]
    scores = [EV.score(r, "72") for r in responses]
    summary = summarize_exact_match(scores)
    assert summary["n"] == 5
    # strict reads the declared "The answer is ..." too (issue 14), not "[72]"
    assert summary["accuracy_strict"] == pytest.approx(2 / 5)
    assert summary["accuracy_flexible"] == pytest.approx(3 / 5)
    assert summary["parse_failure_rate"] == pytest.approx(1 / 5)
    assert summary["parse_failure_rate_strict"] == pytest.approx(2 / 5)
    assert ExactMatchEvaluator.summarize(scores) == summary
    assert summarize_exact_match([])["accuracy_flexible"] is None


NUMBER_SHAPES = [
    # (response, strict, flexible)
    ("The answer is 1.5e3", "1500", "1500"),  # scientific notation is one number, not 1.5 and 3
    ("So x = 2.5E-2", None, "0.025"),
    ("#### 1 000", "1000", "1000"),  # after ####, space-grouped thousands are one number
    ("#### $1 248.50", "1248.5", "1248.5"),
    ("#### -12 345 678", "-12345678", "-12345678"),
    ("#### 1 0000", "1", "1"),  # not a thousands grouping
    ("#### 5 apples 3", "5", "5"),
    ("The answer is 1\u00a0000.", "1000", "1000"),  # no-break / thin space: always a grouping
    ("The total is 12\u202f500 dollars", None, "12500"),
    ("Steps: 2 100 apples were left, so 100", None, "100"),  # ordinary spaces elsewhere: two numbers
    ("It weighs 3e and more", None, "3"),  # "e" without digits is no exponent
]


@pytest.mark.parametrize("response,strict,flexible", NUMBER_SHAPES)
def test_number_shapes(response: str, strict: str | None, flexible: str) -> None:
    ev = ExactMatchEvaluator("gsm8k")
    assert ev.extract_answer(response, "strict").value == strict
    assert ev.extract_answer(response, "flexible").value == flexible
    assert ev.evaluate(response, f"#### {flexible}", mode="flexible") == 1.0


# Limits of the extraction-audit rules: what the new rules must *not* change.
# (response, strict, flexible) as (value, method)
AUDIT_GUARDS = [
    # an "Answer:" label that states a value still declares it, whatever the justification after it
    ("Answer: 18 dollars for 9 eggs", ("18", "answer_is"), ("18", "answer_is")),
    ("Answer: 72 clips, 48 in April and 24 in May", ("72", "answer_is"), ("72", "answer_is")),
    (
        "Answer: 18 (9 eggs × $2).\n\nExplanation: 16 - 3 - 4 = 9 and 9 * 2 = 18.",
        ("18", "answer_is"),
        ("18", "answer_is"),
    ),
    ("Answer: 6 × 7 = 42 marbles.", ("42", "answer_is"), ("42", "answer_is")),
    ("Answer: 6 × 7 = 42 marbles.\n\nCheck: 42 / 7 = 6", ("42", "answer_is"), ("42", "answer_is")),
    ("Answer: $18 per day, since 9 × 2 = 18.", ("18", "answer_is"), ("18", "answer_is")),
    # "#### N" with no words after is an answer; decimals and fractions are no headings
    ("#### 1.5", ("1.5", "hash"), ("1.5", "hash")),
    ("#### 3/4", ("0.75", "hash"), ("0.75", "hash")),
    ("#### 9 * 2 = 18", ("18", "hash"), ("18", "hash")),
    ("#### 9 * 2", (None, "none"), (None, "none")),
    # a declared calculation is read at its result; a fraction is a number, not an expression
    ('{"answer": "9 * 2 = 18"}', ("18", "json_field"), ("18", "json_field")),
    ("The answer is 3/4 of the pie.", ("0.75", "answer_is"), ("0.75", "answer_is")),
    ("$\\boxed{\\text{eighteen}}$", (None, "none"), (None, "none")),
    ("$\\boxed{18 \\text{ per 100 g}}$", ("18", "boxed"), ("18", "boxed")),
    # the speaker's own "I would say" is a declaration; a contrast after a hypothetical ends it
    ("I would say the answer is 18.", ("18", "answer_is"), ("18", "answer_is")),
    ("It's tempting to say 20, but the answer is 18.", ("18", "answer_is"), ("18", "answer_is")),
    ("Q: How much?\nA: $1,248.00", (None, "none"), ("1248", "answer_prefix")),
]


@pytest.mark.parametrize("response,strict,flexible", AUDIT_GUARDS)
def test_audit_rule_limits(response: str, strict: tuple, flexible: tuple) -> None:
    got = [EV.extract_answer(response, mode=m) for m in ("strict", "flexible")]
    assert [(g.value, g.method) for g in got] == [strict, flexible]
