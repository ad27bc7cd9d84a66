"""Seeded subsets: deterministic, nested, proportional and stratified by subject."""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

import pytest

from evalcore.benchmarks import load
from evalcore.datasets._common import allocate, seeded_subset, stratified_subset

# the 57 MMLU test-subject sizes are uneven (100 ... 1534); a synthetic set of the same shape
RNG = random.Random(7)
SIZES = {f"subject_{k:02d}": RNG.randint(100, 300) for k in range(55)} | {"big_law": 1534, "tiny": 3}


@pytest.mark.parametrize("limit", [57, 100, 500, 1000, 5000])
def test_allocation_is_proportional_with_one_per_subject(limit: int) -> None:
    alloc = allocate(SIZES, limit)
    total = sum(SIZES.values())
    assert sum(alloc.values()) == limit
    assert all(1 <= alloc[s] <= SIZES[s] for s in SIZES)
    if limit == len(SIZES):  # the one-per-subject floor uses the whole budget
        assert set(alloc.values()) == {1}
        return
    for s, n in SIZES.items():
        quota = limit * n / total
        assert abs(alloc[s] - quota) < 2, (s, alloc[s], quota)


def test_allocation_matches_hamilton_when_no_stratum_is_empty() -> None:
    counts = {"a": 50, "b": 30, "c": 20}
    assert allocate(counts, 10) == {"a": 5, "b": 3, "c": 2}
    assert allocate(counts, 7) == {"a": 4, "b": 2, "c": 1}  # quotas 3.5, 2.1, 1.4 -> remainders .5 > .4 > .1
    assert allocate(counts, 2) == {"a": 1, "b": 1, "c": 0}  # fewer than the strata: largest first
    assert allocate(counts, 100) == counts
    assert allocate({"a": 98, "b": 1, "c": 1}, 3) == {"a": 1, "b": 1, "c": 1}


def test_stratified_subset_deterministic_nested_and_order_free() -> None:
    items = [(f"{s}/{i}", s) for s, n in SIZES.items() for i in range(n)]
    pick = stratified_subset(items, 1000, 0, key=lambda t: t[0], stratum=lambda t: t[1])
    assert pick == stratified_subset(items, 1000, 0, key=lambda t: t[0], stratum=lambda t: t[1])
    assert len(pick) == 1000
    assert Counter(s for _, s in pick) == Counter(allocate(SIZES, 1000))
    other = stratified_subset(items, 1000, 1, key=lambda t: t[0], stratum=lambda t: t[1])
    assert set(pick) != set(other)
    shuffled = list(items)
    random.Random(1).shuffle(shuffled)
    assert set(stratified_subset(shuffled, 1000, 0, key=lambda t: t[0], stratum=lambda t: t[1])) == set(pick)
    index = {it: i for i, it in enumerate(items)}
    assert [index[p] for p in pick] == sorted(index[p] for p in pick)  # source order kept


def test_seeded_subset_nested_and_seed_dependent() -> None:
    ids = [f"x{i}" for i in range(200)]
    small = seeded_subset(ids, 10, 3, key=str)
    large = seeded_subset(ids, 50, 3, key=str)
    assert set(small) <= set(large)
    assert small == seeded_subset(ids, 10, 3, key=str)
    assert small != seeded_subset(ids, 10, 4, key=str)
    assert seeded_subset(ids, 500, 3, key=str) == ids


def test_mmlu_limit_is_stratified_over_shipped_subjects() -> None:
    full = load("mmlu", source="sample")
    sizes = Counter(i.metadata["subject"] for i in full)
    for limit in (len(sizes), 20, 33):
        sub = load("mmlu", source="sample", limit=limit, seed=11)
        got = Counter(i.metadata["subject"] for i in sub)
        assert len(sub) == limit
        assert set(got) == set(sizes)  # at least one per subject
        assert got == Counter(allocate(dict(sizes), limit))
        assert [i.id for i in sub] == [i.id for i in load("mmlu", source="sample", limit=limit, seed=11)]
    assert {i.id for i in load("mmlu", source="sample", limit=20, seed=1)} != {
        i.id for i in load("mmlu", source="sample", limit=20, seed=2)
    }


def test_mmlu_subset_same_across_sources(tmp_path: Path) -> None:
    """The subset depends on ids only, so the shipped CSVs copied elsewhere give the same subset."""
    from evalcore.benchmarks import sample_path

    dst = tmp_path / "test"
    dst.mkdir()
    for f in sorted((sample_path("mmlu") / "test").glob("*.csv")):
        rows = list(csv.reader(f.open(encoding="utf-8", newline="")))
        random.Random(0).shuffle(rows)  # a different row order
        with open(dst / f.name, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(rows)
    a = {i.id for i in load("mmlu", source="sample", limit=25, seed=4)}
    b = {i.id for i in load("mmlu", path=tmp_path, limit=25, seed=4)}
    assert a == b


def test_gsm8k_limit_is_a_seeded_sample() -> None:
    full = load("gsm8k", source="sample")
    a = load("gsm8k", source="sample", limit=10, seed=0)
    assert len(a) == 10 and {i.id for i in a} <= {i.id for i in full}
    assert [i.id for i in a] == [i.id for i in load("gsm8k", source="sample", limit=10, seed=0)]
    assert {i.id for i in a} != {i.id for i in load("gsm8k", source="sample", limit=10, seed=1)}
    positions = [next(k for k, f in enumerate(full) if f.id == i.id) for i in a]
    assert positions == sorted(positions)
