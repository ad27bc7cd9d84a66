"""`evalcore import` / `compare`: bad input is refused with one message, exit 2, nothing left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalcore.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_lm_eval_text_metric_value_refused(tmp_path, capsys) -> None:
    logs = tmp_path / "lm"
    shutil.copytree(FIXTURES / "lm_eval", logs)
    (samples,) = logs.glob("samples_ec_gsm8k_*.jsonl")
    lines = samples.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    row["exact_match"] = "yes"
    lines[1] = json.dumps(row) + "\n"
    samples.write_text("".join(lines))
    assert main(["import", "--run-dir", str(tmp_path / "imp"), str(logs),
                 "--metric", "exact_match,strict-match"]) == 2
    err = capsys.readouterr().err
    assert f"{samples.name}, line 2, field 'exact_match'" in err and "'yes'" in err
    assert not (tmp_path / "imp").exists() or not any((tmp_path / "imp").iterdir())


def test_import_run_dir_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "imp").write_text("")
    assert main(["import", "--run-dir", str(tmp_path / "imp"),
                 str(FIXTURES / "inspect" / "ec_gsm8k.eval")]) == 2
    assert "field '--run-dir'" in capsys.readouterr().err


def test_compare_output_is_a_file_imports_nothing(tmp_path, capsys) -> None:
    (tmp_path / "rep").write_text("")
    assert main(["compare", "--import-dir", str(tmp_path / "imp"), "-o", str(tmp_path / "rep"),
                 str(FIXTURES / "inspect" / "ec_gsm8k.eval"),
                 str(FIXTURES / "inspect" / "ec_gsm8k.json")]) == 2
    err = capsys.readouterr().err
    assert "field '--output'" in err and "is a file" in err and "Traceback" not in err
    assert not (tmp_path / "imp").exists()


@pytest.mark.parametrize("option", [["--seed", "-1"], ["--n-resamples", "0"]])
def test_compare_bad_numbers(tmp_path, capsys, option) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["compare", "-o", str(tmp_path / "rep"), str(FIXTURES / "inspect" / "ec_gsm8k.eval"),
              str(FIXTURES / "inspect" / "ec_gsm8k.json"), *option])
    assert stop.value.code == 2 and f"argument {option[0]}" in capsys.readouterr().err
