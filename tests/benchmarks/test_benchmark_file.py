"""A user's own benchmark in one YAML file (issue 32, item 2): run, rescore, compare, route and
browse it like a built-in; bad files are one error naming file, line and field (exit 2)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from evalcore.benchmarks import FileBenchmark, benchmark_of_run, get_benchmark, unregister
from evalcore.cli import main
from evalcore.errors import EvalcoreError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from conftest import CountingModel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "params" / "benchmarks" / "unit_conversion.yaml"
TRUTH = {
    json.loads(line)["question"]: json.loads(line)["answer"]
    for line in (EXAMPLE.parent / "unit_conversion.jsonl").read_text().splitlines()
}


@pytest.fixture(autouse=True)
def _forget():
    yield
    for name in ("unit_conversion", "caps", "letters", "code", "bad"):
        unregister(name)


def _answerer(wrong: set[str]):
    """Right on every question but those containing a word of ``wrong``."""

    def answer(user: str) -> str:
        for q, a in TRUTH.items():
            if q in user:
                return "The answer is 1." if any(w in q for w in wrong) else f"So it is {a} units. The answer is {a}."
        return "no idea"

    return answer


def _copy_example(tmp_path: Path) -> Path:
    dest = tmp_path / "bench"
    shutil.copytree(EXAMPLE.parent, dest)
    return dest / EXAMPLE.name


def test_the_example_runs_rescores_routes_and_browses_like_a_builtin(tmp_path):
    from evalcore.reporting import sample_browser_html
    from evalcore.routing import outcomes_from_runs
    from evalcore.runs import load_run, rescore, run_benchmark

    yaml_path = _copy_example(tmp_path)
    model = CountingModel(_answerer({"weeks", "yards", "pounds"}))
    path = run_benchmark(str(yaml_path), model, run_dir=tmp_path / "runs", cache=False, progress=False)
    run = load_run(path)
    assert path.name.startswith("unit_conversion-")
    assert run.config["dataset"] == "unit_conversion" and run.config["scorer"] == "exact_match"
    assert run.config["params"]["max_tokens"] == 48  # the file's generation settings
    assert run.config["benchmark"]["scorer"] == {"type": "number"}
    assert run.results["n_items"] == 12
    assert run.results["accuracy_flexible"]["mean"] == pytest.approx(9 / 12)
    assert run.results["parse_failure_rate"] == 0.0
    assert run.results["by_subject"]["time"] == {"mean": pytest.approx(3 / 4), "n": 4}
    first = model.seen[0][0]
    assert first[0] == {"role": "system", "content": "You convert units accurately."}
    assert first[-1]["content"].endswith("Give the number only, ending with: The answer is N.")
    scores = {s["item_id"]: s["scores"] for s in run.samples}
    assert scores["unit_conversion/uc-12"]["extracted_flexible"] == "1"  # 6 weeks: wrong answer
    assert scores["unit_conversion/uc-01"]["method_strict"] == "answer_is"

    # rescored elsewhere: neither the YAML nor the data file is needed (the config keeps the scorer)
    unregister("unit_conversion")
    shutil.rmtree(yaml_path.parent)
    again = rescore(path)
    assert again["accuracy_flexible"] == run.results["accuracy_flexible"]
    assert again["by_subject"] == run.results["by_subject"]

    # routing's outcome matrix and majority vote, the sample browser: as for a built-in
    m = outcomes_from_runs([path])
    assert m.quality.sum() == 9
    html = sample_browser_html(load_run(path))
    assert "unit_conversion (test, file)" in html and "75.0% (95% CI" in html


def test_the_cli_runs_it_from_a_recording_and_compares_two_runs(tmp_path, capsys):
    from evalcore.imports import compare_sources
    from evalcore.runs import run_benchmark

    yaml_path = _copy_example(tmp_path)
    first = run_benchmark(
        str(yaml_path),
        CountingModel(_answerer({"weeks"})),
        run_dir=tmp_path / "runs",
        run_id="a",
        cache=False,
        progress=False,
    )
    rc = main(
        [
            "run",
            str(yaml_path),
            "--model",
            f"replay:{first}",
            "--run-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "b",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "dataset: unit_conversion split test, source file, 12 items" in out
    assert re.search(r"accuracy flexible: 0\.917 \[", out)
    assert main(["rescore", str(tmp_path / "runs" / "b")]) == 0
    assert "changes: none" in capsys.readouterr().out
    cmp = compare_sources(
        [first, tmp_path / "runs" / "b"], labels=["a", "b"], import_dir=tmp_path / "imports", n_resamples=200
    )
    assert cmp.to_dict()["alignment"]["n_shared"] == 12
    pair = cmp.to_dict()["comparisons"][0]
    assert pair["n"] == 12 and pair["mean_a"] == pytest.approx(11 / 12)
    assert pair["difference"] == pytest.approx(0.0)


def _write(tmp_path: Path, yaml_text: str, rows: list[dict] | str | None = None, data: str = "items.jsonl") -> Path:
    d = tmp_path / "b"
    d.mkdir(exist_ok=True)
    if rows is not None:
        (d / data).write_text(rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows))
    (d / "bench.yaml").write_text(yaml_text)
    return d / "bench.yaml"


_GOOD = """\
name: bad
data: items.jsonl
answer_field: answer
scorer: number
prompt:
  user: "Q: {question}"
