"""The worker's decoder builds only bounded classes from what a candidate describes (issue 42, part 2).

A named tuple, dataclass or exception that the prompt does not define is made in the worker
from the class name and fields the candidate sent. Before: a dataclass reply of ~60,000 fields
took 20 s against a 3 s timeout (``make_dataclass`` compiles functions quadratic in the fields,
one C call the alarm cannot interrupt), and named tuples of 200,000 fields grew a worker from
12 MiB to 1.2 GiB over 16 samples (a cache of up to 256 such classes). Now such a class has at
most ``MAX_CLASS_FIELDS`` fields and names of at most ``MAX_NAME_CHARS`` characters (checked
before any C call on them), and the classes made are kept in a small LRU bounded in classes and
in fields. ``test_..._as_nobody`` reruns this file as ``nobody``; the cluster rerun
(tests/cluster/test_cluster_isolation.py) sends the pool tests' jobs to a Dask worker's pool.
"""

from __future__ import annotations

import collections
import dataclasses
import struct
from pathlib import Path

import pytest

from _as_nobody import rerun_as_nobody
from _sandbox_target import SandboxPool, local_only, pool_pids
from evalcore.sandbox import decoding, testside
from evalcore.sandbox.framing import MAX_CLASS_FIELDS, MAX_NAME_CHARS, DataError, decode, encode
from evalcore.sandbox.pool import _to_result

# A candidate that writes its own reply frame (what an adversary does; the encoder would have
# built the class in the candidate first): tag, class name, field names, values.
RAW = """
import os, struct, time
def _s(text):
    raw = text.encode()
    return b's' + struct.pack('!I', len(raw)) + raw
def _t(items):
    return b't' + struct.pack('!I', len(items)) + b''.join(items)
def _reply(kind, body):
    view = memoryview(struct.pack('!Ic', len(body), kind) + body)
    while view:
        view = view[os.write(3, view):]
    time.sleep(60)
def probe(tag, name, n):
    fields = [_s('f%d' % i) for i in range(n)]
    _reply(b'R', tag.encode() + _s(name) + _t(fields) + _t([b'N'] * n))
def raise_named(name):
    info = _t([_s(name), _s('boom'), _s('ValueError'), _t([_s('boom')]), b'd' + struct.pack('!I', 0)])
    _reply(b'X', info)
"""


def _job(call: str, timeout_s: float = 3.0) -> dict:
    return {
        "mode": "check",
        "source": RAW,
        "prompt": "",
        "test": f"def check(candidate):\n    assert {call} is not None\n",
        "entry_point": call.split("(")[0] if "(" in call else "probe",
        "timeout_s": timeout_s,
        "memory_mb": 512,
    }


def _fields(n: int) -> tuple:
    return tuple(f"f{i}" for i in range(n))


def test_a_dataclass_of_60000_fields_fails_within_the_timeout_with_a_reason() -> None:
    pool = SandboxPool(1)
    try:
        jobs = [
            _job("probe('a', 'Big', 60000)"),
            _job("probe('n', 'Wide', 60000)"),
            _job(f"probe('a', 'Fine', {MAX_CLASS_FIELDS})"),
        ]
        results = [_to_result(r) for r in pool.map(jobs)]
    finally:
        pool.close()
    for result, name, what in zip(results[:2], ("Big", "Wide"), ("dataclass", "named tuple")):
        assert not result.completed and not result.timed_out, result
        assert result.duration_s < 3.0, result  # the timeout; the quadratic build took 20 s
        assert result.reason == (
            f"the candidate sent an invalid reply: the candidate returned a {what} {name} of 60000 fields;"
            f" a {what} crosses with at most {MAX_CLASS_FIELDS} fields unless the prompt defines that class"
        ), result.reason
    # At the bound the class is made and the sample goes on (then the sleeping candidate times out).
    assert results[2].timed_out or results[2].completed, results[2]


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_named_tuples_of_200000_fields_over_16_samples_leave_the_worker_bounded() -> None:
    pool = SandboxPool(1)
    try:
        pool.map([_job("probe('n', 'Warm', 3)")])
        (pid,) = pool_pids(pool)
        before = _rss_kib(pid)
        jobs = [
            _job(f"probe('n', 'Wide{i}', 200000)", timeout_s=15.0) for i in range(16)
        ]  # the candidate builds 2.4 MB in Python: loaded machines
        results = [_to_result(r) for r in pool.map(jobs)]
        after = _rss_kib(pid)
        # Many classes at the bound: the LRU keeps a few, the worker stays small.
        pool.map([_job(f"probe('n', 'Many{i}', {MAX_CLASS_FIELDS})", timeout_s=0.5) for i in range(40)])
        assert pool_pids(pool) == [pid]  # the same sandbox worker throughout
        last = _rss_kib(pid)
    finally:
        pool.close()
    for result in results:
        assert not result.completed and f"at most {MAX_CLASS_FIELDS} fields" in (result.reason or ""), result
    assert after - before < 64 * 1024, (before, after)  # was +1.2 GiB
    assert last - before < 96 * 1024, (before, last)


