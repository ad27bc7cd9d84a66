"""The benchmark notebook's ``choice_mode`` parameter and its deprecated alias ``mmlu_mode``
(issue 40): a suite entry or parameter file written before the rename (``mmlu_mode:
likelihood``) is still a known parameter, and the notebook runs the mode it names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.notebooks, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("key", ["choice_mode", "mmlu_mode"])
def test_a_suite_entry_may_name_either_parameter(tmp_path, key):
    from evalcore.reporting._notebook_suite import check_parameters, load_notebook_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "runs:\n  - name: lik\n    notebook: notebooks/benchmark.ipynb\n"
        f"    overrides: {{dataset: mmlu, {key}: likelihood}}\n",
        encoding="utf-8",
    )
    (entry,) = load_notebook_suite(suite, root=ROOT)
    declared = check_parameters(entry)
    assert entry.params[key] == "likelihood" and {"choice_mode", "mmlu_mode"} <= set(declared)


def test_the_notebook_runs_the_mode_the_old_parameter_names(tmp_path):
    import papermill as pm

    sys.path.insert(0, str(ROOT / "tests" / "runs"))
    from conftest import CountingModel
    from evalcore.benchmarks import load
    from evalcore.runs import load_run, run_benchmark

    items = load("mmlu", limit=4, seed=0)
    ref = {it.fields["question"]: it.reference for it in items}

    class LetterModel(CountingModel):
        def letter_logprobs(self, messages, letters=("A", "B", "C", "D")):
            right = next(r for q, r in ref.items() if q in messages[-1]["content"])
            return {L: (-0.1 if L == right else -3.0 - i) for i, L in enumerate(letters)}

    recorded = run_benchmark(
        "mmlu",
        LetterModel(lambda q: "no letter here"),
        limit=4,
        choice_mode="likelihood",
        run_dir=tmp_path / "rec",
        run_id="rec",
        cache=False,
        progress=False,
    )
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(
        str(ROOT / "notebooks" / "benchmark.ipynb"),
        str(out),
        cwd=str(ROOT / "notebooks"),
        parameters={
            "dataset": "mmlu",
            "model": f"replay:{recorded}",
            "limit": 4,
            "mmlu_mode": "likelihood",
            "run_dir": str(tmp_path / "runs"),
            "run_id": "nb",
        },
        kernel_name="python3",
        progress_bar=False,
    )
    run = load_run(tmp_path / "runs" / "nb")
    assert run.config["choice_mode"] == "likelihood"
    assert run.results["accuracy_flexible"]["mean"] == 1.0  # generate mode would read no letter: 0
    assert "DeprecationWarning" in out.read_text(encoding="utf-8")  # the notebook says the name is old