"""
_ROWS = [{"question": "1+1?", "answer": "2"}, {"question": "2+2?", "answer": "4"}]


@pytest.mark.parametrize(
    "yaml_text, rows, line, field, words",
    [
        (_GOOD.replace("scorer: number", "scorer: fuzzy"), _ROWS, 4, "scorer", "unknown scorer 'fuzzy'"),
        (_GOOD.replace("{question}", "{query}"), _ROWS, 6, "prompt.user", "uses {query}"),
        (
            _GOOD.replace("answer_field: answer", "answer_field: solution"),
            _ROWS,
            3,
            "answer_field",
            "column 'solution'",
        ),
        (_GOOD + "colour: red\n", _ROWS, 7, "colour", "unknown key"),
        (
            _GOOD.replace("scorer: number", "scorer:\n  type: exact\n  ignore_kase: true"),
            _ROWS,
            6,
            "scorer.ignore_kase",
            "unknown option",
        ),
        (_GOOD + "generation:\n  max_tokens: lots\n", _ROWS, 8, "generation.max_tokens", "must be int"),
    ],
)
def test_a_bad_benchmark_file_names_its_line_and_field(tmp_path, capsys, yaml_text, rows, line, field, words):
    path = _write(tmp_path, yaml_text, rows)
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(path))
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
    assert words in err.value.reason
    assert main(["run", str(path), "--model", "local:smollm2", "--run-dir", str(tmp_path / "r")]) == 2
    assert f"{path}, line {line}, field '{field}'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # nothing written


@pytest.mark.parametrize(
    "rows, line, field, words",
    [
        ("", None, "data", "holds no items"),
        ([_ROWS[0], {"question": "3+3?"}], 2, "answer", "missing or empty"),
        ([_ROWS[0], {"answer": "6"}], 2, "question", "missing or empty"),
        ([_ROWS[0], {"question": "x", "answer": "six"}], 2, "answer", ""),
        ('{"question": "1+1?", "answer": "2"}\n{"question": \n', 2, None, "invalid JSON"),
    ],
)
def test_a_bad_data_file_names_its_line_and_field(tmp_path, rows, line, field, words):
    path = _write(tmp_path, _GOOD, rows)
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(path))
    assert err.value.path == str((path.parent / "items.jsonl").resolve())
    assert (err.value.line, err.value.field) == (line, field)
    assert words in err.value.reason


def test_exact_string_scorer_normalizes_as_the_file_says(tmp_path):
    text = """\
name: caps
data: caps.csv
answer_field: capital
scorer:
  type: exact
  ignore_punctuation: true
  pattern: "capital is ([^\\\\n]+)"
prompt:
  user: "What is the capital of {country}?"
"""
    path = _write(tmp_path, text, "country,capital\nFrance,Paris\nPeru,Lima\n", data="caps.csv")
    bench = get_benchmark(str(path))
    items = bench.load()
    assert [(it.fields, it.reference) for it in items] == [
        ({"country": "France"}, "Paris"),
        ({"country": "Peru"}, "Lima"),
    ]
    s = bench.score("I think the capital is  PARIS.", "Paris", {})
    assert (s["score"], s["extracted_flexible"], s["method_flexible"]) == (1.0, "PARIS.", "pattern")
    s = bench.score("Paris", "Paris", {})  # the pattern is not there: a parse failure
    assert (s["score"], s["parse_failure_strict"], s["method_strict"]) == (0.0, True, "none")
    assert bench.answers_equal("lima!", "Lima") and not bench.answers_equal("Lim", "Lima")


def test_letter_scorer_reads_options_from_csv_columns(tmp_path):
    text = """\
