"""The benchmark notebook on a user's own benchmark file (``benchmark: my_bench.yaml``):
it runs the file's items, shows the extraction audit and the per-category accuracy the file
asks for (``subject_field``), as it does for a built-in (issue 32)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.notebooks, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "params/benchmarks/unit_conversion.yaml"


def test_the_benchmark_notebook_runs_a_benchmark_file(tmp_path):
    import papermill as pm

    sys.path.insert(0, str(ROOT / "tests" / "runs"))
    from conftest import CountingModel

    from evalcore.runs import load_run, run_benchmark

    truth = {json.loads(x)["question"]: json.loads(x)["answer"]
             for x in (ROOT / "params/benchmarks/unit_conversion.jsonl").read_text().splitlines()}

    def answer(user: str) -> str:  # wrong on the two mass questions
        q = next(q for q in truth if q in user)
        return "The answer is 7." if "grams" in q or "pounds" in q else f"The answer is {truth[q]}."

    recorded = run_benchmark(str(ROOT / EXAMPLE), CountingModel(answer), run_dir=tmp_path / "rec",
                             run_id="rec", cache=False, progress=False)
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "benchmark.ipynb"), str(out), cwd=str(ROOT / "notebooks"),
                        parameters={"benchmark": EXAMPLE, "model": f"replay:{recorded}", "limit": 0,
                                    "run_dir": str(tmp_path / "runs"), "run_id": "nb"},
                        kernel_name="python3", progress_bar=False)
    run = load_run(tmp_path / "runs" / "nb")
    assert run.config["dataset"] == "unit_conversion" and run.config["benchmark"]["kind"] == "file"
    assert run.results["accuracy_flexible"]["mean"] == pytest.approx(10 / 12)
    outputs = _outputs(out)
    assert "## Per-subject accuracy" in outputs and "## Extraction audit" in outputs
    assert "mass (n=2)" in outputs or "mass" in outputs.split("## Per-subject accuracy")[1]
    assert "pass@" not in outputs  # not scored by running code


def _outputs(path: Path) -> str:
    """Everything the executed notebook displayed (markdown, HTML, text), not its source."""
    text = []
    for cell in json.loads(path.read_text())["cells"]:
        for out in cell.get("outputs", []):
            for key in ("text/markdown", "text/html", "text/plain"):
                value = (out.get("data") or {}).get(key)
                if value:
                    text.append("".join(value) if isinstance(value, list) else value)
            if out.get("text"):
                text.append("".join(out["text"]))
    return "\n".join(text)
