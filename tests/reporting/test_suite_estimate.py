"""The notebook suite's estimate of the time left (issue 39): learned from the durations measured
as notebooks finish, within 30% of the actual time left at every quarter of the run, and never a
bare "finishing" while a notebook runs past its expected time.

The run is simulated on the real estimator (``suite_left_s``, ``time_left``, ``Pace``) with the
suite's own expected durations (``params/suite.times.yaml``, execution only: the finishing of
each notebook is replayed from recorded runs in test_suite_estimate_replay.py): no clock is read, so the test
asserts values, not timings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.reporting._notebook_progress import Pace, _Progress, start_eta, suite_left_s, time_left
from evalcore.reporting._suite_times import stored_times

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = stored_times(ROOT / "params" / "suite.yaml", None).run
NAMES = list(EXPECTED)
# per-notebook deviations from the run's pace (a notebook 25% faster or slower than the others)
JITTER = [1.0, 1.2, 0.8, 1.1, 0.9, 1.25, 0.75, 1.0, 1.15, 0.85, 1.0, 1.2, 0.8, 1.1, 0.9, 1.0, 1.0]


def _at(actual: list[float], t: float) -> tuple[_Progress, float]:
    """The running notebook's progress at time ``t`` of a simulated run, and its elapsed time."""
    i, done = 0, 0.0
    while i < len(actual) - 1 and done + actual[i] <= t:
        done += actual[i]
        i += 1
    pace = Pace()
    for j in range(i):
        pace.add(EXPECTED[NAMES[j]], actual[j])
    progress = _Progress(
        NAMES[i],
        i + 1,
        len(NAMES),
        0.0,
        expected_s=EXPECTED[NAMES[i]],
        after_s=sum(EXPECTED[n] for n in NAMES[i + 1 :]),
        estimate_from="times measured on 2 cores (suite.times.yaml)",
        pace=pace,
    )
    return progress, t - done


@pytest.mark.parametrize("load", [1.0, 2.4, 3.2])
@pytest.mark.parametrize("jitter", [False, True])
def test_estimate_within_30_percent_at_every_quarter(load: float, jitter: bool) -> None:
    assert len(NAMES) == len(JITTER)
    actual = [EXPECTED[n] * load * (JITTER[i] if jitter else 1.0) for i, n in enumerate(NAMES)]
    total = sum(actual)
    for quarter in (0.25, 0.5, 0.75):
        t = quarter * total
        progress, elapsed = _at(actual, t)
        estimate = suite_left_s(progress, now=elapsed)
        assert estimate is not None
        truth = total - t
        assert abs(estimate - truth) <= 0.30 * truth, (quarter, progress.name, estimate, truth)


def test_the_first_notebook_uses_the_expected_times_and_later_ones_the_runs_pace() -> None:
    actual = [EXPECTED[n] * 3.0 for n in NAMES]
    first, _ = _at(actual, 1.0)
    assert suite_left_s(first, now=1.0) == pytest.approx(sum(EXPECTED.values()) - 1.0)
    later, elapsed = _at(actual, actual[0] + actual[1] + 3.0)
    assert later.pace is not None and later.pace.factor() == pytest.approx(3.0)
    assert suite_left_s(later, now=elapsed) == pytest.approx(sum(actual) - (actual[0] + actual[1] + 3.0))
    assert "at this run's pace, 3.0x" in time_left(later, now=elapsed)
    # the start line of a notebook says the same
    assert start_eta(10.0, 50.0, later.pace) == " (about 30 s; suite: about 3 min 00 s left at this run's pace, 3.0x)"
    assert start_eta(10.0, 50.0, Pace()) == " (about 10 s; suite: about 1 min 00 s left)"
    assert start_eta(None, 50.0, Pace()) == ""


def test_a_notebook_past_its_expected_time_says_so_and_moves_the_estimate() -> None:
    pace = Pace()
    pace.add(100.0, 100.0)
    progress = _Progress("routing", 16, 17, 0.0, expected_s=84.0, after_s=28.0, estimate_from="the run of X", pace=pace)
    lines = [time_left(progress, now=s) for s in (60.0, 90.0, 150.0, 180.0)]
    assert lines[0] == "about 24 s left (suite: about 52 s, from the run of X)"
    assert all("finishing" not in line for line in lines)
    # past the expected 84 s: how far past, and the rest of the suite at the pace that includes the overrun
    assert lines[1].startswith("running ") and "past its expected" in lines[1]
    assert "time left in it unknown (then the rest of the suite: about" in lines[1]
    assert lines[2] != lines[3]  # it keeps moving, never stuck
    left_150, left_180 = suite_left_s(progress, now=150.0), suite_left_s(progress, now=180.0)
    assert left_150 is not None and left_180 is not None and left_180 > left_150 > 28.0
    # (100 + 180) / (100 + 84) measured over expected, times the 28 s of the last notebook
    assert left_180 == pytest.approx(28.0 * 280.0 / 184.0)


