"""CSV records with their true physical line numbers (for error messages).

A CSV record may span several lines (a prompt or a model's response with newlines inside a
quoted field), so "data row + 2" is not the line a user finds in an editor. These helpers read
the file with :mod:`csv` and keep, for every record, the line it starts on
(``csv.reader.line_num`` after the previous record, plus one); the line of one field within a
record is that start plus the line breaks inside the fields before it.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from evalcore.errors import EvalcoreError

_FIELD_LIMIT = 2**31 - 1  # a model's response may exceed csv's default limit of 131,072 characters


@contextmanager
def _big_fields() -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, _FIELD_LIMIT))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def iter_records(
    path: str | os.PathLike[str], *, delimiter: str = ",", strict: bool = True
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(start line, fields)`` for every non-blank record of a CSV file, header included.

    Args:
        path: The CSV file (UTF-8, a byte-order mark is skipped).
        delimiter: The field separator.
        strict: Refuse a stray quote inside an unquoted field (``csv``'s strict mode).

    Yields:
        The 1-based physical line the record starts on and its fields.

    Raises:
        EvalcoreError: a malformed record (an unterminated quote ...) or bytes that are not
            UTF-8, naming the file and line.
    """
    p = Path(path)
    with _big_fields(), p.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh, delimiter=delimiter, strict=strict)
        start = 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise EvalcoreError(f"malformed CSV: {exc}", path=p, line=start) from exc
            except UnicodeDecodeError as exc:
                raise EvalcoreError(f"not UTF-8 text: {exc.reason}", path=p, line=reader.line_num + 1) from exc
            line, start = start, reader.line_num + 1
            if row:
                yield line, row


def read_records(
    path: str | os.PathLike[str], *, delimiter: str = ","
) -> tuple[tuple[int, list[str]], list[tuple[int, list[str]]]]:
    """The header record and the data records of a CSV file, each with its start line.

    Raises:
        EvalcoreError: an empty file, or what :func:`iter_records` raises.
    """
    records = iter_records(path, delimiter=delimiter)
    header = next(records, None)
    if header is None:
        raise EvalcoreError("the CSV file is empty (no header)", path=path)
    return header, list(records)


def field_line(start: int, fields: Sequence[str], index: int) -> int:
    """The physical line field ``index`` of a record starting on line ``start`` begins on."""
    return start + sum(f.count("\n") for f in fields[:index])


class RecordLines:
    """Physical lines of the data records of a CSV file read by pandas (the long table).

    The start line of every record is found in one pass when built; the line of one field
    is worked out only when asked (for an error), by reading that record again.

    Args:
        path: The CSV file.
        delimiter: The field separator.
    """

    def __init__(self, path: str | os.PathLike[str], *, delimiter: str = ",") -> None:
        self.path = Path(path)
        self.delimiter = delimiter
        self.header: list[str] = []
        self.starts: list[int] = []
        try:
            records = iter_records(self.path, delimiter=delimiter, strict=False)
            head = next(records, None)
            self.header = head[1] if head else []
            self.starts = [line for line, _ in records]
        except EvalcoreError:  # pandas reads what csv refuses: no lines then (``starts`` empty)
            self.header, self.starts = [], []

    def line(self, record: int, column: str | None = None) -> int:
        """The line of ``column`` in data record ``record`` (0-based), or where the record starts."""
        start = self.starts[record]
        if column is None or column not in self.header:
            return start
        for line, fields in iter_records(self.path, delimiter=self.delimiter, strict=False):
            if line == start:
                return field_line(start, fields, self.header.index(column))
        return start  # pragma: no cover - the file changed under us