def test_the_bounds_apply_before_the_class_is_made_and_the_prompts_class_is_not_bounded() -> None:
    wide = _fields(MAX_CLASS_FIELDS + 1)
    data = encode(collections.namedtuple("Wide", wide)(*range(len(wide))))
    with pytest.raises(DataError, match=f"named tuple Wide of {len(wide)} fields"):
        decode(data)
    # The prompt's own class of that name with those fields: no class is made, no bound.
    Wide = collections.namedtuple("Wide", wide)
    value = decode(data, {"Wide": Wide})
    assert type(value) is Wide and value == tuple(range(len(wide)))
    Big = dataclasses.make_dataclass("Big", _fields(600))
    big = decode(encode(Big(*range(600))), {"Big": Big})
    assert type(big) is Big and big == Big(*range(600))
    with pytest.raises(DataError, match="dataclass Big of 600 fields"):
        decode(encode(Big(*range(600))))
    long_name = "x" * (MAX_NAME_CHARS + 1)
    with pytest.raises(DataError, match=f"a name longer than {MAX_NAME_CHARS} characters"):
        decode(encode(collections.namedtuple("P", [long_name])(1)))
    at_bound = collections.namedtuple("P", _fields(MAX_CLASS_FIELDS))
    assert decode(encode(at_bound(*range(MAX_CLASS_FIELDS)))) == tuple(range(MAX_CLASS_FIELDS))


def test_classes_made_from_candidate_names_are_kept_in_a_small_lru() -> None:
    decoding._MADE.clear()
    for i in range(200):
        value = decode(encode(collections.namedtuple(f"P{i}", _fields(100))(*range(100))))
        assert type(value).__name__ == f"P{i}" and value.f99 == 99
    assert len(decoding._MADE) <= decoding._MADE_MAX_CLASSES
    assert sum(len(key[2]) for key in decoding._MADE) <= decoding._MADE_MAX_FIELDS
    assert ("namedtuple", "P199", _fields(100)) in decoding._MADE  # the newest kept
    # Exceptions of names the prompt does not define: an LRU too, and long names are not kept.
    testside._MADE_EXCEPTIONS.clear()
    for i in range(200):
        exc = testside._exception(f"Err{i}", "m", "ValueError", ("m",), {}, {})
        assert isinstance(exc, ValueError) and type(exc).__name__ == f"Err{i}"
    assert len(testside._MADE_EXCEPTIONS) <= testside._MADE_EXCEPTIONS_MAX
    exc = testside._exception("E" * 100_000, "m", "ValueError", ("m",), {}, {})
    assert type(exc) is ValueError and exc.args == ("E" * MAX_NAME_CHARS + ": m",)


def test_an_exception_with_a_huge_class_name_fails_nothing_and_is_not_kept() -> None:
    test = (
        "def check(candidate):\n"
        "    try:\n"
        "        candidate('E' * 1_000_000)\n"
        "    except ValueError as exc:\n"
        "        assert type(exc) is ValueError and len(str(exc)) < 1000, type(exc)\n"
        "    else:\n"
        "        raise AssertionError('no exception')\n"
    )
    job = dict(_job("raise_named('E')"), test=test, entry_point="raise_named")
    pool = SandboxPool(1)
    try:
        result = _to_result(pool.map([job])[0])
    finally:
        pool.close()
    assert result.completed, result.reason


def test_frames_are_what_the_test_reads() -> None:
    # The raw frames above are the real encoding: a named tuple of two fields decodes.
    body = b"n" + b"s" + struct.pack("!I", 1) + b"P" + encode(("a", "b")) + encode((1, 2))
    value = decode(body)
    assert value == (1, 2) and value.a == 1 and type(value)._fields == ("a", "b")


@pytest.mark.integration
@local_only("reruns this file as nobody with pools of its own")
def test_decoder_bounds_as_nobody() -> None:
    rerun_as_nobody([str(Path(__file__).resolve())], timeout=600)
