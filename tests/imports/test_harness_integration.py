"""Real lm-evaluation-harness and inspect_ai runs against `evalcore serve-local`, imported and
compared.

Both tools run for real, offline, on a few of the shipped GSM8K and MMLU items, against the
embedded SmolLM2 behind llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (lm-eval through
a task YAML with ``dataset_path: json`` and ``--model local-chat-completions``; inspect_ai with
the model ``openai-api/local/smollm2``, ``LOCAL_BASE_URL`` and a ``MemoryDataset``). evalcore
runs the same items too. Then the logs are imported and checked against each tool's own
summary (printed and recorded), and compared with the paired test.

``EVALCORE_REFRESH_IMPORT_FIXTURES=1`` copies the logs into ``tests/imports/fixtures/`` (the
fixtures of the fast unit tests).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalcore.benchmarks import load
from evalcore.imports import (
    compare_sources,
    content_key,
    import_inspect,
    import_lm_eval,
    import_log,
    run_scores,
)
from evalcore.models import LocalServer
from evalcore.runs import load_run, run_benchmark

# the module fixture runs three harnesses on 2 shared CPUs; each invocation has its own limit
pytestmark = [pytest.mark.integration, pytest.mark.timeout(3600)]
pytest.importorskip("llama_cpp.server")
pytest.importorskip("lm_eval")
pytest.importorskip("inspect_ai")

FIXTURES = Path(__file__).parent / "fixtures"
N_GSM8K = 3
N_MMLU = 8
GSM8K_MAX_TOKENS = 96
MMLU_MAX_TOKENS = 6
RUN_TIMEOUT_S = 900  # one harness invocation on 2 shared CPUs (lm-eval: ~2.5 min under load)

LM_EVAL_GSM8K = """\
task: ec_gsm8k
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nThink briefly, then end with '#### <number>'.\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["Question:"]
  max_gen_toks: {max_tokens}
  do_sample: false
  temperature: 0.0
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: false
    regexes_to_ignore: [",", "\\\\$", "\\\\.$"]
metadata:
  version: 1.0
"""

LM_EVAL_MMLU = """\
task: ec_mmlu
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}\\nA. {{{{choices[0]}}}}\\nB. {{{{choices[1]}}}}\\nC. {{{{choices[2]}}}}\\nD. {{{{choices[3]}}}}\\nAnswer with the letter only.\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n"]
  max_gen_toks: {max_tokens}
  do_sample: false
  temperature: 0.0
filter_list:
  - name: letter
    filter:
      - function: regex
        regex_pattern: "\\\\b([ABCD])\\\\b"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

INSPECT_TASKS = """\
import json

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice, match
from inspect_ai.solver import generate, multiple_choice, prompt_template


def _rows(name):
    with open({data_dir!r} + "/" + name, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@task
def ec_gsm8k():
    # ids and order differ from lm-eval's on purpose: the importer aligns by content
    rows = list(reversed(_rows("gsm8k.jsonl")))
    samples = [Sample(id=f"g{{i}}", input=r["question"], target=r["answer"]) for i, r in enumerate(rows)]
    return Task(dataset=MemoryDataset(samples, name="ec_gsm8k"),
                solver=[prompt_template("{{prompt}}\\nThink briefly, then end with 'ANSWER: <number>'."),
                        generate()],
                scorer=match(location="end", numeric=True))


@task
def ec_mmlu():
    rows = list(reversed(_rows("mmlu.jsonl")))
    samples = [Sample(id=f"m{{i}}", input=r["question"], choices=r["choices"], target=r["answer"],
                      metadata={{"subject": r["subject"]}}) for i, r in enumerate(rows)]
    return Task(dataset=MemoryDataset(samples, name="ec_mmlu"), solver=multiple_choice(),
                scorer=choice())
"""


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "INSPECT_DISPLAY": "plain",
            "NO_COLOR": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env


