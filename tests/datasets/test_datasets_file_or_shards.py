"""``file_or_shards_items``: a local file, or a folder holding the native file or the hub's
parquet shards, read the same way for any dataset; and GSM8K/HumanEval read through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalcore.benchmarks import load
from evalcore.datasets import DatasetSource, Item, file_or_shards_items, read_jsonl
from evalcore.errors import EvalcoreError


def _items(rows: list[dict[str, Any]], origin: str, source: str) -> list[Item]:
    return [
        Item(id=f"toy/{r['q']}", dataset="toy", fields={"q": r["q"]}, reference=r["a"], metadata={"origin": origin})
        for r in rows
    ]


def _read_rows(records: list[dict[str, Any]], split: str, origin: str, source: str) -> list[Item]:
    return _items(records, origin, source)


def _toy(tmp_path: Path) -> DatasetSource:
    return DatasetSource(
        name="toy",
        splits=("test",),
        hf_repo="someone/toy",
        hf_config="main",
        sample_dir=tmp_path,
        sample_name="toy.jsonl",
        few_shot_split="test",
        read_local=lambda path, split, source: [],
        read_rows=_read_rows,
    )


def _read(src: DatasetSource, path: Path) -> list[Item]:
    return file_or_shards_items(
        src,
        path,
        "test",
        "local",
        find_file=lambda d: d / "toy.jsonl" if (d / "toy.jsonl").is_file() else None,
        read_file=lambda f: _items([row for _, row in read_jsonl(f)], str(f), "local"),
        missing="no toy file here",
    )


ROWS = [{"q": "one", "a": "1"}, {"q": "two", "a": "2"}]


def test_a_native_file_and_a_folder_holding_it(tmp_path):
    src = _toy(tmp_path)
    file = tmp_path / "toy.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    for path in (file, tmp_path):
        items = _read(src, path)
        assert [(it.id, it.reference) for it in items] == [("toy/one", "1"), ("toy/two", "2")]
        assert items[0].metadata["origin"] == str(file)


def test_a_parquet_file_and_hub_shards_in_a_folder(tmp_path):
    src = _toy(tmp_path)
    (tmp_path / "main").mkdir()
    for n, row in enumerate(ROWS):
        pd.DataFrame([row]).to_parquet(tmp_path / "main" / f"test-0000{n}-of-00002.parquet")
    from_folder = _read(src, tmp_path)
    assert [it.id for it in from_folder] == ["toy/one", "toy/two"]
    assert from_folder[1].metadata["origin"].endswith("test-00001-of-00002.parquet")
    one = _read(src, tmp_path / "main" / "test-00000-of-00002.parquet")
    assert [it.id for it in one] == ["toy/one"]


def test_a_folder_with_neither_names_the_folder(tmp_path):
    with pytest.raises(EvalcoreError) as info:
        _read(_toy(tmp_path), tmp_path)
    assert info.value.reason == "no toy file here"
    assert Path(str(info.value.path)) == tmp_path


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "gsm8k",
            "no GSM8K file for split 'test' (test.jsonl, or main/test-*.parquet as on the hub) in this directory",
        ),
        (
            "humaneval",
            "no HumanEval file (HumanEval.jsonl[.gz], or openai_humaneval/test-*.parquet as on the hub) in this "
            "directory",
        ),
    ],
)
def test_builtin_empty_folder_message_unchanged(tmp_path, name, message):
    with pytest.raises(EvalcoreError) as info:
        load(name, source="local", path=tmp_path)
    assert info.value.reason == message
    assert Path(str(info.value.path)) == tmp_path
