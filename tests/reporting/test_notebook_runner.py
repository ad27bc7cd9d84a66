"""The papermill suite runner and the CLI, on small notebooks built here."""

from __future__ import annotations

import argparse
import json
import shutil

import nbformat
import pytest

from evalcore.errors import EvalcoreError
from evalcore.reporting import RECORD_MIMETYPE, _cli, collect, run_notebooks

pytestmark = pytest.mark.notebooks

PARAMS = "x: int = 2  # the number to square\nlabel: str = 'none'  # a label"
BODY = (
    "import evalcore\nimport matplotlib.pyplot as plt\n"
    "from evalcore.reporting import save_figure\n"
    "evalcore.record('square', x * x)\nevalcore.record('label', label)\nprint(f'{x} squared is {x * x}')\n"
    "fig, ax = plt.subplots()\nax.plot([0, 1, 2], [0, x, x * x])\nsave_figure(fig, 'curve')\nplt.show()"
)


def cli(argv):
    """``evalcore`` restricted to this area's commands, with main's error handling."""
    parser = argparse.ArgumentParser(prog="evalcore")
    sub = parser.add_subparsers(dest="command", required=True)
    _cli.register(sub, {})
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except EvalcoreError:
        return 2


@pytest.fixture
def repo(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(tmp_path / "nbs" / "square.ipynb", PARAMS, BODY)
    nb_factory(
        tmp_path / "nbs" / "boom.ipynb",
        "n: int = 1  # how loud",
        "import evalcore\nevalcore.record('before', n)",
        "raise ValueError('kaboom ' + str(n))",
        "evalcore.record('after', 1)",
    )
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "sq.yaml").write_text("x: 3\nlabel: '{suite_dir}'\n")
    (tmp_path / "params" / "suite.yaml").write_text(
        "runs:\n"
        "  - {name: sq, notebook: nbs/square.ipynb, params: params/sq.yaml}\n"
        "  - {name: boom, notebook: nbs/boom.ipynb, overrides: {n: 7}}\n"
        "  - {name: sq4, notebook: nbs/square.ipynb, overrides: {x: 4}}\n"
    )
    return tmp_path


