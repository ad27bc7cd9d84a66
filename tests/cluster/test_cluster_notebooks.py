"""The notebook suite on a real LocalCluster: each notebook runs on a worker through papermill,
its files come back to the client, the index is built as on one machine, --resume works."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from evalcore.reporting import run_notebooks

pytestmark = [pytest.mark.timeout(600), pytest.mark.notebooks]

PARAMS = "x: int = 2  # the number to square\nlabel: str = 'none'  # a label"
BODY = (
    "import evalcore\nimport matplotlib.pyplot as plt\n"
    "from evalcore.reporting import save_figure\n"
    "evalcore.record('square', x * x)\nevalcore.record('label', label)\nprint(f'{x} squared is {x * x}')\n"
    "fig, ax = plt.subplots()\nax.plot([0, 1, 2], [0, x, x * x])\nsave_figure(fig, 'curve')\nplt.show()"
)


def _notebook(path: Path, parameters: str, *bodies: str) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, *(nbformat.v4.new_code_cell(b) for b in bodies)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def test_suite_on_cluster_brings_files_back_and_resumes(tmp_path: Path, local_client: object) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    _notebook(tmp_path / "nbs" / "square.ipynb", PARAMS, BODY)
    _notebook(tmp_path / "nbs" / "boom.ipynb", "n: int = 1  # how loud", "raise ValueError('kaboom ' + str(n))")
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "suite.yaml").write_text(
        "runs:\n"
        "  - {name: sq, notebook: nbs/square.ipynb, overrides: {x: 3, label: '{suite_dir}'}}\n"
        "  - {name: boom, notebook: nbs/boom.ipynb, overrides: {n: 7}}\n"
        "  - {name: sq4, notebook: nbs/square.ipynb, overrides: {x: 4}}\n"
    )
    said: list[str] = []
    result = run_notebooks(
        tmp_path / "params" / "suite.yaml", output=tmp_path / "out", echo=said.append, pdf=False, cluster=local_client
    )
    suite_dir = result.suite_dir
    runs = {r["name"]: r for r in json.loads((suite_dir / "suite.json").read_text())["runs"]}
    assert [runs[n]["status"] for n in ("sq", "boom", "sq4")] == ["ok", "failed", "ok"]
    assert "kaboom 7" in runs["boom"]["error"]
    # the worker's scratch folder became this suite folder in what came back
    assert runs["sq"]["records"] == {"square": 9, "label": str(suite_dir)}
    assert runs["sq4"]["records"]["square"] == 16
    executed = nbformat.read(suite_dir / "sq" / "sq.ipynb", as_version=4)
    assert executed.metadata.papermill.parameters == {"x": 3, "label": str(suite_dir)}
    assert (suite_dir / "sq" / "figures" / "curve.png").stat().st_size > 0
    assert (suite_dir / "sq" / "sq.html").exists() and runs["sq"]["html"] == "sq/sq.html"
    assert (suite_dir / "index.html").exists()
    assert any("on " in line and "workers" in line for line in said)
    # --resume: the finished ones are kept (not run again), the failed one runs again
    before = (suite_dir / "sq" / "sq.ipynb").stat().st_mtime_ns
    again = run_notebooks(None, output=tmp_path / "out", echo=None, pdf=False, resume=True, cluster=local_client)
    assert again.suite_dir == suite_dir
    assert (suite_dir / "sq" / "sq.ipynb").stat().st_mtime_ns == before
    statuses = {r.name: r.status for r in again.results}
    assert statuses == {"sq": "ok", "boom": "failed", "sq4": "ok"}
