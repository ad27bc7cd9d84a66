"""Code execution: completion shapes, and completions that try to fake a pass."""

from __future__ import annotations

import time

import pytest

from evalcore.evaluators import (
    CodeSample,
    build_program,
    evaluate_code_batch,
    evaluate_code_execution,
    extract_code,
)

PROMPT = 'def add(a: float, b: float) -> float:\n    """Return a + b."""\n'
TEST = (
    "METADATA = {}\n\n\n"
    "def check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n"
    "    assert candidate(-1, 1) == 0\n"
)
# Passes the first and third assertion, fails the abs() one unless abs() is subverted.
PARTIAL = "3 if (a, b) == (1, 2) else (0 if (a, b) == (-1, 1) else 99)"

TYPED_PROMPT = (
    "from typing import List\n\n\n"
    "def total(xs: List[int]) -> int:\n"
    '    """Sum of xs.\n    >>> total([1, 2])\n    3\n    """\n'
)
TYPED_TEST = "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n    assert candidate([]) == 0\n"


def _batch(completions: list[str], prompt: str = PROMPT, test: str = TEST, entry: str = "add", timeout_s: float = 5.0):
    samples = [CodeSample(str(i), prompt, c, test, entry) for i, c in enumerate(completions)]
    return evaluate_code_batch(samples, timeout_s=timeout_s)


# ---------------------------------------------------------------- completion shapes

GOOD_SHAPES = [
    "    return sum(xs)\n",  # body, indented
    "    s = 0\n    for x in xs:\n        s += x\n    return s\n",
    "return sum(xs)\n",  # body written without indentation
    "s = 0\nfor x in xs:\n    s += x\nreturn s\n",
    "def total(xs: List[int]) -> int:\n    return sum(xs)\n",  # full def using the prompt's import
    "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n",  # with imports
    "def helper(x):\n    return x\n\n\ndef total(xs):\n    return sum(helper(x) for x in xs)\n",
    TYPED_PROMPT + "    return sum(xs)\n",  # echoes the prompt
    "Here you go:\n```python\ndef total(xs):\n    return sum(xs)\n```\nIt sums the list.",
    "```python\n    return sum(xs)\n```",
    "```\ndef total(xs):\n    return sum(xs)\n```",
    "```python\nimport math\n```\nand\n```python\ndef total(xs):\n    return math.fsum(xs)\n```",
]


def test_completion_shapes_pass() -> None:
    results = _batch(GOOD_SHAPES, TYPED_PROMPT, TYPED_TEST, "total")
    assert [r.result for r in results] == ["passed"] * len(GOOD_SHAPES)


def test_completion_shapes_that_are_wrong_fail() -> None:
    wrong = ["    return 0\n", "def total(xs):\n    return len(xs)\n", "```python\n    return max(xs)\n```"]
    results = _batch(wrong, TYPED_PROMPT, TYPED_TEST, "total")
    assert [r.passed for r in results] == [False, False, False]
    assert all(r.result.startswith("failed: ") for r in results)


def test_extract_code_and_build_program() -> None:
    assert extract_code("no fences here") == "no fences here"
    assert extract_code("```py\nx = 1\n```") == "x = 1\n"
    assert extract_code("```bash\nls\n```\n```python\ndef f():\n    pass\n```", "f") == "def f():\n    pass\n"
    program = build_program(TYPED_PROMPT, "return sum(xs)", "total")
    assert program == TYPED_PROMPT + "    return sum(xs)\n"
    full = build_program(TYPED_PROMPT, "def total(xs):\n    return 1\n", "total")
    assert full.startswith(TYPED_PROMPT.rstrip("\n")) and full.endswith("def total(xs):\n    return 1\n")


def test_evaluate_code_execution_scores() -> None:
    assert evaluate_code_execution(PROMPT, "    return a + b\n", TEST, "add") == 1.0
    assert evaluate_code_execution(PROMPT, "    return a - b\n", TEST, "add") == 0.0


