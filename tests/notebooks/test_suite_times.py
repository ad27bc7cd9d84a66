"""params/suite.times.yaml: the measured durations that give the first run of the notebook suite
its estimate of the time left (issue 31 item 4: every progress line has one)."""

from __future__ import annotations

from pathlib import Path

from evalcore._yaml import read_yaml
from evalcore.reporting._notebook_suite import load_notebook_suite
from evalcore.reporting._notebooks import expected_durations

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "params" / "suite.yaml"


def test_every_suite_entry_has_a_measured_duration(tmp_path):
    times = read_yaml(ROOT / "params" / "suite.times.yaml").data
    names = [e.name for e in load_notebook_suite(SUITE)]
    assert sorted(times) == sorted(names)
    assert all(isinstance(v, (int, float)) and v > 0 for v in times.values())
    durations, source = expected_durations(tmp_path / "no-reports", SUITE, None)
    assert durations == {k: float(v) for k, v in times.items()}
    assert source == "times measured on 2 cores (suite.times.yaml)"
