"""Lone surrogates (what JSON's "\\ud800" escape decodes to) never stop a JSON or JSONL write."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore._io import json_text, write_json_atomic, write_jsonl_atomic


def test_json_text_escapes_only_what_utf8_cannot_encode() -> None:
    assert json_text({"a": "é"}, ensure_ascii=False) == '{"a": "é"}'  # readable text stays readable
    assert json_text({"a": "é\ud800"}, ensure_ascii=False) == '{"a": "\\u00e9\\ud800"}'
    assert json.loads(json_text({"a": "x\udfffy"}, ensure_ascii=False)) == {"a": "x\udfffy"}
    assert json_text({"a": "é"}) == '{"a": "\\u00e9"}'  # json's default is untouched


def test_files_with_lone_surrogates_are_written_and_read_back(tmp_path: Path) -> None:
    rows = [{"completion": "ok é"}, {"completion": "# \ud800", "result": "failed: \udc80"}]
    write_jsonl_atomic(tmp_path / "r.jsonl", rows)
    text = (tmp_path / "r.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
    assert text.splitlines()[0] == '{"completion": "ok é"}'
    assert [json.loads(line) for line in text.splitlines()] == rows
    write_json_atomic(tmp_path / "s.json", {"rows": rows}, indent=2, ensure_ascii=False)
    assert json.loads((tmp_path / "s.json").read_bytes().decode("utf-8")) == {"rows": rows}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "s.json"]  # no temporary file left
