"""Code from chat replies as real models write them: drafts in a reasoning block, code revised
after a first attempt, and a closing tag that belongs to the code itself."""

from __future__ import annotations

from evalcore.evaluators import CodeSample, evaluate_code_batch, extract_code
from evalcore.evaluators._reasoning import after_reasoning

PROMPT = 'def total(xs: list) -> int:\n    """Sum of xs; 0 for an empty list."""\n'
TEST = "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n    assert candidate([]) == 0\n"
WRONG = "```python\ndef total(xs):\n    return xs[0] + total(xs[1:])\n```"  # fails on []
RIGHT = "```python\ndef total(xs):\n    return sum(xs)\n```"

THINK_DRAFT_THEN_FINAL = f"<think>\nA first try:\n{WRONG}\nHmm, recursion without a base case.\n</think>\n\n{RIGHT}"
REVISED = (
    f"{WRONG}\n\nWait, that fails on an empty list. Fixed:\n\n{RIGHT}\n\nUsage:\n```python\nprint(total([1, 2]))\n```"
)
FINAL_THEN_DRAFT_IN_TEMPLATE_THINK = f"Drafting (template opened the block):\n{WRONG}\n</think>\n\n{RIGHT}"


def test_drafts_in_a_closed_reasoning_block_are_not_the_answer() -> None:
    assert extract_code(THINK_DRAFT_THEN_FINAL, "total") == "def total(xs):\n    return sum(xs)\n"
    assert extract_code(FINAL_THEN_DRAFT_IN_TEMPLATE_THINK, "total") == "def total(xs):\n    return sum(xs)\n"


def test_the_last_block_defining_the_function_is_the_revised_answer() -> None:
    assert extract_code(REVISED, "total") == "def total(xs):\n    return sum(xs)\n"


def test_a_closing_tag_inside_code_is_code() -> None:
    code = "def strip(text):\n    return text.split('</think>')[-1]\n"
    assert after_reasoning(code) == code
    assert extract_code(code, "strip") == code
    # an unclosed block, or nothing after the block: the reply is read whole
    assert after_reasoning("<think>still thinking") == "<think>still thinking"
    assert after_reasoning("<think>a</think>\n  ") == "<think>a</think>\n  "


def test_sandbox_verdicts_follow_the_final_code() -> None:
    replies = [THINK_DRAFT_THEN_FINAL, REVISED, FINAL_THEN_DRAFT_IN_TEMPLATE_THINK, WRONG, RIGHT]
    samples = [CodeSample(str(i), PROMPT, r, TEST, "total") for i, r in enumerate(replies)]
    results = evaluate_code_batch(samples, timeout_s=10.0)
    assert [r.passed for r in results] == [True, True, True, False, True], [r.result for r in results]
