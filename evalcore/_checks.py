"""Checks of plain values shared by the command line and the library, without heavy imports
(the ``evalcore`` command line imports this while parsing; numpy would slow ``--help``)."""

from __future__ import annotations

import math
from typing import Any, Literal, overload

from evalcore.errors import EvalcoreError

#: The longest timeout accepted anywhere (seconds): a week. Longer ones are a typo, and the
#: operating system's waits overflow on ``inf`` or values near 1e10 s.
MAX_TIMEOUT_S = 7 * 24 * 3600.0


@overload
def check_timeout(value: Any, field: str, *, allow_none: Literal[False] = False, allow_zero: bool = False) -> float: ...


@overload
def check_timeout(value: Any, field: str, *, allow_none: bool, allow_zero: bool = False) -> float | None: ...


def check_timeout(value: Any, field: str, *, allow_none: bool = False, allow_zero: bool = False) -> float | None:
    """A finite number of seconds in (0, :data:`MAX_TIMEOUT_S`] (``[0, …]`` with ``allow_zero``).

    ``inf``, ``nan``, negative and absurdly large timeouts are refused up front, before any
    work starts (a timeout of ``inf`` used to crash the sandbox's waits and score every sample
    failed).

    Raises:
        EvalcoreError: Not a number, not finite, out of range.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        raise EvalcoreError(f"expected a number of seconds, got {value!r}", field=field)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise EvalcoreError(f"expected a number of seconds, got {value!r}", field=field) from None
    if not math.isfinite(v):
        raise EvalcoreError(f"must be a finite number of seconds, got {value!r}", field=field)
    low_ok = v >= 0 if allow_zero else v > 0
    if not low_ok:
        raise EvalcoreError(
            f"must be {'>= 0' if allow_zero else 'a positive number of'} seconds, got {value!r}", field=field
        )
    if v > MAX_TIMEOUT_S:
        raise EvalcoreError(f"must be at most {MAX_TIMEOUT_S:g} seconds (a week), got {value!r}", field=field)
    return v
