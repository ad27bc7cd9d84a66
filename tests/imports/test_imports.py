"""Importers and ``evalcore compare`` on small logs written by real lm-eval and inspect_ai runs.

The fixtures under ``tests/imports/fixtures/`` were written by
``test_harness_integration.py`` (``EVALCORE_REFRESH_IMPORT_FIXTURES=1``): lm-eval 0.4 and
inspect_ai ran against the embedded SmolLM2 behind ``evalcore serve-local`` on a few shipped
GSM8K and MMLU items, and evalcore ran the same items.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.imports import (
    align_runs,
    aligned_scores,
    compare_sources,
    content_key,
    detect,
    import_inspect,
    import_lm_eval,
    import_log,
    normalise_question,
    run_scores,
    score_value,
)
from evalcore.runs import load_run

FIXTURES = Path(__file__).parent / "fixtures"
LM = FIXTURES / "lm_eval"
INS = FIXTURES / "inspect"
EC = FIXTURES / "evalcore"


def _results() -> Path:
    (path,) = LM.glob("results_*.json")
    return path


def _samples(task: str) -> Path:
    (path,) = LM.glob(f"samples_{task}_*.jsonl")
    return path


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture()
def lm_copy(tmp_path) -> Path:
    dest = tmp_path / "lm"
    shutil.copytree(LM, dest)
    return dest


def _in(folder: Path, pattern: str) -> Path:
    (path,) = folder.glob(pattern)
    return path


# --- content keys and score values -------------------------------------------------------


def test_normalised_question_ignores_case_width_and_wrapping_only() -> None:
    assert normalise_question("  How many\n apples?\t") == "how many apples?"
    assert content_key("How MANY apples?") == content_key("how many\napples?")
    assert content_key("How many apples?") != content_key("How many pears?")
    assert content_key("ｈｏｗ") == content_key("how")  # NFKC full-width
    assert content_key("") is None and content_key(None) is None


@pytest.mark.parametrize(
    "value, expected",
    [("C", 1.0), ("I", 0.0), ("P", 0.5), ("N", 0.0), (True, 1.0), (0, 0.0), (0.25, 0.25), ("yes", 1.0)],
)
def test_score_values_map_as_inspect_does(value, expected) -> None:
    assert score_value(value, path="x", line=None, name="m") == expected


def test_score_value_refuses_text() -> None:
    with pytest.raises(EvalcoreError, match="neither a number nor one of C, I, P, N"):
        score_value("maybe", path="log.json", line=3, name="match")


# --- lm-evaluation-harness -----------------------------------------------------------------


@pytest.mark.parametrize(
    "task, metric",
    [
        ("ec_gsm8k", "exact_match,flexible-extract"),
        ("ec_gsm8k", "exact_match,strict-match"),
        ("ec_mmlu", "exact_match,letter"),
    ],
)
def test_lm_eval_import_keeps_each_lines_metric_and_the_reported_mean(task, metric) -> None:
    results = json.loads(_results().read_text())
    (run,) = import_lm_eval(_results(), metric=[metric], task=task)
    flt = metric.split(",")[1]
    own = {ln["doc_id"]: float(ln["exact_match"]) for ln in _lines(_samples(task)) if ln["filter"] == flt}
    assert {s["metadata"]["doc_id"]: s["scores"]["score"] for s in run.samples} == own
    assert float(np.mean(list(own.values()))) == pytest.approx(results["results"][task][metric])
    assert run.reported[metric] == results["results"][task][metric]
    for s in run.samples:
        assert s["item_id"].startswith("doc:") and s["epoch"] == 0 and s["error"] is False
        assert s["metadata"]["content_key"] == content_key(s["item"]["question"])
        assert isinstance(s["completion"]["text"], str)
    assert run.config["imported"]["harness"] == "lm-evaluation-harness"
    assert run.config["imported"]["harness_version"] == results["lm_eval_version"]
    assert run.config["model_args"] == results["config"]["model_args"]
    assert run.config["task_config"]["task"] == task


def test_lm_eval_written_run_is_an_ordinary_run_directory(tmp_path) -> None:
    (path,) = import_log(_results(), tmp_path, metric=["exact_match,letter"], task="ec_mmlu")
    run = load_run(path)
    results = json.loads(_results().read_text())
    assert run.results["accuracy_flexible"]["mean"] == pytest.approx(
        results["results"]["ec_mmlu"]["exact_match,letter"]
    )
    assert run.results["n_samples"] == len(_lines(_samples("ec_mmlu")))
    assert run.config["run_id"] == path.name and run.config["imported"]["read_only"] is True
    assert run.frame()["score"].notna().all()
    # the same import again is not rewritten
    mtime = (path / "samples.jsonl").stat().st_mtime_ns
    assert import_log(_results(), tmp_path, metric=["exact_match,letter"], task="ec_mmlu") == [path]
    assert (path / "samples.jsonl").stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_lm_eval_samples_file_or_folder_are_accepted() -> None:
    by_file = import_lm_eval(_samples("ec_mmlu"))[0]
    assert by_file.config["task"] == "ec_mmlu"
    by_folder = import_lm_eval(LM, task="ec_mmlu")[0]
    assert [s["item_id"] for s in by_folder.samples] == [s["item_id"] for s in by_file.samples]


def test_lm_eval_several_filters_need_a_choice() -> None:
    with pytest.raises(
        EvalcoreError,
        match=r"several metrics \(exact_match,strict-match, "
        r"exact_match,flexible-extract\); pick one with --metric",
    ) as exc:
        import_lm_eval(_results(), task="ec_gsm8k")
    assert exc.value.path == str(_samples("ec_gsm8k"))
    with pytest.raises(EvalcoreError, match="ambiguous"):
        import_lm_eval(_results(), task="ec_gsm8k", metric=["exact_match"])


def test_lm_eval_different_order_aligns_by_document(lm_copy) -> None:
    """Two runs whose doc_ids and line order differ still pair the same documents."""
    samples = _in(lm_copy, "samples_ec_mmlu_*.jsonl")
    lines = _lines(samples)
    n = len(lines)
    shuffled = [dict(ln, doc_id=n - 1 - ln["doc_id"]) for ln in reversed(lines)]
    samples.write_text("".join(json.dumps(ln) + "\n" for ln in shuffled))
    a = import_lm_eval(_results(), task="ec_mmlu")[0]
    b = import_lm_eval(lm_copy, task="ec_mmlu")[0]
    sa = {s["item_id"]: (s["metadata"]["doc_id"], s["scores"]["score"]) for s in a.samples}
    sb = {s["item_id"]: (s["metadata"]["doc_id"], s["scores"]["score"]) for s in b.samples}
    assert set(sa) == set(sb)
    for k in sa:
        assert sa[k][1] == sb[k][1] and sa[k][0] == n - 1 - sb[k][0]


# --- format drift and malformed logs -------------------------------------------------------


@pytest.mark.parametrize("field", ["doc_id", "doc", "filtered_resps", "metrics"])
def test_format_drift_missing_sample_field_is_named(lm_copy, field) -> None:
    samples = _in(lm_copy, "samples_ec_mmlu_*.jsonl")
    lines = _lines(samples)
    del lines[1][field]
    samples.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    with pytest.raises(EvalcoreError) as exc:
        import_lm_eval(_in(lm_copy, "results_*.json"), task="ec_mmlu")
    assert exc.value.line == 2 and exc.value.field == field and exc.value.path == str(samples)
    assert "format drift" in str(exc.value)


def test_format_drift_missing_results_section_is_named(lm_copy) -> None:
    results = _in(lm_copy, "results_*.json")
    data = json.loads(results.read_text())
    del data["configs"]
    results.write_text(json.dumps(data))
    with pytest.raises(EvalcoreError, match="lacks a field the importer relies on") as exc:
        import_lm_eval(results, task="ec_mmlu")
    assert exc.value.field == "configs"


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _corrupt_truncated(folder: Path) -> tuple[Path, int]:
    samples = _in(folder, "samples_ec_mmlu_*.jsonl")
    data = samples.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 40  # 40 bytes into the last line
    samples.write_bytes(data[:cut])
    return samples, data[:cut].count(b"\n") + 1


def _corrupt_missing_metric(folder: Path) -> tuple[Path, int]:
    samples = _in(folder, "samples_ec_mmlu_*.jsonl")
    lines = _lines(samples)
    del lines[2]["exact_match"]
    samples.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    return samples, 3


def _corrupt_version(folder: Path) -> tuple[Path, int | None]:
    results = _in(folder, "results_*.json")
    data = json.loads(results.read_text())
    data["lm_eval_version"] = "0.9.0"
    results.write_text(json.dumps(data))
    return results, None


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (_corrupt_truncated, "sample line is truncated"),
        (_corrupt_missing_metric, "metric 'exact_match' is listed in 'metrics' but has no value"),
        (_corrupt_version, "unknown lm-eval version '0.9.0'"),
    ],
)
def test_malformed_lm_eval_log_one_clear_error_exit_2_nothing_left(lm_copy, tmp_path, capsys, corrupt, message) -> None:
    bad, line = corrupt(lm_copy)
    imports = tmp_path / "imported"
    status, out, err = _cli(
        [
            "compare",
            str(_in(lm_copy, "results_*.json")),
            str(INS / "ec_mmlu.eval"),
            "--task",
            "ec_mmlu",
            "--import-dir",
            str(imports),
            "-o",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("evalcore: error: ")
    assert message in err and str(bad) in err
    if line is not None:
        assert f"line {line}" in err
    assert not imports.exists() or list(imports.iterdir()) == []
    assert not (tmp_path / "out").exists()


def test_malformed_inspect_logs_are_refused_clearly(tmp_path) -> None:
    data = json.loads((INS / "ec_gsm8k.json").read_text())
    data["version"] = 99
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps(data))
    with pytest.raises(EvalcoreError, match="unknown inspect_ai log version 99") as exc:
        import_inspect(unknown)
    assert exc.value.path == str(unknown) and exc.value.field == "version"
    truncated = tmp_path / "truncated.json"
    text = (INS / "ec_gsm8k.json").read_text()
    truncated.write_text(text[: len(text) // 2])
    with pytest.raises(EvalcoreError, match="not valid JSON") as exc:
        import_inspect(truncated)
    assert exc.value.line is not None and exc.value.path == str(truncated)
    cut = tmp_path / "cut.eval"
    cut.write_bytes((INS / "ec_gsm8k.eval").read_bytes()[:300])
    with pytest.raises(EvalcoreError, match="inspect_ai could not read this log") as exc:
        import_inspect(cut)
    assert exc.value.path == str(cut)


def test_inspect_sample_without_the_chosen_score_is_named(tmp_path) -> None:
    data = json.loads((INS / "ec_mmlu.json").read_text())
    data["samples"][1]["scores"] = {}
    bad = tmp_path / "noscore.json"
    bad.write_text(json.dumps(data))
    sample_id = data["samples"][1]["id"]
    with pytest.raises(EvalcoreError, match=f"sample '{sample_id}' epoch 1 has no score 'choice'"):
        import_inspect(bad)


def test_a_write_that_fails_leaves_no_run_directory(tmp_path, monkeypatch) -> None:
    import evalcore.runs

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(evalcore.runs, "summarize", boom)
    with pytest.raises(RuntimeError):
        import_log(INS / "ec_mmlu.eval", tmp_path / "imp")
    assert not (tmp_path / "imp").exists() or list((tmp_path / "imp").iterdir()) == []


# --- inspect_ai ----------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["ec_gsm8k", "ec_mmlu"])
def test_inspect_eval_and_json_logs_import_the_same(task) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(INS / f"{task}.eval"))
    a = import_inspect(INS / f"{task}.eval")
    b = import_inspect(INS / f"{task}.json")
    strip = lambda r: [(s["item_id"], s["epoch"], s["scores"], s["metadata"]["content_key"]) for s in r.samples]  # noqa: E731
    assert strip(a) == strip(b)
    scorer = log.results.scores[0]
    assert a.config["imported"]["metric"] == scorer.name
    own = {str(s.id): {"C": 1.0, "I": 0.0}[s.scores[scorer.name].value] for s in log.samples}
    assert {s["item_id"]: s["scores"]["score"] for s in a.samples} == own
    assert float(np.mean(list(own.values()))) == pytest.approx(scorer.metrics["accuracy"].value)
    assert a.reported[f"{scorer.name}/accuracy"] == scorer.metrics["accuracy"].value
    assert a.config["model"] == "openai-api/local/smollm2"
    assert all(s["epoch"] == 0 and s["metadata"]["inspect_epoch"] == 1 for s in a.samples)
    assert all(s["completion"]["usage"].get("completion_tokens", 0) > 0 for s in a.samples)


def test_detect_tells_the_kinds_apart(tmp_path) -> None:
    assert detect(_results()) == "lm-eval" and detect(_samples("ec_mmlu")) == "lm-eval"
    assert detect(LM) == "lm-eval"
    assert detect(INS / "ec_mmlu.eval") == "inspect" and detect(INS / "ec_mmlu.json") == "inspect"
    assert detect(EC / "evalcore-mmlu") == "run"
    with pytest.raises(EvalcoreError, match=f"holds {len(list(INS.iterdir()))} inspect logs"):
        detect(INS)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(EvalcoreError, match="not a known log"):
        detect(tmp_path / "notes.txt")


# --- alignment and compare -----------------------------------------------------------------


def test_cross_harness_runs_align_by_question_content(tmp_path) -> None:
    scores = aligned_scores(
        [_results(), INS / "ec_mmlu.eval", EC / "evalcore-mmlu"],
        metric=["exact_match,letter", "choice", "flexible"],
        task="ec_mmlu",
        labels=["lm", "inspect", "evalcore"],
        import_dir=tmp_path,
    )
    keys = [set(s.index) for s in scores.values()]
    assert keys[0] == keys[1] == keys[2] and all(k.startswith("q:") for k in keys[0])
    ec = load_run(EC / "evalcore-mmlu")
    expected = {
        content_key(s["item"]["question"]): float(s["scores"]["flexible"]) for s in ec.samples if not s["error"]
    }
    assert scores["evalcore"].to_dict() == expected


def test_same_harness_runs_align_by_id(tmp_path) -> None:
    a = import_log(INS / "ec_mmlu.eval", tmp_path)[0]
    b = import_log(INS / "ec_mmlu.json", tmp_path / "b")[0]
    al = align_runs([run_scores(a, label="a"), run_scores(b, label="b")])
    assert al.key == "item_id" and al.shared == sorted(run_scores(a).by_id)


def test_compare_cli_prints_the_table_and_writes_csv_json(tmp_path, capsys) -> None:
    from scipy.stats import binomtest

    status, out, err = _cli(
        [
            "compare",
            str(LM),
            str(INS / "ec_mmlu.eval"),
            str(EC / "evalcore-mmlu"),
            "--task",
            "ec_mmlu",
            "--metric",
            "exact_match,letter",
            "--metric",
            "choice",
            "--metric",
            "flexible",
            "--correction",
            "bh",
            "--import-dir",
            str(tmp_path / "imp"),
            "-o",
            str(tmp_path / "out"),
            "--n-resamples",
            "300",
        ],
        capsys,
    )
    assert status == 0, err
    assert "aligned by question content (normalised question hash)" in out
    assert "A-B" in out and "MDD80" in out and "mcnemar" in out
    saved = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert len(saved["comparisons"]) == 3 and saved["correction"] == "bh"
    csv = (tmp_path / "out" / "compare.csv").read_text().splitlines()
    assert csv[0].startswith("name_a,name_b,n,mean_a,mean_b,difference,ci_low,ci_high,p_value,p_adjusted")
    assert len(csv) == 4
    runs = {r["label"]: r for r in saved["runs"]}
    series = aligned_scores(
        [LM, INS / "ec_mmlu.eval", EC / "evalcore-mmlu"],
        metric=["exact_match,letter", "choice", "flexible"],
        task="ec_mmlu",
        import_dir=tmp_path / "imp",
    )
    for row in saved["comparisons"]:
        a, b = series[row["name_a"]], series[row["name_b"]]
        common = a.index.intersection(b.index)
        xa, xb = a[common].to_numpy(), b[common].to_numpy()
        assert row["n"] == len(common) == saved["alignment"]["n_shared"]
        assert row["difference"] == pytest.approx(float((xa - xb).mean()))
        n10, n01 = int(((xa == 1) & (xb == 0)).sum()), int(((xa == 0) & (xb == 1)).sum())
        assert row["test"] == "mcnemar"
        assert row["p_value"] == pytest.approx(binomtest(n10, n10 + n01).pvalue if n10 + n01 else 1.0)
        assert row["p_adjusted"] >= row["p_value"] - 1e-12
    lm_info = next(r for r in runs.values() if r["harness"] == "lm-evaluation-harness")
    assert lm_info["mean"] == pytest.approx(lm_info["reported_by_harness"]["exact_match,letter"])


def test_compare_refuses_different_tasks_of_one_harness(tmp_path, capsys) -> None:
    status, _, err = _cli(
        [
            "compare",
            str(_samples("ec_gsm8k")),
            str(_samples("ec_mmlu")),
            "--metric",
            "exact_match,flexible-extract",
            "--metric",
            "exact_match,letter",
            "--import-dir",
            str(tmp_path / "imp"),
            "-o",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert status == 2 and err.count("\n") == 1
    assert "score different tasks (ec_gsm8k:" in err and "ec_mmlu:" in err
    assert not (tmp_path / "o").exists()


def test_compare_refuses_runs_sharing_no_items(tmp_path, capsys) -> None:
    status, _, err = _cli(
        [
            "compare",
            str(INS / "ec_gsm8k.eval"),
            str(_samples("ec_mmlu")),
            "--import-dir",
            str(tmp_path / "imp"),
            "-o",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert status == 2 and err.count("\n") == 1
    assert "share no items (matched by question content" in err


def test_compare_reports_unmatched_items_with_examples(tmp_path, capsys) -> None:
    data = json.loads((INS / "ec_mmlu.json").read_text())
    dropped = data["samples"].pop(0)
    smaller = tmp_path / "smaller.json"
    smaller.write_text(json.dumps(data))
    cmp = compare_sources([_results(), smaller], task="ec_mmlu", import_dir=tmp_path / "imp", n_resamples=200)
    lm_label = cmp.runs[0]["label"]
    assert cmp.alignment.unmatched[lm_label]["count"] == 1
    assert len(cmp.alignment.shared) == len(data["samples"])
    assert dropped["input"][:20].lower() in cmp.alignment.unmatched[lm_label]["examples"][0].lower()


def test_import_cli_reports_harness_numbers(tmp_path, capsys) -> None:
    status, out, err = _cli(
        [
            "import",
            str(INS / "ec_gsm8k.eval"),
            str(_results()),
            "--metric",
            "exact_match,strict-match",
            "--metric",
            "exact_match,letter",
            "--metric",
            "match",
            "--run-dir",
            str(tmp_path),
        ],
        capsys,
    )
    assert status == 0, err
    assert out.count("harness reported") == 3  # inspect gsm8k, lm-eval gsm8k and mmlu
    assert len(list(tmp_path.iterdir())) == 3


@pytest.mark.parametrize(
    "task, metric",
    [
        ("ec_gsm8k", "exact_match,flexible-extract"),
        ("ec_gsm8k", "exact_match,strict-match"),
        ("ec_mmlu", "exact_match,letter"),
    ],
)
def test_imported_means_equal_what_lm_eval_printed(task, metric, lm_eval_printed) -> None:
    (run,) = import_lm_eval(_results(), metric=[metric], task=task)
    printed = lm_eval_printed((FIXTURES / "lm_eval_printed.txt").read_text(), task, "exact_match", metric.split(",")[1])
    mean = float(np.mean([s["scores"]["score"] for s in run.samples]))
    assert mean == pytest.approx(printed, abs=5e-4)  # lm-eval prints 3 or 4 decimals


@pytest.mark.parametrize("task", ["ec_gsm8k", "ec_mmlu"])
def test_imported_means_equal_what_inspect_printed(task, inspect_printed) -> None:
    run = import_inspect(INS / f"{task}.eval")
    printed = inspect_printed((FIXTURES / f"inspect_{task}_printed.txt").read_text(), "accuracy")
    assert float(np.mean([s["scores"]["score"] for s in run.samples])) == pytest.approx(printed, abs=5e-4)
    assert run.reported[run.config["imported"]["metric"]] == pytest.approx(printed, abs=5e-4)


def test_imported_samples_carry_the_question_for_routing(tmp_path) -> None:
    from evalcore.routing import outcomes_from_runs

    a = import_log(INS / "ec_mmlu.eval", tmp_path / "a")[0]
    b = import_log(INS / "ec_mmlu.json", tmp_path / "b")[0]
    matrix = outcomes_from_runs({"eval": [a], "json": [b]})
    questions = {s["metadata"]["query"] for s in load_run(a).samples}
    assert set(matrix.queries) == questions and len(questions) == 8


def test_lm_eval_group_is_one_run_of_its_subtasks(lm_copy) -> None:
    results_path = _in(lm_copy, "results_*.json")
    data = json.loads(results_path.read_text())
    data["group_subtasks"] = {"top": ["grp"], "grp": ["ec_mmlu"], "ec_mmlu": [], "ec_gsm8k": []}
    data["results"]["top"] = {"alias": "top", "exact_match,letter": 0.125}
    results_path.write_text(json.dumps(data))
    (group,) = import_lm_eval(results_path, task="top")
    (single,) = import_lm_eval(_results(), task="ec_mmlu")
    assert [s["item_id"] for s in group.samples] == [s["item_id"] for s in single.samples]
    assert {s["metadata"]["subtask"] for s in group.samples} == {"ec_mmlu"}
    assert group.config["imported"]["subtasks"] == ["ec_mmlu"] and group.config["task"] == "top"
    assert group.reported["exact_match,letter"] == 0.125
    with pytest.raises(EvalcoreError, match="no samples for task 'nope'; the log has top, grp, "):
        import_lm_eval(results_path, task="nope")


def test_a_task_named_like_an_evalcore_dataset_is_not_scored_by_its_rules(lm_copy, tmp_path) -> None:
    results_path = _in(lm_copy, "results_*.json")
    samples = _in(lm_copy, "samples_ec_mmlu_*.jsonl")
    data = json.loads(results_path.read_text())
    data["results"]["mmlu"] = data["results"].pop("ec_mmlu")
    data["configs"]["mmlu"] = data["configs"].pop("ec_mmlu")
    results_path.write_text(json.dumps(data))
    samples.rename(samples.with_name(samples.name.replace("samples_ec_mmlu_", "samples_mmlu_")))
    (path,) = import_log(results_path, tmp_path, task="mmlu")
    res = load_run(path).results
    assert res["dataset"] == "mmlu" and res["parse_failure_rate"] is None and "by_subject" not in res
    assert res["accuracy_flexible"]["mean"] == pytest.approx(0.125)


def test_compare_clustered_by_subject_uses_the_clustered_paired_test(tmp_path, capsys) -> None:
    from evalcore.stats import clustered_difference, wild_cluster_bootstrap

    sources = [_results(), INS / "ec_mmlu.eval", EC / "evalcore-mmlu"]
    metric = ["exact_match,letter", "choice", "flexible"]
    cmp = compare_sources(
        sources,
        metric=metric,
        task="ec_mmlu",
        labels=["lm", "inspect", "ec"],
        import_dir=tmp_path,
        n_resamples=200,
        cluster="subject",
    )
    ec = load_run(EC / "evalcore-mmlu")
    subject = {content_key(s["item"]["question"]): s["metadata"]["subject"] for s in ec.samples}
    assert cmp.alignment.clusters == subject  # the lm-eval doc, inspect metadata and evalcore agree
    series = aligned_scores(sources, metric=metric, task="ec_mmlu", labels=["lm", "inspect", "ec"], import_dir=tmp_path)
    for _, row in cmp.table.iterrows():
        a, b = series[row["name_a"]], series[row["name_b"]]
        keys = sorted(set(a.index) & set(b.index))
        x, y, g = a[keys].to_numpy(), b[keys].to_numpy(), [subject[k] for k in keys]
        # few subjects (at most 12): the wild cluster bootstrap; the CR1 t-test's p alongside
        expected = wild_cluster_bootstrap(x, y, g, n_resamples=200)
        assert row["test"] == "wild_cluster" and row["n_clusters"] == len(set(subject.values()))
        assert row["clustered_p"] == pytest.approx(clustered_difference(x, y, g).p_value, nan_ok=True)
        assert row["p_value"] == pytest.approx(expected.p_value, nan_ok=True)
        assert row["ci_low"] == pytest.approx(expected.ci_low, nan_ok=True)
    status, out, err = _cli(
        [
            "compare",
            *map(str, sources[:2]),
            "--task",
            "ec_mmlu",
            "--cluster",
            "nope",
            "--import-dir",
            str(tmp_path),
            "-o",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert status == 2 and "no run records the metadata field 'nope'" in err


# --- all or nothing across the logs of one command -----------------------------------------


def _listing(folder: Path) -> list[str]:
    """Every entry of a folder, hidden ones (staging folders) included; [] when absent."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture()
