"""``notebooks/compare.ipynb`` on an lm-eval log, an inspect_ai log and an evalcore run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def test_compare_notebook_reads_logs_of_both_harnesses(tmp_path, monkeypatch) -> None:
    import papermill as pm

    from evalcore.imports import compare_sources

    runs = [
        str(FIXTURES / "lm_eval"),
        str(FIXTURES / "inspect" / "ec_mmlu.eval"),
        str(FIXTURES / "evalcore" / "evalcore-mmlu"),
    ]
    params = {
        "runs": runs,
        "labels": ["lm-eval", "inspect", "evalcore"],
        "metric": ["exact_match,letter", "choice", "flexible"],
        "task": "ec_mmlu",
        "import_dir": str(tmp_path / "imported"),
        "n_bootstrap": 300,
    }
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path / "records"))
    pm.execute_notebook(
        str(ROOT / "notebooks" / "compare.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters=params,
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
        execution_timeout=600,
    )
    records = json.loads((tmp_path / "records" / "records.json").read_text())
    expected = compare_sources(
        runs,
        metric=params["metric"],
        task="ec_mmlu",
        labels=params["labels"],
        import_dir=tmp_path / "imported",
        n_resamples=300,
    )
    assert records["runs"] == ["lm-eval", "inspect", "evalcore"]
    assert records["n_shared"] == len(expected.alignment.shared) > 0
    got = {(c["name_a"], c["name_b"]): c for c in records["comparisons"]}
    for _, row in expected.table.iterrows():
        rec = got[(row["name_a"], row["name_b"])]
        assert rec["difference"] == pytest.approx(row["difference"])
        assert rec["p_value"] == pytest.approx(row["p_value"]) and rec["test"] == row["test"]
        assert rec["n"] == row["n"]