def test_failure_reasons() -> None:
    results = _batch(["    return a - b\n", "    return undefined_name\n", "    return (\n"])
    assert results[0].result == "failed: AssertionError"
    assert results[1].result.startswith("failed: NameError")
    assert results[2].result.startswith("failed: SyntaxError")
    (missing,) = _batch(["def other():\n    pass\n"], prompt="")
    assert missing.result == "failed: NameError: entry point 'add' is not defined"


# ---------------------------------------------------------------- adversarial completions

ADVERSARIAL = {
    "sys.exit in body": "    import sys\n    sys.exit(0)\n",
    "sys.exit at top level": "import sys\nsys.exit(0)\n\ndef add(a, b):\n    return 0\n",
    "exit builtin": "    exit(0)\n",
    "os._exit": "    import os\n    os._exit(0)\n",
    "os._exit at top level": "import os\nos._exit(0)\n",
    "raise SystemExit": "    raise SystemExit\n",
    "BaseException subclass": "    class Escape(BaseException):\n        pass\n    raise Escape()\n",
    "KeyboardInterrupt": "    raise KeyboardInterrupt\n",
    "GeneratorExit": "    raise GeneratorExit\n",
    "redefine check": "def add(a, b):\n    return 0\n\n\ndef check(candidate):\n    pass\n",
    "check in builtins": "import builtins\nbuiltins.check = lambda c: None\n\ndef add(a, b):\n    return 0\n",
    "override AssertionError": (
        "import builtins\nbuiltins.AssertionError = type('Fake', (Exception,), {})\n"
        "AssertionError = builtins.AssertionError\n\ndef add(a, b):\n    return 0\n"
    ),
    "swallow assertions via excepthook": (
        "import sys\nsys.excepthook = lambda *a: None\n\ndef add(a, b):\n    return 0\n"
    ),
    "override builtin abs": f"import builtins\nbuiltins.abs = lambda x: 0\n\ndef add(a, b):\n    return {PARTIAL}\n",
    "override abs in module globals": f"abs = lambda x: 0\n\ndef add(a, b):\n    return {PARTIAL}\n",
    "override all/len in module globals": (
        f"all = lambda *a: True\nlen = lambda *a: 0\nAssertionError = None\n\ndef add(a, b):\n    return {PARTIAL}\n"
    ),
    "patch check globals through frames": (
        f"    import sys\n    sys._getframe(1).f_globals['abs'] = lambda x: 0\n    return {PARTIAL}\n"
    ),
    "patch check builtins through a traceback": (
        "    try:\n        raise ValueError\n    except ValueError as e:\n"
        "        g = e.__traceback__.tb_frame.f_back.f_globals\n"
        "        g['__builtins__']['abs'] = lambda x: 0\n"
        f"    return {PARTIAL}\n"
    ),
    "trace function jumps over asserts": (
        "import sys\nsys.settrace(lambda *a: None)\n\ndef add(a, b):\n    return 0\n"
    ),
    "read the job from standard input for its nonce": (
        "import os, re\ndata = os.read(0, 1 << 20)\n"
        "for tok in re.findall(rb'[0-9a-f]{32}', data):\n    os.write(3, b'\\nPASS ' + tok + b'\\n')\n"
        "os._exit(0)\n\ndef add(a, b):\n    return 0\n"
    ),
    "gc search for the harness": "import gc\nfor o in gc.get_objects():\n    pass\n\ndef add(a, b):\n    return 0\n",
    "ctypes": "import ctypes\nctypes.string_at(id(0), 64)\n\ndef add(a, b):\n    return 0\n",
    "patch the harness module": (
        "import sys\nm = sys.modules['__main__']\nm._check_work = lambda *a, **k: None\n"
        "m._runner = lambda *a, **k: True\nm._describe = lambda e: 'passed'\n\ndef add(a, b):\n    return 0\n"
    ),
    "signal handler walks check's frames": (
        "import signal, os\n"
        "def _h(signum, frame):\n"
        "    while frame is not None:\n"
        "        frame.f_globals.get('__builtins__', {})['abs'] = lambda x: 0\n"
        "        frame = frame.f_back\n"
        "signal.signal(signal.SIGUSR1, _h)\n\n"
        f"def add(a, b):\n    os.kill(os.getpid(), signal.SIGUSR1)\n    return {PARTIAL}\n"
    ),
    "rigged __eq__": (
        "class Anything(int):\n    def __eq__(self, other):\n        return True\n"
        "    def __lt__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
        "def add(a, b):\n    return Anything(0)\n"
    ),
    "rigged __eq__ inside a list": (
        "class Anything:\n    def __eq__(self, other):\n        return True\n    def __sub__(self, other):\n        return 0\n"
        "    __rsub__ = __sub__\n\ndef add(a, b):\n    return [Anything()][0]\n"
    ),
    "fork one branch per answer": (
        "import os\n\ndef add(a, b):\n    if os.fork() == 0:\n        return a + b\n    os.wait()\n    return -1\n"
    ),
    "replace the plain-data checker": (
        "import sys\nm = sys.modules['sandbox']\nm._plain_data_checker = lambda: (lambda v, d=0: None)\n"
        "class Anything:\n    def __eq__(self, other):\n        return True\n    def __sub__(self, other):\n        return 0\n"
        "\ndef add(a, b):\n    return Anything()\n"
    ),
    "kill the parent": "    import os\n    os.kill(os.getppid(), 9)\n    return 0\n",
    "kill everything": "    import os, signal\n    os.kill(-1, signal.SIGKILL)\n    return 0\n",
    "print passed": "    print('passed')\n    print('PASSED', flush=True)\n    return 0\n",
    "forge the result pipe": (
        "    import os\n    for fd in range(0, 32):\n        try:\n"
        "            os.write(fd, b'\\nPASS ' + b'0' * 32 + b'\\n')\n        except OSError:\n            pass\n"
        "    os._exit(0)\n"
    ),
    "exit status 0 from a thread": (
        "    import threading, os\n    threading.Thread(target=lambda: os._exit(0)).start()\n"
        "    import time\n    time.sleep(1)\n    return 0\n"
    ),
    "thread exit": "    import _thread\n    _thread.exit()\n",
    "atexit": "import atexit, os\natexit.register(lambda: os._exit(0))\n\ndef add(a, b):\n    return 0\n",
    "daemonized child prints passed": (
        "import os\nif os.fork() == 0:\n    os.setsid()\n    print('passed', flush=True)\n    os._exit(0)\n\n"
        "def add(a, b):\n    return 0\n"
    ),
    "open fd scan": (
        "    import os\n    for fd in range(3, 64):\n        try:\n            os.lseek(fd, 0, 0)\n"
        "            print(os.read(fd, 100))\n        except OSError:\n            pass\n    return 0\n"
    ),
}


