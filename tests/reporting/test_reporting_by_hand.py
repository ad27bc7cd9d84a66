"""Notebooks run by hand with the papermill command line from a repository root: records and
figures land beside the output notebook, and a parameter error's one-line message comes first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.errors import EvalcoreError
from evalcore.reporting import _record

pytestmark = pytest.mark.notebooks

PARAMS = "dataset: str = 'gsm8k'  # gsm8k or mmlu"
BODY = (
    "import evalcore\nimport matplotlib.pyplot as plt\nfrom evalcore.reporting import save_figure\n"
    "if dataset not in ('gsm8k', 'mmlu'):\n"
    "    raise evalcore.EvalcoreError(f'unknown dataset {dataset!r}; choose gsm8k or mmlu', field='dataset')\n"
    "evalcore.record('dataset', dataset)\nfig, ax = plt.subplots()\nax.plot([0, 1])\nsave_figure(fig, 'line')"
)
PAPERMILL = Path(sys.executable).with_name("papermill")


def _papermill(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != _record.RECORD_DIR_ENV}
    try:
        return subprocess.run([str(PAPERMILL), *args], cwd=root, capture_output=True, text=True, env=env, timeout=240)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"papermill did not finish within 240 s: {exc.stdout} {exc.stderr}")


@pytest.fixture
def root(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(tmp_path / "notebooks" / "study.ipynb", PARAMS, BODY)
    (tmp_path / "out").mkdir()  # papermill writes only into an existing folder
    return tmp_path


def test_records_and_figures_go_beside_the_output_notebook(root):
    done = _papermill(root, "notebooks/study.ipynb", "out/study-mmlu.ipynb", "-p", "dataset", "mmlu")
    assert done.returncode == 0, done.stderr
    assert json.loads((root / "out" / "records.json").read_text()) == {"dataset": "mmlu"}
    assert (root / "out" / "figures" / "line.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in root.iterdir()) == ["notebooks", "out", "pyproject.toml"]


def test_parameter_error_prints_its_message_first(root):
    done = _papermill(root, "notebooks/study.ipynb", "out/bad.ipynb", "-p", "dataset", "mmluu")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    message = "evalcore: error: field 'dataset': unknown dataset 'mmluu'; choose gsm8k or mmlu"
    assert message in lines, done.stderr
    assert lines.index(message) < next(i for i, line in enumerate(lines) if line.startswith("Traceback"))
    assert lines.count(message) == 1
    executed = json.loads((root / "out" / "bad.ipynb").read_text())
    (error,) = [o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert len(error["traceback"]) == 2 and "unknown dataset 'mmluu'" in error["traceback"][0]
    assert not (root / "records.json").exists() and not (root / "figures").exists()


def test_render_traceback_is_one_line():
    err = EvalcoreError("bad value", field="dataset")
    assert "EvalcoreError: field 'dataset': bad value" in err._render_traceback_()[0]


def test_record_dir_outside_papermill(tmp_path, monkeypatch):
    monkeypatch.delenv(_record.RECORD_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(_record, "_NOTEBOOK", {})
    assert _record.record_dir() == tmp_path  # a notebook folder (JupyterLab): beside the notebook
    (tmp_path / "pyproject.toml").write_text("")
    # never the repository root: a folder of the notebook's own under reports/interactive/
    assert _record.record_dir() == tmp_path / "reports" / "interactive" / "notebook"
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "notebooks" / "benchmark.ipynb"))
    assert _record.record_dir() == tmp_path / "reports" / "interactive" / "benchmark"
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")  # JupyterLab in the repository: never into notebooks/
    assert _record.record_dir() == tmp_path / "reports" / "interactive" / "benchmark"
    monkeypatch.setenv(_record.RECORD_DIR_ENV, str(tmp_path / "x"))
    assert _record.record_dir() == tmp_path / "x"


def test_reports_root_holds_this_run_and_the_earlier_ones(tmp_path, monkeypatch):
    """What notebooks hide from a hosted agent: the folder of every report, earlier runs included."""
    monkeypatch.delenv(_record.RECORD_DIR_ENV, raising=False)
    monkeypatch.delenv(_record.SUITE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_record, "_NOTEBOOK", {})
    assert _record.reports_root() == tmp_path  # by hand in a notebook folder: its own folder
    (tmp_path / "pyproject.toml").write_text("")
    # by hand at a root: reports/, not reports/interactive/<stem>/
    assert _record.reports_root() == tmp_path / "reports"
    monkeypatch.setenv(_record.RECORD_DIR_ENV, str(tmp_path / "out" / "20261125T000000Z" / "agent_overview"))
    assert _record.reports_root() == tmp_path / "out" / "20261125T000000Z" / "agent_overview"
    monkeypatch.setenv(_record.SUITE_DIR_ENV, str(tmp_path / "out" / "20261125T000000Z"))
    assert _record.reports_root() == tmp_path / "out"  # the suite runner: every run's folder
