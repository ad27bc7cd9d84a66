"""Issue 39: a closing fence that nothing opened is not part of the program, and a compile
error names the completion's own line (not a line of the assembled prompt + completion)."""

from __future__ import annotations

import pytest

from evalcore.evaluators import CodeSample, evaluate_code_batch, extract_code
from evalcore.evaluators._code_execution import point_at_completion

PROMPT = 'def add(a: int, b: int) -> int:\n    """Sum of a and b."""\n'
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("    return a + b\n```", "    return a + b\n"),  # the case: fence with nothing after it
        ("    return a + b\n```\n", "    return a + b\n"),
        ("def add(a, b):\n    return a + b\n```\nThis adds the two numbers.", "def add(a, b):\n    return a + b\n"),
        ("def add(a, b):\n    return a + b\n```\nprint(add(1, 2))\n", "def add(a, b):\n    return a + b\n"),
    ],
)
def test_code_before_an_unmatched_closing_fence_is_the_code(reply: str, code: str) -> None:
    assert extract_code(reply, "add") == code


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("Here it is:\n```\ndef add(a, b):\n    return a + b\n", "def add(a, b):\n    return a + b\n"),
        ("Sure\n```\n    return a + b\n", "    return a + b\n"),  # "Sure" compiles, but the fence opens code
        ("```python\ndef add(a, b):\n    return a + b\n```", "def add(a, b):\n    return a + b\n"),
        ("    return a + b\n", "    return a + b\n"),
    ],
)
def test_opening_fences_and_plain_replies_are_read_as_before(reply: str, code: str) -> None:
    assert extract_code(reply, "add") == code


def test_a_correct_completion_with_a_stray_fence_passes_and_a_syntax_error_names_its_line() -> None:
    samples = [
        CodeSample("stray", PROMPT, "    return a + b\n```", TEST, "add"),
        CodeSample("bad", PROMPT, "def add(a, b):\n    total = a +* b\n    return total\n", TEST, "add"),
    ]
    stray, bad = evaluate_code_batch(samples, workers=1, timeout_s=20)
    assert stray.passed, stray.result
    assert not bad.passed
    assert "SyntaxError" in bad.result
    assert "completion line 2: 'total = a +* b'" in bad.result, bad.result
    assert "<program>" not in bad.result


def test_point_at_completion_names_prompt_lines_and_leaves_other_verdicts() -> None:
    sample = CodeSample("s", PROMPT, "    return a +\n", TEST, "add")
    program = PROMPT + "    return a +\n"
    said = point_at_completion("failed: SyntaxError: invalid syntax (<program>, line 3)", program, sample)
    assert said == "failed: SyntaxError: invalid syntax (completion line 1: 'return a +'; program line 3)"
    said = point_at_completion("failed: SyntaxError: bad (<program>, line 1)", program, sample)
    assert said == "failed: SyntaxError: bad (prompt line 1; program line 1)"
    assert point_at_completion("failed: AssertionError", program, sample) == "failed: AssertionError"


def test_python_s_own_line_number_is_called_the_program_s() -> None:
    sample = CodeSample("s", PROMPT, '    return "a\n', TEST, "add")
    said = point_at_completion(
        "failed: SyntaxError: unterminated string literal (detected at line 3) (<program>, line 3)",
        PROMPT + sample.completion,
        sample,
    )
    assert said == (
        "failed: SyntaxError: unterminated string literal (detected at program line 3) "
        "(completion line 1: 'return \"a'; program line 3)"
    )
