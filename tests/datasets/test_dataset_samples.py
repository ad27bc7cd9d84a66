"""The shipped samples: sizes, native formats, correct arithmetic and answers."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from fractions import Fraction

import pytest

from _exact_arith import arith
from evalcore.benchmarks import load, sample_path
from evalcore.evaluators import ExactMatchEvaluator

MMLU_SUBJECTS = set(
    """abstract_algebra anatomy astronomy business_ethics clinical_knowledge college_biology college_chemistry
    college_computer_science college_mathematics college_medicine college_physics computer_security
    conceptual_physics econometrics electrical_engineering elementary_mathematics formal_logic global_facts
    high_school_biology high_school_chemistry high_school_computer_science high_school_european_history
    high_school_geography high_school_government_and_politics high_school_macroeconomics
    high_school_mathematics high_school_microeconomics high_school_physics high_school_psychology
    high_school_statistics high_school_us_history high_school_world_history human_aging human_sexuality
    international_law jurisprudence logical_fallacies machine_learning management marketing medical_genetics
    miscellaneous moral_disputes moral_scenarios nutrition philosophy prehistory professional_accounting
    professional_law professional_medicine professional_psychology public_relations security_studies sociology
    us_foreign_policy virology world_religions""".split()
)

_arith = arith  # tests/_exact_arith.py


def _gsm8k_rows() -> list[dict]:
    return [json.loads(line) for line in sample_path("gsm8k").read_text(encoding="utf-8").splitlines() if line.strip()]


def test_gsm8k_sample_size_and_native_format() -> None:
    rows = _gsm8k_rows()
    assert len(rows) >= 40
    assert all(set(r) == {"question", "answer"} for r in rows)
    assert len({r["question"] for r in rows}) == len(rows)
    for r in rows:
        lines = r["answer"].splitlines()
        assert re.fullmatch(r"#### -?[\d.]+", lines[-1]), lines[-1]
        assert "<<" in r["answer"]


@pytest.mark.parametrize("row", _gsm8k_rows(), ids=lambda r: r["question"][:30])
def test_gsm8k_sample_annotations_are_correct(row: dict) -> None:
    answer = row["answer"]
    annotations = re.findall(r"<<([^=<>]+)=([^<>]+)>>([-\d.,]*)", answer)
    assert annotations
    for expr, result, shown in annotations:
        value = _arith(expr)
        assert value == Fraction(result), f"{expr} = {value}, annotated {result}"
        assert Fraction(shown.rstrip(".").replace(",", "")) == value, f"text after <<{expr}={result}>> is {shown!r}"
    final = Fraction(answer.rsplit("####", 1)[1].strip())
    last_result = Fraction(annotations[-1][1])
    last_line = answer.splitlines()[-2]
    shown_numbers = {Fraction(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", last_line)}
    # the final answer is the last computed value, or stated in the last line of reasoning
    assert final == last_result or final in shown_numbers


def test_gsm8k_sample_references_match_the_evaluator() -> None:
    ev = ExactMatchEvaluator("gsm8k")
    items = load("gsm8k", source="sample")
    rows = _gsm8k_rows()
    assert len(items) == len(rows)
    for item, row in zip(items, rows):
        assert item.fields["question"] == row["question"]
        assert item.metadata["solution"] == row["answer"]
        # the solution itself, scored as a response, is correct in both modes
        score = ev.score(row["answer"], item.reference)
        assert score["strict"] == score["flexible"] == 1.0


def test_mmlu_sample_files_are_headerless_six_column_csv() -> None:
    directory = sample_path("mmlu") / "test"
    files = sorted(directory.glob("*_test.csv"))
    assert len(files) >= 8
    total = 0
    letters: Counter[str] = Counter()
    for f in files:
        subject = f.name[: -len("_test.csv")]
        assert subject in MMLU_SUBJECTS
        with open(f, encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0][0].lower() != "question"  # no header
        for row in rows:
            assert len(row) == 6 and row[5] in "ABCD"
            assert len(set(row[1:5])) == 4
            letters[row[5]] += 1
        total += len(rows)
    assert total >= 60
    assert min(letters.values()) >= total // 5  # answers spread over A-D


def test_mmlu_sample_loads_with_subjects() -> None:
    items = load("mmlu", source="sample")
    subjects = Counter(i.metadata["subject"] for i in items)
    assert len(items) >= 60 and len(subjects) >= 8
    assert set(subjects) <= MMLU_SUBJECTS
    assert all(c >= 5 for c in subjects.values())
    assert all(len(i.fields["choices"]) == 4 and i.reference in "ABCD" for i in items)
    assert all(i.id.startswith(f"mmlu/{i.metadata['subject']}/") for i in items)


def test_humaneval_sample_solutions_pass_their_tests_and_wrong_ones_fail() -> None:
    items = load("humaneval", source="sample")
    assert len(items) >= 8
    for item in items:
        program = (
            item.fields["prompt"] + item.reference + item.fields["test"] + f"\ncheck({item.fields['entry_point']})\n"
        )
        exec(compile(program, item.id, "exec"), {})  # noqa: S102 - our own shipped code
        wrong = (
            item.fields["prompt"]
            + "    return None\n"
            + item.fields["test"]
            + f"\ncheck({item.fields['entry_point']})\n"
        )
        with pytest.raises(AssertionError):
            exec(compile(wrong, item.id, "exec"), {})  # noqa: S102