def _run(cmd: list[str], *, log: Path, env: dict[str, str], what: str) -> str:
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        log.write_text(str(exc.stdout or "") + str(exc.stderr or ""))
        pytest.fail(f"{what} did not finish within {RUN_TIMEOUT_S} s (output in {log})")
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}); see {log}:\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("harnesses")
    data = root / "data"
    data.mkdir()
    gsm8k = load("gsm8k", limit=N_GSM8K, source="sample")
    mmlu = load("mmlu", limit=N_MMLU, source="sample")
    with open(data / "gsm8k.jsonl", "w", encoding="utf-8") as f:
        for it in gsm8k:
            f.write(json.dumps({"question": it.fields["question"], "answer": it.reference}) + "\n")
    with open(data / "mmlu.jsonl", "w", encoding="utf-8") as f:
        for it in mmlu:
            f.write(
                json.dumps(
                    {
                        "question": it.fields["question"],
                        "choices": it.fields["choices"],
                        "answer": it.reference,
                        "subject": it.metadata["subject"],
                    }
                )
                + "\n"
            )
    tasks = root / "lm_tasks"
    tasks.mkdir()
    (tasks / "ec_gsm8k.yaml").write_text(LM_EVAL_GSM8K.format(data=data / "gsm8k.jsonl", max_tokens=GSM8K_MAX_TOKENS))
    (tasks / "ec_mmlu.yaml").write_text(LM_EVAL_MMLU.format(data=data / "mmlu.jsonl", max_tokens=MMLU_MAX_TOKENS))
    (root / "inspect_tasks.py").write_text(INSPECT_TASKS.format(data_dir=str(data)))
    out: dict[str, object] = {"root": root, "gsm8k": gsm8k, "mmlu": mmlu}
    with LocalServer(log_path=root / "server.log") as server:
        lm_out = root / "lm_eval_out"
        out["lm_eval_stdout"] = _run(
            [
                sys.executable,
                "-m",
                "lm_eval",
                "run",
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model=smollm2,base_url={server.url}/chat/completions,"
                "num_concurrent=1,max_retries=1,tokenized_requests=False,timeout=300",
                "--tasks",
                "ec_gsm8k,ec_mmlu",
                "--include_path",
                str(tasks),
                "--apply_chat_template",
                "--output_path",
                str(lm_out),
                "--log_samples",
                "--seed",
                "0",
            ],
            log=root / "lm_eval.log",
            env=_env(),
            what="lm_eval",
        )
        (results,) = lm_out.rglob("results_*.json")
        out["lm_eval_results"] = results
        ins_dir = root / "inspect_logs"
        env = _env({"LOCAL_BASE_URL": server.url, "LOCAL_API_KEY": "none"})
        printed = {}
        for task_name, max_tokens in (("ec_gsm8k", GSM8K_MAX_TOKENS), ("ec_mmlu", MMLU_MAX_TOKENS)):
            printed[task_name] = _run(
                [
                    sys.executable,
                    "-m",
                    "inspect_ai",
                    "eval",
                    f"{root / 'inspect_tasks.py'}@{task_name}",
                    "--model",
                    "openai-api/local/smollm2",
                    "--log-dir",
                    str(ins_dir / task_name),
                    "--max-tokens",
                    str(max_tokens),
                    "--temperature",
                    "0",
                    "--max-connections",
                    "1",
                    "--display",
                    "plain",
                    "--log-format",
                    "eval",
                    "--no-fail-on-error",
                ],
                log=root / f"inspect_{task_name}.log",
                env=env,
                what=f"inspect eval {task_name}",
            )
            (log,) = (ins_dir / task_name).glob("*.eval")
            out[f"inspect_{task_name}"] = log
        out["inspect_stdout"] = printed
        for name, items, max_tokens in (("gsm8k", gsm8k, GSM8K_MAX_TOKENS), ("mmlu", mmlu, MMLU_MAX_TOKENS)):
            out[f"evalcore_{name}"] = run_benchmark(
                name,
                server.spec,
                limit=len(items),
                source="sample",
                progress=False,
                params={"max_tokens": max_tokens},
                run_dir=root / "runs",
                run_id=f"evalcore-{name}",
                cache=False,
                concurrency=1,
            )
    if os.environ.get("EVALCORE_REFRESH_IMPORT_FIXTURES"):
        _refresh_fixtures(out)
    return out


def _refresh_fixtures(out: dict) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    dest = FIXTURES / "lm_eval"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    results = out["lm_eval_results"]
    for p in results.parent.iterdir():
        shutil.copy(p, dest / p.name)
    (FIXTURES / "lm_eval_printed.txt").write_text(out["lm_eval_stdout"][-4000:])
    for task_name, printed in out["inspect_stdout"].items():
        (FIXTURES / f"inspect_{task_name}_printed.txt").write_text(printed[-3000:])
    ins = FIXTURES / "inspect"
    shutil.rmtree(ins, ignore_errors=True)
    ins.mkdir(parents=True)
    for task_name in ("ec_gsm8k", "ec_mmlu"):
        src = out[f"inspect_{task_name}"]
        shutil.copy(src, ins / f"{task_name}.eval")
        write_eval_log(read_eval_log(str(src)), str(ins / f"{task_name}.json"), format="json")
    for name in ("gsm8k", "mmlu"):
        dst = FIXTURES / "evalcore" / f"evalcore-{name}"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(out[f"evalcore_{name}"], dst, ignore=shutil.ignore_patterns(".lock"))