def import_dir(tmp_path) -> tuple[Path, list[str]]:
    """An import folder that already holds one imported run (which must survive untouched)."""
    imports = tmp_path / "imported"
    import_log(INS / "ec_gsm8k.json", imports)
    return imports, _listing(imports)


@pytest.mark.parametrize("command", ["compare", "import"])
def test_a_valid_log_then_a_malformed_one_leaves_nothing_new(lm_copy, tmp_path, capsys, import_dir, command) -> None:
    """The valid first log's run is not left behind when the second log is refused."""
    imports, before = import_dir
    bad, line = _corrupt_truncated(lm_copy)
    sources = [str(INS / "ec_mmlu.eval"), str(_in(lm_copy, "results_*.json"))]
    if command == "compare":
        args = ["compare", *sources, "--task", "ec_mmlu", "--import-dir", str(imports), "-o", str(tmp_path / "out")]
    else:
        args = ["import", *sources, "--task", "ec_mmlu", "--run-dir", str(imports)]
    status, out, err = _cli(args, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("evalcore: error: ")
    assert str(bad) in err and f"line {line}" in err and "sample line is truncated" in err
    assert _listing(imports) == before  # no run of ec_mmlu.eval, no staging folder
    assert not (tmp_path / "out").exists()


def test_a_malformed_log_into_a_new_import_dir_leaves_no_folder(lm_copy, tmp_path, capsys) -> None:
    bad, _ = _corrupt_missing_metric(lm_copy)
    imports = tmp_path / "new" / "imported"
    status, _, err = _cli(
        [
            "compare",
            str(INS / "ec_mmlu.eval"),
            str(_in(lm_copy, "results_*.json")),
            "--task",
            "ec_mmlu",
            "--import-dir",
            str(imports),
            "-o",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert status == 2 and str(bad) in err and "line 3" in err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "sources, message",
    [
        ([INS / "ec_gsm8k.eval", _samples("ec_mmlu")], "share no items (matched by question content"),
        ([_samples("ec_gsm8k"), _samples("ec_mmlu")], "score different tasks (ec_gsm8k:"),
    ],
)
def test_a_refused_comparison_leaves_nothing_new(tmp_path, capsys, import_dir, sources, message) -> None:
    imports, before = import_dir
    status, _, err = _cli(
        [
            "compare",
            *map(str, sources),
            "--metric",
            "exact_match,letter",
            "--metric",
            "exact_match,flexible-extract",
            "--metric",
            "match",
            "--import-dir",
            str(imports),
            "-o",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert status == 2 and err.count("\n") == 1 and message in err
    assert _listing(imports) == before
    assert not (tmp_path / "o").exists()


def test_a_successful_compare_puts_every_run_in_place(tmp_path, capsys, import_dir) -> None:
    imports, before = import_dir
    status, _, err = _cli(
        [
            "compare",
            str(INS / "ec_gsm8k.json"),
            str(INS / "ec_gsm8k.eval"),
            str(LM),
            "--task",
            "ec_gsm8k",
            "--metric",
            "match",
            "--metric",
            "exact_match,flexible-extract",
            "--import-dir",
            str(imports),
            "-o",
            str(tmp_path / "o"),
            "--n-resamples",
            "200",
        ],
        capsys,
    )
    assert status == 0, err
    after = _listing(imports)
    assert not any(name.startswith(".") for name in after)  # no staging folder left
    new = sorted(set(after) - set(before))
    assert len(new) == 2 and set(before) <= set(after)  # the .json run was already there
    saved = json.loads((tmp_path / "o" / "compare.json").read_text())
    paths = {Path(r["path"]) for r in saved["runs"]}
    assert paths == {imports / name for name in after}  # final paths, not staged ones
    for p in paths:
        assert load_run(p).config["imported"]["read_only"] is True


def test_compare_sources_and_aligned_scores_are_all_or_nothing(lm_copy, tmp_path) -> None:
    _corrupt_truncated(lm_copy)
    for call in (compare_sources, aligned_scores):
        with pytest.raises(EvalcoreError, match="sample line is truncated"):
            call([INS / "ec_mmlu.eval", _in(lm_copy, "results_*.json")], task="ec_mmlu", import_dir=tmp_path / "imp")
        assert _listing(tmp_path / "imp") == []


def test_import_batch_stages_until_the_block_ends(tmp_path) -> None:
    from evalcore.imports import import_batch

    imports = tmp_path / "imp"
    with import_batch() as batch:
        (staged,) = import_log(INS / "ec_mmlu.eval", imports)
        assert staged.parent.name.startswith(".evalcore-import-") and staged.parent.parent == imports
        assert load_run(staged).run_id == staged.name  # readable while staged
        assert [p.name for p in imports.iterdir()] == [staged.parent.name]
    final = batch.final_path(staged)
    assert final == imports / staged.name and load_run(final).run_id == final.name
    assert _listing(imports) == [final.name]
    with pytest.raises(RuntimeError, match="later failure"), import_batch():
        import_log(INS / "ec_gsm8k.eval", imports)
        raise RuntimeError("later failure")
    assert _listing(imports) == [final.name]


# --- malformed inspect logs through the command line ---------------------------------------


def _inspect_truncated_json(tmp_path: Path) -> tuple[Path, str]:
    text = (INS / "ec_mmlu.json").read_text()
    bad = tmp_path / "truncated.json"
    bad.write_text(text[: len(text) // 2])
    return bad, "not valid JSON"


def _inspect_unknown_version(tmp_path: Path) -> tuple[Path, str]:
    data = json.loads((INS / "ec_mmlu.json").read_text())
    data["version"] = 99
    bad = tmp_path / "unknown.json"
    bad.write_text(json.dumps(data))
    return bad, "unknown inspect_ai log version 99"


def _inspect_cut_eval(tmp_path: Path) -> tuple[Path, str]:
    bad = tmp_path / "cut.eval"
    bad.write_bytes((INS / "ec_mmlu.eval").read_bytes()[:300])
    return bad, "inspect_ai could not read this log"


def _inspect_missing_score(tmp_path: Path) -> tuple[Path, str]:
    data = json.loads((INS / "ec_mmlu.json").read_text())
    data["samples"][2]["scores"] = {}
    bad = tmp_path / "noscore.json"
    bad.write_text(json.dumps(data))
    return bad, f"sample '{data['samples'][2]['id']}' epoch 1 has no score 'choice'"


@pytest.mark.parametrize(
    "corrupt", [_inspect_truncated_json, _inspect_unknown_version, _inspect_cut_eval, _inspect_missing_score]
)
def test_malformed_inspect_log_one_clear_error_exit_2_nothing_left(tmp_path, capsys, corrupt) -> None:
    bad, message = corrupt(tmp_path)
    imports = tmp_path / "imported"
    # a valid lm-eval log first: its run must not stay behind either
    status, out, err = _cli(
        [
            "compare",
            str(_results()),
            str(bad),
            "--task",
            "ec_mmlu",
            "--import-dir",
            str(imports),
            "-o",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"evalcore: error: {bad}")
    assert message in err
    if bad.name == "truncated.json":
        assert ", line " in err
    assert _listing(imports) == []
    assert not (tmp_path / "out").exists()


# --- inspect_ai: several epochs ------------------------------------------------------------

INS_EPOCHS = FIXTURES / "inspect_epochs"


@pytest.mark.parametrize("name", ["ec_gsm8k_2epochs.eval", "ec_gsm8k_2epochs.json"])
def test_inspect_epochs_are_kept_as_epochs(name, inspect_printed) -> None:
    """A real two-epoch log (inspect_ai's mockllm/model; fixtures/make_inspect_epochs.py)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(INS_EPOCHS / name))
    run = import_inspect(INS_EPOCHS / name)
    own = {(str(s.id), s.epoch - 1): {"C": 1.0, "I": 0.0}[s.scores["match"].value] for s in log.samples}
    got = {(s["item_id"], s["epoch"]): s["scores"]["score"] for s in run.samples}
    assert got == own and len(got) == 6
    by_item: dict[str, list[int]] = {}
    for s in run.samples:
        by_item.setdefault(s["item_id"], []).append(s["epoch"])
        assert s["metadata"]["inspect_epoch"] == s["epoch"] + 1
    assert {k: sorted(v) for k, v in by_item.items()} == {"g0": [0, 1], "g1": [0, 1], "g2": [0, 1]}
    assert run.config["epochs"] == 2 and run.config["n_items"] == 3
    assert run.config["item_ids"] == ["g0", "g1", "g2"]
    # the epochs differ (g1 wrong, then right): nothing was collapsed or overwritten
    assert got[("g1", 0)] == 0.0 and got[("g1", 1)] == 1.0
    printed = inspect_printed((INS_EPOCHS / "printed.txt").read_text(), "accuracy")
    assert run.reported["match"] == pytest.approx(printed, abs=5e-4)
    assert float(np.mean(list(got.values()))) == pytest.approx(printed, abs=5e-4)


def test_inspect_epochs_written_run_scores_each_item_by_its_epoch_mean(tmp_path) -> None:
    (path,) = import_log(INS_EPOCHS / "ec_gsm8k_2epochs.eval", tmp_path)
    run = load_run(path)
    assert sorted((s["item_id"], s["epoch"]) for s in run.samples) == [
        (i, e) for i in ("g0", "g1", "g2") for e in (0, 1)
    ]
    assert run_scores(path).by_id == {"g0": 1.0, "g1": 0.5, "g2": 0.0}


def test_two_epoch_inspect_log_pairs_with_one_epoch_runs_on_items(tmp_path) -> None:
    """Paired by sample id with the one-epoch inspect log of the same task, by question with
    lm-eval's: each item's epoch mean against the other run's score for that item."""
    from scipy.stats import ttest_rel

    two = INS_EPOCHS / "ec_gsm8k_2epochs.eval"
    one = run_scores(import_log(INS / "ec_gsm8k.eval", tmp_path / "a")[0])
    cmp = compare_sources(
        [two, INS / "ec_gsm8k.eval"], labels=["two", "one"], import_dir=tmp_path / "imp", n_resamples=200
    )
    assert cmp.alignment.key == "item_id" and cmp.alignment.shared == ["g0", "g1", "g2"]
    two_scores = cmp.alignment.series["two"]
    assert two_scores.to_dict() == {"g0": 1.0, "g1": 0.5, "g2": 0.0}
    assert cmp.alignment.series["one"].to_dict() == one.by_id
    (row,) = cmp.table.to_dict(orient="records")
    xa = two_scores.to_numpy()
    xb = cmp.alignment.series["one"][two_scores.index].to_numpy()
    assert row["n"] == 3 and row["difference"] == pytest.approx(float((xa - xb).mean()))
    assert row["test"] == "paired_t"  # epoch means are not 0/1: no McNemar
    assert row["p_value"] == pytest.approx(ttest_rel(xa, xb).pvalue, nan_ok=True)
    # across harnesses: the same three questions, matched by content
    cross = compare_sources(
        [two, _results()],
        task="ec_gsm8k",
        metric=["match", "exact_match,flexible-extract"],
        labels=["two", "lm"],
        import_dir=tmp_path / "imp",
        n_resamples=200,
    )
    assert cross.alignment.key == "content" and len(cross.alignment.shared) == 3
    lm = {
        s["metadata"]["content_key"]: s["scores"]["score"]
        for s in import_lm_eval(_results(), task="ec_gsm8k", metric=["exact_match,flexible-extract"])[0].samples
    }
    assert cross.alignment.series["lm"].to_dict() == lm
    two_run = import_inspect(two)
    by_key: dict[str, list[float]] = {}
    for s in two_run.samples:
        by_key.setdefault(s["metadata"]["content_key"], []).append(s["scores"]["score"])
    assert cross.alignment.series["two"].to_dict() == {k: float(np.mean(v)) for k, v in by_key.items()}


# --- lm-evaluation-harness: log-likelihood multiple choice (acc, acc_norm) ------------------

LM_MC = FIXTURES / "lm_eval_mc"


def test_lm_eval_acc_and_acc_norm_need_a_choice() -> None:
    """A real multiple-choice run (lm-eval's dummy model; fixtures/make_lm_eval_mc.py)."""
    with pytest.raises(
        EvalcoreError,
        match=r"several metrics \(acc,none, acc_norm,none\); "
        r"pick one with --metric",
    ):
        import_lm_eval(LM_MC)


@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_lm_eval_acc_metrics_import_with_lm_evals_own_numbers(metric, lm_eval_printed) -> None:
    (results_path,) = LM_MC.glob("results_*.json")
    (samples_path,) = LM_MC.glob("samples_ec_mmlu_mc_*.jsonl")
    results = json.loads(results_path.read_text())
    lines = _lines(samples_path)
    (run,) = import_lm_eval(LM_MC, metric=[metric])
    assert run.config["imported"]["metric"] == f"{metric},none"
    own = {ln["doc_id"]: float(ln[metric]) for ln in lines}
    assert {s["metadata"]["doc_id"]: s["scores"]["score"] for s in run.samples} == own
    printed = lm_eval_printed((FIXTURES / "lm_eval_mc_printed.txt").read_text(), "ec_mmlu_mc", metric, "none")
    mean = float(np.mean(list(own.values())))
    assert mean == pytest.approx(printed, abs=5e-4)
    assert mean == pytest.approx(results["results"]["ec_mmlu_mc"][f"{metric},none"])
    assert run.reported[f"{metric},none"] == results["results"]["ec_mmlu_mc"][f"{metric},none"]
    for s, ln in zip(run.samples, lines):
        # both metrics kept; the log-likelihood pairs are the completion, as lm-eval logged them
        assert s["scores"]["acc,none"] == ln["acc"] and s["scores"]["acc_norm,none"] == ln["acc_norm"]
        assert s["completion"]["raw"] == ln["resps"]
        assert json.loads(s["completion"]["text"]) == ln["filtered_resps"]
        assert s["item"]["question"] == ln["doc"]["question"] and s["epoch"] == 0


def test_lm_eval_acc_and_acc_norm_differ_so_the_choice_matters(tmp_path, capsys) -> None:
    acc, acc_norm = (import_lm_eval(LM_MC, metric=[m])[0] for m in ("acc", "acc_norm"))
    a = {s["item_id"]: s["scores"]["score"] for s in acc.samples}
    b = {s["item_id"]: s["scores"]["score"] for s in acc_norm.samples}
    assert set(a) == set(b) and a != b
    assert acc.run_id != acc_norm.run_id  # two imports, one per metric
    # compared with inspect's run of the same eight questions, by content, per --metric
    for metric, own in (("acc", a), ("acc_norm", b)):
        out_dir = tmp_path / metric
        status, _, err = _cli(
            [
                "compare",
                str(LM_MC),
                str(INS / "ec_mmlu.eval"),
                "--metric",
                metric,
                "--metric",
                "choice",
                "--import-dir",
                str(tmp_path / "imp"),
                "-o",
                str(out_dir),
                "--n-resamples",
                "200",
            ],
            capsys,
        )
        assert status == 0, err
        saved = json.loads((out_dir / "compare.json").read_text())
        assert saved["alignment"]["n_shared"] == 8 and saved["alignment"]["key"] == "content"
        lm_info = saved["runs"][0]
        assert lm_info["metric"] == f"{metric},none"
        assert lm_info["mean"] == pytest.approx(float(np.mean(list(own.values()))))
        (row,) = saved["comparisons"]
        assert row["test"] == "mcnemar" and row["n"] == 8
