"""`evalcore notebooks run` / `report`: bad numbers and output paths refused up front (exit 2)."""

from __future__ import annotations

import pytest

from evalcore.cli import main


@pytest.mark.parametrize(
    "option", [["--progress-every", "-5"], ["--cell-timeout", "-1"], ["--notebook-timeout", "inf"]]
)
def test_notebooks_run_bad_seconds(tmp_path, capsys, option) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["notebooks", "run", "--output", str(tmp_path / "rep"), *option])
    assert stop.value.code == 2 and f"argument {option[0]}" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_report_output_is_a_file(tmp_path, capsys) -> None:
    nb = tmp_path / "x.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    (tmp_path / "out").write_text("")
    assert main(["report", str(nb), "--no-pdf", "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "field '--output'" in err and "is a file" in err
