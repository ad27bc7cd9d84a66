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
    assert main(["import", "--run-dir", str(tmp_path / "imp"), str(logs), "--metric", "exact_match,strict-match"]) == 2
    err = capsys.readouterr().err
    assert f"{samples.name}, line 2, field 'exact_match'" in err and "'yes'" in err
    assert not (tmp_path / "imp").exists() or not any((tmp_path / "imp").iterdir())


def test_import_run_dir_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "imp").write_text("")
    assert main(["import", "--run-dir", str(tmp_path / "imp"), str(FIXTURES / "inspect" / "ec_gsm8k.eval")]) == 2
    assert "field '--run-dir'" in capsys.readouterr().err


def test_compare_output_is_a_file_imports_nothing(tmp_path, capsys) -> None:
    (tmp_path / "rep").write_text("")
    assert (
        main(
            [
                "compare",
                "--import-dir",
                str(tmp_path / "imp"),
                "-o",
                str(tmp_path / "rep"),
                str(FIXTURES / "inspect" / "ec_gsm8k.eval"),
                str(FIXTURES / "inspect" / "ec_gsm8k.json"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "field '--output'" in err and "is a file" in err and "Traceback" not in err
    assert not (tmp_path / "imp").exists()


@pytest.mark.parametrize("option", [["--seed", "-1"], ["--n-resamples", "0"]])
def test_compare_bad_numbers(tmp_path, capsys, option) -> None:
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "compare",
                "-o",
                str(tmp_path / "rep"),
                str(FIXTURES / "inspect" / "ec_gsm8k.eval"),
                str(FIXTURES / "inspect" / "ec_gsm8k.json"),
                *option,
            ]
        )
    assert stop.value.code == 2 and f"argument {option[0]}" in capsys.readouterr().err


def _nothing_in(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def test_compare_metric_not_in_a_one_scorer_inspect_log_is_refused(tmp_path, capsys) -> None:
    """The log's only scorer ('match') never stands in for a --metric the user named."""
    log = FIXTURES / "inspect" / "ec_gsm8k.eval"
    assert (
        main(
            [
                "compare",
                "--import-dir",
                str(tmp_path / "imp"),
                "-o",
                str(tmp_path / "rep"),
                str(log),
                str(FIXTURES / "inspect" / "ec_gsm8k.json"),
                "--metric",
                "nosuch",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{log}, field 'metric'" in err and "'nosuch'" in err and "it has match" in err
    assert "Traceback" not in err and err.count("error:") == 1
    assert _nothing_in(tmp_path / "imp") and not (tmp_path / "rep").exists()


def test_import_metric_not_in_a_one_metric_lm_eval_task_is_refused(tmp_path, capsys) -> None:
    (samples,) = (FIXTURES / "lm_eval").glob("samples_ec_mmlu_*.jsonl")
    assert main(["import", "--run-dir", str(tmp_path / "imp"), str(samples), "--metric", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert f"{samples}, field 'metric'" in err and "'nosuch'" in err
    assert "it has exact_match,letter" in err
    assert _nothing_in(tmp_path / "imp")


def test_compare_several_metrics_none_of_them_in_one_log_is_refused(tmp_path, capsys) -> None:
    """One --metric per harness is normal, but each log must match one of them: the inspect
    log (scorer 'choice') matches neither name here and is refused, the lm-eval log is not
    imported either."""
    log = FIXTURES / "inspect" / "ec_mmlu.eval"
    assert (
        main(
            [
                "compare",
                "--import-dir",
                str(tmp_path / "imp"),
                "-o",
                str(tmp_path / "rep"),
                str(FIXTURES / "lm_eval"),
                str(log),
                "--task",
                "ec_mmlu",
                "--metric",
                "exact_match,letter",
                "--metric",
                "nosuch",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{log}, field 'metric'" in err and "'exact_match,letter', 'nosuch'" in err
    assert "it has choice" in err
    assert _nothing_in(tmp_path / "imp") and not (tmp_path / "rep").exists()


def test_compare_metric_not_in_an_evalcore_run_is_refused(tmp_path, capsys) -> None:
    """An evalcore run's 'score' never stands in for a --metric the user named either."""
    run = FIXTURES / "evalcore" / "evalcore-mmlu"
    assert main(["compare", "-o", str(tmp_path / "rep"), str(run), str(run), "--metric", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert f"{run}, field 'metric'" in err and "'nosuch'" in err and "strict" in err
    assert not (tmp_path / "rep").exists()


def _lm_without_gsm8k_samples(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "lm"
    shutil.copytree(FIXTURES / "lm_eval", logs)
    (samples,) = logs.glob("samples_ec_gsm8k_*.jsonl")
    samples.unlink()
    (results,) = logs.glob("results_*.json")
    return results, samples


def test_import_lm_eval_task_without_its_samples_file_is_refused(tmp_path, capsys) -> None:
    results, samples = _lm_without_gsm8k_samples(tmp_path)
    assert (
        main(["import", "--run-dir", str(tmp_path / "imp"), str(results.parent), "--metric", "exact_match,letter"]) == 2
    )
    err = capsys.readouterr().err
    assert f"{results}, field 'task'" in err and "'ec_gsm8k'" in err and samples.name in err
    assert "--task ec_mmlu" in err
    assert _nothing_in(tmp_path / "imp")
    # the task whose samples are there can still be imported on its own
    assert (
        main(
            [
                "import",
                "--run-dir",
                str(tmp_path / "imp"),
                str(results.parent),
                "--task",
                "ec_mmlu",
                "--metric",
                "exact_match,letter",
            ]
        )
        == 0
    )
    assert [p.name.split("-")[1] for p in (tmp_path / "imp").iterdir()] == ["ec_mmlu"]


def test_compare_lm_eval_log_missing_a_samples_file_is_refused(tmp_path, capsys) -> None:
    """Without ec_gsm8k's samples the folder looked like a one-task log and was compared."""
    results, samples = _lm_without_gsm8k_samples(tmp_path)
    assert (
        main(
            [
                "compare",
                "--import-dir",
                str(tmp_path / "imp"),
                "-o",
                str(tmp_path / "rep"),
                str(results.parent),
                str(FIXTURES / "inspect" / "ec_mmlu.eval"),
                "--metric",
                "exact_match,letter",
                "--metric",
                "choice",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{results}, field 'task'" in err and "'ec_gsm8k'" in err and samples.name in err
    assert _nothing_in(tmp_path / "imp") and not (tmp_path / "rep").exists()


def test_lm_eval_group_with_a_subtask_without_samples_is_refused(tmp_path, capsys) -> None:
    results, samples = _lm_without_gsm8k_samples(tmp_path)
    data = json.loads(results.read_text())
    data["group_subtasks"] = {"grp": ["ec_mmlu", "ec_gsm8k"], "ec_mmlu": [], "ec_gsm8k": []}
    results.write_text(json.dumps(data))
    assert (
        main(
            [
                "import",
                "--run-dir",
                str(tmp_path / "imp"),
                str(results.parent),
                "--task",
                "grp",
                "--metric",
                "exact_match,letter",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{results}, field 'task'" in err and "group 'grp'" in err
    assert "'ec_gsm8k'" in err and samples.name in err
    assert _nothing_in(tmp_path / "imp")
