"""The embedded default outcome matrix on the real local model (tiny limits) and the notebook."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from evalcore.routing import Strategy, build_default_outcomes, replay

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_build_default_outcomes_real_model(tmp_path):
    strategies = (Strategy("direct", "direct", max_tokens=16),
                  Strategy("cot", "cot", max_tokens=64),
                  Strategy("sc2", "cot", samples=2, temperature=0.7, max_tokens=48))
    m = build_default_outcomes(datasets=("gsm8k", "mmlu"), limit=1, strategies=strategies,
                               run_dir=tmp_path / "runs", progress=False)
    assert m.arms == ["local:smollm2/direct", "local:smollm2/cot", "local:smollm2/sc2"]
    assert m.n_items == 2 and {d for d in m.datasets} == {"gsm8k", "mmlu"}
    assert set(np.unique(m.quality)) <= {0.0, 1.0}
    # local model: cost is the token count; self-consistency pays for both samples
    np.testing.assert_allclose(m.cost, m.tokens)
    samples = [json.loads(line) for line in
               (tmp_path / "runs" / "gsm8k-sc2" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 2 and {s["request"]["params"]["seed"] for s in samples} == {0, 1}
    assert {s["request"]["params"]["temperature"] for s in samples} == {0.7}
    gsm_row = m.item_ids.index(samples[0]["item_id"])
    used = sum(s["completion"]["usage"]["prompt_tokens"]
               + s["completion"]["usage"]["completion_tokens"] for s in samples)
    assert m.cost[gsm_row, 2] == used
    assert m.cost[:, 0].mean() < m.cost[:, 1].mean()  # direct answers are cheaper
    assert all(q and "Solve the following" not in q for q in m.queries)
    # second call: runs are resumed (no model call) and the matrix comes from the cache
    t0 = time.perf_counter()
    again = build_default_outcomes(datasets=("gsm8k", "mmlu"), limit=1, strategies=strategies,
                                   run_dir=tmp_path / "runs", progress=False)
    assert time.perf_counter() - t0 < 30
    assert ".cache" in again.source
    np.testing.assert_array_equal(again.quality, m.quality)
    res = replay(m, "all", orderings=5, seed=0, progress=False, embedder="tfidf")
    assert res.summary().shape[0] == 11


@pytest.mark.notebooks
def test_routing_notebook_simulated(tmp_path, monkeypatch):
    import papermill as pm

    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path))
    out = tmp_path / "tables"
    pm.execute_notebook(
        str(ROOT / "notebooks" / "routing.ipynb"), str(tmp_path / "routing.ipynb"),
        parameters={"source": "simulated", "n_simulated": 300, "orderings": 20,
                    "sweep_orderings": 3, "lambdas": "0,1", "output_dir": str(out)},
        cwd=str(ROOT), progress_bar=False, kernel_name="python3")
    assert (out / "summary.csv").is_file() and (out / "aiq.csv").is_file()
    figs = sorted(p.name for p in (tmp_path / "figures").glob("*.png"))
    assert "routing_regret_oracle.png" in figs and len(figs) == 5
