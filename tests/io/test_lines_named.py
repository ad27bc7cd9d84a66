"""Line numbers in messages are the file's physical lines: invalid UTF-8 in JSONL, CSV rows after
multi-line quoted fields and blank lines."""

from __future__ import annotations

import pytest

from evalcore._io import read_jsonl
from evalcore.errors import EvalcoreError


def test_invalid_utf8_in_jsonl_names_its_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n\n{"a": "caf\xe9"}\n{"a": 5}\n')
    rows = []
    with pytest.raises(EvalcoreError) as info:
        for row in read_jsonl(path):
            rows.append(row)
    assert rows == [(1, {"a": 1}), (2, {"a": 2})]
    assert str(info.value).startswith(f"{path}, line 4: not UTF-8 text (byte 0xe9")


def test_a_bom_is_skipped_and_lines_still_count(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n{"a": 2}\n')
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (3, {"a": 2})]


def test_gzip_jsonl_reads(tmp_path):
    import gzip

    path = tmp_path / "d.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b'{"a": 1}\n{"a": 2}\n')
    assert [r for _, r in read_jsonl(path)] == [{"a": 1}, {"a": 2}]
