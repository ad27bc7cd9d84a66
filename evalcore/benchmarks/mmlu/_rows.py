"""MMLU's rows: CSV per subject **without a header** (``question,A,B,C,D,answer``) named
``<subject>_<split>.csv`` as in the original ``data.tar``; or hub parquet / rows (``cais/mmlu``
"all") with ``question``, ``subject``, ``choices`` (four strings) and ``answer`` (int 0-3)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalcore.datasets import (
    LETTERS,
    DatasetSource,
    Item,
    find_parquet_shards,
    open_text,
    require_str,
    stable_hash,
    unique_ids,
)
from evalcore.errors import EvalcoreError

# file-name suffix of each MMLU split in the original tar (data/<dir>/<subject>_<suffix>.csv)
MMLU_SPLIT_SUFFIX = {"test": "test", "validation": "val", "val": "val", "dev": "dev"}
MMLU_SPLITS = ("test", "validation", "dev")


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


def find_mmlu_files(directory: Path, split: str) -> list[Path]:
    """MMLU files for ``split`` in a directory: subject CSVs, else HF parquet shards."""
    suffix = MMLU_SPLIT_SUFFIX[split]
    split_dir = {"test": "test", "validation": "val", "dev": "dev"}[split]
    for d in (directory, directory / split_dir, directory / "data" / split_dir):
        found = sorted(d.glob(f"*_{suffix}.csv")) if d.is_dir() else []
        if found:
            return found
    return find_parquet_shards(directory, split, "all")


def read_rows(records: list[dict[str, Any]], split: str, origin: str, source: str) -> list[Item]:
    """Hub (or parquet) rows as items; a row's line is its 1-based index."""
    rows = ((i + 1, r) for i, r in enumerate(records))
    return mmlu_items(mmlu_rows_to_tuples(rows, origin), source=source, split=split)


def read_local(path: Path, split: str, source: str) -> list[Item]:
    """A subject CSV or parquet file, or a folder of them (``data/<split>/<subject>_<suffix>.csv``)."""
    files = [path] if path.is_file() else find_mmlu_files(path, split)
    if not files:
        raise EvalcoreError(
            f"no MMLU files for split {split!r} (<subject>_{MMLU_SPLIT_SUFFIX[split]}.csv or {split}-*.parquet)",
            path=path,
        )
    parsed: list[tuple[Any, ...]] = []
    for f in files:
        if f.suffix == ".parquet":
            parsed.extend(read_mmlu_parquet(f))
        elif f.suffix == ".csv":
            parsed.extend(read_mmlu_csv(f, split))
        else:
            raise EvalcoreError("unsupported MMLU file type (expected .csv or .parquet)", path=f)
    return mmlu_items(parsed, source=source, split=split)


def _subject(item: Item) -> str:
    return str(item.metadata["subject"])


def source(sample_dir: Path) -> DatasetSource:
    """MMLU's :class:`~evalcore.datasets.DatasetSource` (a subset is stratified by subject)."""
    return DatasetSource(
        name="mmlu",
        splits=MMLU_SPLITS,
        hf_repo="cais/mmlu",
        hf_config="all",
        sample_dir=sample_dir,
        sample_name=".",
        few_shot_split="dev",
        read_local=read_local,
        read_rows=read_rows,
        split_aliases={"val": "validation"},
        stratum=_subject,
    )
