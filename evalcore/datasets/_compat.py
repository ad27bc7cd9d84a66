"""The name-based loaders ``evalcore.datasets`` had before each benchmark became a folder.

``load("gsm8k")``, ``sample_path``, ``few_shot_pool`` and ``resolve_source`` take a benchmark's
name, and which names exist is the benchmark registry's to say: they now live in
:mod:`evalcore.benchmarks` (``evalcore.benchmarks.load`` ...). These aliases keep the old public
names working; each asks ``evalcore.benchmarks`` at call time (the one listed upward import of
``datasets``, docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path

from evalcore.datasets._item import Item


def load(
    name: str,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    source: str = "auto",
    path: str | Path | None = None,
) -> list[Item]:
    """:func:`evalcore.benchmarks.load` (a benchmark's items by its name)."""
    from evalcore import benchmarks

    return benchmarks.load(name, split=split, limit=limit, seed=seed, source=source, path=path)


def sample_path(name: str) -> Path:
    """:func:`evalcore.benchmarks.sample_path` (where a benchmark's shipped sample lies)."""
    from evalcore import benchmarks

    return benchmarks.sample_path(name)


def few_shot_pool(name: str, source: str = "sample", path: str | Path | None = None) -> list[Item]:
    """:func:`evalcore.benchmarks.few_shot_pool` (a benchmark's few-shot examples)."""
    from evalcore import benchmarks

    return benchmarks.few_shot_pool(name, source=source, path=path)


def resolve_source(
    name: str, split: str = "test", source: str = "auto", path: str | Path | None = None, *, skip_hf: bool = False
) -> str:
    """:func:`evalcore.benchmarks.resolve_source` (which source loading would use)."""
    from evalcore import benchmarks

    return benchmarks.resolve_source(name, split=split, source=source, path=path, skip_hf=skip_hf)