name: letters
data: q.csv
answer_field: answer
scorer:
  type: letter
  choices_field: [a, b, c]
prompt:
  user: "{question}\\n{choices_text}"
"""
    path = _write(tmp_path, text, "question,a,b,c,answer\nRed planet?,Venus,Mars,Pluto,B\n", data="q.csv")
    bench = get_benchmark(str(path))
    item = bench.load()[0]
    assert item.fields["choices"] == ["Venus", "Mars", "Pluto"] and item.reference == "B"
    assert bench.prompt_fields(item)["choices_text"] == "(A) Venus\n(B) Mars\n(C) Pluto"
    assert bench.score("It's Mars", "B", item.fields)["flexible"] == 1.0  # the option's text
    bad = _write(tmp_path, text, "question,a,b,c,answer\nRed planet?,Venus,Mars,Pluto,Q\n", data="q.csv")
    with pytest.raises(EvalcoreError) as err:
        get_benchmark(str(bad))
    assert (err.value.line, err.value.field) == (2, "answer")


def test_code_scorer_runs_the_rows_tests(tmp_path):
    text = """\
name: code
data: code.jsonl
scorer:
  type: code
  prompt_field: stub
prompt:
  user: "Complete:\\n{stub}"
"""
    rows = [
        {
            "stub": 'def double(x):\n    """Twice x."""\n',
            "test": "def check(f):\n    assert f(2) == 4\n",
            "entry_point": "double",
        }
    ]
    path = _write(tmp_path, text, rows, data="code.jsonl")
    bench = get_benchmark(str(path))
    assert bench.scorer == "code_execution"
    item = bench.load()[0]
    assert bench.score("    return 2 * x\n", item.reference, item.fields)["passed"] is True
    assert bench.score("    return x + 1\n", item.reference, item.fields)["passed"] is False
    rebuilt = FileBenchmark.from_config(bench.to_config())
    rec = {"item_id": item.id, "epoch": 0, "completion": {"text": "    return x * 2"}, "item": item.fields}
    assert rebuilt.score_records([rec])[0]["score"] == 1.0


def test_a_builtin_name_is_refused_and_the_run_records_the_spec(tmp_path):
    path = _write(tmp_path, _GOOD.replace("name: bad", "name: gsm8k"), _ROWS)
    with pytest.raises(EvalcoreError, match="built-in") as err:
        get_benchmark(str(path))
    assert (err.value.line, err.value.field) == (1, "name")
    bench = get_benchmark(str(_write(tmp_path, _GOOD, _ROWS)))
    assert benchmark_of_run({"dataset": "bad", "benchmark": bench.to_config()}).to_config() == bench.to_config()


@pytest.mark.integration
def test_the_example_on_the_embedded_model(tmp_path, capsys):
    """``evalcore run params/benchmarks/unit_conversion.yaml --model local:smollm2 --limit 3``."""
    from evalcore.runs import load_run

    rc = main(
        [
            "run",
            str(EXAMPLE),
            "--model",
            "local:smollm2",
            "--limit",
            "3",
            "--no-progress",
            "--no-cache",
            "--run-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "local",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    run = load_run(tmp_path / "runs" / "local")
    assert run.results["n_scored"] == 3 and run.results["errors"] == 0
    assert all(s["completion"]["text"] and s["scores"]["method_flexible"] for s in run.samples)
    assert run.config["params"]["max_tokens"] == 48
    assert "accuracy flexible:" in out


def test_few_shot_examples_come_from_the_files_examples(tmp_path):
    from evalcore.runs import run_benchmark

    yaml_path = _copy_example(tmp_path)
    model = CountingModel(_answerer(set()))
    run_benchmark(str(yaml_path), model, limit=1, few_shot=2, run_dir=tmp_path / "runs", cache=False, progress=False)
    messages = model.seen[0][0]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    examples = (yaml_path.parent / "unit_conversion_examples.jsonl").read_text()
    assert all(m["content"].split("\n")[0] in examples for m in messages[1:5:2])
    assert messages[2]["content"].startswith("The answer is ")
    with pytest.raises(EvalcoreError, match="holds 3"):
        run_benchmark(
            str(yaml_path), model, limit=1, few_shot=4, run_dir=tmp_path / "runs", cache=False, progress=False
        )


def test_a_changed_benchmark_file_is_not_resumed(tmp_path):
    from evalcore.runs import run_benchmark

    yaml_path = _copy_example(tmp_path)
    model = CountingModel(_answerer(set()))
    run_benchmark(str(yaml_path), model, limit=2, run_dir=tmp_path / "runs", run_id="r", cache=False, progress=False)
    run_benchmark(
        str(yaml_path), model, limit=2, run_dir=tmp_path / "runs", run_id="r", cache=False, progress=False
    )  # unchanged: resumed, nothing asked again
    assert model.calls == 2
    yaml_path.write_text(yaml_path.read_text().replace("scorer: number", "scorer: exact"))
    with pytest.raises(
        EvalcoreError, match="different benchmark scorer: scorer.type changed: 'number' -> 'exact'"
    ) as err:
        run_benchmark(
            str(yaml_path), model, limit=2, run_dir=tmp_path / "runs", run_id="r", cache=False, progress=False
        )
    assert err.value.field == "benchmark.scorer.type"


def test_repeated_ids_and_reference_lists(tmp_path):
    rows = [{"id": "a", "question": "1+1?", "answer": "2"}, {"id": "a", "question": "2+2?", "answer": "4"}]
    path = _write(tmp_path, _GOOD.replace("scorer: number", "id_field: id\nscorer: number"), rows)
    with pytest.raises(EvalcoreError, match="repeated id 'bad/a' \\(first on line 1\\)") as err:
        get_benchmark(str(path))
    assert (err.value.line, err.value.field) == (2, "id")
    rows = [{"question": "Largest ocean?", "answer": ["Pacific", "the Pacific Ocean"]}]
    path = _write(tmp_path, _GOOD.replace("scorer: number", "scorer: exact"), rows)
    bench = get_benchmark(str(path))
    item = bench.load()[0]
    assert bench.score("The Pacific Ocean", item.reference, item.fields)["score"] == 1.0
    assert bench.score("Atlantic", item.reference, item.fields)["score"] == 0.0


def test_letter_answers_must_name_one_of_the_rows_options(tmp_path):
    text = """\
