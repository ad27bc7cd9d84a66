"""Adding a benchmark touches its own folder plus one registry line (issue 40, what must hold).

A temporary package holds a toy fourth benchmark laid out as the built-ins are
(``toy_pkg/toy/``: the benchmark, its rows' reader, ``template.yaml``, ``samples/test.jsonl``)
and declares it with one line, an entry point of the ``evalcore.benchmarks`` group. Nothing of
evalcore changes, yet ``evalcore run``, ``evalcore score toy``, ``evalcore rescore`` and the
benchmark notebook (papermill, the smoke parameters) take it, and the scores of known answers
come out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalcore.benchmarks import benchmark_names, get_benchmark, refresh_plugins, unregister
from evalcore.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from conftest import CountingModel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

TOY = '''"""Toy: add two numbers; the answer is the sum (a fourth benchmark, for a test)."""

from pathlib import Path

from evalcore.benchmarks import BuiltinBenchmark, ExactMatchScoring
from evalcore.datasets import DatasetSource, Item, number_reference, read_jsonl, require_str, stable_hash


def _items(rows, split, source, origin):
    out = []
    for line, row in rows:
        question = require_str(row, "question", origin, line)
        out.append(
            Item(
                id=f"toy/{stable_hash(question)}",
                dataset="toy",
                fields={"question": question},
                reference=number_reference(row.get("answer")),
                metadata={"split": split, "source": source},
            )
        )
    return out


def read_local(path, split, source):
    file = path if path.is_file() else path / f"{split}.jsonl"
    return _items(read_jsonl(file), split, source, file)


def read_rows(records, split, origin, source):
    return _items(((i + 1, r) for i, r in enumerate(records)), split, source, origin)


class Toy(ExactMatchScoring, BuiltinBenchmark):
    name = "toy"
    answer_kind = "number"
    default_max_tokens = 16
    data = DatasetSource(
        name="toy",
        splits=("test",),
        hf_repo="example/toy",
        hf_config="default",
        sample_dir=Path(__file__).resolve().parent / "samples",
        sample_name="test.jsonl",
        few_shot_split="test",
        read_local=read_local,
        read_rows=read_rows,
    )


BENCHMARK = Toy()
'''
TEMPLATE = """name: toy-sum-v1
dataset: toy
system: You add numbers.
user: "What is {question}? End with: The answer is N."
answer: "The answer is {reference}."
"""
SUMS = [(2, 3), (10, 7), (40, 2), (8, 8), (100, 1)]
QUESTIONS = {f"{a} + {b}": a + b for a, b in SUMS}
WRONG = "8 + 8"  # the one question the model gets wrong


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy benchmark's folder in a temporary package, declared by one entry point."""
    site = tmp_path / "site"
    folder = site / "toy_pkg" / "toy"
    (folder / "samples").mkdir(parents=True)
    (site / "toy_pkg" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text(TOY)
    (folder / "template.yaml").write_text(TEMPLATE)
    rows = [{"question": q, "answer": str(s)} for q, s in QUESTIONS.items()]
    (folder / "samples" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    info = site / "toy_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-pkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalcore.benchmarks]\ntoy = toy_pkg.toy\n")  # the one line
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    refresh_plugins()
    yield site
    unregister("toy")
    for name in [m for m in sys.modules if m == "toy_pkg" or m.startswith("toy_pkg.")]:
        del sys.modules[name]
    monkeypatch.undo()
    refresh_plugins()


def _answer(user: str) -> str:
    q = next(q for q in QUESTIONS if f"What is {q}?" in user)
    return "The answer is 15." if q == WRONG else f"{q} = {QUESTIONS[q]}. The answer is {QUESTIONS[q]}."


def _record(tmp_path: Path) -> Path:
    from evalcore.runs import run_benchmark

    return run_benchmark(
        "toy", CountingModel(_answer), run_dir=tmp_path / "rec", run_id="rec", cache=False, progress=False
    )


def test_the_registry_lists_it_and_loads_its_folder(toy):
    assert benchmark_names()[:4] == ("gsm8k", "mmlu", "humaneval", "toy")
    bench = get_benchmark("toy")
    items = bench.load()
    assert [it.fields["question"] for it in items] == list(QUESTIONS)
    assert [it.reference for it in items] == ["5", "17", "42", "16", "101"]
    assert {it.metadata["source"] for it in items} == {"sample"}
    assert len(bench.load(limit=2, seed=1)) == 2
    assert bench.template_doc().source.endswith("toy_pkg/toy/template.yaml")


def test_run_score_and_rescore_take_it(toy, tmp_path, capsys):
    from evalcore.runs import load_run

    recorded = _record(tmp_path)
    first = load_run(recorded)
    assert first.config["dataset"] == "toy" and first.config["scorer"] == "exact_match"
    assert first.config["prompt"]["name"] == "toy-sum-v1"
    assert first.results["accuracy_flexible"]["mean"] == pytest.approx(4 / 5)

    # evalcore run: the replay model answers as recorded
    rc = main(["run", "toy", "--model", f"replay:{recorded}", "--run-dir", str(tmp_path / "runs"), "--run-id", "b"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert re.search(r"accuracy flexible: 0\.800 \[", out)
    scores = {s["item_id"]: s["scores"] for s in load_run(tmp_path / "runs" / "b").samples}
    assert sorted(s["extracted_flexible"] for s in scores.values()) == ["101", "15", "17", "42", "5"]

    # evalcore rescore: the same verdicts
    assert main(["rescore", str(tmp_path / "runs" / "b")]) == 0
    assert "changes: none" in capsys.readouterr().out

    # evalcore score toy FILE: an answers file, read as the toy's answer kind (numbers)
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"response": "The answer is 5.", "answer": "5"},
        {"response": "#### 1,000", "answer": "1000"},
        {"response": "I think 3", "answer": "4"},
        {"response": "no idea", "answer": "2"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "toy", str(answers)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["n"], summary["accuracy_flexible"], summary["accuracy_strict"]) == (4, 0.5, 0.5)
    results = [json.loads(x) for x in (tmp_path / "answers_results.jsonl").read_text().splitlines()]
    assert [r["extracted_flexible"] for r in results] == ["5", "1000", "3", None]


def test_a_fresh_process_finds_it_by_its_entry_point(toy, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"response": "So 42. The answer is 42.", "answer": 42}) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "evalcore.cli", "score", "toy", str(answers)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["accuracy_strict"] == 1.0
    listed = subprocess.run(
        [sys.executable, "-m", "evalcore.cli", "score", "--help"], capture_output=True, text=True, timeout=120
    )
    assert re.search(r"^\s+toy\s+score toy answers", listed.stdout, re.MULTILINE), listed.stdout


@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_the_benchmark_notebook_runs_it_with_the_smoke_parameters(toy, tmp_path):
    import papermill as pm

    from evalcore.runs import load_run

    recorded = _record(tmp_path)
    smoke = yaml.safe_load((ROOT / "params" / "smoke.yaml").read_text())["benchmark.ipynb"]
    parameters = {**smoke, "dataset": "toy", "model": f"replay:{recorded}"}
    parameters |= {"run_dir": str(tmp_path / "runs"), "run_id": "nb", "progress": False}
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(
        str(ROOT / "notebooks" / "benchmark.ipynb"),
        str(out),
        cwd=str(ROOT / "notebooks"),
        parameters=parameters,
        kernel_name="python3",
        progress_bar=False,
    )
    run = load_run(tmp_path / "runs" / "nb")
    chosen = get_benchmark("toy").load(limit=smoke["limit"], seed=0)  # the smoke run's seeded subset
    right = sum(it.fields["question"] != WRONG for it in chosen) / len(chosen)
    assert run.config["dataset"] == "toy" and run.results["n_items"] == smoke["limit"] == len(chosen)
    assert {s["item_id"] for s in run.samples} == {it.id for it in chosen}
    assert run.results["accuracy_flexible"]["mean"] == pytest.approx(right)
    shown = "\n".join(
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in json.loads(out.read_text())["cells"]
        for o in c.get("outputs", [])
    )
    assert f"**flexible: {right:.1%}**" in shown and "## Extraction audit" in shown
