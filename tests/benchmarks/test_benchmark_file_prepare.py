"""A benchmark file's ``prepare: module:function`` hook (issue 40, as lm-eval's ``!function``):
each row goes through the user's function before its fields are read; a missing module or
function, or a hook failing on a row, is one error naming the file, the line and the field."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalcore.benchmarks import get_benchmark, unregister
from evalcore.errors import EvalcoreError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from conftest import CountingModel  # noqa: E402

HOOK = """def prepare(row):
    a, b = int(row["a"]), int(row["b"])
    if a < 0:
        raise ValueError("negative")
    return {"id": row["id"], "question": f"{a} times {b}", "answer": a * b}


def not_a_row(row):
    return [row]
"""
YAML = """name: times
data: rows.jsonl
id_field: id
answer_field: answer
scorer: number
prepare: {prepare}
prompt:
  user: "What is {{question}}? End with: The answer is N."
"""
ROWS = [{"id": "t1", "a": 6, "b": 7}, {"id": "t2", "a": 3, "b": 5}, {"id": "t3", "a": 12, "b": 12}]


@pytest.fixture(autouse=True)
def _forget():
    yield
    unregister("times")


def _write(tmp_path: Path, prepare: str, rows: list[dict] = ROWS, hook: str = HOOK) -> Path:
    (tmp_path / "rows_hook.py").write_text(hook)
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "times.yaml"
    path.write_text(YAML.format(prepare=prepare))
    return path


def test_rows_go_through_the_hook_and_the_run_scores_them(tmp_path):
    from evalcore.runs import load_run, run_benchmark

    path = _write(tmp_path, "rows_hook:prepare")
    bench = get_benchmark(str(path))
    items = bench.load()
    assert [(it.id, it.fields["question"], it.reference) for it in items] == [
        ("times/t1", "6 times 7", "42"),
        ("times/t2", "3 times 5", "15"),
        ("times/t3", "12 times 12", "144"),
    ]
    assert bench.to_config()["prepare"]["ref"] == "rows_hook:prepare"
    assert bench.to_config()["prepare"]["file"] == str(tmp_path / "rows_hook.py")

    def answer(user: str) -> str:  # right but on 3 times 5
        return (
            "The answer is 16."
            if "3 times 5" in user
            else "The answer is " + str({"6 times 7": 42, "12 times 12": 144}[user.split("What is ")[1].split("?")[0]])
        )

    run = load_run(run_benchmark(str(path), CountingModel(answer), run_dir=tmp_path / "runs", progress=False))
    assert run.results["accuracy_strict"]["mean"] == pytest.approx(2 / 3)
    assert run.config["benchmark"]["prepare"]["ref"] == "rows_hook:prepare"


def test_a_missing_module_or_function_names_the_file_line_and_field(tmp_path):
    for prepare, words in [
        ("no_such_module:prepare", "cannot import module 'no_such_module'"),
        ("rows_hook:missing", "module 'rows_hook' has no function 'missing'"),
        ("rows_hook", "must be 'module:function'"),
    ]:
        path = _write(tmp_path, prepare)
        with pytest.raises(EvalcoreError) as err:
            get_benchmark(str(path))
        assert words in str(err.value)
        assert (err.value.path, err.value.line, err.value.field) == (str(path), 6, "prepare")


def test_a_hook_failing_on_a_row_names_the_data_file_and_line(tmp_path):
    path = _write(tmp_path, "rows_hook:prepare", ROWS[:1] + [{"id": "bad", "a": -1, "b": 2}])
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(path))
    assert (err.value.path, err.value.line, err.value.field) == (str(tmp_path / "rows.jsonl"), 2, "prepare")
    assert "ValueError: negative" in str(err.value)
    path = _write(tmp_path, "rows_hook:not_a_row")
    with pytest.raises(EvalcoreError, match="must return the row as a mapping, got list") as err:
        get_benchmark(str(path))
    assert err.value.line == 1


def test_a_file_without_a_hook_records_no_prepare_key(tmp_path):
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": "x", "question": "1 times 1", "answer": 1}) + "\n")
    path = tmp_path / "plain.yaml"
    path.write_text(YAML.replace("prepare: {prepare}\n", "").replace("name: times", "name: plain").format())
    try:
        assert "prepare" not in get_benchmark(str(path)).to_config()
    finally:
        unregister("plain")
