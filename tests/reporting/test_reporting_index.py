"""The index's compact summary table (no kernel needed)."""

from __future__ import annotations

from pathlib import Path

from evalcore.reporting._notebooks import EntryResult, display_summary, write_index


def test_display_summary_is_compact():
    r = EntryResult(
        name="x",
        notebook="n.ipynb",
        status="ok",
        params={"runs": ["/a/b/c/run1"], "limit": 8},
        records={
            "accuracy": {"mean": 0.25, "ci_low": 0.05, "ci_high": 0.6, "n": 8},
            "pass_at_k": {"1": 0.5},
            "comparisons": [{"a": 1}],
            "nan": float("nan"),
        },
    )
    frame = display_summary([r])
    row = frame.loc["x"]
    assert row["accuracy"] == "0.25 [0.05, 0.6]"
    assert row["pass_at_k.1"] == "0.5"
    assert "comparisons" not in frame.columns
    assert row["nan"] == ""
    assert row["parameters"] == "runs=[c/run1], limit=8"


def test_write_index_marks_failures_and_escapes(tmp_path):
    ok = EntryResult(
        name="a", notebook="n.ipynb", status="ok", executed="a/a.ipynb", html="a/a.html", records={"score": 1}
    )
    bad = EntryResult(
        name="b", notebook="n.ipynb", status="failed", executed="b/b.ipynb", error="ValueError: <script>x</script>"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "stderr.log").write_text("--- cell 3\nTqdmWarning: IProgress not found\n")
    index = write_index(tmp_path, [ok, bad], {"id": "X"})
    text = Path(index).read_text()
    assert 'href="a/stderr.log"' in text and 'href="b/stderr.log"' not in text and "kernel.log" not in text
    assert 'class="failed">failed' in text and 'href="b/b.ipynb"' in text
    assert "<script>x</script>" not in text and "&lt;script&gt;" in text
    assert (tmp_path / "suite.json").exists() and (tmp_path / "summary.csv").exists()


def test_cli_registers_notebooks_run_and_report(tmp_path, capsys):
    from evalcore.cli import build_parser, main

    parser = build_parser()
    args = parser.parse_args(["notebooks", "run", "--only", "a,b", "--output", "x"])
    assert args.suite is None and args.only == ["a,b"] and args.output == "x"  # None: params/suite.yaml
    assert args.resume is None and args.progress_every == 30.0 and args.cell_timeout is None
    assert args.notebook_timeout is None
    assert parser.parse_args(["notebooks", "run", "--resume"]).resume == "latest"
    assert parser.parse_args(["notebooks", "run", "--resume", "20261123T100000Z"]).resume == "20261123T100000Z"
    assert main(["notebooks", "run", "--resume", "--output", str(tmp_path / "none")]) == 2
    assert "no suite run to resume" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err
    bad = tmp_path / "suite.yaml"
    bad.write_text("runs: [\n")
    assert main(["notebooks", "run", "--suite", str(bad), "--output", str(tmp_path / "out")]) == 2
    assert "malformed YAML" in capsys.readouterr().err
