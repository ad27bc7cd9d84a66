"""A YAML letter scorer states its labels (issue 36): letters A-J or numbers with a stated base;
up to ten options; nothing shifted unasked; a bad label is one line naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.benchmarks import get_benchmark, unregister
from evalcore.cli import main
from evalcore.errors import EvalcoreError

PLANETS = ["Mercury", "Venus", "Earth", "Mars", "Jupiter"]


@pytest.fixture(autouse=True)
def _forget():
    yield
    unregister("labels")


def _yaml(scorer: str) -> str:
    user = "{question}\\n{choices_text}" if "choices_field" in scorer else "{question}"
    return f"""\
name: labels
data: q.jsonl
answer_field: answer
scorer:
  type: letter
{scorer}prompt:
  user: "{user}"
"""


def _write(tmp_path: Path, yaml_text: str, rows: list[dict]) -> Path:
    d = tmp_path / "b"
    d.mkdir(exist_ok=True)
    (d / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "bench.yaml").write_text(yaml_text)
    return d / "bench.yaml"


def test_five_options_are_prompted_and_scored_with_e(tmp_path):
    rows = [{"question": "Largest planet?", "options": PLANETS, "answer": "E"}]
    bench = get_benchmark(str(_write(tmp_path, _yaml("  choices_field: options\n"), rows)))
    item = bench.load()[0]
    assert item.reference == "E"
    assert bench.prompt_fields(item)["choices_text"].splitlines()[-1] == "(E) Jupiter"
    assert bench.score("The answer is E.", item.reference, item.fields)["score"] == 1.0
    assert bench.score("It is Jupiter", item.reference, item.fields)["score"] == 1.0
    assert bench.score("The answer is D.", item.reference, item.fields)["score"] == 0.0


@pytest.mark.parametrize(("base", "answers"), [(1, ["1", 2, "5"]), (0, [0, "1", 4])])
def test_numeric_labels_are_read_from_the_stated_base(tmp_path, base, answers):
    rows = [{"question": f"q{i}?", "options": PLANETS, "answer": a} for i, a in enumerate(answers)]
    scorer = f"  choices_field: options\n  labels: numbers\n  base: {base}\n"
    bench = get_benchmark(str(_write(tmp_path, _yaml(scorer), rows)))
    assert [it.reference for it in bench.load()] == ["A", "B", "E"]


def test_options_count_without_option_texts(tmp_path):
    rows = [{"question": "Pick the sixth.", "answer": "F"}]
    bench = get_benchmark(str(_write(tmp_path, _yaml("  options: 6\n"), rows)))
    item = bench.load()[0]
    assert bench.score("Answer: F", item.reference, item.fields)["score"] == 1.0
    rows = [{"question": "Pick the sixth.", "answer": "F"}]
    with pytest.raises(EvalcoreError, match="names no option") as err:  # default: four options
        get_benchmark(str(_write(tmp_path, _yaml(""), rows)))
    assert (err.value.line, err.value.field) == (1, "answer")


@pytest.mark.parametrize(
    ("scorer", "rows", "line", "field", "words"),
    [
        ("  labels: numbers\n", [{"question": "q", "answer": 1}], 6, "scorer.labels", "base: 0 or base: 1"),
        ("  labels: numbers\n  base: 2\n", [{"question": "q", "answer": 1}], 7, "scorer.base", "unknown label base"),
        ("  labels: roman\n", [{"question": "q", "answer": "A"}], 6, "scorer.labels", "unknown labels"),
        ("  base: 1\n", [{"question": "q", "answer": "A"}], 6, "scorer.base", "numeric labels only"),
        ("  options: 11\n", [{"question": "q", "answer": "A"}], 6, "scorer.options", "2 to 10"),
    ],
)
def test_a_bad_label_setting_names_the_yaml_line_and_field(tmp_path, capsys, scorer, rows, line, field, words):
    path = _write(tmp_path, _yaml(scorer), rows)
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(path))
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
    assert words in err.value.reason
    assert main(["run", str(path), "--model", "local:smollm2", "--run-dir", str(tmp_path / "r")]) == 2
    out = capsys.readouterr().err
    assert f"{path}, line {line}, field '{field}'" in out and len(out.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("scorer", "answer", "words"),
    [
        ("  choices_field: options\n", "F", "names no option"),
        ("  choices_field: options\n", 2, "is a number but the labels are letters"),  # never read as C
        ("  choices_field: options\n  labels: numbers\n  base: 1\n", 0, "option numbers 1-5"),
        ("  choices_field: options\n  labels: numbers\n  base: 1\n", "B", "option numbers 1-5"),
    ],
)
def test_a_reference_outside_the_labels_names_the_data_line(tmp_path, capsys, scorer, answer, words):
    rows = [
        {"question": "Largest?", "options": PLANETS, "answer": 5 if "numbers" in scorer else "E"},
        {"question": "Smallest?", "options": PLANETS, "answer": answer},
    ]
    path = _write(tmp_path, _yaml(scorer), rows)
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(path))
    assert (err.value.line, err.value.field) == (2, "answer") and words in err.value.reason
    assert err.value.path.endswith("q.jsonl")
    assert main(["run", str(path), "--model", "local:smollm2", "--run-dir", str(tmp_path / "r")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
