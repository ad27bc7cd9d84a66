"""One path to compare runs: ``evalcore compare``, ``notebooks/compare.ipynb`` and
``evalcore.reporting.compare_runs`` get the same rows from the same function."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd

from evalcore.cli import main
from evalcore.imports import compare_series, compare_sources
from evalcore.reporting import compare_runs

FIXTURES = Path(__file__).parent / "fixtures"
INS = FIXTURES / "inspect"
EC = FIXTURES / "evalcore"
ROOT = Path(__file__).resolve().parents[2]


def _sources() -> list[Path]:
    return [INS / "ec_mmlu.eval", EC / "evalcore-mmlu"]


def _numeric(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=[c for c in ("note",) if c in table]).reset_index(drop=True)


def test_the_cli_and_the_notebook_path_give_the_same_rows(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                *map(str, _sources()),
                "--metric",
                "choice",
                "--metric",
                "flexible",
                "--label",
                "inspect",
                "--label",
                "evalcore",
                "--import-dir",
                str(tmp_path / "imp1"),
                "--output",
                str(out),
                "--seed",
                "3",
            ]
        )
        == 0
    )
    json_path = capsys.readouterr().out.strip().splitlines()[-1].split(" and ")[-1]
    cli_rows = json.loads(Path(json_path).read_text())["comparisons"]

    comparison = compare_sources(
        _sources(), metric=["choice", "flexible"], labels=["inspect", "evalcore"], import_dir=tmp_path / "imp2", seed=3
    )
    notebook = compare_runs(comparison)
    assert list(notebook.columns[: len(cli_rows[0])]) == list(cli_rows[0])
    assert notebook["note"].tolist() == [""] * len(cli_rows)
    for key in ("n", "difference", "ci_low", "ci_high", "p_value", "p_adjusted", "test"):
        assert notebook[key].tolist() == [row[key] for row in cli_rows]

    # label -> series goes through the same compare_series as compare_sources did
    again = compare_runs(comparison.alignment.series, seed=3)
    pd.testing.assert_frame_equal(_numeric(again), _numeric(notebook))
    pd.testing.assert_frame_equal(compare_series(comparison.alignment.series, seed=3), comparison.table)


def test_a_collapsed_interval_gets_its_note_on_the_shared_rows() -> None:
    same = pd.Series([1.0, 0.0, 1.0, 1.0], index=list("abcd"))
    table = compare_runs({"x": same, "y": same.copy()}, n_resamples=200)
    assert table.loc[0, "ci_low"] == table.loc[0, "ci_high"] == 0.0
    assert "collapses to a point" in table.loc[0, "note"]
    assert set(table.columns) >= {"mdd_80", "ci_method", "n_10", "n_01"}  # the CLI's columns


def test_the_compare_notebook_calls_compare_sources() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "compare.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "compare_sources(" in code and "aligned_scores(" not in code
    assert "rep.compare_runs(comparison)" in code


def test_an_interval_collapsed_away_from_zero_is_not_called_equal_scores() -> None:
    x = pd.Series([0.0, 0.0, 0.0, 0.0], index=list("abcd"))
    y = pd.Series([1.0, 1.0, 1.0, 1.0], index=list("abcd"))
    table = compare_runs({"x": x, "y": y}, n_resamples=200)
    assert table.loc[0, "ci_low"] == table.loc[0, "ci_high"] != 0.0
    note = table.loc[0, "note"]
    assert "differs by the same amount" in note and "scored the same" not in note