def test_pace_is_clamped_and_ignores_notebooks_without_an_expected_time() -> None:
    pace = Pace()
    assert pace.factor() == 1.0
    pace.add(None, 500.0)
    pace.add(0.0, 500.0)
    assert pace.factor() == 1.0
    pace.add(10.0, 0.01)
    assert pace.factor() == 0.1
    pace = Pace()
    pace.add(1.0, 1000.0)
    assert pace.factor() == 10.0


def test_samples_add_up_over_all_of_a_notebooks_runs(tmp_path: Path) -> None:
    """The routing notebook writes one run per dataset x strategy: its progress counts them all
    (a count of the newest run alone, read against the whole notebook's time, made the estimate
    jump to "8 min left")."""
    runs = tmp_path / "runs"
    expected = {"gsm8k-direct": 4, "gsm8k-cot": 4, "mmlu-direct": 4}
    for run_id, lines in (("gsm8k-direct", 4), ("gsm8k-cot", 2)):
        (runs / run_id).mkdir(parents=True)
        (runs / run_id / "samples.jsonl").write_text("{}\n" * lines)
    start = 0.0  # perf_counter's origin: every samples file was written after it
    progress = _Progress("routing", 17, 17, start, watch=runs, expected=expected, expected_s=84.0)
    line = time_left(progress, now=start + 60)
    from evalcore.reporting._notebook_progress import _sample_counts

    assert _sample_counts(progress) == ("6/12 samples (2 of 3 runs)", 6, 12)
    # half the samples in 60 s: 60 s more by their rate, longer than the expected 24 s left
    assert line == "about 1 min 00 s left"
    # below a quarter of the samples their rate is not used (the start is model loading)
    (runs / "gsm8k-cot" / "samples.jsonl").write_text("")
    (runs / "gsm8k-direct" / "samples.jsonl").write_text("{}\n" * 2)
    assert _sample_counts(progress)[1:] == (2, 12)
    assert time_left(progress, now=start + 60) == "about 24 s left"


def test_a_notebook_exporting_says_so_and_its_export_counts() -> None:
    """Issue 39: after its last cell a notebook is exported (stderr moved out, HTML, PDF), 5-15 s
    on a busy machine; the estimate counts it, at a pace learned from the exports before, and a
    progress line says the notebook is exporting, never a bare "0 s left"."""
    from evalcore.reporting._notebook_progress import SuiteEstimate, progress_line
    from evalcore.reporting._suite_times import Expected

    expected = Expected({"a": 40.0, "b": 20.0, "c": 30.0}, {"a": 4.0, "b": 4.0, "c": 2.0}, "the run of X")
    estimate = SuiteEstimate(expected, ["a", "b", "c"])
    assert estimate.start_eta(0) == " (about 44 s; suite: about 1 min 40 s left)"
    first = estimate.progress(0, 1, 3, 0.0)
    assert suite_left_s(first, now=10.0) == pytest.approx(30.0 + 4.0 + 26.0 + 30.0)
    estimate.ran(first, 40.0, 40.0)  # as measured; its export begins
    assert first.phase == "finishing" and first.timeout is None
    assert suite_left_s(first, now=41.0) == pytest.approx(3.0 + 56.0)
    assert progress_line(first, now=41.0) == (
        "[1/3] a: exporting (stderr moved out, HTML, PDF) for 1 s, 41 s elapsed, about 3 s left "
        "(suite: about 59 s, from the run of X)"
    )
    past = time_left(first, now=52.0)  # 12 s of export against 4 expected: its overrun counts in the pace
    assert past.startswith("past its expected ")
    assert "time left in it unknown (then the rest of the suite: about" in past
    assert "0 s left" not in past
    # an export expected to take under a second, seen a moment after it began: neither "0 s left"
    # nor "past its expected 0 s of export" (make demo printed the latter on 2026-12-07)
    first.finish_s = 0.4
    soon, late = time_left(first, now=40.2), time_left(first, now=45.0)
    assert soon.startswith("about 1 s left"), soon
    assert late.startswith("past its expected 1 s of export, time left in it unknown"), late
    first.finish_s = 4.0
    assert estimate.finished(first, 52.0) == pytest.approx(12.0)
    second = estimate.progress(1, 2, 3, 52.0)  # the exports now take 3 times as long
    assert suite_left_s(second, now=52.0) == pytest.approx(20.0 + 12.0 + 30.0 + 6.0)
    assert estimate.start_eta(1) == " (about 32 s; suite: about 1 min 08 s left)"
