"""The candidate's side of a sample rehearsed in the worker (see :func:`rehearse`): worker side,
never in a sample."""

from __future__ import annotations

import os
import sys

from .candidate import CANDIDATE_MODULE, candidate_main
from .framing import CALL, QUERY, frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Rehearsed(Exception):
    """Ends a rehearsal of :func:`candidate_main` where a sample would exit."""


def _rehearsal_exit(code: int) -> None:
    raise _Rehearsed


_REHEARSAL_PROGRAM = """
def f(x, y=0):
    if x == "raise":
        raise ValueError("no")
    return x
"""
_REHEARSAL_VALUES: tuple[Any, ...] = (
    1,
    -7,
    2.5,
    True,
    None,
    "ab",
    "",
    b"x",
    [1, 2],
    [],
    (1, 2.5),
    [[1], [2, 3]],
    {"a": 1},
    {1, 2},
    "raise",
)


def rehearse(rounds: int = 12) -> None:
    """Run the candidate's side of a sample here, in the worker, before the zygotes are forked.

    A sample runs code that the worker never ran: the interpreter then warms and specializes
    that code in the sample (writing to the code objects and the type cache), a copy-on-write
    page fault per page, in every sample. Run here first with a trivial trusted program, the
    call loop and the encoding are already warm in every zygote. Nothing of it is kept but the
    interpreter's caches.
    """
    import marshal

    program = compile(_REHEARSAL_PROGRAM, "<program>", "exec")
    requests = b"".join(frame(CALL, marshal.dumps(((value,), {}))) for value in _REHEARSAL_VALUES) + frame(QUERY)
    for _ in range(rounds):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            os.write(req_w, requests)  # a few hundred bytes: fits in the pipe
            os.close(req_w)
            req_w = -1
            try:
                candidate_main({"entry_point": "f", "_program": program}, req_r, rep_w, _rehearsal_exit)
            except _Rehearsed:
                pass
        finally:
            for fd in (req_r, req_w, rep_r, rep_w):
                if fd >= 0:
                    os.close(fd)
            sys.modules.pop(CANDIDATE_MODULE, None)
