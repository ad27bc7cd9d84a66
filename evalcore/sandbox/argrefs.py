"""Identity across the crossing: an argument the candidate returns comes back as the test's own.

In one process ``candidate(x) is x`` holds for a candidate that returns its argument, and
``x = float('nan'); candidate([x]) == [x]`` holds by identity (list equality compares items with
``is`` first; a NaN equals nothing). Across the boundary the candidate works on a decoded copy,
so without more the test would get a copy back. Here both sides number the nodes of the call's
``(args, kwargs)`` the same way (:func:`arg_nodes`: a pre-order walk into lists, tuples and
dicts, at most :data:`MAX_ARG_NODES` nodes); the candidate, encoding its return value, marks a
value that *is* one of its decoded arguments with that node's number (``@`` then the number,
then the value's own encoding); the test's decoder puts its own object at that number in place
of the decoded value when :func:`same` says the two are the same immutable value (exact type,
equal bits; a tuple item by item). So a candidate can never obtain anything through a reference
but one of the test's own arguments, equal in type and value to what it sent; a number out of
range is refused, a mismatch keeps the decoded value. The table has at most
:data:`MAX_ARG_NODES` entries and each check is linear in the value decoded, so the work stays
bounded by the reply's size.

Only immutable values are referenced (``float``, ``complex``, ``str``, ``bytes``, ``range`` and
tuples of them): a mutable argument (a list, a dict) that the candidate changed and returned
crosses as a copy with the change, as before, and the test's own object is not changed (see
docs/sandbox.md, "What crosses the boundary"). ``int``, ``bool`` and ``None`` cross by value.

Imported by the lean zygote: no imports here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Nodes of a call's arguments that are numbered (the rest keep no identity): bounds the walk
# each call costs the candidate (before the call) and the test (only when a reference arrives).
MAX_ARG_NODES = 4096
_MAX_DEPTH = 100  # framing.MAX_DEPTH
# Values that may be referenced (exact types).
REFERABLE = (float, complex, str, bytes, range, tuple)


def arg_nodes(value: Any) -> list[Any]:
    """The nodes of ``value`` in pre-order (a container, then its items; a dict's keys and
    values in order), into exact lists, tuples and dicts only, at most :data:`MAX_ARG_NODES`
    nodes and :data:`_MAX_DEPTH` levels: the numbering both sides agree on."""
    out: list[Any] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack and len(out) < MAX_ARG_NODES:
        node, depth = stack.pop()
        out.append(node)
        t = type(node)
        if depth >= _MAX_DEPTH:
            continue
        if t is list or t is tuple:
            stack.extend((item, depth + 1) for item in reversed(node))
        elif t is dict:
            pairs = [(x, depth + 1) for kv in node.items() for x in kv]
            stack.extend(reversed(pairs))
    return out


def candidate_refs(nodes: list[Any]) -> dict[int, int]:
    """The candidate's side: ``id(value) -> number`` for the referable ones of ``nodes`` (the
    :func:`arg_nodes` of the decoded ``(args, kwargs)``; the first number of an object met
    twice). Taken before the call, so a candidate that changes its arguments does not shift the
    numbers; the caller keeps ``nodes`` alive until the reply is encoded (no id is reused)."""
    refs: dict[int, int] = {}
    for number, node in enumerate(nodes):
        if type(node) in REFERABLE:
            refs.setdefault(id(node), number)
    return refs


def same(own: Any, sent: Any, depth: int = 0) -> bool:
    """Whether the test's ``own`` argument and the decoded ``sent`` are one immutable value:
    the same exact type, and equal bits (floats and complex numbers by their bytes, so ``-0.0``
    is not ``0.0`` and a NaN is a NaN), a range by its bounds, a tuple item by item."""
    t = type(own)
    if t is not type(sent) or depth > _MAX_DEPTH:
        return False
    if t is float:
        return own.hex() == sent.hex() if own == own else sent != sent
    if t is complex:
        return same(own.real, sent.real) and same(own.imag, sent.imag)
    if t is str or t is bytes or t is int:
        return bool(own == sent)
    if own is None or t is bool:
        return own is sent
    if t is range:
        return (own.start, own.stop, own.step) == (sent.start, sent.stop, sent.step)
    if t is tuple:
        return len(own) == len(sent) and all(a is b or same(a, b, depth + 1) for a, b in zip(own, sent))
    return False


class SentArgs:
    """The test's side: the call's ``(args, kwargs)``, numbered on the first reference met."""

    __slots__ = ("call", "nodes")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.nodes: list[Any] | None = None

    def resolve(self, number: int, sent: Any) -> Any:
        """The test's own node ``number`` when it is ``sent``'s value, else ``sent``.

        Raises:
            IndexError: ``number`` names no node of the arguments (the decoder refuses the reply).
        """
        if self.nodes is None:
            self.nodes = arg_nodes(self.call)
        if not 0 <= number < len(self.nodes):
            raise IndexError(number)
        own = self.nodes[number]
        return own if own is sent or same(own, sent) else sent
