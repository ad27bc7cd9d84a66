"""``choice_mode`` (issue 40): the generic name of what was ``mmlu_mode``, and its aliases.

``run_benchmark(mmlu_mode=)`` and ``evalcore run --mmlu-mode`` still work (deprecated); a run
written before the rename records ``mmlu_mode`` in ``config.json`` and resumes as the same
configuration, with its results unchanged; runs written now record ``choice_mode``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.runs import load_run, run_benchmark

LEGACY = Path(__file__).parent / "fixtures" / "legacy"
_METRICS = ("n_samples", "n_scored", "accuracy_strict", "accuracy_flexible", "parse_failure_rate", "by_subject")


@pytest.fixture
def letter_model(counting_model):
    """A model that answers MMLU both ways: a letter in its reply, and letter log-probabilities
    (right on even items, wrong on odd ones, so the two modes' accuracies differ)."""
    items = load("mmlu", source="sample", limit=8, seed=0)
    ref = {it.fields["question"]: (i, it.reference) for i, it in enumerate(items)}

    def letter(q: str) -> str:
        i, right = next(v for k, v in ref.items() if k in q)
        return right if i % 2 == 0 else "ABCD"[("ABCD".index(right) + 1) % 4]

    class LetterModel(counting_model):
        def letter_logprobs(self, messages, letters=("A", "B", "C", "D")):
            self.calls += 1
            want = letter(messages[-1]["content"])
            return {L: (-0.1 if L == want else -3.0 - i) for i, L in enumerate(letters)}

        def chat_prompt(self, messages):
            return messages[-1]["content"]

        def count_tokens(self, text):
            return len(text.split())

    return lambda: LetterModel(lambda q: f"The answer is ({ref[next(k for k in ref if k in q)][1]}).")


def _mmlu(model, tmp_path: Path, run_id: str, **kw):
    kw.setdefault("limit", 8)
    return run_benchmark(
        "mmlu", model, source="sample", progress=False, run_dir=tmp_path / "runs", run_id=run_id, cache=False, **kw
    )


def _as_old_code_wrote_it(run_dir: Path) -> dict:
    """Rewrite ``config.json`` with ``mmlu_mode`` where ``choice_mode`` is (the old key, same place)."""
    config = json.loads((run_dir / "config.json").read_text())
    old = {("mmlu_mode" if k == "choice_mode" else k): v for k, v in config.items()}
    (run_dir / "config.json").write_text(json.dumps(old, indent=2))
    return old


def test_a_run_records_choice_mode(tmp_path, letter_model) -> None:
    gen = load_run(_mmlu(letter_model(), tmp_path, "gen"))
    lik = load_run(_mmlu(letter_model(), tmp_path, "lik", choice_mode="likelihood"))
    assert gen.config["choice_mode"] == "generate" and lik.config["choice_mode"] == "likelihood"
    on_disk = json.loads((lik.path / "config.json").read_text())
    assert on_disk["choice_mode"] == "likelihood" and "mmlu_mode" not in on_disk
    assert gen.results["accuracy_flexible"]["mean"] == 1.0 and lik.results["accuracy_flexible"]["mean"] == 0.5
    assert lik.samples[0]["request"]["mode"] == "likelihood" and "mode" not in gen.samples[0]["request"]


def test_the_deprecated_keyword_warns_and_gives_the_same_run(tmp_path, letter_model) -> None:
    new = load_run(_mmlu(letter_model(), tmp_path, "new", choice_mode="likelihood"))
    with pytest.warns(DeprecationWarning, match="use choice_mode") as caught:
        old = load_run(_mmlu(letter_model(), tmp_path, "old", mmlu_mode="likelihood"))
    assert caught[0].filename == __file__  # points at the caller's line
    assert old.config["choice_mode"] == "likelihood" and "mmlu_mode" not in old.config
    assert [s["scores"] for s in old.samples] == [s["scores"] for s in new.samples]
    assert [s["request_hash"] for s in old.samples] == [s["request_hash"] for s in new.samples]
    with pytest.warns(DeprecationWarning):  # both names, one value: accepted
        same = load_run(_mmlu(letter_model(), tmp_path, "same", choice_mode="likelihood", mmlu_mode="likelihood"))
    assert same.results["accuracy_flexible"] == new.results["accuracy_flexible"]


def test_no_warning_without_the_old_keyword(tmp_path, letter_model) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        _mmlu(letter_model(), tmp_path, "quiet", choice_mode="generate", limit=2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"choice_mode": "generate", "mmlu_mode": "likelihood"}, "differ"),
        ({"mmlu_mode": "loglik"}, "unknown choice_mode 'loglik'"),
    ],
)
def test_bad_modes_name_choice_mode(tmp_path, letter_model, kwargs, match) -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(EvalcoreError, match=match) as info:
        _mmlu(letter_model(), tmp_path, "bad", **kwargs)
    assert info.value.field == "choice_mode"
    assert not (tmp_path / "runs").exists()


