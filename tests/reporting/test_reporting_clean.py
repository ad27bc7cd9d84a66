"""Log noise leaves the executed notebook before export; real errors stay."""

from __future__ import annotations

import nbformat

from evalcore.reporting._clean import clean_notebook, clean_notebook_file, clean_stderr, is_noise

TQDM_WARNING = (
    "/w/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found. "
    "Please update jupyter and ipywidgets.\n"
    "  from .autonotebook import tqdm as notebook_tqdm\n"
)
BAR = (
    "Loading weights:   0%|          | 0/103 [00:00<?, ?it/s]\r"
    "Loading weights: 100%|██████████| 103/103 [00:00<00:00, 812.31it/s]\n"
)


def test_noise_lines():
    assert is_noise("Loading weights:   0%|          | 0/103 [00:00<?, ?it/s]")
    assert is_noise("Batches: 100%|##########| 1/1 [00:00<00:00,  3.1it/s]")
    assert is_noise("/x/y.py:12: FutureWarning: `x` is deprecated")
    assert is_noise("UserWarning: something")
    assert is_noise("WARNING:evalcore.sandbox:weak isolation")
    assert is_noise("[W 2026-11-23 10:00:00.000 ServerApp] note")
    assert not is_noise("Traceback (most recent call last):")
    assert not is_noise("ValueError: the model file is corrupt")
    assert not is_noise("ERROR:root:could not open /data/x.csv")
    assert not is_noise("50% of the items were skipped")  # a percentage is not a bar
    # evalcore's own progress lines (the routing notebook's, issue 31) are progress, not results
    assert is_noise("routing outcome matrix: 3/12 generations, 16 s elapsed, about 48 s left (gsm8k × cot recorded)")
    assert is_noise("routing replay (20 orderings): 11/11 router blocks, 1 min 02 s elapsed, done")
    assert is_noise("λ sweep (3 orderings each): 1/2 λ values, 1 h 02 min elapsed, about 3 min 00 s left")
    assert not is_noise("router ucb1: 3/12 correct, mean reward 0.25")  # a count in a result line stays


def test_clean_stderr_keeps_errors_and_drops_warnings_with_their_source_line():
    kept, removed = clean_stderr(TQDM_WARNING + BAR + "ERROR:root:could not open /data/x.csv\n")
    assert kept == "ERROR:root:could not open /data/x.csv\n"
    assert "TqdmWarning" in removed and "from .autonotebook" in removed
    assert "103/103" in removed and "0/103" not in removed  # the bar as a terminal shows it: its last state
    assert clean_stderr(TQDM_WARNING + BAR) == ("", removed)  # all noise: the output goes away


def test_clean_notebook_removes_noise_outputs_only(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=TQDM_WARNING),
        nbformat.v4.new_output("stream", name="stdout", text="accuracy 0.25\n"),
        nbformat.v4.new_output("stream", name="stderr", text=BAR + "model file missing: /m.gguf\n"),
        nbformat.v4.new_output("error", ename="ValueError", evalue="boom", traceback=["ValueError: boom"]),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert clean_notebook_file(path, tmp_path / "stderr.log") == 3
    outputs = nbformat.read(path, as_version=4).cells[1].outputs
    assert [(o.output_type, o.get("name")) for o in outputs] == [
        ("stream", "stdout"),
        ("stream", "stderr"),
        ("error", None),
    ]
    assert outputs[1].text == "model file missing: /m.gguf\n"
    log = (tmp_path / "stderr.log").read_text()
    assert log.startswith("--- cell 2\n") and "TqdmWarning" in log and "103/103" in log
    assert clean_notebook_file(path, tmp_path / "stderr.log") == 0  # nothing left to move
    assert clean_notebook(nbformat.read(path, as_version=4)) == []
