"""GSM8K reading of strong-model replies (issue 36): restated numbers, refusals, equal forms,
clock times. The corpus is :mod:`.gsm8k_strong_corpus`; the rules are in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from evalcore.evaluators import ExactMatchEvaluator

from .gsm8k_strong_corpus import HAND, HELD_OUT, HELD_OUT_2, HELD_OUT_3, SOLVED, STRONG, Reply

EV = ExactMatchEvaluator("gsm8k")


def _flexible(text: str) -> tuple[str | None, str]:
    ex = EV.extract_answer(text, mode="flexible")
    return ex.value, ex.method


def test_corpus_size_and_shapes() -> None:
    assert len(STRONG) >= 250
    assert len({r.id for r in STRONG}) == len(STRONG)
    texts = [r.text for r in STRONG]
    assert sum("####" in t for t in texts) >= 30
    assert sum("\\boxed" in t for t in texts) >= 30
    assert sum("The final answer is" in t for t in texts) >= 25  # Llama-style endings
    assert sum(r.declines for r in STRONG) >= 20
    assert sum(r.answer is not None and r.answer.startswith("-") for r in STRONG) >= 10
    assert sum(r.answer is not None and "." in r.answer for r in STRONG) >= 20
    assert sum(":00" in t for t in texts) >= 15  # clock times
    assert sum("%" in t for t in texts) >= 20
    assert len(SOLVED) >= 25 and len(HAND) >= 60 and len(HELD_OUT) >= 40


def test_flexible_agrees_with_the_adjudicated_answers() -> None:
    wrong = [(r.id, r.answer, _flexible(r.text)) for r in STRONG if _flexible(r.text)[0] != r.answer]
    agreement = 1 - len(wrong) / len(STRONG)
    assert agreement >= 0.995, wrong
    assert wrong == []  # today every reply agrees; the bar above is what the issue asks


def test_held_out_replies_agree() -> None:
    """Replies written after the rules were settled: a check that they are not fitted to the corpus."""
    held = [*HELD_OUT, *HELD_OUT_2, *HELD_OUT_3]
    assert len(held) >= 100
    assert [(r.id, _flexible(r.text)) for r in held if _flexible(r.text)[0] != r.answer] == []


@pytest.mark.parametrize("reply", [r for r in STRONG if "####" in r.text], ids=lambda r: r.id)
def test_strict_reads_every_hash_line(reply: Reply) -> None:
    ex = EV.extract_answer(reply.text, mode="strict")
    assert ex.value == reply.answer
    assert ex.method in ("hash", "none")


@pytest.mark.parametrize("reply", [r for r in STRONG if r.declines], ids=lambda r: r.id)
def test_no_reply_that_declines_is_credited(reply: Reply) -> None:
    for mode in ("strict", "flexible"):
        ex = EV.extract_answer(reply.text, mode=mode)  # type: ignore[arg-type]
        assert ex.value is None and ex.method == "none", mode
        assert EV.score(reply.text, "2")[f"parse_failure_{mode}"]


def test_restated_number_after_the_answer_is_not_read() -> None:
    text = "Every second glass costs 60% of $5, so 8 × $5 + 8 × $3 = $64.\n\nKylar needs to pay $64 for the 16 glasses."
    assert _flexible(text) == ("64", "conclusion")
    assert EV.evaluate(text, "64", mode="flexible") == 1.0
    assert EV.evaluate(text, "16", mode="flexible") == 0.0
    # the same shapes without a calculation before them: the phrase that restates is skipped
    assert _flexible("It takes 3 hours to download the 200 GB file.") == ("3", "conclusion")
    assert _flexible("She has $35 left out of her $100 budget.") == ("35", "conclusion")
    assert _flexible("Ben gets $24.50 in change from his $50 bill.") == ("24.5", "conclusion")
    # the last calculation's result, stated only after the restating phrase, is not the answer
    text = "Week 3: $100 × 2 = $200.\n\nShe earns $350 over the 3 weeks: $50 + $100 + $200."
    assert _flexible(text) == ("350", "conclusion")
    # a sentence that only restates after the answer's own sentence
    assert _flexible("Of the 16 glasses, 8 × $5 + 8 × $3 = $64.\n\nShe pays $64.\n\nThat covers all 16 glasses.") == (
        "64",
        "conclusion",
    )


def test_the_last_number_stays_when_it_is_the_conclusion() -> None:
    assert _flexible("In total she spent $1,234.50 on the renovation.") == ("1234.5", "last_number")
    assert _flexible("The total is 30. Then subtract 5 to get 25.") == ("25", "last_number")
    assert _flexible("Total = 10 + 15 = 25 points") == ("25", "last_number")
    assert _flexible("Out of 40 students, 40 - 15 = 25 passed.") == ("25", "last_number")
    # a phrase stating a new result after an operand is the commitment ("by 4" is no restatement)
    assert _flexible("First, we divide 12 * 7 = 90 by 4, which gives us 36.") == ("36", "last_number")
    assert _flexible("She divides the 90 stickers by 4 friends, giving 22.5 each.") == ("22.5", "last_number")


def test_a_reply_that_declines_earns_no_answer() -> None:
    assert _flexible("The problem doesn't say how many of the 24 cookies were eaten, so it cannot be determined.") == (
        None,
        "none",
    )
    assert _flexible("**Final Answer:** Cannot be determined (2 prices are given, no quantities).") == (None, "none")
    assert _flexible('{"answer": "Not enough information: 3 boxes of unknown size"}') == (None, "none")
    # "can't" as a step of the working is no refusal
    assert _flexible("We cannot find the total directly; first, $12 / 4 = $3 a pen.\n\nTen pens cost $30.") == (
        "30",
        "last_number",
    )
    assert _flexible(
        "The problem doesn't mention how many girls there are, which we can find from the total: 30 - 14 = 16."
    ) == (
        "16",
        "last_number",
    )
    note = "Note: the problem doesn't specify the tax on the 3 items, so I assumed none."
    assert _flexible(f"3 × $15 = $45.\n\nSo she pays $45.\n\n{note}") == (
        "45",
        "conclusion",
    )
    assert _flexible("The problem doesn't say it, but assuming all 12 are sold, she earns $36.") == (
        "36",
        "last_number",
    )


@pytest.mark.parametrize(
    "text,value",
    [
        ("The answer is 50% or 1/2.", "50"),
        ("The answer is 1/2 or 50%.", "50"),
        ("#### 25% or 0.25", "25"),
        ("The answer is 3/4 or 0.75.", "0.75"),
        ("The answer is $1,200 or 1200 dollars.", "1200"),
        ("The answer is 40% or 1/2.", None),  # two different values: a hedge
        ("The answer is 12 or 14.", None),
    ],
)
def test_equal_forms_are_one_answer(text: str, value: str | None) -> None:
    assert EV.extract_answer(text, mode="strict").value == value
    assert EV.extract_answer(text, mode="flexible").value == value


@pytest.mark.parametrize(
    "text,strict,flexible",
    [
        ("#### 2:00 pm", ("2", "hash"), ("2", "hash")),
        ("#### 14:00", ("14", "hash"), ("14", "hash")),
        ("The answer is 3:00 p.m.", ("3", "answer_is"), ("3", "answer_is")),
        ("#### 2:30 pm", (None, "none"), (None, "none")),
        ("She arrives at 11:00 am.", (None, "none"), ("11", "last_number")),
        ("The train arrives at 4:45 pm.", (None, "none"), (None, "none")),  # never 45
        ("She finishes at 6:00 pm, 3 hours after starting at 3:00 pm.", (None, "none"), ("6", "conclusion")),
    ],
)
def test_clock_times(text: str, strict: tuple[str | None, str], flexible: tuple[str | None, str]) -> None:
    got = {mode: EV.extract_answer(text, mode=mode) for mode in ("strict", "flexible")}  # type: ignore[arg-type]
    assert (got["strict"].value, got["strict"].method) == strict
    assert (got["flexible"].value, got["flexible"].method) == flexible
