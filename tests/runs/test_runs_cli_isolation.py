"""`evalcore run` / `rescore`: a HumanEval run warns without full isolation; --require-isolation refuses."""

from __future__ import annotations

import pytest

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.runs import run_benchmark

FALLBACK = {
    "namespaces": False,
    "level": "weak",
    "network": "not isolated",
    "filesystem": "temporary working directory only",
}


@pytest.fixture
def weak_sandbox(monkeypatch):
    import evalcore.evaluators._cli as score_cli

    monkeypatch.setattr(score_cli, "sandbox_isolation", lambda workers=None: dict(FALLBACK))


def _humaneval_run(tmp_path, counting_model):
    items = load("humaneval", source="sample", limit=2, seed=0)

    def answer(user_text: str) -> str:
        it = next(it for it in items if it.fields["prompt"] in user_text)
        return f"```python\n{it.fields['prompt']}{it.reference}```"

    return run_benchmark(
        "humaneval",
        counting_model(answer),
        limit=2,
        source="sample",
        progress=False,
        run_dir=tmp_path,
        run_id="he",
        cache=False,
        concurrency=1,
    )


def test_rescore_of_a_humaneval_run_warns_without_isolation(tmp_path, counting_model, capsys, weak_sandbox) -> None:
    path = _humaneval_run(tmp_path, counting_model)
    capsys.readouterr()
    assert main(["rescore", str(path)]) == 0
    captured = capsys.readouterr()
    warnings = [ln for ln in captured.err.splitlines() if ln.startswith("evalcore: warning:")]
    assert len(warnings) == 1 and "without full OS isolation" in warnings[0] and "network: not isolated" in warnings[0]
    assert "pass@1=1.000" in captured.out


def test_require_isolation_refuses_before_rescoring_or_calling_a_model(
    tmp_path, counting_model, capsys, weak_sandbox, monkeypatch
) -> None:
    path = _humaneval_run(tmp_path, counting_model)
    import evalcore.runs as runs

    def must_not_run(*args, **kwargs):
        raise AssertionError("ran without isolation")

    monkeypatch.setattr(runs, "rescore", must_not_run)
    monkeypatch.setattr(runs, "run_benchmark", must_not_run)
    capsys.readouterr()
    assert main(["rescore", str(path), "--require-isolation"]) == 2
    assert (
        main(
            [
                "run",
                "humaneval",
                "--model",
                f"replay:{path}",
                "--source",
                "sample",
                "--limit",
                "2",
                "--run-dir",
                str(tmp_path),
                "--no-progress",
                "--require-isolation",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert all(
        ln.startswith("evalcore: error: field '--require-isolation': the sandbox cannot fully isolate") for ln in err
    )


def test_runs_that_execute_no_code_say_nothing(
    tmp_path, counting_model, make_gsm8k_answerer, capsys, weak_sandbox
) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: i % 2 == 0)
    path = run_benchmark(
        "gsm8k",
        counting_model(answer),
        limit=4,
        source="sample",
        progress=False,
        run_dir=tmp_path,
        run_id="g",
        cache=False,
    )
    capsys.readouterr()
    assert main(["rescore", str(path), "--require-isolation"]) == 0
    assert "isolation" not in capsys.readouterr().err