name: letters
data: q.jsonl
answer_field: answer
scorer:
  type: letter
  choices_field: options
prompt:
  user: "{question}\\n{choices_text}"
"""
    rows = [
        {"question": "Red planet?", "options": ["Venus", "Mars"], "answer": "B"},
        {"question": "Ringed?", "options": ["Saturn", "Mercury"], "answer": "C"},
    ]
    with pytest.raises(EvalcoreError, match="names no option") as err:
        get_benchmark(str(_write(tmp_path, text, rows, data="q.jsonl")))
    assert (err.value.line, err.value.field) == (2, "answer")
    rows[1] = {"question": "Ringed?", "options": list("abcdefghijk"), "answer": "A"}  # 11 options
    with pytest.raises(EvalcoreError, match="2 to 10") as err:
        get_benchmark(str(_write(tmp_path, text, rows, data="q.jsonl")))
    assert (err.value.line, err.value.field) == (2, "options")
    # an index is not shifted unasked: numbers need `labels: numbers` and a base (issue 36)
    rows[1] = {"question": "Ringed?", "options": ["Saturn", "Mercury"], "answer": 0}
    with pytest.raises(EvalcoreError, match="is a number but the labels are letters") as err:
        get_benchmark(str(_write(tmp_path, text, rows, data="q.jsonl")))
    assert (err.value.line, err.value.field) == (2, "answer")


def test_a_column_only_later_rows_have_is_missing_on_the_first(tmp_path):
    rows = [{"question": "1+1?", "answer": "2"}, {"question": "2+2?", "answer": "4", "hint": "even"}]
    path = _write(tmp_path, _GOOD.replace("Q: {question}", "Q: {question} ({hint})"), rows)
    with pytest.raises(EvalcoreError, match="missing or empty") as err:
        get_benchmark(str(path))
    assert (err.value.line, err.value.field) == (1, "hint")
