"""Helpers shared by the dataset loaders: stable ids, file reading, seeded subsets."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from evalcore._io import open_text, read_jsonl
from evalcore.errors import EvalcoreError

__all__ = [
    "allocate",
    "check_limit",
    "open_text",
    "read_jsonl",
    "require_str",
    "seeded_rank",
    "seeded_subset",
    "stable_hash",
    "stratified_subset",
    "unique_ids",
]

T = TypeVar("T")


def stable_hash(text: str, length: int = 10) -> str:
    """A short, stable hex digest of ``text`` (SHA-256), used in item ids.

    Args:
        text: What identifies the item in its source (e.g. the question text).
        length: Number of hex characters kept.

    Returns:
        The first ``length`` hex characters of ``sha256(text.strip())``.
    """
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:length]


def unique_ids(ids: Sequence[str]) -> list[str]:
    """Make ids unique by suffixing repeats (``x``, ``x~2``, ``x~3``) in source order."""
    seen: Counter[str] = Counter()
    out = []
    for i in ids:
        seen[i] += 1
        out.append(i if seen[i] == 1 else f"{i}~{seen[i]}")
    return out


def require_str(row: dict[str, Any], field: str, path: Path | str, line: int | None) -> str:
    """Return ``row[field]`` as a non-empty string or raise naming file, line and field."""
    if field not in row or row[field] is None:
        raise EvalcoreError("missing field", path=path, line=line, field=field)
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise EvalcoreError(f"expected a non-empty string, got {value!r:.60}", path=path, line=line, field=field)
    return value


def seeded_rank(seed: int, item_id: str) -> str:
    """The sort key that orders items in a seeded sample (depends only on seed and id)."""
    return hashlib.sha256(f"{seed}\x1f{item_id}".encode()).hexdigest()


def check_limit(limit: int | None) -> None:
    """Reject a limit that is not ``None`` or a positive integer."""
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise EvalcoreError(
            f"limit must be a positive integer (leave it out for every item), got {limit!r}", field="limit"
        )


def seeded_subset(items: Sequence[T], limit: int | None, seed: int, key: Callable[[T], str]) -> list[T]:
    """A deterministic seeded sample of ``limit`` items, returned in source order.

    Items are ranked by ``sha256(seed, id)``, so the subset depends only on the seed and the ids
    (not on row order), and a smaller limit gives a subset of a larger one.

    Args:
        items: All items, in source order.
        limit: How many to keep (``None``: all).
        seed: The seed.
        key: The item's id.

    Returns:
        The chosen items in source order.
    """
    check_limit(limit)
    if limit is None or limit >= len(items):
        return list(items)
    chosen = set(sorted(range(len(items)), key=lambda i: seeded_rank(seed, key(items[i])))[:limit])
    return [it for i, it in enumerate(items) if i in chosen]


def allocate(counts: dict[str, int], limit: int) -> dict[str, int]:
    """Split ``limit`` over strata proportionally to their sizes, at least one each when possible.

    Hamilton (largest-remainder) apportionment of the quotas ``q_s = limit · n_s / N``; then, when
    ``limit >= number of strata``, every stratum left with 0 gets 1, taken from the stratum with
    the largest surplus ``alloc_s - q_s``. When ``limit`` is smaller than the number of strata,
    the largest strata get one each (ties by name).

    Args:
        counts: Stratum name -> number of items.
        limit: Total number to draw (``<= sum(counts)``).

    Returns:
        Stratum name -> number to draw; the values sum to ``limit`` and never exceed the counts.
    """
    total = sum(counts.values())
    names = sorted(counts)
    if limit >= total:
        return dict(counts)
    if limit < len(names):
        biggest = sorted(names, key=lambda s: (-counts[s], s))[:limit]
        return {s: (1 if s in biggest else 0) for s in names}
    quota = {s: limit * counts[s] / total for s in names}
    alloc = {s: math.floor(quota[s]) for s in names}
    left = limit - sum(alloc.values())
    for s in sorted(names, key=lambda s: (-(quota[s] - alloc[s]), s))[:left]:
        alloc[s] += 1
    for s in names:
        if alloc[s] == 0 and counts[s] > 0:
            donor = max((d for d in names if alloc[d] > 1), key=lambda d: (alloc[d] - quota[d], d))
            alloc[donor] -= 1
            alloc[s] = 1
    return alloc


def stratified_subset(
    items: Sequence[T], limit: int | None, seed: int, key: Callable[[T], str], stratum: Callable[[T], str]
) -> list[T]:
    """A seeded subset stratified by ``stratum`` with proportional allocation (see :func:`allocate`).

    Within a stratum the items with the lowest ``sha256(seed, id)`` are taken.

    Args:
        items: All items, in source order.
        limit: How many to keep (``None``: all).
        seed: The seed.
        key: The item's id.
        stratum: The item's stratum (MMLU: subject).

    Returns:
        The chosen items in source order.
    """
    check_limit(limit)
    if limit is None or limit >= len(items):
        return list(items)
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(stratum(it), []).append(i)
    alloc = allocate({s: len(ix) for s, ix in groups.items()}, limit)
    chosen: set[int] = set()
    for s, ix in groups.items():
        ranked = sorted(ix, key=lambda i: seeded_rank(seed, key(items[i])))
        chosen.update(ranked[: alloc[s]])
    return [it for i, it in enumerate(items) if i in chosen]