@pytest.fixture(scope="module")
def adversarial_results():
    names = list(ADVERSARIAL)
    results = _batch([ADVERSARIAL[n] for n in names], timeout_s=5.0)
    return dict(zip(names, results))


@pytest.fixture(scope="module")
def adversarial_results_fallback():
    """The same attacks where the sandbox has no namespaces (the weak fallback): the verdict
    is decided outside the candidate there too."""
    from evalcore.evaluators._code_execution import build_program
    from evalcore.sandbox import SandboxPool
    from evalcore.sandbox.pool import _to_result

    names = list(ADVERSARIAL)
    jobs = [
        {
            "mode": "check",
            "source": build_program(PROMPT, ADVERSARIAL[n], "add"),
            "prompt": PROMPT,
            "test": TEST,
            "entry_point": "add",
            "timeout_s": 5.0,
        }
        for n in names
    ]
    pool = SandboxPool(2, namespaces=False)
    try:
        assert not pool.isolation["namespaces"]
        return dict(zip(names, [_to_result(r) for r in pool.map(jobs)]))
    finally:
        pool.close()


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_completion_fails(name: str, adversarial_results, adversarial_results_fallback) -> None:
    result = adversarial_results[name]
    assert not result.passed, (name, result)
    assert result.result != "passed"
    fallback = adversarial_results_fallback[name]
    assert not fallback.completed, (name, fallback)


