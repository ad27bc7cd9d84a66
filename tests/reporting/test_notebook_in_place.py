"""A notebook run in place (issue 39): nothing is written into notebooks/; its records and figures
go to reports/interactive/<notebook-stem>/, and the notebook says where."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from evalcore.reporting import _record

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[2]
BODY = (
    "import evalcore\nimport evalcore.reporting\nimport matplotlib.pyplot as plt\n"
    "from evalcore.reporting import save_figure\n"
    "evalcore.reporting.notebook_outputs('study')\n"
    "evalcore.record('dataset', dataset)\nfig, ax = plt.subplots()\nax.plot([0, 1])\nsave_figure(fig, 'line')"
)


def _tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in sorted(folder.rglob("*"))}


def _execute(notebook: Path, output: Path, cwd: Path, **parameters: object) -> nbformat.NotebookNode:
    import papermill as pm

    env = {k: os.environ.pop(k) for k in (_record.RECORD_DIR_ENV, _record.SUITE_DIR_ENV) if k in os.environ}
    try:
        pm.execute_notebook(str(notebook), str(output), parameters=parameters, cwd=str(cwd), progress_bar=False)
    finally:
        os.environ.update(env)
    return nbformat.read(output, 4)


def _stdout(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")


def test_papermill_from_notebooks_leaves_it_unchanged(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    nb = nb_factory(tmp_path / "notebooks" / "study.ipynb", "dataset: str = 'gsm8k'", BODY)
    before = _tree(tmp_path / "notebooks")
    (tmp_path / "out").mkdir()
    done = _execute(nb, tmp_path / "out" / "study.ipynb", tmp_path / "notebooks", dataset="mmlu")
    assert _tree(tmp_path / "notebooks") == before
    here = tmp_path / "reports" / "interactive" / "study"
    assert json.loads((here / "records.json").read_text()) == {"dataset": "mmlu"}
    assert (here / "figures" / "line.png").read_bytes()[:4] == b"\x89PNG"
    assert "Records and figures of this notebook go to reports/interactive/study/" in _stdout(done)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "pyproject.toml", "reports"]


def test_two_notebooks_in_place_do_not_share_a_folder(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "out").mkdir()
    for stem in ("one", "two"):
        body = BODY.replace("'study'", repr(stem))
        nb = nb_factory(tmp_path / "notebooks" / f"{stem}.ipynb", "dataset: str = 'gsm8k'", body)
        _execute(nb, tmp_path / "out" / f"{stem}.ipynb", tmp_path / "notebooks", dataset=stem)
    for stem in ("one", "two"):
        records = tmp_path / "reports" / "interactive" / stem / "records.json"
        assert json.loads(records.read_text()) == {"dataset": stem}


def test_every_committed_notebook_names_its_outputs():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        source = "\n".join(c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code")
        assert f"notebook_outputs({path.stem!r})" in source, path.name


def test_real_notebook_in_place_writes_nothing_into_notebooks(tmp_path):
    """The committed threshold sweep (smoke values) run with cwd=notebooks/ of a repository copy."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "threshold_sweep.ipynb", tmp_path / "notebooks")
    before = _tree(tmp_path / "notebooks")
    (tmp_path / "out").mkdir()
    smoke = {"model": "none", "thresholds": "0.4,0.6", "n_simple": 2, "n_medium": 1, "n_unrelated": 2}
    done = _execute(
        tmp_path / "notebooks" / "threshold_sweep.ipynb",
        tmp_path / "out" / "threshold_sweep.ipynb",
        tmp_path / "notebooks",
        **smoke,
        n_resamples=200,
        seed=3,
    )
    assert _tree(tmp_path / "notebooks") == before
    here = tmp_path / "reports" / "interactive" / "threshold_sweep"
    assert "sweep_best_threshold" in json.loads((here / "records.json").read_text())
    assert (here / "figures" / "threshold_sweep.png").is_file()
    assert "go to reports/interactive/threshold_sweep/" in _stdout(done)
    errors = [o for c in done.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors and "%|" not in _stderr(done)


def _stderr(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr")


def test_routing_notebook_in_place_no_stderr_and_nothing_in_notebooks(tmp_path):
    """The routing notebook on a file of outcomes with the MiniLM embedder, run from notebooks/:
    its tables go under the root (not notebooks/reports/), and no stderr text (the "Loading
    weights" bar of transformers) reaches the notebook, so none reaches its report."""
    pytest.importorskip("sentence_transformers")
    from evalcore.models._embeddings import minilm_path

    if minilm_path() is None:
        pytest.skip("the packaged MiniLM model is not installed")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "routing.ipynb", tmp_path / "notebooks")
    shutil.copy(ROOT / "tests" / "routing" / "fixtures" / "demo_outcomes.csv", tmp_path / "outcomes.csv")
    before = _tree(tmp_path / "notebooks")
    (tmp_path / "out").mkdir()
    small = {"orderings": 10, "sweep_orderings": 2, "lambdas": "0,1", "n_boot": 3, "boot_orderings": 2}
    done = _execute(
        tmp_path / "notebooks" / "routing.ipynb",
        tmp_path / "out" / "routing.ipynb",
        tmp_path / "notebooks",
        source="file",
        outcomes=str(tmp_path / "outcomes.csv"),
        embedder="minilm",
        sweep_boot=3,
        **small,
    )
    assert _tree(tmp_path / "notebooks") == before
    assert (tmp_path / "reports" / "routing" / "summary.csv").is_file()  # output_dir from the root
    assert (tmp_path / "reports" / "interactive" / "routing" / "records.json").is_file()
    # only evalcore's own progress lines (the notebook suite moves them to stderr.log): no bar
    err = _stderr(done)
    assert "Loading weights" not in err and "%|" not in err
    progress = re.compile(r"^.+: \d+/\d+ .+, \d+ s elapsed, (?:about \d+ s left|done)$")
    assert all(progress.match(line) for line in err.splitlines() if line.strip()), err
