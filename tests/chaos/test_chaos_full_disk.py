"""Chaos: a disk that fills while evalcore writes. Each case ends with one line that says
"no space left on device" and names the file, exit 2, nothing half-written, and a resume that
asks only what is missing once there is room again.

The disk is a small tmpfs mounted for the test (root only; skipped with the reason elsewhere).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import Completion, FakeChatServer, ResponseCache, Usage

EVALCORE = [sys.executable, "-c", "import sys\nfrom evalcore.cli import main\nsys.exit(main(sys.argv[1:]))"]


def _cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EVALCORE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}
    )


def _humaneval_samples(n: int) -> str:
    body = "    return 0\n"
    return "".join(json.dumps({"task_id": f"HumanEval/{i % 4}", "completion": body}) + "\n" for i in range(n))


@pytest.mark.parametrize(
    ("benchmark", "rows"),
    [
        ("gsm8k", lambda: "".join(json.dumps({"response": f"#### {i}", "answer": str(i)}) + "\n" for i in range(400))),
        ("humaneval", lambda: _humaneval_samples(400)),
    ],
)
def test_score_on_a_full_disk_names_the_results_file(disk, benchmark, rows):
    answers = disk.path / "a.jsonl"
    answers.write_text(rows())
    disk.fill(leave=0)
    done = _cli("score", benchmark, str(answers), cwd=disk.path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"evalcore: error: no space left on device: {disk.path / 'a_results.jsonl'}\n"
    assert not (disk.path / "a_results.jsonl").exists()
    assert sorted(p.name for p in disk.path.iterdir()) == [".filler", "a.jsonl"]  # no temporary file left


def test_a_full_cache_says_no_space_and_never_advises_deleting(disk):
    cache = ResponseCache(disk.path / ".cache" / "responses.sqlite")
    disk.fill(leave=0)
    with pytest.raises(EvalcoreError) as info:
        for i in range(2000):
            cache.put(f"k{i}", "m", Completion(text="x" * 2000, usage=Usage(1, 1)))
    msg = str(info.value)
    assert "no space left on device" in msg and str(disk.path / ".cache" / "responses.sqlite") in msg
    assert "delete" not in msg and "damaged" not in msg


def test_a_run_whose_disk_fills_stops_with_one_line_and_resumes_only_what_is_missing(disk):
    with FakeChatServer() as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        args = ("run", "gsm8k", "--model", spec, "--limit", "8", "--run-id", "r", "--run-dir", str(disk.path))
        disk.fill(leave=16 * 1024)  # room for the config and a few records, not for all eight
        first = _cli(*args, "--no-cache", "--no-progress", cwd=disk.path)
        assert first.returncode == 2, first.stderr
        lines = [ln for ln in first.stderr.splitlines() if ln.startswith("evalcore: error")]
        assert len(lines) == 1 and "no space left on device" in lines[0] and "Traceback" not in first.stderr
        samples = disk.path / "r" / "samples.jsonl"
        kept = [json.loads(ln) for ln in samples.read_text().splitlines()]  # whole records only
        assert 1 <= len(kept) < 8
        asked_before = srv.counts["requests"]
        disk.free()
        third = _cli(*args, "--no-cache", "--no-progress", cwd=disk.path)
        assert third.returncode == 0, third.stderr
        records = [json.loads(ln) for ln in samples.read_text().splitlines()]
        assert len({r["item_id"] for r in records}) == 8 and not any(r.get("error") for r in records)
        assert srv.counts["requests"] - asked_before == 8 - len(kept)  # only what was missing


def test_a_disk_that_fills_mid_run_under_the_cache_keeps_the_answers_and_resumes_the_rest(disk):
    def answer(messages) -> str:  # the second question fills the disk: the cache and the run share it
        if srv.counts["requests"] == 2:
            disk.fill(leave=0)
        return "Adding the numbers step by step gives 42.\n#### 42"

    with FakeChatServer(responder=answer) as srv:
        spec = f"openai-compatible:fake@{srv.url}"
        args = ("run", "gsm8k", "--model", spec, "--limit", "8", "--run-id", "r", "--run-dir", str(disk.path),
                "--concurrency", "1", "--no-progress")  # fmt: skip
        first = _cli(*args, cwd=disk.path)
        assert first.returncode == 2, first.stderr
        assert first.stderr.count("\n") == 1 and "Traceback" not in first.stderr
        assert first.stderr.startswith("evalcore: error: ") and "no space left on device" in first.stderr
        samples = disk.path / "r" / "samples.jsonl"
        kept = [json.loads(ln) for ln in samples.read_text().splitlines()] if samples.exists() else []
        assert len(kept) == srv.counts["requests"] == 2  # the answer whose cache write found no room is kept
        asked_before = srv.counts["requests"]
        disk.free()
        again = _cli(*args, cwd=disk.path)
        assert again.returncode == 0, again.stderr
        records = [json.loads(ln) for ln in samples.read_text().splitlines()]
        assert len({r["item_id"] for r in records}) == 8 and not any(r.get("error") for r in records)
        assert srv.counts["requests"] - asked_before == 8 - len(kept)  # only what was missing


def _notebook(path: Path, *cells: str) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("fill: str = ''  # a file to grow until the disk is full")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.mark.notebooks
def test_a_notebook_suite_whose_disk_fills_says_no_space_and_leaves_no_half_notebook(disk):
    root = disk.path
    (root / "pyproject.toml").write_text("")
    _notebook(root / "nbs" / "ok.ipynb", "print('fine')")
    fill = (
        "with open(fill, 'ab') as fh:\n"
        "    try:\n"
        "        while True:\n"
        "            fh.write(b'\\0' * 65536); fh.flush()\n"
        "    except OSError:\n"
        "        pass\n"
        "print('x' * 200_000)"
    )
    _notebook(root / "nbs" / "full.ipynb", fill, "print('after')")
    (root / "suite.yaml").write_text(
        "runs:\n"
        "  - {name: ok, notebook: nbs/ok.ipynb}\n"
        "  - {name: full, notebook: nbs/full.ipynb, overrides: {fill: '{root}/.filler'}}\n"
    )
    done = _cli("notebooks", "run", "--suite", "suite.yaml", "--output", "out", "--no-pdf", "--progress-every", "0",
                cwd=root)  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "no space left on device" in said, said
    assert "Traceback" not in said and "NotJSONError" not in said
    for nb in (root / "out").rglob("*.ipynb"):  # every notebook left is whole
        json.loads(nb.read_bytes())
    assert not list((root / "out").rglob(".*.partial.ipynb"))
