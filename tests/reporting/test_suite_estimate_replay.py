"""The notebook suite's estimate of the time left replayed on recorded runs (issue 39: within 30%
of the actual time left at 25%, 50% and 75% of the run).

``data/suite_timelines_smoke.json`` holds three real runs of ``params/suite.yaml`` with
``params/smoke.yaml`` on the project's busy 2-core machine (load average 15-30, other engineers'
tests beside them; see the file's ``recorded``): for every notebook its start (seconds from the
command's start), its execution (``duration_s`` of ``suite.json``) and its finishing (stderr moved
out, HTML, PDF: up to the notebook's "ok in" line), and the command's end. Each run is replayed
through the estimator the runner uses (:class:`SuiteEstimate`, the same calls as
``run_notebooks``), with the expected times the runner would have:

- the other two runs as this machine's history (their ``suite.json`` in a report folder, read by
  ``expected_durations``: each notebook's median);
- for run C, recorded after the stored times were: ``params/suite.times.yaml``'s smoke section
  (the mean of runs A and B), as a first run of these smoke values here has them; and the same
  times scaled to 0.4 (times measured on a machine 2.5 times faster): the pace learned from the
  first notebooks carries the estimate.

No clock is read: the test asserts values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalcore._io import to_json_native
from evalcore.reporting._notebook_progress import SuiteEstimate, suite_left_s
from evalcore.reporting._notebook_suite import load_smoke
from evalcore.reporting._suite_times import Expected, expected_durations

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "params" / "suite.yaml"
SMOKE = load_smoke(ROOT / "params" / "smoke.yaml")
DATA = json.loads((Path(__file__).with_name("data") / "suite_timelines_smoke.json").read_text(encoding="utf-8"))
RUNS: dict[str, Any] = DATA["runs"]


def replay(run: dict[str, Any], expected: Expected, t: float) -> float | None:
    """The suite's estimate of the time left at ``t`` seconds into the recorded ``run``."""
    notebooks = run["notebooks"]
    estimate = SuiteEstimate(expected, [nb["name"] for nb in notebooks])
    for position, nb in enumerate(notebooks):
        progress = estimate.progress(position, position + 1, len(notebooks), nb["start"])
        run_end = nb["start"] + nb["run_s"]
        finish_end = run_end + nb["finish_s"]
        later = position + 1 < len(notebooks) and t >= notebooks[position + 1]["start"]
        if t >= run_end or later:
            estimate.ran(progress, nb["run_s"], run_end)
        if t >= finish_end or later:
            estimate.finished(progress, finish_end)
        if not later:
            return suite_left_s(progress, now=t)
    raise AssertionError("unreachable: the last notebook returns")


def _errors(run: dict[str, Any], expected: Expected) -> list[float]:
    """The estimate's error (estimate - truth) / truth at 25%, 50% and 75% of the run."""
    out = []
    for quarter in (0.25, 0.5, 0.75):
        t = quarter * run["end"]
        estimate = replay(run, expected, t)
        assert estimate is not None
        out.append((estimate - (run["end"] - t)) / (run["end"] - t))
    return out


def _history(folder: Path, names: list[str]) -> Path:
    """A report folder holding the ``suite.json`` of the recorded runs ``names``."""
    for name in names:
        run = RUNS[name]
        manifest = {
            "meta": {"suite": str(SUITE.resolve()), "id": run["id"], "smoke": to_json_native(SMOKE, strict=True)},
            "runs": [
                {"name": nb["name"], "status": "ok", "duration_s": nb["run_s"], "finish_s": nb["finish_s"]}
                for nb in run["notebooks"]
            ],
        }
        (folder / run["id"]).mkdir(parents=True)
        (folder / run["id"] / "suite.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_the_recorded_runs_are_whole() -> None:
    names = [nb["name"] for nb in RUNS["A"]["notebooks"]]
    assert sorted(RUNS) == ["A", "B", "C"] and len(names) == 17
    for run in RUNS.values():
        assert [nb["name"] for nb in run["notebooks"]] == names
        ends = [nb["start"] + nb["run_s"] + nb["finish_s"] for nb in run["notebooks"]]
        assert all(a <= b + 0.5 for a, b in zip(ends, [nb["start"] for nb in run["notebooks"][1:]]))
        assert ends[-1] <= run["end"]
        assert all(nb["finish_s"] >= 0 and nb["run_s"] > 0 for nb in run["notebooks"])


@pytest.mark.parametrize("actual", ["A", "B", "C"])
def test_within_30_percent_with_this_machines_other_runs_as_history(tmp_path: Path, actual: str) -> None:
    others = [name for name in sorted(RUNS) if name != actual]
    expected = expected_durations(_history(tmp_path, others), SUITE, SMOKE)
    assert expected.source == "2 earlier runs here" and len(expected.run) == 17
    errors = _errors(RUNS[actual], expected)
    assert all(abs(e) <= 0.30 for e in errors), [f"{e:+.0%}" for e in errors]


@pytest.mark.parametrize("scale", [1.0, 0.4])
def test_within_30_percent_on_a_first_run_with_the_stored_times(tmp_path: Path, scale: float) -> None:
    stored = expected_durations(tmp_path / "no-reports", SUITE, SMOKE)
    assert stored.source == "times measured on 2 cores, busy (suite.times.yaml)" and len(stored.run) == 17
    expected = Expected(
        {k: v * scale for k, v in stored.run.items()}, {k: v * scale for k, v in stored.finish.items()}, stored.source
    )
    errors = _errors(RUNS["C"], expected)
    assert all(abs(e) <= 0.30 for e in errors), [f"{e:+.0%}" for e in errors]


def test_with_its_own_times_the_estimate_is_the_truth_only_with_the_finishing() -> None:
    """The finishing is a tenth of a busy run (HTML, PDF: 4-18 s a notebook against about 1 s
    quiet). Replayed with its own times as the expected ones, a run's estimate is the truth (but
    for the few tenths of a second between notebooks); left out, as before issue 39, the estimate
    falls short by the finishing still to come."""
    for run in RUNS.values():
        share = sum(nb["finish_s"] for nb in run["notebooks"]) / run["end"]
        assert 0.07 <= share <= 0.15, share
        own = Expected(
            {nb["name"]: nb["run_s"] for nb in run["notebooks"]},
            {nb["name"]: nb["finish_s"] for nb in run["notebooks"]},
            "its own times",
        )
        bare = Expected(dict(own.run), {name: 0.0 for name in own.run}, own.source)
        with_finish, without = _errors(run, own), _errors(run, bare)
        assert all(abs(e) <= 0.01 for e in with_finish), with_finish
        # short at every quarter; at 25% of the run by 8-11% (at 75% only routing's export is left)
        assert all(b < a - 0.001 for a, b in zip(with_finish, without)) and without[0] <= -0.05, without
