"""Every notebook of params/suite.yaml executes through papermill with params/smoke.yaml, and
its recorded numbers are checked, not just that it ran.

The suite runs once (module fixture) on the real embedded model with tiny limits; benchmark
records are cross-checked against the run directory (results.json and samples.jsonl), the
comparison against an independent McNemar/difference computation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from evalcore.reporting import run_notebooks
from evalcore.reporting._notebook_suite import load_smoke, load_notebook_suite

# 17 notebooks on the embedded model: about 6 minutes on 2 idle cores, over 15 on a loaded machine;
# each notebook has its own limit (NOTEBOOK_TIMEOUT_S), the module a generous one.
pytestmark = [pytest.mark.notebooks, pytest.mark.timeout(3600)]
NOTEBOOK_TIMEOUT_S = 900

ROOT = Path(__file__).resolve().parents[2]
SMOKE = load_smoke(ROOT / "params" / "smoke.yaml")
ENTRIES = load_notebook_suite(ROOT / "params" / "suite.yaml", smoke=SMOKE)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    said: list[str] = []
    result = run_notebooks(ROOT / "params" / "suite.yaml", output=out, smoke=SMOKE, root=ROOT,
                       echo=lambda line: (said.append(line), print(line, flush=True)),
                       notebook_timeout=NOTEBOOK_TIMEOUT_S)
    result.said = said  # type: ignore[attr-defined]
    return result


def _result(suite, name):
    (found,) = [r for r in suite.results if r.name == name]
    return found


def test_index_and_latest(suite):
    index = (suite.suite_dir / "index.html").read_text()
    for entry in ENTRIES:
        assert f"<td>{entry.name}</td>" in index
    assert (suite.suite_dir.parent / "latest").resolve() == suite.suite_dir
    assert (suite.suite_dir / "summary.csv").exists()


def test_suite_prints_the_headline_and_ends_with_the_index(suite):
    said = "\n".join(suite.said)
    for title in ("Benchmark runs", "Comparisons (paired, on shared items)", "Agent evaluation", "Routers"):
        assert f"\n{title}\n" in said, f"headline section {title!r} missing from the suite's output"
    for entry in BENCHMARKS:
        assert f"\n{entry.name} " in said  # one headline row per benchmark run
    assert suite.said[-1].endswith(str(Path("latest") / "index.html"))
    assert "KeyboardInterrupt caught in kernel" not in said
    index = (suite.suite_dir / "index.html").read_text()
    assert index.index("<h2>Headline</h2>") < index.index("<h2>Notebooks</h2>")


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_no_stderr_output_in_the_reports(suite, entry):
    """Progress bars and warnings never reach the executed notebook, HTML or PDF."""
    import nbformat

    result = _result(suite, entry.name)
    executed = nbformat.read(suite.suite_dir / result.executed, as_version=4)
    stderr = ["".join(o.get("text", "")) for c in executed.cells for o in c.get("outputs", [])
              if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert stderr == [], f"{entry.name}: stderr output cells in the report: {stderr}"
    html = (suite.suite_dir / result.html).read_text()
    for noise in ('data-mime-type="application/vnd.jupyter.stderr"', "TqdmWarning", "IProgress not found",
                  "Loading weights"):
        assert noise not in html, f"{entry.name}: {noise!r} in the exported HTML"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_notebook_runs_and_records(suite, entry):
    result = _result(suite, entry.name)
    assert result.status == "ok", f"{entry.name} failed: {result.error}"
    assert result.records, f"{entry.name} recorded nothing (call evalcore.record)"
    on_disk = json.loads((suite.suite_dir / entry.name / "records.json").read_text())
    assert on_disk == result.records
    assert (suite.suite_dir / result.html).exists()
    json.dumps(result.records, allow_nan=False)


def _samples(run_path):
    return [json.loads(line) for line in Path(run_path, "samples.jsonl").read_text().splitlines() if line.strip()]


BENCHMARKS = [e for e in ENTRIES if e.notebook.name == "benchmark.ipynb"]


@pytest.mark.parametrize("entry", BENCHMARKS, ids=lambda e: e.name)
def test_benchmark_numbers_match_the_run_directory(suite, entry):
    result = _result(suite, entry.name)
    rec = result.records
    assert rec["dataset"] == result.params["dataset"]
    assert rec["n_items"] == result.params["limit"] == rec["n_samples"]
    samples = _samples(rec["run_path"])
    assert len(samples) == result.params["limit"]
    ok = [s for s in samples if not s["error"]]
    assert rec["errors"] == len(samples) - len(ok)
    results = json.loads(Path(rec["run_path"], "results.json").read_text())
    acc = rec["accuracy"]
    assert 0.0 <= acc["ci_low"] <= acc["mean"] <= acc["ci_high"] <= 1.0
    if ok:
        assert acc["mean"] == pytest.approx(np.mean([s["scores"]["score"] for s in ok]))
    if rec["dataset"] == "humaneval":
        assert rec["pass_at_k"]["1"] == pytest.approx(acc["mean"])
        assert acc["mean"] == pytest.approx(results["accuracy_flexible"]["mean"])
    else:
        for mode in ("strict", "flexible"):
            assert rec[f"accuracy_{mode}"]["mean"] == pytest.approx(results[f"accuracy_{mode}"]["mean"])
            assert rec[f"accuracy_{mode}"]["ci_high"] == pytest.approx(results[f"accuracy_{mode}"]["ci_high"])
        assert rec["parse_failure_rate"] == pytest.approx(results["parse_failure_rate"])
    assert rec["completion_tokens"] == results["tokens"]["completion"]


COMPARES = [e for e in ENTRIES if e.notebook.name == "compare.ipynb"]


@pytest.mark.parametrize("entry", COMPARES, ids=lambda e: e.name)
def test_compare_numbers_match_an_independent_computation(suite, entry):
    from scipy.stats import binomtest

    result = _result(suite, entry.name)
    rec = result.records
    paths = result.params["runs"]
    scores = []
    for path in paths:
        per_item = {}
        for s in _samples(path):
            if not s["error"]:
                per_item.setdefault(s["item_id"], []).append(s["scores"]["score"])
        scores.append({k: float(np.mean(v)) for k, v in per_item.items()})
    shared = sorted(set(scores[0]) & set(scores[1]))
    assert rec["n_shared"] == len(shared) > 0
    first = rec["comparisons"][0]
    a = np.array([scores[0][i] for i in shared])
    b = np.array([scores[1][i] for i in shared])
    assert first["difference"] == pytest.approx(float((a - b).mean()))
    assert first["mean_a"] == pytest.approx(a.mean()) and first["mean_b"] == pytest.approx(b.mean())
    if first["test"] == "mcnemar":
        n10, n01 = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        expected = binomtest(n10, n10 + n01).pvalue if n10 + n01 else 1.0
        assert first["p_value"] == pytest.approx(expected)
    assert 0.0 <= rec["p_adjusted"] <= 1.0
    assert first["ci_low"] <= first["difference"] <= first["ci_high"]
    mdd = rec["min_detectable_difference"]
    assert mdd is None or mdd > 0
    assert (suite.suite_dir / entry.name / "figures" / "differences.png").exists()


ROUTINGS = [e for e in ENTRIES if e.notebook.name == "routing.ipynb"]
_TEXT_MIMETYPES = ("text/plain", "text/markdown", "text/html")


def _text_outputs(nb) -> list[str]:
    """The text a reader sees in an executed notebook's outputs (streams, plain text, Markdown, HTML)."""
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                texts.append("".join(out.get("text", "")))
            for mime in _TEXT_MIMETYPES:
                value = out.get("data", {}).get(mime)
                if value:
                    texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


