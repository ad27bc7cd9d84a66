"""`evalcore run` / `evalcore rescore` and the prompt templates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.models import FakeChatServer
from evalcore.models._server import free_port
from evalcore.runs import load_template, render

ROOT = Path(__file__).resolve().parents[2]


def test_cli_run_then_rescore(tmp_path, capsys) -> None:
    with FakeChatServer() as srv:
        status = main(
            [
                "run",
                "gsm8k",
                "--model",
                f"openai-compatible:fake@{srv.url}",
                "--limit",
                "3",
                "--run-dir",
                str(tmp_path),
                "--run-id",
                "cli",
                "--source",
                "sample",
                "--max-tokens",
                "64",
                "--temperature",
                "0.2",
                "--param",
                "top_p=0.9",
                "--no-progress",
                "--epochs",
                "2",
            ]
        )
    assert status == 0
    out = capsys.readouterr().out
    assert "accuracy flexible" in out and str(tmp_path / "cli") in out
    assert "dataset: gsm8k split test, source sample, 3 items" in out  # not the full benchmark
    cfg = json.loads((tmp_path / "cli" / "config.json").read_text())
    assert cfg["params"]["max_tokens"] == 64 and cfg["params"]["temperature"] == 0.2
    assert cfg["params"]["top_p"] == 0.9 and cfg["epochs"] == 2
    res = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert res["n_samples"] == 6
    for key in (
        "accuracy_strict",
        "accuracy_flexible",
        "pass_at_k",
        "parse_failure_rate",
        "errors",
        "n_samples",
        "tokens",
        "cost_usd",
        "latency_p50_s",
        "latency_p95_s",
        "qps",
    ):
        assert key in res
    # both parse-failure rates, each named (the line used to show the flexible one unnamed)
    assert (
        f"parse failures: flexible {res['parse_failure_rate']:.3f}, strict {res['parse_failure_rate_strict']:.3f}"
    ) in out
    assert main(["rescore", str(tmp_path / "cli")]) == 0
    again = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert again["accuracy_flexible"] == res["accuracy_flexible"] and again["rescored"]


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run", "squad", "--model", "local:smollm2"], "unknown dataset"),
        (["run", "gsm8k", "--model", "gpt-5"], "unknown model spec"),
        (["run", "gsm8k", "--model", "openai-compatible:x@http://127.0.0.1:PORT/v1"], "cannot reach"),
        (["run", "gsm8k", "--model", "local:smollm2", "--param", "temprature=1"], "unknown generation"),
        (["run", "gsm8k", "--model", "local:smollm2", "--scorer", "judge"], "LLM judge"),
        (["run", "gsm8k", "--model", "local:smollm2", "--epochs", "0"], "epochs"),
        # the shipped GSM8K few-shot split holds 8 problems: 9 used to give 8 without a word
        (["run", "gsm8k", "--model", "local:smollm2", "--few-shot", "9"], "asks for 9 worked examples"),
        (["rescore", "/nonexistent/run"], "not a run directory"),
    ],
)
def test_cli_bad_input_exits_2_and_creates_nothing(tmp_path, capsys, argv, needle) -> None:
    argv = [a.replace("PORT", str(free_port())) for a in argv]
    if argv[0] == "run":
        argv += ["--run-dir", str(tmp_path / "runs"), "--source", "sample"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalcore: error:") and needle in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_cli_model_options_reach_the_client(tmp_path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text("models:\n  fake: {input: 1000000, output: 0}\n")  # 1 USD per prompt token
    with FakeChatServer() as srv:
        status = main(
            [
                "run",
                "gsm8k",
                "--model",
                f"openai-compatible:fake@{srv.url}",
                "--limit",
                "2",
                "--run-dir",
                str(tmp_path),
                "--run-id",
                "opt",
                "--source",
                "sample",
                "--no-progress",
                "--timeout",
                "7",
                "--max-retries",
                "1",
                "--pricing",
                str(prices),
            ]
        )
    assert status == 0
    cfg = json.loads((tmp_path / "opt" / "config.json").read_text())
    res = json.loads((tmp_path / "opt" / "results.json").read_text())
    assert cfg["model_options"]["timeout"] == 7.0 and "max_retries=1" in cfg["model_options"]["retry"]
    assert res["cost_usd"] == pytest.approx(res["tokens"]["prompt"] * 1.0)
    assert cfg["priced"] is True
    with FakeChatServer() as srv:  # a model the pricing table does not know: said in config
        assert (
            main(
                [
                    "run",
                    "gsm8k",
                    "--model",
                    f"openai-compatible:unlisted@{srv.url}",
                    "--limit",
                    "1",
                    "--run-dir",
                    str(tmp_path),
                    "--run-id",
                    "unpriced",
                    "--source",
                    "sample",
                    "--no-progress",
                ]
            )
            == 0
        )
    cfg = json.loads((tmp_path / "unpriced" / "config.json").read_text())
    assert cfg["priced"] is False
    assert json.loads((tmp_path / "unpriced" / "results.json").read_text())["cost_usd"] == 0.0
    assert (
        main(
            [
                "run",
                "gsm8k",
                "--model",
                "local:smollm2",
                "--timeout",
                "3",
                "--run-dir",
                str(tmp_path / "none"),
                "--source",
                "sample",
            ]
        )
        == 2
    )
    assert not (tmp_path / "none").exists()


def test_unknown_cli_option_exits_2(tmp_path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "gsm8k", "--model", "local:smollm2", "--tempreature", "1"])
    assert info.value.code == 2


def test_gsm8k_prompt_asks_for_hashes_without_placeholder_brackets() -> None:
    tpl = load_template("gsm8k")
    item = load("gsm8k", source="sample", limit=1)[0]
    msgs = render(tpl, item)
    user = msgs[-1]["content"]
    assert item.fields["question"] in user and "step by step" in user
    assert "four hash marks" in user
    assert not re.search(r"[<\[{][^\]>}]*[>\]}]", user.replace(item.fields["question"], ""))


def test_humaneval_prompt_contains_the_function() -> None:
    item = load("humaneval", source="sample", limit=1)[0]
    user = render(load_template("humaneval"), item)[-1]["content"]
    assert item.fields["prompt"] in user and "```python" in user and "complete" in user.lower()


def test_custom_template_with_unknown_field_names_file_and_part(tmp_path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(yaml.safe_dump({"name": "x", "dataset": "gsm8k", "user": "Q: {questoin}"}))
    item = load("gsm8k", source="sample", limit=1)[0]
    with pytest.raises(EvalcoreError) as info:
        render(load_template("gsm8k", f), item)
    assert info.value.path == str(f) and info.value.field == "user" and "questoin" in str(info.value)
    f.write_text(yaml.safe_dump({"dataset": "mmlu", "user": "{question}"}))
    with pytest.raises(EvalcoreError, match="not 'gsm8k'"):
        load_template("gsm8k", f)
    f.write_text("user: [unclosed\n")
    with pytest.raises(EvalcoreError, match="malformed YAML") as info:
        load_template("gsm8k", f)
    assert info.value.path == str(f) and info.value.line is not None
    with pytest.raises(EvalcoreError, match="prompt template not found") as info:
        load_template("gsm8k", tmp_path / "missing.yaml")
    assert info.value.field == "prompt"
