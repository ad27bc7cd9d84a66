"""No extractor or benchmark module over 600 lines (issue 32, item 5): the MMLU extractor's
letter mentions live in ``_extract_choice_mentions.py``, beside the declared answers and shapes."""

from __future__ import annotations

from pathlib import Path

import evalcore

ROOT = Path(evalcore.__file__).resolve().parent


def test_extractor_and_benchmark_modules_stay_under_600_lines():
    paths = sorted(ROOT.glob("evaluators/_extract*.py")) + sorted(ROOT.glob("benchmarks/*.py"))
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text("utf-8").splitlines()) for p in paths}
    assert "evaluators/_extract_choice_mentions.py" in sizes
    assert {k: v for k, v in sizes.items() if v > 600} == {}
