"""`evalcore route`: bad numbers and output folders are refused before the replay (exit 2)."""

from __future__ import annotations

import os

import pytest

from evalcore.cli import main
from evalcore.routing import simulate_outcomes


@pytest.mark.parametrize("option", [["--seed", "-1"], ["--every", "-2"], ["--every", "0"]])
def test_route_bad_numbers(tmp_path, capsys, option) -> None:
    simulate_outcomes(20, seed=0).save(tmp_path / "o.csv")
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "route",
                "--outcomes",
                str(tmp_path / "o.csv"),
                "--output",
                str(tmp_path / "out"),
                "--orderings",
                "2",
                "--bootstrap",
                "0",
                "--embedder",
                "tfidf",
                *option,
            ]
        )
    assert stop.value.code == 2 and f"argument {option[0]}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_route_read_only_output(tmp_path, capsys) -> None:
    simulate_outcomes(20, seed=0).save(tmp_path / "o.csv")
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        assert (
            main(
                [
                    "route",
                    "--outcomes",
                    str(tmp_path / "o.csv"),
                    "--output",
                    str(out),
                    "--orderings",
                    "2",
                    "--bootstrap",
                    "0",
                    "--embedder",
                    "tfidf",
                ]
            )
            == 2
        )
    finally:
        out.chmod(0o755)
    err = capsys.readouterr().err
    assert "permission denied" in err and "Traceback" not in err
