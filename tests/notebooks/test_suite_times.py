"""params/suite.times.yaml: the measured durations that give the first run of the notebook suite
its estimate of the time left (issue 31 item 4: every progress line has one), per parameter set
(issue 39): the suite as it is, and with params/smoke.yaml's values."""

from __future__ import annotations

from pathlib import Path

from evalcore._yaml import read_yaml
from evalcore.reporting._notebook_suite import load_notebook_suite, load_smoke
from evalcore.reporting._notebooks import expected_durations
from evalcore.reporting._suite_times import smoke_fingerprint

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "params" / "suite.yaml"


def test_every_suite_entry_has_a_measured_duration_per_parameter_set(tmp_path):
    times = read_yaml(ROOT / "params" / "suite.times.yaml").data
    names = [e.name for e in load_notebook_suite(SUITE)]
    for section in ("full", "smoke"):
        assert sorted(times[section]["run_s"]) == sorted(names), section
        assert all(isinstance(v, (int, float)) and v > 0 for v in times[section]["run_s"].values())
    expected = expected_durations(tmp_path / "no-reports", SUITE, None)
    assert expected.run == {k: float(v) for k, v in times["full"]["run_s"].items()}
    assert expected.finish == {k: float(times["full"]["finish_s"]) for k in names}
    assert expected.source == "times measured on 2 cores (suite.times.yaml)"


def test_the_smoke_times_are_those_of_the_smoke_values_in_params():
    """The smoke section names the SHA-256 of params/smoke.yaml's values: changing them (or other
    smoke values) leaves the smoke run without stored times instead of with wrong ones."""
    smoke = load_smoke(ROOT / "params" / "smoke.yaml")
    times = read_yaml(ROOT / "params" / "suite.times.yaml").data
    assert times["smoke"]["smoke_sha256"] == smoke_fingerprint(smoke), (
        "params/smoke.yaml changed: measure the smoke suite again and update the smoke section of "
        "params/suite.times.yaml (docs/notebooks.md, 'The notebook suite's estimate')"
    )
    expected = expected_durations(Path("/nonexistent-reports"), SUITE, smoke)
    assert expected.run == {k: float(v) for k, v in times["smoke"]["run_s"].items()}
    assert set(expected.finish) == set(expected.run)
    other = {**smoke, "benchmark.ipynb": {**smoke["benchmark.ipynb"], "limit": 99}}
    assert expected_durations(Path("/nonexistent-reports"), SUITE, other).run == {}
