"""Run directories written before benchmarks became modules (issue 32) still load, rescore and
compare, to the same numbers.

``fixtures/legacy`` holds three runs written by evalcore at 7b25485 (the commit before the
benchmark registry): GSM8K (6 items, a third wrong), MMLU (6 items, hedged replies among them)
and HumanEval (3 tasks x 2 epochs, one task right), each with the ``config.json``,
``samples.jsonl`` and ``results.json`` that evalcore wrote then.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalcore.runs import load_run, rescore

LEGACY = Path(__file__).parent / "fixtures" / "legacy"
_METRICS = (
    "dataset",
    "n_samples",
    "n_items",
    "n_scored",
    "accuracy_strict",
    "accuracy_flexible",
    "pass_at_k",
    "parse_failure_rate",
    "parse_failure_rate_strict",
    "by_subject",
    "errors",
)


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(LEGACY / name, tmp_path / name))


@pytest.mark.parametrize("name", ["gsm8k-legacy", "mmlu-legacy", "humaneval-legacy"])
def test_a_legacy_run_rescores_to_the_numbers_it_recorded(tmp_path, name):
    run_dir = _copy(tmp_path, name)
    before = load_run(run_dir)
    old_scores = [s["scores"] for s in before.samples]
    results = rescore(run_dir)
    for key in _METRICS:
        assert results.get(key) == before.results.get(key), key
    after = load_run(run_dir)

    def same(scores):  # a timing is measured anew
        return {k: v for k, v in scores.items() if k != "duration_s"}

    # every verdict and extraction as recorded
    assert [same(s["scores"]) for s in after.samples] == [same(s) for s in old_scores]
    assert after.config == before.config  # the config is read, never rewritten


def test_the_legacy_numbers_are_what_the_fixture_says():
    """The fixtures are not vacuous: the values the rescore must reproduce."""
    gsm = json.loads((LEGACY / "gsm8k-legacy" / "results.json").read_text())
    mmlu = json.loads((LEGACY / "mmlu-legacy" / "results.json").read_text())
    code = json.loads((LEGACY / "humaneval-legacy" / "results.json").read_text())
    assert gsm["n_scored"] == 6 and 0 < gsm["accuracy_flexible"]["mean"] < 1
    assert mmlu["accuracy_flexible"]["mean"] == pytest.approx(4 / 6)
    assert set(mmlu["by_subject"]) and mmlu["parse_failure_rate"] is not None
    assert code["pass_at_k"] == {"pass@1": pytest.approx(1 / 3), "pass@2": pytest.approx(1 / 3)}


def test_legacy_runs_compare_paired_on_their_items(tmp_path):
    from evalcore.imports import compare_sources

    a = _copy(tmp_path, "gsm8k-legacy")
    b = tmp_path / "gsm8k-legacy-b"
    shutil.copytree(a, b)
    cmp = compare_sources([a, b], labels=["a", "b"], import_dir=tmp_path / "imports", n_resamples=200)
    row = cmp.to_dict()
    assert row["alignment"]["n_shared"] == 6
    pair = row["comparisons"][0]
    recorded = json.loads((LEGACY / "gsm8k-legacy" / "results.json").read_text())
    assert pair["n"] == 6 and pair["mean_a"] == pytest.approx(recorded["accuracy_flexible"]["mean"])
    assert pair["difference"] == pytest.approx(0.0)


@pytest.mark.parametrize(
    "name, args, drop",
    [
        ("gsm8k-legacy", {"limit": 6}, ()),
        ("humaneval-legacy", {"limit": 3, "epochs": 2, "source": "sample"}, ()),
        ("humaneval-legacy", {"limit": 3, "epochs": 2, "source": "sample"}, ("price", "code_timeout_s")),
    ],
)
def test_a_legacy_run_resumes_without_asking_again(tmp_path, name, args, drop, counting_model):
    """Resuming a run recorded before the registry asks nothing (also one recorded before
    ``price`` and ``code_timeout_s`` were resume keys)."""
    from evalcore.runs import run_benchmark

    run_dir = _copy(tmp_path, name)
    config = json.loads((run_dir / "config.json").read_text())
    for key in drop:
        config.pop(key)
    (run_dir / "config.json").write_text(json.dumps(config))
    model = counting_model(lambda q: "#### 0")
    run_benchmark(name.split("-")[0], model, run_dir=tmp_path, run_id=name, cache=False, progress=False, **args)
    assert model.calls == 0
    results = load_run(run_dir).results
    assert results["invocation"]["resumed"] == 6 and results["complete"] is True