def test_lm_eval_logs_import_with_the_tools_own_numbers(real, tmp_path, lm_eval_printed) -> None:
    results = json.loads(Path(real["lm_eval_results"]).read_text())
    for task, metric, items in (
        ("ec_gsm8k", "exact_match,flexible-extract", real["gsm8k"]),
        ("ec_mmlu", "exact_match,letter", real["mmlu"]),
    ):
        (run,) = import_lm_eval(real["lm_eval_results"], metric=[metric], task=task)
        # the same items: the questions evalcore shipped
        keys = {s["metadata"]["content_key"] for s in run.samples}
        assert keys == {content_key(it.fields["question"]) for it in items}
        assert len(run.samples) == len(items)
        # per-item correctness is lm-eval's own, line by line
        samples_file = Path(run.config["imported"]["samples_file"])
        lines = [json.loads(x) for x in samples_file.read_text().splitlines()]
        flt = metric.split(",")[1]
        own = {ln["doc_id"]: float(ln["exact_match"]) for ln in lines if ln["filter"] == flt}
        assert {s["metadata"]["doc_id"]: s["scores"]["score"] for s in run.samples} == own
        mean = float(np.mean([s["scores"]["score"] for s in run.samples]))
        recorded = results["results"][task][metric]
        assert mean == pytest.approx(recorded, abs=1e-12)
        printed = lm_eval_printed(real["lm_eval_stdout"], task, "exact_match", flt)
        assert mean == pytest.approx(printed, abs=5e-4)  # printed with 3 or 4 decimals
        path = import_log(real["lm_eval_results"], tmp_path / "runs", metric=[metric], task=task)[0]
        loaded = load_run(path)
        assert loaded.results["accuracy_flexible"]["mean"] == pytest.approx(recorded, abs=1e-12)
        assert loaded.config["imported"]["harness_version"] == results["lm_eval_version"]


def test_inspect_logs_import_with_the_tools_own_numbers(real, tmp_path, inspect_printed) -> None:
    from inspect_ai.log import read_eval_log

    for task_name, items in (("ec_gsm8k", real["gsm8k"]), ("ec_mmlu", real["mmlu"])):
        path = real[f"inspect_{task_name}"]
        log = read_eval_log(str(path))
        run = import_inspect(path)
        assert {s["metadata"]["content_key"] for s in run.samples} == {
            content_key(it.fields["question"]) for it in items
        }
        assert {s["item_id"] for s in run.samples} == {str(s.id) for s in log.samples}
        scorer = log.results.scores[0]
        letters = {"C": 1.0, "I": 0.0}
        own = {str(s.id): letters[s.scores[scorer.name].value] for s in log.samples}
        assert {s["item_id"]: s["scores"]["score"] for s in run.samples} == own
        mean = float(np.mean(list(own.values())))
        assert mean == pytest.approx(scorer.metrics["accuracy"].value, abs=1e-12)
        assert run.reported[f"{scorer.name}/accuracy"] == scorer.metrics["accuracy"].value
        printed = inspect_printed(real["inspect_stdout"][task_name], "accuracy")
        assert mean == pytest.approx(printed, abs=5e-4)  # printed with 3 decimals


def test_two_harnesses_and_evalcore_compared_on_the_same_items(real, tmp_path) -> None:
    from scipy.stats import binomtest

    cmp = compare_sources(
        [real["lm_eval_results"], real["inspect_ec_mmlu"], real["evalcore_mmlu"]],
        metric=["exact_match,letter", "choice", "flexible"],
        task="ec_mmlu",
        labels=["lm-eval", "inspect", "evalcore"],
        import_dir=tmp_path / "imp",
        n_resamples=500,
    )
    assert cmp.alignment.key == "content"
    assert len(cmp.alignment.shared) == N_MMLU
    scores = {r["label"]: run_scores(r["path"], metric=["exact_match,letter", "choice", "flexible"]) for r in cmp.runs}
    assert {r["metric"] for r in cmp.runs} == {"exact_match,letter", "choice", "flexible"}
    by_question = {}
    for label, rs in scores.items():
        by_question[label] = {rs.content[i]: v for i, v in rs.by_id.items()}
    for _, row in cmp.table.iterrows():
        a, b = by_question[row["name_a"]], by_question[row["name_b"]]
        keys = sorted(set(a) & set(b))
        xa = np.array([a[k] for k in keys])
        xb = np.array([b[k] for k in keys])
        assert row["n"] == N_MMLU
        assert row["test"] == "mcnemar"  # 0/1 scores on paired items
        assert row["difference"] == pytest.approx(float((xa - xb).mean()))
        n10, n01 = int(((xa == 1) & (xb == 0)).sum()), int(((xa == 0) & (xb == 1)).sum())
        expected = binomtest(n10, n10 + n01).pvalue if n10 + n01 else 1.0
        assert row["p_value"] == pytest.approx(expected)
        assert row["p_adjusted"] >= row["p_value"]


def test_compare_cli_on_the_real_gsm8k_logs(real, tmp_path, capsys) -> None:
    from evalcore.cli import main

    status = main(
        [
            "compare",
            str(real["lm_eval_results"]),
            str(real["inspect_ec_gsm8k"]),
            "--task",
            "ec_gsm8k",
            "--metric",
            "exact_match,flexible-extract",
            "--metric",
            "match",
            "--import-dir",
            str(tmp_path / "imp"),
            "-o",
            str(tmp_path / "out"),
            "--n-resamples",
            "500",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"aligned by question content (normalised question hash): {N_GSM8K} items" in out
    saved = json.loads((tmp_path / "out" / "compare.json").read_text())
    (row,) = saved["comparisons"]
    assert row["n"] == N_GSM8K and row["test"] == "mcnemar"
    assert (tmp_path / "out" / "compare.csv").read_text().startswith("name_a,name_b,n,")
