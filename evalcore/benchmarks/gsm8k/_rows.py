"""GSM8K's rows: JSONL with ``question`` and ``answer`` (a worked solution ending ``#### N``), as
in ``grade_school_math/data/<split>.jsonl``; hub rows (``openai/gsm8k`` "main") have the same two
fields."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalcore.datasets import (
    DatasetSource,
    Item,
    file_or_shards_items,
    number_reference,
    read_jsonl,
    require_str,
    stable_hash,
    unique_ids,
)
from evalcore.errors import EvalcoreError

SPLITS = ("test", "train")


def gsm8k_items(
    rows: Iterable[tuple[int, dict[str, Any]]], *, origin: str | Path, source: str, split: str
) -> list[Item]:
    """Build GSM8K items from ``(line, row)`` pairs with ``question`` and ``answer``.

    Ids are ``gsm8k/<sha256(question)[:10]>``; the reference is the canonical number after the
    last ``####`` of the solution.

    Args:
        rows: ``(line_number, row)`` pairs (line numbers are used in error messages).
        origin: The file or dataset the rows come from.
        source: ``"hf"``, ``"local"`` or ``"sample"`` (stored in ``metadata["source"]``).
        split: The split name.

    Returns:
        The items in source order.
    """
    parsed = []
    for line, row in rows:
        question = require_str(row, "question", origin, line)
        answer = require_str(row, "answer", origin, line)
        if "####" not in answer:
            raise EvalcoreError("solution has no final '#### N' line", path=origin, line=line, field="answer")
        try:
            reference = number_reference(answer)
        except EvalcoreError as exc:
            raise EvalcoreError(exc.reason, path=origin, line=line, field="answer") from None
        parsed.append((question, answer, reference))
    ids = unique_ids([f"gsm8k/{stable_hash(q)}" for q, _, _ in parsed])
    return [
        Item(
            id=i,
            dataset="gsm8k",
            fields={"question": q},
            reference=ref,
            metadata={"solution": a, "split": split, "source": source},
        )
        for i, (q, a, ref) in zip(ids, parsed)
    ]


def find_gsm8k_file(directory: Path, split: str) -> Path | None:
    """Find a GSM8K split file in a directory (``test.jsonl``, ``data/test.jsonl``, ...)."""
    for name in (f"{split}.jsonl", f"{split}.jsonl.gz", f"data/{split}.jsonl", f"grade_school_math/data/{split}.jsonl"):
        if (directory / name).is_file():
            return directory / name
    return None


def read_rows(records: list[dict[str, Any]], split: str, origin: str, source: str) -> list[Item]:
    """Hub (or parquet) rows as items; a row's line is its 1-based index."""
    return gsm8k_items(((i + 1, r) for i, r in enumerate(records)), origin=origin, source=source, split=split)


def read_local(path: Path, split: str, source: str) -> list[Item]:
    """A GSM8K JSONL file, a parquet shard, or a folder holding ``<split>.jsonl`` or hub shards."""
    from evalcore.benchmarks.gsm8k import SOURCE

    return file_or_shards_items(
        SOURCE,
        path,
        split,
        source,
        find_file=lambda directory: find_gsm8k_file(directory, split),
        read_file=lambda file: gsm8k_items(read_jsonl(file), origin=file, source=source, split=split),
        missing=f"no GSM8K file for split {split!r} ({split}.jsonl, or {SOURCE.hf_config}/{split}-*.parquet as on "
        "the hub) in this directory",
    )


def source(sample_dir: Path) -> DatasetSource:
    """GSM8K's :class:`~evalcore.datasets.DatasetSource`."""
    return DatasetSource(
        name="gsm8k",
        splits=SPLITS,
        hf_repo="openai/gsm8k",
        hf_config="main",
        sample_dir=sample_dir,
        sample_name="test.jsonl",
        few_shot_split="train",
        read_local=read_local,
        read_rows=read_rows,
    )
