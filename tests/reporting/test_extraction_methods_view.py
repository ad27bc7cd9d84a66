"""The benchmark notebook's extraction audit: how answers were read, per method and mode."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalcore.evaluators import ExactMatchEvaluator
from evalcore.reporting import _benchmark_views as bv


def _record(item: str, response: str, reference: str, dataset: str = "gsm8k", error: bool = False) -> dict:
    scores = {} if error else dict(ExactMatchEvaluator(dataset).score(response, reference))  # type: ignore[arg-type]
    if scores:
        scores["score"] = scores["flexible"]
    return {
        "item_id": item,
        "epoch": 0,
        "dataset": dataset,
        "request": {"messages": [{"role": "user", "content": f"Q {item}?"}]},
        "completion": {"text": response, "error": {"type": "Timeout", "message": "x"} if error else None},
        "scores": scores,
        "reference": reference,
        "error": error,
    }


def test_extraction_methods_counts_both_modes_in_precedence_order() -> None:
    run = SimpleNamespace(
        config={},
        samples=[
            _record("a", "48 + 24 = 72\n#### 72", "72"),
            _record("b", '{"reasoning": "6 * 7 = 42", "answer": 42}', "42"),
            _record("c", "The answer is 10 or 12.", "10"),
            _record("d", "So she has 5 apples left.", "5"),
            _record("e", "She has 9 apples.", "9"),
            _record("f", "I cannot tell.", "3"),
            _record("g", "#### 1", "1", error=True),  # a failed model call is not an extraction
        ],
    )
    table = bv.extraction_methods(bv.samples_frame(run))
    assert table["method"].tolist() == ["json_field", "hash", "last_number", "hedged", "none"]
    rows = table.set_index("method")
    assert rows["strict"].to_dict() == {"json_field": 1, "hash": 1, "last_number": 0, "hedged": 1, "none": 3}
    assert rows["flexible"].to_dict() == {"json_field": 1, "hash": 1, "last_number": 2, "hedged": 1, "none": 1}
    assert rows["declared"].to_dict() == {
        "json_field": True,
        "hash": True,
        "last_number": False,
        "hedged": False,
        "none": False,
    }
    assert rows.loc["last_number", "share_flexible"] == pytest.approx(2 / 6)
    assert table["flexible"].sum() == table["strict"].sum() == 6


def test_extraction_methods_empty_for_code_runs() -> None:
    run = SimpleNamespace(
        config={},
        samples=[
            {
                "item_id": "h",
                "epoch": 0,
                "dataset": "humaneval",
                "completion": {"text": "def f(): pass"},
                "scores": {"score": 1.0, "passed": True, "result": "passed"},
                "error": False,
            }
        ],
    )
    table = bv.extraction_methods(bv.samples_frame(run))
    assert table.empty and list(table.columns) == ["method", "declared", "strict", "flexible", "share_flexible"]
