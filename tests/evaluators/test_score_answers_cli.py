"""``evalcore score gsm8k|mmlu|humaneval``: results files, JSON summaries, malformed input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from evalcore import cli
from evalcore.evaluators import score_answers_file
from evalcore.evaluators._answer_files import results_path


@pytest.fixture(autouse=True)
def _only_this_area(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the CLI from this area's register() only, so other areas' modules do not matter."""
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("evalcore.benchmarks._cli",))


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


GSM = [
    {"id": "q1", "response": "48/2 = 24\n#### 72", "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72"},
    {"id": "q2", "response": "The answer is $1,248.00", "answer": "#### 1,248"},
    {"id": "q3", "response": "So 5 + 5 = 10", "answer": "11"},
    {"id": "q4", "response": "I cannot tell.", "answer": "3"},
]


def test_score_gsm8k_writes_results_and_prints_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "answers.jsonl", GSM)
    assert cli.main(["score", "gsm8k", str(f)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 4
    assert summary["accuracy_strict"] == pytest.approx(2 / 4)  # "The answer is ..." is declared: strict too
    assert summary["accuracy_flexible"] == pytest.approx(2 / 4)
    assert summary["parse_failure_rate"] == pytest.approx(1 / 4)
    out = tmp_path / "answers_results.jsonl"
    assert summary["results"] == str(out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4"]
    assert [(r["extracted_flexible"], r["method_flexible"], r["correct_flexible"]) for r in rows] == [
        ("72", "hash", True),
        ("1248", "answer_is", True),
        ("10", "last_number", False),
        (None, "none", False),
    ]
    assert [r["correct_strict"] for r in rows] == [True, True, False, False]
    assert rows[3]["parse_failure_flexible"] is True and rows[2]["parse_failure_flexible"] is False
    assert rows[1]["reference"] == "1248" and rows[1]["answer"] == "#### 1,248"
    # how the answers were read, in order of precedence (issue 14)
    assert summary["methods_flexible"] == {"hash": 1, "answer_is": 1, "last_number": 1, "none": 1}
    assert list(summary["methods_flexible"]) == ["hash", "answer_is", "last_number", "none"]
    assert summary["methods_strict"] == {"hash": 1, "answer_is": 1, "none": 2}


def test_score_prints_method_counts_of_declared_answers_and_hedges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"response": '{"reasoning": "The shift is not due to biological changes (A).", "answer": "C"}', "answer": "C"},
        {"response": "The correct answers are **(C) higher accuracy** and **(B) faster response**.", "answer": "C"},
        {"response": "This is about the magnetic field strength (B). So C.", "answer": "C"},
        {"response": "```yaml\nanswer: D\n```", "answer": "D"},
    ]
    f = _write(tmp_path / "m.jsonl", rows)
    assert cli.main(["score", "mmlu", str(f)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["methods_strict"] == {"json_field": 1, "yaml_field": 1, "hedged": 1, "none": 1}
    assert summary["methods_flexible"] == {"json_field": 1, "yaml_field": 1, "first_letter": 1, "hedged": 1}
    assert (summary["accuracy_strict"], summary["accuracy_flexible"]) == (0.5, 0.75)


def test_score_mmlu_with_letters_indices_and_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    choices = ["Mitochondrion", "Ribosome", "Nucleus", "Golgi apparatus"]
    rows = [
        {"response": "Answer: C", "answer": "C"},
        {"response": "The answer is (B).", "answer": 1},
        {"response": "It's the Golgi apparatus", "answer": "3", "choices": choices},
        {"response": "I think A is right", "answer": "D"},
        {"response": "No idea, sorry.", "answer": "A"},
    ]
    f = _write(tmp_path / "mmlu.jsonl", rows)
    assert cli.main(["score", "mmlu", str(f)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["n"], summary["accuracy_strict"], summary["accuracy_flexible"], summary["parse_failure_rate"]) == (
        5,
        pytest.approx(2 / 5),
        pytest.approx(3 / 5),
        pytest.approx(1 / 5),
    )
    out = [json.loads(line) for line in (tmp_path / "mmlu_results.jsonl").read_text().splitlines()]
    assert [r["method_flexible"] for r in out] == ["answer_is", "answer_is", "option_text", "first_letter", "none"]
    assert [r["reference"] for r in out] == ["C", "B", "D", "D", "A"]


@pytest.mark.parametrize(
    "lines,line,field",
    [
        (['{"response": "#### 1", "answer": "1"}', '{"response": "#### 2", "answer": '], 2, None),
        (['{"response": "#### 1", "answer": "1"}', "", '{"answer": "2"}'], 3, "response"),
        (['{"response": "#### 1"}'], 1, "answer"),
        (['{"response": "#### 1", "answer": "no number"}'], 1, "answer"),
        (['{"response": 5, "answer": "5"}'], 1, "response"),
        (["[1, 2]"], 1, None),
    ],
)
def test_malformed_gsm8k_file_exit_2_and_no_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], line: int, field: str | None
) -> None:
    f = _write(tmp_path / "bad.jsonl", lines)
    assert cli.main(["score", "gsm8k", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and f"line {line}" in err
    if field:
        assert f"field '{field}'" in err
    assert not (tmp_path / "bad_results.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]  # no temp file left either


@pytest.mark.parametrize(
    "row,field",
    [({"response": "A", "answer": "E"}, "answer"), ({"response": "A", "answer": 0, "choices": ["x", "y"]}, "choices")],
)
def test_malformed_mmlu_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict, field: str) -> None:
    f = _write(tmp_path / "m.jsonl", [{"response": "A", "answer": "A"}, row])
    assert cli.main(["score", "mmlu", str(f)]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and f"field '{field}'" in err
    assert not results_path(f).exists()


def test_missing_and_empty_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["score", "gsm8k", str(tmp_path / "nope.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err
    empty = _write(tmp_path / "empty.jsonl", [""])
    assert cli.main(["score", "mmlu", str(empty)]) == 2
    assert "empty" in capsys.readouterr().err
    assert not results_path(empty).exists()


def test_results_path_and_existing_results_replaced_atomically(tmp_path: Path) -> None:
    assert results_path(tmp_path / "a.jsonl") == tmp_path / "a_results.jsonl"
    assert results_path(tmp_path / "a.b.jsonl") == tmp_path / "a.b_results.jsonl"
    f = _write(tmp_path / "a.jsonl", GSM[:1])
    (tmp_path / "a_results.jsonl").write_text("STALE-CONTENT\n")
    summary = score_answers_file(f, "gsm8k")
    assert summary["accuracy_strict"] == 1.0
    assert (tmp_path / "a_results.jsonl").read_text().count("\n") == 1
    assert "STALE-CONTENT" not in (tmp_path / "a_results.jsonl").read_text()


def test_humaneval_subcommand_wiring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The handler passes parsed options to the sandbox area's score_samples_file and prints its dict."""
    calls: list[tuple[Any, dict[str, Any]]] = []

    def fake(path: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append((path, kwargs))
        return {"pass@1": 0.5, "n_samples": 2}

    module = types.ModuleType("evalcore.evaluators._humaneval_files")
    module.score_samples_file = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "evalcore.evaluators._humaneval_files", module)
    samples = str(tmp_path / "s.jsonl")
    assert (
        cli.main(
            ["score", "humaneval", samples, "--k", "1,5", "--timeout", "3", "--workers", "2", "--problems", "p.jsonl"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {"pass@1": 0.5, "n_samples": 2}
    assert calls == [(samples, {"ks": (1, 5), "timeout_s": 3.0, "workers": 2, "problems_file": "p.jsonl"})]
    assert cli.main(["score", "humaneval", samples]) == 0
    assert calls[-1][1] == {"ks": (1, 10, 100), "timeout_s": 10.0, "workers": None, "problems_file": None}
    capsys.readouterr()
    for bad in (["--k", "1,x"], ["--k", "0"], ["--timeout", "-1"], ["--workers", "0"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(["score", "humaneval", samples, *bad])
        assert exc.value.code == 2


def _console_script() -> str:
    script = Path(sys.executable).parent / "evalcore"
    return str(script) if script.exists() else (shutil.which("evalcore") or "evalcore")


def test_console_script_exit_code_2_and_no_results_file(tmp_path: Path) -> None:
    f = _write(tmp_path / "answers.jsonl", [GSM[0], '{"response": "x", "answer": }', GSM[1]])
    proc = subprocess.run([_console_script(), "score", "gsm8k", str(f)], capture_output=True, text=True, timeout=120)
    if proc.returncode == 1 and "No module named 'evalcore." in proc.stderr and "._cli'" in proc.stderr:
        pytest.skip("another area's CLI module is not installed yet: " + proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 2, proc.stderr
    assert f"{f}, line 2" in proc.stderr and "invalid JSON" in proc.stderr
    assert proc.stdout == ""
    assert not (tmp_path / "answers_results.jsonl").exists()
    good = _write(tmp_path / "good.jsonl", GSM)
    proc = subprocess.run([_console_script(), "score", "gsm8k", str(good)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["accuracy_flexible"] == 0.5
    assert (tmp_path / "good_results.jsonl").exists()
