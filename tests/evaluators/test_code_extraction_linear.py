"""Code extraction is linear in the completion's length, and a completion has a length cap
(issue 29, item 4): the fence regular expression took 20 s on 100 KB of backticks in the
evalcore process, before any sandbox timeout applied."""

from __future__ import annotations

import random
import re
import time

from evalcore.evaluators import CodeSample, build_program, evaluate_code_batch, extract_code
from evalcore.evaluators._code_execution import MAX_COMPLETION_CHARS, _fenced_blocks

# The pattern extract_code used before (quadratic on backticks with no newline after them).
_OLD_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def _seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def test_a_long_run_of_backticks_is_extracted_in_linear_time() -> None:
    # 300 KB of backticks: the old pattern took ~25 s here (quadratic); linear takes < 10 ms.
    for completion in ("`" * 300_000, "x\n" + "`" * 300_000, "```python\n" + "`" * 300_000, "```\n" * 75_000):
        assert _seconds(extract_code, completion, "f") < 1.0, completion[:20]
        assert _seconds(build_program, "def f():\n", completion, "f") < 2.0, completion[:20]


def test_fenced_blocks_are_the_blocks_the_old_pattern_found() -> None:
    rng = random.Random(29)
    pieces = ["`", "``", "```", "\n", " ", "\t", "python", "py3", "x = 1", "def f():", "-", "~~~"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert _fenced_blocks(text) == _OLD_FENCE.findall(text), repr(text)
    reply = "Here:\n```Python  # comment\ndef f():\n    return 1\n```\nand ```\nimport os\n"
    assert _fenced_blocks(reply) == [("Python", "def f():\n    return 1\n"), ("", "import os\n")]
    assert extract_code(reply, "f") == "import os\ndef f():\n    return 1\n"


def test_a_completion_over_the_cap_fails_unrun_with_the_cap_in_its_verdict() -> None:
    prompt, test = 'def f():\n    """Return one."""\n', "def check(candidate):\n    assert candidate() == 1\n"
    long = "    return 1\n" + "#" * MAX_COMPLETION_CHARS
    samples = [
        CodeSample("long", prompt, long, test, "f"),
        CodeSample("ok", prompt, "    return 1\n", test, "f"),
        CodeSample("wrong", prompt, "    return 2\n", test, "f"),
    ]
    start = time.perf_counter()
    results = evaluate_code_batch(samples, timeout_s=10.0)
    assert time.perf_counter() - start < 60
    assert [r.id for r in results] == ["long", "ok", "wrong"]
    assert [r.passed for r in results] == [False, True, False]
    assert results[0].result == (
        f"failed: the completion is {len(long):,} characters long, "
        f"over the cap of {MAX_COMPLETION_CHARS:,} characters (not run)"
    )
    assert results[0].duration_s == 0.0
