"""Every committed notebook is clean (no outputs) and documents its parameters; every suite
entry names an existing notebook and only parameters that notebook declares."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from evalcore.reporting._notebook_suite import check_parameters, load_smoke, load_notebook_suite

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"benchmark.ipynb", "compare.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: cell {index} has outputs; clear them before committing"
            assert cell.execution_count is None, f"{path.name}: cell {index} has an execution count"
    assert "papermill" not in nb.metadata, f"{path.name} is an executed copy (papermill metadata)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_cell_is_annotated_with_help(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    tree = ast.parse(tagged[0].source)
    assigned = []
    for node in tree.body:
        assert isinstance(node, ast.AnnAssign) and node.value is not None, (
            f"{path.name}, parameters line {node.lineno}: write `name: type = default  # help`"
        )
        assigned.append(node.target.id)
    declared = pm.inspect_notebook(str(path))
    missing = [name for name in assigned if name not in declared]
    assert not missing, (
        f"{path.name}: papermill cannot parse the parameter line(s) of {missing} (keep each on one line "
        "as `name: type = default  # help`; papermill fails on '=' inside the help comment)"
    )
    assert list(declared) == assigned
    for name, info in declared.items():
        assert info["help"].strip(), f"{path.name}: parameter {name!r} has no `# help` comment"
        assert info["inferred_type_name"] != "None", f"{path.name}: parameter {name!r} has no type annotation"


def test_suite_entries_are_valid_with_and_without_smoke_values():
    suite = ROOT / "params" / "suite.yaml"
    smoke = load_smoke(ROOT / "params" / "smoke.yaml")
    plain = load_notebook_suite(suite)
    assert len({e.name for e in plain}) == len(plain)
    for entry in plain + load_notebook_suite(suite, smoke=smoke):
        check_parameters(entry)
        assert entry.notebook.parent == ROOT / "notebooks"
