"""`evalcore route` output (issue 39): a missing value is blank, never NaN; no weights bar in it."""

from __future__ import annotations

import csv
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.routing._cli import _blank_or

FIXTURE = Path(__file__).parent / "fixtures" / "demo_outcomes.csv"


def test_blank_or() -> None:
    assert _blank_or(0.12345) == "0.123"
    assert _blank_or(float("nan")) == ""
    assert _blank_or(None) == ""
    assert _blank_or(math.inf) == ""


def test_route_prints_blanks_and_no_weights_bar(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from evalcore.models._embeddings import minilm_path

    if minilm_path() is None:
        pytest.skip("the packaged MiniLM model is not installed")
    out = tmp_path / "out"
    exe = Path(sys.executable).with_name("evalcore")
    proc = subprocess.run(
        [str(exe), "route", "--outcomes", str(FIXTURE), "--output", str(out), "--orderings", "5"]
        + ["--embedder", "minilm", "--bootstrap", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout + proc.stderr
    assert not re.search(r"\bnan\b", text, re.IGNORECASE), text
    assert "Loading weights" not in text
    with open(out / "summary.csv", newline="") as fh:
        rows = {r["algorithm"]: r for r in csv.DictReader(fh)}
    unsettled = [a for a, r in rows.items() if r["convergence_point"] == ""]
    assert unsettled, "the fixture has routers that never settle (what this test is about)"
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "convergence_point" in line and "algorithm" in line)
    for name in unsettled:  # the table row of a router that never settles ends in its cost columns: blank
        row = next(line for line in lines[header + 1 :] if line.split() and line.split()[0] == name)
        assert len(row.split()) == 7, row
    settled = [a for a, r in rows.items() if r["convergence_point"] != ""]
    for name in settled:
        row = next(line for line in lines[header + 1 :] if line.split() and line.split()[0] == name)
        assert len(row.split()) == 8, row
