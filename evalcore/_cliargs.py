"""``argparse`` value types shared by the command line's sub-commands.

A bad value fails while the arguments are parsed, before anything is read, created or asked:
argparse prints ``evalcore …: error: argument --OPTION: …`` and exits 2.
"""

from __future__ import annotations

import argparse
import math

from evalcore._checks import MAX_TIMEOUT_S, check_timeout
from evalcore.errors import EvalcoreError


def seconds(text: str) -> float:
    """A timeout: a finite number of seconds in (0, a week]; ``inf``, ``nan``, ``-1`` refused."""
    try:
        return check_timeout(text, "seconds")
    except EvalcoreError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def seconds_or_zero(text: str) -> float:
    """Like :func:`seconds`, 0 allowed (it means "off")."""
    try:
        return check_timeout(text, "seconds", allow_zero=True)
    except EvalcoreError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def finite_float(text: str) -> float:
    """Any finite number (``inf`` and ``nan`` refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def non_negative_int(text: str) -> int:
    """An integer >= 0 (seeds, counts that may be zero)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


__all__ = ["MAX_TIMEOUT_S", "finite_float", "non_negative_int", "positive_int", "seconds", "seconds_or_zero"]