@pytest.mark.parametrize("entry", ROUTINGS, ids=lambda e: e.name)
def test_routing_report_shows_no_absolute_machine_path(suite, entry):
    """Paths in the routing report are relative to the repository or the suite (``shown_path``)."""
    import nbformat

    result = _result(suite, entry.name)
    executed = nbformat.read(suite.suite_dir / result.executed, as_version=4)
    texts = _text_outputs(executed)
    html = (suite.suite_dir / result.html).read_text()
    machine = {str(ROOT), str(suite.suite_dir.parent), str(suite.suite_dir.parent.resolve())}
    if str(Path.home()) != "/":
        machine.add(str(Path.home()))
    for prefix in machine:
        shown = [t for t in texts if prefix in t]
        assert shown == [], f"{entry.name}: the absolute path {prefix} in the report's outputs: {shown[:2]}"
        assert prefix not in html, f"{entry.name}: the absolute path {prefix} in the exported HTML"
    assert any("`summary.csv`" in t for t in texts), "the report names where its tables were written"


@pytest.mark.skipif(shutil.which("chromium") is None or shutil.which("pdftoppm") is None,
                    reason="needs chromium and poppler-utils (apt-get install chromium poppler-utils)")
def test_pdf_of_a_notebook_is_not_blank(suite, tmp_path):
    from PIL import Image

    first = next(r for r in suite.results if r.pdf)
    pdf = suite.suite_dir / first.pdf
    subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "p")], check=True)
    (page,) = tmp_path.glob("p*.png")
    pixels = np.asarray(Image.open(page).convert("L"), dtype=float)
    assert pixels.std() > 5.0 and (pixels < 128).mean() > 0.001


@pytest.mark.skipif(shutil.which("chromium") is None or shutil.which("pdftoppm") is None,
                    reason="needs chromium and poppler-utils (apt-get install chromium poppler-utils)")
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_pdf_pages_read_like_a_document(suite, entry):
    """Every page rendered and read: no heading is the last thing on a page, no table-header
    word is broken across lines or cut off."""
    from evalcore.reporting import pdf_layout_problems

    result = _result(suite, entry.name)
    if not result.pdf:
        pytest.skip(f"{entry.name}: no PDF was made")
    assert pdf_layout_problems(suite.suite_dir / result.pdf, suite.suite_dir / result.html) == []
