"""Issue 39: a resume refused because the benchmark file changed names the field that changed;
a change of scoring settings only (``scorer.pattern``) is a re-scoring: ``evalcore rescore RUN
--benchmark FILE`` applies it to the recorded completions, a changed prompt is refused there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalcore.benchmarks import unregister
from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.runs import load_run, run_benchmark
from evalcore.runs._config import changed_fields

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from conftest import CountingModel  # noqa: E402

YAML = """name: caps
data: items.jsonl
answer_field: answer
scorer:
  type: exact
  pattern: "Answer: (\\\\w+)"
prompt:
  user: "Capital of {country}? End with 'Answer: X'."
"""
ROWS = [{"country": "France", "answer": "Paris"}, {"country": "Italy", "answer": "Rome"}]


@pytest.fixture(autouse=True)
def _forget():
    yield
    unregister("caps")


def _bench(tmp_path: Path) -> Path:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    path = tmp_path / "caps.yaml"
    path.write_text(YAML)
    return path


def _model() -> CountingModel:
    return CountingModel(lambda user: "The capital is ANSWER=Paris" if "France" in user else "Answer: Rome")


def _run(path: Path, tmp_path: Path, model: CountingModel) -> Path:
    run_benchmark(str(path), model, run_dir=tmp_path / "runs", run_id="r", cache=False, progress=False)
    return tmp_path / "runs" / "r"


def test_a_scorer_change_names_the_field_and_rescoring_applies_it(tmp_path, capsys) -> None:
    path, model = _bench(tmp_path), _model()
    run = _run(path, tmp_path, model)
    assert load_run(run).results["accuracy_strict"]["mean"] == 0.5  # "ANSWER=Paris" does not match
    path.write_text(YAML.replace("# nothing", "") + "# a comment: the same settings\n")
    _run(path, tmp_path, model)  # an edit that changes no setting resumes (nothing asked again)
    assert model.calls == 2
    path.write_text(YAML.replace('"Answer: (\\\\w+)"', '"(?i)answer\\\\W+(\\\\w+)"'))
    with pytest.raises(EvalcoreError) as err:
        _run(path, tmp_path, model)
    said = str(err.value)
    assert "scorer.pattern changed: 'Answer: (\\\\w+)' -> '(?i)answer\\\\W+(\\\\w+)'" in said, said
    assert "scoring settings do not change the prompt; rescore instead" in said
    assert f"evalcore rescore {run} --benchmark {path}" in said
    assert "different prompt" not in said and err.value.field == "benchmark.scorer.pattern"
    assert main(["rescore", str(run), "--benchmark", str(path)]) == 0
    rescored = load_run(run)
    assert rescored.results["accuracy_strict"]["mean"] == 1.0
    assert rescored.config["benchmark"]["scorer"]["pattern"] == "(?i)answer\\W+(\\w+)"
    assert model.calls == 2  # no model call
    _run(path, tmp_path, model)  # the run now records the new scorer: resumed
    assert model.calls == 2


def test_a_prompt_change_is_named_and_cannot_be_rescored(tmp_path, capsys) -> None:
    path, model = _bench(tmp_path), _model()
    run = _run(path, tmp_path, model)
    path.write_text(YAML.replace("Capital of {country}?", "What is the capital of {country}?"))
    with pytest.raises(EvalcoreError, match="different prompt: prompt.user changed: ") as err:
        _run(path, tmp_path, model)
    assert err.value.field == "prompt" and "rescore" not in str(err.value)
    assert main(["rescore", str(run), "--benchmark", str(path)]) == 2
    assert "prompt.user changed" in capsys.readouterr().err
    assert load_run(run).config["benchmark"]["prompt"]["user"].startswith("Capital of")


def test_changed_fields_walks_mappings() -> None:
    old = {"a": 1, "b": {"c": [1, 2], "d": "x"}}
    assert changed_fields(old, {"a": 1, "b": {"c": [1, 3], "e": 0, "d": "x"}}) == [
        ("b.c", [1, 2], [1, 3]),
        ("b.e", None, 0),
    ]
    assert changed_fields(0, 1, "seed") == [("seed", 0, 1)]
