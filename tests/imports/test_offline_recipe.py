"""The offline recipe of docs/imports.md, run as written (issue 31 item 6): the shipped task files
(params/lm_eval/ec_gsm8k_sample.yaml, params/inspect/ec_gsm8k_sample.py) load the GSM8K sample
from disk; lm-eval (`--model local-chat-completions`, the chat-completions base_url form) and
inspect_ai run them against `evalcore serve-local` with the hub unreachable, and evalcore imports
both logs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LM_TASKS = ROOT / "params" / "lm_eval"
INSPECT_TASK = ROOT / "params" / "inspect" / "ec_gsm8k_sample.py"
SAMPLE = ROOT / "evalcore" / "benchmarks" / "gsm8k" / "samples" / "test.jsonl"
DOCS = (ROOT / "docs" / "imports.md").read_text(encoding="utf-8")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _references() -> list[str]:
    rows = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [r["answer"].split("####")[-1].strip() for r in rows]


def test_docs_give_the_commands_the_tests_run() -> None:
    for text in (
        "--model local-chat-completions",
        "base_url=http://127.0.0.1:8000/v1/chat/completions",
        "--include_path params/lm_eval",
        "--tasks ec_gsm8k_sample",
        "HF_HUB_OFFLINE=1",
        "--apply_chat_template",
        "tokenized_requests=False",
        "evalcore serve-local",
        "params/inspect/ec_gsm8k_sample.py",
        "--model openai-api/local/smollm2",
        "LOCAL_BASE_URL=http://127.0.0.1:8000/v1",
    ):
        assert text in DOCS, text


def test_inspect_task_file_reads_the_shipped_sample() -> None:
    pytest.importorskip("inspect_ai")
    import importlib.util

    spec = importlib.util.spec_from_file_location("ec_gsm8k_sample_task", INSPECT_TASK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    samples = module._samples()
    assert [s.target for s in samples] == _references()
    assert len(samples) == 45 and all(s.input for s in samples)


@pytest.mark.slow
def test_lm_eval_task_file_loads_offline(tmp_path) -> None:
    """lm-eval's own task loader reads the YAML and the local file with the hub unreachable."""
    pytest.importorskip("lm_eval")
    code = (
        "import json\nfrom lm_eval.tasks import TaskManager, get_task_dict\n"
        f"tm = TaskManager(include_path={str(LM_TASKS)!r})\n"
        "task = get_task_dict(['ec_gsm8k_sample'], tm)['ec_gsm8k_sample']\n"
        "docs = list(task.test_docs())\n"
        "print(json.dumps({'n': len(docs), 'targets': [task.doc_to_target(d) for d in docs],"
        " 'text': task.doc_to_text(docs[0])}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "hf")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["n"] == 45 and got["targets"] == _references()
    assert got["text"].startswith("Question: ") and got["text"].endswith("Answer:")


@pytest.mark.integration
def test_the_recipe_runs_offline_against_serve_local(tmp_path) -> None:
    pytest.importorskip("llama_cpp.server")
    pytest.importorskip("lm_eval")
    pytest.importorskip("inspect_ai")
    from evalcore.imports import import_inspect, import_lm_eval
    from evalcore.models import LocalServer

    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "hf"), "NO_COLOR": "1", "INSPECT_DISPLAY": "plain"}
    with LocalServer(log_path=tmp_path / "server.log") as server:
        # the commands of docs/imports.md, with the server's port and --limit 2 (and fewer tokens)
        lm = subprocess.run(
            [
                sys.executable,
                "-m",
                "lm_eval",
                "run",
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model=smollm2,base_url={server.url}/chat/completions,"
                "num_concurrent=1,max_retries=1,tokenized_requests=False",
                "--tasks",
                "ec_gsm8k_sample",
                "--include_path",
                "params/lm_eval",
                "--apply_chat_template",
                "--gen_kwargs",
                "max_gen_toks=64",
                "--limit",
                "2",
                "--output_path",
                str(tmp_path / "lm"),
                "--log_samples",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert lm.returncode == 0, lm.stderr[-3000:]
        ins = subprocess.run(
            [
                sys.executable,
                "-m",
                "inspect_ai",
                "eval",
                "params/inspect/ec_gsm8k_sample.py",
                "--model",
                "openai-api/local/smollm2",
                "--limit",
                "2",
                "--max-tokens",
                "64",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "plain",
            ],
            cwd=ROOT,
            env={**env, "LOCAL_BASE_URL": server.url, "LOCAL_API_KEY": "none"},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert ins.returncode == 0, ins.stderr[-3000:]
    (run,) = import_lm_eval(tmp_path / "lm", metric=["exact_match,strict-match"])
    assert run.config["task"] == "ec_gsm8k_sample" and len(run.samples) == 2
    assert {s["reference"] for s in run.samples} <= set(_references())
    assert all(s["completion"]["raw"] for s in run.samples)  # the model answered
    (log,) = (tmp_path / "logs").glob("*.eval")
    imported = import_inspect(log)
    assert len(imported.samples) == 2 and all(s["completion"]["text"] for s in imported.samples)
    assert re.search(r"smollm2", imported.config["model"])
