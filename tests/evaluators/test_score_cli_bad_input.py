"""`evalcore score`: bad options and output paths fail up front with one message and exit 2."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from evalcore.datasets._references import numbers_equal


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e12"])
def test_humaneval_timeout_must_be_finite_and_sane(tmp_path, capsys, value) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "T/0", "completion": "    return 1\n"}) + "\n")
    with pytest.raises(SystemExit) as stop:  # argparse: before the sandbox starts
        main(["score", "humaneval", str(samples), "--timeout", value])
    assert stop.value.code == 2
    assert "argument --timeout" in capsys.readouterr().err
    assert not (tmp_path / "s_results.jsonl").exists()


def test_answers_results_path_is_a_folder(tmp_path, capsys) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "#### 4", "answer": "4"}) + "\n")
    (tmp_path / "a_results.jsonl").mkdir()
    assert main(["score", "gsm8k", str(answers)]) == 2
    err = capsys.readouterr().err
    assert "a_results.jsonl" in err and "is a folder" in err and "Traceback" not in err


def test_huge_integer_answer_is_scored(tmp_path, capsys) -> None:
    answers = tmp_path / "a.jsonl"
    big = "1" + "0" * 4000
    answers.write_text(
        json.dumps({"response": "4", "answer": int(big)})
        + "\n"
        + json.dumps({"response": big, "answer": int(big)})
        + "\n"
    )
    assert main(["score", "gsm8k", str(answers)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and out["accuracy_flexible"] == 0.5


def test_numbers_equal_beyond_float_range() -> None:
    from fractions import Fraction

    big = Fraction(10) ** 4000
    assert numbers_equal(big, big + 1)  # within the relative tolerance, exactly
    assert not numbers_equal(big, Fraction(4))
    assert not numbers_equal(big, float("inf"))