def test_likelihood_on_a_benchmark_without_options_names_choice_mode(tmp_path, counting_model) -> None:
    with pytest.raises(EvalcoreError, match="choice_mode='likelihood' applies to letter-choice") as info:
        run_benchmark("gsm8k", counting_model(lambda q: "#### 1"), choice_mode="likelihood", run_dir=tmp_path / "r")
    assert info.value.field == "choice_mode"


def test_a_run_stored_with_the_old_key_resumes_unchanged(tmp_path, letter_model) -> None:
    """The MMLU run written by evalcore at 7b25485 (``"mmlu_mode": "generate"``) resumes asking
    nothing, with the numbers it recorded; from then on its config holds ``choice_mode``."""
    run_dir = Path(shutil.copytree(LEGACY / "mmlu-legacy", tmp_path / "runs" / "mmlu-legacy"))
    recorded = json.loads((run_dir / "results.json").read_text())
    assert json.loads((run_dir / "config.json").read_text())["mmlu_mode"] == "generate"
    assert load_run(run_dir).config["choice_mode"] == "generate"  # read with the new name
    model = letter_model()
    _mmlu(model, tmp_path, "mmlu-legacy", limit=6)
    assert model.calls == 0
    after = load_run(run_dir)
    assert after.results["invocation"]["resumed"] == 6 and after.results["complete"] is True
    assert {k: after.results.get(k) for k in _METRICS} == {k: recorded.get(k) for k in _METRICS}
    written = json.loads((run_dir / "config.json").read_text())
    assert written["choice_mode"] == "generate" and "mmlu_mode" not in written


def test_a_likelihood_run_stored_with_the_old_key_resumes_and_refuses_another_mode(tmp_path, letter_model) -> None:
    run_dir = _mmlu(letter_model(), tmp_path, "lik", choice_mode="likelihood", limit=4)
    before = load_run(run_dir)
    _as_old_code_wrote_it(run_dir)
    with pytest.raises(EvalcoreError, match="different choice_mode: choice_mode changed: 'likelihood' -> 'generate'"):
        _mmlu(letter_model(), tmp_path, "lik", limit=4)
    model = letter_model()
    with pytest.warns(DeprecationWarning):
        _mmlu(model, tmp_path, "lik", mmlu_mode="likelihood", limit=4)
    assert model.calls == 0
    after = load_run(run_dir)
    assert after.results["invocation"]["resumed"] == 4
    assert {k: after.results.get(k) for k in _METRICS} == {k: before.results.get(k) for k in _METRICS}
    assert [s["scores"] for s in after.samples] == [s["scores"] for s in before.samples]
    assert after.config["created_utc"] == before.config["created_utc"]


def test_the_cli_takes_choice_mode_and_the_hidden_alias(tmp_path, letter_model, capsys) -> None:
    recorded = _mmlu(letter_model(), tmp_path, "rec", choice_mode="likelihood")
    base = ["run", "mmlu", "--model", f"replay:{recorded}", "--limit", "8", "--source", "sample", "--no-progress"]
    base += ["--run-dir", str(tmp_path / "cli")]
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = capsys.readouterr().out
    assert "--choice-mode" in shown and "--mmlu-mode" not in shown
    assert main([*base, "--run-id", "new", "--choice-mode", "likelihood"]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main([*base, "--run-id", "old", "--mmlu-mode", "likelihood"]) == 0
    assert "--mmlu-mode is deprecated: use --choice-mode" in capsys.readouterr().err
    new, old = load_run(tmp_path / "cli" / "new"), load_run(tmp_path / "cli" / "old")
    assert new.config["choice_mode"] == old.config["choice_mode"] == "likelihood"
    assert new.results["accuracy_flexible"] == old.results["accuracy_flexible"]
    assert main([*base, "--run-id", "both", "--choice-mode", "generate", "--mmlu-mode", "likelihood"]) == 2
    err = capsys.readouterr().err
    assert "--choice-mode generate and its deprecated alias --mmlu-mode likelihood differ" in err
    assert not (tmp_path / "cli" / "both").exists()
