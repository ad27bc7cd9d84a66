"""evalcore._io: atomic writes and strict JSON/JSONL reading."""

from __future__ import annotations

import gzip
import json
import stat
from pathlib import Path

import pytest

from evalcore._io import (
    atomic_open,
    atomic_path,
    read_json,
    read_jsonl,
    write_bytes_atomic,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)
from evalcore.errors import EvalcoreError


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_atomic_path_replaces_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.txt.")
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("boom")
    assert target.read_text(encoding="utf-8") == "old"
    assert _hidden(tmp_path) == []
    with atomic_path(target, suffix=".png", chmod=0o644) as tmp:
        assert tmp.suffix == ".png"
        tmp.write_text("new", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert _hidden(tmp_path) == []


def test_atomic_open_modes_fsync_and_mkdir(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "x.bin"
    with atomic_open(nested, "wb", fsync=True) as fh:
        fh.write(b"\x00\x01")
    assert nested.read_bytes() == b"\x00\x01"
    with pytest.raises(FileNotFoundError):
        write_text_atomic(tmp_path / "missing" / "y.txt", "z", mkdir=False)
    assert not (tmp_path / "missing").exists()


def test_write_helpers_round_trip(tmp_path: Path) -> None:
    write_text_atomic(tmp_path / "t.txt", "héllo")
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "héllo"
    write_bytes_atomic(tmp_path / "b.bin", b"abc")
    assert (tmp_path / "b.bin").read_bytes() == b"abc"
    write_json_atomic(tmp_path / "o.json", {"k": [1, 2.5], "s": "é"}, indent=2, ensure_ascii=False)
    text = (tmp_path / "o.json").read_text(encoding="utf-8")
    assert text.endswith("}\n") and '"é"' in text and json.loads(text) == {"k": [1, 2.5], "s": "é"}
    with pytest.raises(ValueError):
        write_json_atomic(tmp_path / "o.json", {"x": float("nan")}, allow_nan=False)
    assert json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))["s"] == "é"
    write_jsonl_atomic(tmp_path / "r.jsonl", ({"i": i, "s": "ü"} for i in range(3)))
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [json.dumps({"i": i, "s": "ü"}, ensure_ascii=False) for i in range(3)]
    assert _hidden(tmp_path) == []


def test_read_jsonl_plain_gz_and_bom(tmp_path: Path) -> None:
    plain = tmp_path / "a.jsonl"
    plain.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n{"a": 2}\n')
    assert list(read_jsonl(plain)) == [(1, {"a": 1}), (3, {"a": 2})]
    packed = tmp_path / "a.jsonl.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as fh:
        fh.write('{"b": 1}\n\n{"b": 2}\n')
    assert list(read_jsonl(packed)) == [(1, {"b": 1}), (3, {"b": 2})]


@pytest.mark.parametrize(
    "content,line,fragment",
    [
        (b'{"a": 1}\n{"a": }\n', 2, "invalid JSON (Expecting value at column 7)"),
        (b'{"a": 1}\n\n[1, 2]\n', 3, "expected a JSON object, got list"),
    ],
)
def test_read_jsonl_bad_lines(tmp_path: Path, content: bytes, line: int, fragment: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(EvalcoreError) as err:
        list(read_jsonl(path))
    assert err.value.line == line and fragment in str(err.value)
    assert str(path) in str(err.value)


def test_read_jsonl_missing_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(EvalcoreError, match="file not found"):
        list(read_jsonl(tmp_path / "nope.jsonl"))
    broken = tmp_path / "x.jsonl"
    broken.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(EvalcoreError, match="not UTF-8 text") as err:
        list(read_jsonl(broken))
    assert err.value.line == 1
    not_gz = tmp_path / "y.jsonl.gz"
    not_gz.write_bytes(b"plain text")
    with pytest.raises(EvalcoreError, match="cannot read file"):
        list(read_jsonl(not_gz))


def test_read_json(tmp_path: Path) -> None:
    good = tmp_path / "g.json"
    good.write_text('{"a": [1]}', encoding="utf-8")
    assert read_json(good) == {"a": [1]}
    bad = tmp_path / "b.json"
    bad.write_text('{\n  "a": 1,\n}', encoding="utf-8")
    with pytest.raises(EvalcoreError, match="invalid JSON") as err:
        read_json(bad)
    assert err.value.line == 3
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "missing.json")