def test_suite_runs_everything_and_marks_the_failure(repo, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # must not reach the kernel: figures would vanish
    monkeypatch.chdir(repo)
    status = cli(["notebooks", "run", "--suite", "params/suite.yaml", "--output", "out"])
    assert status == 1  # one notebook failed, the others still ran
    latest = repo / "out" / "latest"
    assert latest.is_symlink()
    suite_dir = latest.resolve()
    manifest = json.loads((suite_dir / "suite.json").read_text())
    runs = {r["name"]: r for r in manifest["runs"]}
    assert [r["status"] for r in manifest["runs"]] == ["ok", "failed", "ok"]

    sq = runs["sq"]
    assert sq["records"] == {"square": 9, "label": str(suite_dir)}  # {suite_dir} substituted
    assert sq["params"] == {"x": 3, "label": str(suite_dir)}
    assert json.loads((suite_dir / "sq" / "records.json").read_text()) == sq["records"]
    executed = nbformat.read(suite_dir / "sq" / "sq.ipynb", as_version=4)
    assert executed.metadata.papermill.parameters == {"x": 3, "label": str(suite_dir)}
    mimes = [set(o.get("data", {})) for c in executed.cells for o in c.get("outputs", [])]
    assert any(RECORD_MIMETYPE in m for m in mimes)
    assert any("image/png" in m for m in mimes), "inline figure missing: MPLBACKEND leaked into the kernel"
    assert {"sq/figures/curve.png"} <= set(sq["figures"])
    html = (suite_dir / "sq" / "sq.html").read_text()
    assert "save_figure(fig" not in html  # inputs hidden
    if shutil.which("chromium"):
        assert (suite_dir / "sq" / "sq.pdf").read_bytes()[:5] == b"%PDF-"

    boom = runs["boom"]
    assert boom["error"].startswith("ValueError: kaboom 7")
    assert boom["records"] == {"before": 7}  # recorded before the failure, nothing after
    assert (suite_dir / boom["executed"]).exists()
    index = (suite_dir / "index.html").read_text()
    assert 'class="failed">failed' in index and "kaboom 7" in index
    assert 'href="boom/boom.ipynb"' in index
    assert 'href="sq/sq.html"' in index
    assert runs["sq4"]["records"]["square"] == 16

    summary = collect(suite_dir)
    by_square = dict(zip(summary["params.x"].fillna(0), summary["square"]))
    assert by_square[3] == 9 and by_square[4] == 16


def test_only_and_unknown_names(repo):
    result = run_notebooks(repo / "params" / "suite.yaml", only=["sq4"], output=repo / "out", echo=None)
    assert result.ok and [r.name for r in result.results] == ["sq4"]
    assert result.results[0].records["square"] == 16
    assert not (repo / "out" / "latest").exists()  # a partial run is not the latest report
    assert (repo / "out" / "latest-partial").resolve() == result.suite_dir
    # a real folder named latest-partial is left alone, and the run says so
    (repo / "out2" / "latest-partial").mkdir(parents=True)
    said = []
    second = run_notebooks(
        repo / "params" / "suite.yaml", only=["sq4"], output=repo / "out2", echo=said.append, pdf=False
    )
    assert second.ok and (repo / "out2" / "latest-partial").is_dir()
    assert not (repo / "out2" / "latest-partial").is_symlink()
    assert any("not a symbolic link" in line for line in said)
    with pytest.raises(EvalcoreError, match="no run named 'nope'"):
        run_notebooks(repo / "params" / "suite.yaml", only=["nope"], output=repo / "out", echo=None)


def test_latest_is_the_last_complete_full_run_and_partial_runs_have_their_own(repo):
    """Issue 31 item 7: `--only` (and any run that does not finish every notebook) must not
    repoint ``latest``; it gets ``latest-partial``."""
    out = repo / "out"
    full = run_notebooks(repo / "params" / "suite.yaml", output=out, echo=None, pdf=False)
    assert [r.status for r in full.results] == ["ok", "failed", "ok"]  # a failure still completes it
    assert (out / "latest").resolve() == full.suite_dir
    assert not (out / "latest-partial").exists()  # the run in progress was partial; no longer
    said: list[str] = []
    partial = run_notebooks(repo / "params" / "suite.yaml", only=["sq"], output=out, echo=said.append, pdf=False)
    assert (out / "latest").resolve() == full.suite_dir  # still the full report
    assert (out / "latest-partial").resolve() == partial.suite_dir
    assert said[-1] == str(out / "latest-partial" / "index.html")
    assert any("a partial run (--only sq)" in line for line in said)
    # a later full run moves latest and leaves the partial pointer where it was
    again = run_notebooks(repo / "params" / "suite.yaml", output=out, echo=None, pdf=False)
    assert (out / "latest").resolve() == again.suite_dir
    assert (out / "latest-partial").resolve() == partial.suite_dir


def test_unknown_parameter_exits_2_before_running(repo, monkeypatch):
    (repo / "params" / "sq.yaml").write_text("x: 3\nlabl: a\n")
    monkeypatch.chdir(repo)
    assert cli(["notebooks", "run", "--output", "out"]) == 2
    assert not (repo / "out").exists() or not any((repo / "out").iterdir())


def test_missing_notebook_and_bad_suite_exit_2(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "params" / "suite.yaml").write_text("runs:\n  - {name: a, notebook: nbs/gone.ipynb}\n")
    assert cli(["notebooks", "run", "--output", "out"]) == 2
    (repo / "params" / "suite.yaml").write_text("runs: [oops\n")
    assert cli(["notebooks", "run", "--output", "out"]) == 2
    (repo / "params" / "suite.yaml").write_text("runs:\n  - {name: sq, notebook: nbs/square.ipynb}\n")
    (repo / "a_file").write_text("x")
    with pytest.raises(EvalcoreError, match="not a directory"):
        run_notebooks(repo / "params" / "suite.yaml", output=repo / "a_file", echo=None)
    assert (repo / "a_file").read_text() == "x"


def test_report_exports_an_executed_notebook_and_a_suite_dir(repo, monkeypatch):
    result = run_notebooks(repo / "params" / "suite.yaml", only=["sq"], output=repo / "out", echo=None, pdf=False)
    executed = result.suite_dir / "sq" / "sq.ipynb"
    (result.suite_dir / "sq" / "sq.html").unlink()
    assert cli(["report", str(executed), "--output", str(repo / "exp"), "--no-pdf"]) == 0
    exported = (repo / "exp" / "sq.html").read_text()
    assert "3 squared is 9" in exported and "square = 9" not in exported  # records stay in the .ipynb
    assert cli(["report", str(repo / "out" / "latest-partial"), "--no-pdf"]) == 0  # an --only run is partial
    assert (result.suite_dir / "sq" / "sq.html").exists()
    assert cli(["report", str(repo / "missing.ipynb")]) == 2


def test_cell_timeout_fails_the_notebook_with_a_clear_message(repo):
    (repo / "nbs").mkdir(exist_ok=True)
    from tests.reporting.conftest import make_notebook

    make_notebook(repo / "nbs" / "slow.ipynb", "wait: float = 600  # seconds", "import time\ntime.sleep(wait)")
    make_notebook(repo / "nbs" / "quick.ipynb", "x: int = 1  # a number", "y = x + 1")
    (repo / "params" / "slow.yaml").write_text(
        "runs:\n  - {name: slow, notebook: nbs/slow.ipynb}\n  - {name: quick, notebook: nbs/quick.ipynb}\n"
    )
    result = run_notebooks(repo / "params" / "slow.yaml", output=repo / "out", echo=None, pdf=False, cell_timeout=20)
    slow, quick = result.results
    assert slow.status == "failed", slow.error
    assert slow.error.startswith("a cell ran longer than 20 s (cell timeout): CellTimeoutError"), slow.error
    assert "\n" not in slow.error
    assert quick.status == "ok", quick.error  # the suite went on

    said: list[str] = []
    result = run_notebooks(
        repo / "params" / "slow.yaml",
        output=repo / "out",
        echo=said.append,
        pdf=False,
        notebook_timeout=15,
        progress_every=0,
    )
    slow, quick = result.results
    assert slow.status == "failed", slow.error
    assert slow.error.startswith("ran longer than 15 s (notebook timeout); stopped"), slow.error
    assert "[1/2] slow: over its 15 s limit, stopping it" in "\n".join(said)
    assert slow.duration_s < 300  # stopped, not the 600 s the cell sleeps
    assert quick.status == "ok", quick.error


def test_agent_notebooks_of_one_suite_run_share_one_secret_seed(tmp_path, nb_factory):
    """Issue 31 item 10: every agent notebook drew its own seed, so the category pages and the
    overview ran different cases. The runner now passes one seed per suite run through the
    environment (never a command line); reading it removes it, so an agent cannot inherit it."""
    import os
    import stat

    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(
        tmp_path / "nbs" / "seed.ipynb",
        "seed: 'Optional[int]' = None  # case seed",
        "import os, evalcore\nfrom evalcore.reporting import shared_agent_seed\n"
        "shared = shared_agent_seed()\nif seed is None:\n    seed = shared\n"
        "evalcore.record('seed', str(seed))\n"
        "evalcore.record('left_in_env', 'EVALCORE_AGENT_SEED' in os.environ)\n"
        "evalcore.record('again', shared_agent_seed())",
    )
    (tmp_path / "suite.yaml").write_text(
        "runs:\n  - {name: a, notebook: nbs/seed.ipynb}\n  - {name: b, notebook: nbs/seed.ipynb}\n"
        "  - {name: c, notebook: nbs/seed.ipynb, overrides: {seed: 5}}\n"
    )
    first = run_notebooks(tmp_path / "suite.yaml", output=tmp_path / "out", echo=None, pdf=False)
    assert first.ok, [r.error for r in first.results]
    a, b, c = (r.records for r in first.results)
    assert a["seed"] == b["seed"] and int(a["seed"]) > 0  # one seed for the suite run
    assert c["seed"] == "5"  # a given seed wins
    assert a["left_in_env"] is False and a["again"] is None  # read once, then gone
    seed_file = first.suite_dir / ".agent_seed"
    assert seed_file.read_text().strip() == a["seed"]
    assert stat.S_IMODE(seed_file.stat().st_mode) == 0o600
    assert "EVALCORE_AGENT_SEED" not in os.environ  # the runner's own environment is restored
    second = run_notebooks(tmp_path / "suite.yaml", output=tmp_path / "out", echo=None, pdf=False, only=["a"])
    assert second.results[0].records["seed"] != a["seed"]  # a new suite run: a new secret seed


def test_agent_seed_note_says_why_counts_differ():
    from evalcore.reporting import agent_seed_note

    shared = agent_seed_note(77, "given", 77, 2)
    assert "seed 77" in shared and "shared by every agent notebook" in shared and "at most 2 per category" in shared
    assert "their tests and counts agree" in agent_seed_note(77, "given", 77, combined=True)
    assert agent_seed_note(5, "drawn", None) == "Cases from seed 5 (drawn for this run)."
    assert agent_seed_note(5, "given", 77) == "Cases from seed 5."


def test_suite_lines_estimate_the_time_left_from_the_last_run(repo):
    """Issue 31 item 4: every progress line has a total and an estimate of the time left; the
    estimate comes from this machine's earlier runs (else from durations stored beside the
    suite), and counts each notebook's export after it (issue 39)."""
    from evalcore.reporting._notebooks import expected_durations
    from evalcore.reporting._suite_times import Expected

    out = repo / "out"
    suite = repo / "params" / "suite.yaml"
    assert expected_durations(out, suite, None) == Expected()
    (repo / "params" / "suite.times.yaml").write_text(
        "full:\n  measured: on 2 cores\n  finish_s: 5\n  run_s: {sq: 30, boom: 10, sq4: 20}\n"
    )
    assert expected_durations(out, suite, None) == Expected(
        {"sq": 30.0, "boom": 10.0, "sq4": 20.0},
        {"sq": 5.0, "boom": 5.0, "sq4": 5.0},
        "times measured on 2 cores (suite.times.yaml)",
    )
    assert expected_durations(out, suite, {"sq": {"x": 1}}) == Expected()  # smoke runs: other sizes
    said: list[str] = []
    first = run_notebooks(suite, output=out, echo=said.append, pdf=False)
    # 30 s and its export, then 10 + 20 s and theirs
    assert "[1/3] sq: nbs/square.ipynb ... (about 35 s; suite: about 1 min 15 s left)" in said
    # the third notebook's start line: at this run's paces (issue 39), learned from the measured
    # durations of the first two and their exports
    from evalcore.reporting._notebook_progress import Pace, start_eta

    pace, finish_pace = Pace(), Pace()
    for r, expected_s in zip(first.results[:2], (30.0, 10.0)):
        pace.add(expected_s, r.duration_s)
        finish_pace.add(5.0, r.finish_s)
    assert f"[3/3] sq4: nbs/square.ipynb ...{start_eta(20.0, 0.0, pace, 5.0, 0.0, finish_pace)}" in said
    assert all(r.finish_s is not None and r.finish_s >= 0 for r in first.results)
    assert any(line.startswith("  ok in ") and "(exported in " in line for line in said)
    expected = expected_durations(out, suite, None)
    assert expected.source == f"the run of {first.suite_dir.name}"
    assert expected.run == {r.name: r.duration_s for r in first.results}  # boom failed: its time still counts
    assert expected.finish == {r.name: r.finish_s for r in first.results}
    durations = expected.run
    said.clear()
    run_notebooks(suite, output=out, echo=said.append, pdf=False)
    total = sum(durations.values()) + sum(expected.finish.values())
    from evalcore.reporting._notebooks import _duration

    assert (
        f"[1/3] sq: nbs/square.ipynb ... (about {_duration(durations['sq'] + expected.finish['sq'])}; "
        f"suite: about {_duration(total)} left)" in said
    )