def test_honest_code_passes_with_and_without_namespaces() -> None:
    from evalcore.evaluators._code_execution import build_program
    from evalcore.sandbox import SandboxPool
    from evalcore.sandbox.pool import _to_result

    job = {
        "mode": "check",
        "source": build_program(PROMPT, "    return a + b\n", "add"),
        "prompt": PROMPT,
        "test": TEST,
        "entry_point": "add",
        "timeout_s": 5.0,
    }
    for namespaces in (True, False):
        pool = SandboxPool(1, namespaces=namespaces)
        try:
            assert _to_result(pool.map([job])[0]).completed
        finally:
            pool.close()


def test_partial_answer_really_needs_abs() -> None:
    # Control for the abs() attacks: the PARTIAL answer fails honestly, the right one passes.
    results = _batch([f"    return {PARTIAL}\n", "    return a + b\n"])
    assert [r.passed for r in results] == [False, True]


BOMBS = {
    "infinite loop": "    while True:\n        pass\n",
    "sleep": "    import time\n    time.sleep(60)\n    return a + b\n",
    "fork bomb": "    import os\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
    "memory bomb": "    x = []\n    while True:\n        x.append(bytearray(10 ** 8))\n",
    "daemon outlives the sample": (
        "    import os, time\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(600)\n    return a + b - 1\n"
    ),
}


def test_bombs_fail_within_the_timeout() -> None:
    t = time.monotonic()
    results = _batch(list(BOMBS.values()), timeout_s=2.0)
    elapsed = time.monotonic() - t
    assert not any(r.passed for r in results), results
    assert elapsed < 2.0 * len(BOMBS) / 2 + 6.0  # two workers, plus slack for a loaded machine
    by_name = dict(zip(BOMBS, results))
    assert by_name["infinite loop"].result == "timed out"
    assert by_name["sleep"].result == "timed out"
    assert by_name["memory bomb"].result.startswith("failed: MemoryError") or by_name["memory bomb"].timed_out


def test_ordinary_library_features_work_in_check_mode() -> None:
    # namedtuple/TypeVar/Enum look at their caller's frame, logging at its own: refused frame
    # access must degrade gracefully for them, not fail honest completions.
    completion = (
        "import logging, enum\n"
        "from collections import namedtuple\n"
        "from typing import TypeVar\n"
        "T = TypeVar('T')\n"
        "Pair = namedtuple('Pair', 'x y')\n"
        "Color = enum.Enum('Color', 'RED GREEN')\n"
        "logging.basicConfig(level=logging.INFO)\n\n"
        "def add(a, b):\n"
        "    logging.getLogger('t').info('adding %s %s', a, b)\n"
        "    return Pair(a, b).x + Pair(a, b).y + 0 * Color.RED.value\n"
    )
    (result,) = _batch([completion])
    assert result.passed, result
    assert "adding 1 2" in result.stderr


def test_a_program_that_fails_at_once_is_reported_by_its_reason_in_a_fresh_pool() -> None:
    """The candidate reports a missing entry point and exits without waiting for a request; the
    test's first call then meets a closed pipe. The reason waiting in the reply pipe is the verdict
    (a fresh process lost that race every time: 'the candidate's process ended during a call')."""
    import subprocess
    import sys

    code = (
        "from evalcore.evaluators import CodeSample, evaluate_code_batch\n"
        f"T = {TEST!r}\n"
        "rs = evaluate_code_batch([CodeSample(str(i), '', 'def other():\\n    pass\\n', T, 'add')\n"
        "                          for i in range(3)], timeout_s=5)\n"
        "print('|'.join(r.result for r in rs))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().split("|") == ["failed: NameError: entry point 'add' is not defined"] * 3
