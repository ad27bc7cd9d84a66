"""The append-only samples store: torn lines, repair, corruption, latest record wins."""

from __future__ import annotations

import json

import pytest

from evalcore._runstore import latest_records, write_run_json
from evalcore.errors import EvalcoreError
from evalcore.runs import SampleWriter, read_samples


def rec(item: str, epoch: int = 0, error: bool = False, text: str = "x") -> dict:
    return {
        "run_id": "r",
        "item_id": item,
        "epoch": epoch,
        "dataset": "gsm8k",
        "request": {"messages": [], "params": {}},
        "request_hash": "h",
        "completion": {"text": text},
        "scores": {"score": 1.0},
        "error": error,
    }


def test_writer_appends_whole_lines(tmp_path) -> None:
    p = tmp_path / "samples.jsonl"
    with SampleWriter(p) as w:
        for i in range(3):
            w.write(rec(f"i{i}"))
    raw = p.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 3
    found = read_samples(p)
    assert [r["item_id"] for r in found.records] == ["i0", "i1", "i2"]
    assert not found.torn and found.good_bytes == len(raw)


@pytest.mark.parametrize("cut", [1, 10, 40, -1])
def test_torn_last_line_is_dropped_and_repaired_never_duplicated(tmp_path, cut) -> None:
    p = tmp_path / "samples.jsonl"
    with SampleWriter(p) as w:
        w.write(rec("a"))
        w.write(rec("b"))
    full = p.read_bytes()
    second_start = full.index(b"\n") + 1
    # cut the file in the middle of the second line (or just before its newline)
    end = second_start + cut if cut > 0 else len(full) - 1
    p.write_bytes(full[:end])
    found = read_samples(p)
    assert found.torn and [r["item_id"] for r in found.records] == ["a"]
    assert found.good_bytes == second_start
    with SampleWriter(p) as w:  # reopening cuts the fragment before appending
        assert w.repaired
        w.write(rec("b", text="again"))
    lines = p.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(x) for x in lines)
    assert [json.loads(x)["item_id"] for x in lines] == ["a", "b"]


def test_corruption_before_the_last_line_is_an_error(tmp_path) -> None:
    p = tmp_path / "samples.jsonl"
    p.write_text(json.dumps(rec("a")) + "\n{broken\n" + json.dumps(rec("c")) + "\n")
    with pytest.raises(EvalcoreError) as info:
        read_samples(p)
    assert info.value.line == 2 and info.value.path == str(p)


def test_record_without_required_keys(tmp_path) -> None:
    p = tmp_path / "samples.jsonl"
    p.write_text(json.dumps({"item_id": "a"}) + "\n" + json.dumps(rec("b")) + "\n")
    with pytest.raises(EvalcoreError, match="required keys") as info:
        read_samples(p)
    assert info.value.line == 1


def test_latest_record_supersedes_a_failed_one() -> None:
    out = latest_records([rec("a", error=True), rec("b"), rec("a", text="ok"), rec("a", 1)])
    assert [(r["item_id"], r["epoch"], r["error"]) for r in out] == [("a", 0, False), ("b", 0, False), ("a", 1, False)]
    assert out[0]["completion"]["text"] == "ok"


def test_write_run_json_replaces_and_nulls_nan(tmp_path) -> None:
    p = tmp_path / "r.json"
    write_run_json(p, {"x": float("nan"), "y": [1.5]})
    assert json.loads(p.read_text()) == {"x": None, "y": [1.5]}
    assert [f.name for f in tmp_path.iterdir()] == ["r.json"]  # no temp file left
