"""CLI consistency (issue 15): one max_tokens default, intervals beside every accuracy, skipped
pass@k named, what ``rescore`` changed, resumed/cached counts, file modes from the umask."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import yaml

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.models import FakeChatServer
from evalcore.runs import DEFAULT_MAX_TOKENS, load_run, resolve_params

ROOT = Path(__file__).resolve().parents[2]


def _parameters_cell(notebook: Path) -> tuple[str, str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    first = next(i for i, c in enumerate(code) if "parameters" in c.get("metadata", {}).get("tags", []))
    return "".join(code[first]["source"]), "".join(code[first + 1]["source"])


def test_the_notebook_and_the_cli_read_one_max_tokens_default() -> None:
    params_cell, next_cell = _parameters_cell(ROOT / "notebooks" / "benchmark.ipynb")
    defaults: dict = {}
    exec(params_cell, {}, defaults)  # plain annotated assignments
    assert defaults["max_tokens"] == 0  # 0 = evalcore's default for the dataset
    # the call the notebook makes passes no max_tokens then, so run_benchmark's default applies
    expr = re.search(r"params=(\{.*?\}\)?\}?)\s*,\s*\n", next_cell)
    assert expr, next_cell
    for max_tokens, wanted in ((0, None), (77, 77)):
        given = eval(expr.group(1), {"max_tokens": max_tokens, "temperature": 0.0})  # noqa: S307
        for dataset, default in DEFAULT_MAX_TOKENS.items():
            assert resolve_params(given, dataset, 0).max_tokens == (wanted or default)
    # the CLI's default is the same constant (its --max-tokens is unset unless given)
    from evalcore.cli import build_parser

    args = build_parser().parse_args(["run", "gsm8k", "--model", "local:smollm2"])
    assert args.max_tokens is None
    # no suite entry of the benchmark notebook pins another value
    suite = yaml.safe_load((ROOT / "params" / "suite.yaml").read_text())
    for entry in suite["runs"]:
        if entry["notebook"].endswith("benchmark.ipynb"):
            merged = {**yaml.safe_load((ROOT / entry["params"]).read_text()), **(entry.get("overrides") or {})}
            assert "max_tokens" not in merged, entry["name"]


def test_score_gsm8k_prints_each_accuracy_with_its_wilson_interval(tmp_path: Path, capsys) -> None:
    from statsmodels.stats.proportion import proportion_confint

    rows = [
        {"response": "#### 3", "answer": "3"},
        {"response": "#### 4", "answer": "3"},
        {"response": "so it is 3", "answer": "3"},
    ]
    f = tmp_path / "a.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "gsm8k", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    keys = list(out)
    assert keys.index("accuracy_strict_ci") == keys.index("accuracy_strict") + 1
    for mode, right in (("strict", 1), ("flexible", 2)):
        assert out[f"accuracy_{mode}"] == pytest.approx(right / 3)
        lo, hi = proportion_confint(right, 3, alpha=0.05, method="wilson")
        assert out[f"accuracy_{mode}_ci"] == pytest.approx([lo, hi], abs=1e-9)
    assert out["ci"] == "95% Wilson interval over n = 3 answers"


def test_score_humaneval_names_the_pass_at_k_it_skipped(tmp_path: Path, capsys) -> None:
    problems = [
        {
            "task_id": f"T/{i}",
            "prompt": f'def f{i}(a):\n    """Echo."""\n',
            "canonical_solution": "    return a\n",
            "test": "def check(candidate):\n    assert candidate(1) == 1\n",
            "entry_point": f"f{i}",
        }
        for i in range(2)
    ]
    pf = tmp_path / "problems.jsonl"
    pf.write_text("".join(json.dumps(p) + "\n" for p in problems))
    rows = [{"task_id": "T/0", "completion": "    return a\n"}] * 3 + [
        {"task_id": "T/1", "completion": "    return 0\n"}
    ] * 2
    sf = tmp_path / "s.jsonl"
    sf.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "humaneval", str(sf), "--k", "1,2,3,10", "--problems", str(pf), "--timeout", "10"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out) == {"pass@1": 0.5, "pass@2": 0.5}  # stdout: the computable values only
    notes = [line for line in cap.err.splitlines() if "not computed" in line]
    assert notes == [
        "evalcore: note: pass@3, pass@10 not computed: pass@k needs n >= k samples of every "
        "task; T/1 has n = 2 (1 of 2 tasks have fewer than 3)"
    ]
    # nothing skipped: nothing said
    assert main(["score", "humaneval", str(sf), "--k", "1", "--problems", str(pf)]) == 0
    assert "not computed" not in capsys.readouterr().err


def _responder(wrong: set[str]):
    items = {it.fields["question"]: it for it in load("gsm8k", source="sample")}

    def answer(messages) -> str:
        q = messages[-1]["content"]
        it = next(it for k, it in items.items() if k in q)
        return f"Working.\n#### {'-1' if it.id in wrong else it.reference}"

    return answer


def test_resumed_and_cached_counts_are_printed_and_recorded(tmp_path: Path, capsys) -> None:
    with FakeChatServer(responder=_responder(set())) as srv:
        base = [
            "run",
            "gsm8k",
            "--model",
            f"openai-compatible:fake@{srv.url}",
            "--limit",
            "3",
            "--source",
            "sample",
            "--no-progress",
            "--run-dir",
            str(tmp_path),
        ]
        assert main([*base, "--run-id", "a"]) == 0
        assert "samples: 3 (resumed 0, asked 3, from cache 0)" in capsys.readouterr().out
        # lose the last sample: the resumed run keeps two, asks the third (answered from the cache)
        samples = tmp_path / "a" / "samples.jsonl"
        lines = samples.read_text().splitlines(keepends=True)
        samples.write_text("".join(lines[:2]))
        assert main([*base, "--run-id", "a"]) == 0
        assert "samples: 3 (resumed 2, asked 0, from cache 1)" in capsys.readouterr().out
        assert load_run(tmp_path / "a").results["invocation"] == {
            "resumed": 2,
            "asked": 0,
            "from_cache": 1,
            "interrupted": False,
        }
        # without the cache the lost sample is asked again
        samples.write_text("".join(lines[:1]))
        assert main([*base, "--run-id", "a", "--no-cache"]) == 0
        out = capsys.readouterr().out
        assert "samples: 3 (resumed 1, asked 2, from cache 0)" in out
        assert re.search(r"accuracy flexible: 1\.000 \[0\.\d{3}, 1\.000\] 95% CI, n=3", out), out


def test_rescore_says_what_changed(tmp_path: Path, capsys) -> None:
    items = load("gsm8k", source="sample")[:4]
    with FakeChatServer(responder=_responder({items[0].id})) as srv:
        assert (
            main(
                [
                    "run",
                    "gsm8k",
                    "--model",
                    f"openai-compatible:fake@{srv.url}",
                    "--limit",
                    "4",
                    "--source",
                    "sample",
                    "--no-progress",
                    "--run-dir",
                    str(tmp_path),
                    "--run-id",
                    "r",
                ]
            )
            == 0
        )
    capsys.readouterr()
    run_path = tmp_path / "r"
    assert main(["rescore", str(run_path)]) == 0
    assert "changes: none (every metric and verdict is as before)" in capsys.readouterr().out
    # an older scorer had marked one right answer wrong: re-scoring restores it and says so
    samples = [json.loads(line) for line in (run_path / "samples.jsonl").read_text().splitlines()]
    victim = next(s for s in samples if s["scores"]["score"] == 1.0)
    victim["scores"].update(score=0.0, flexible=0.0, strict=0.0, extracted_flexible="7")
    (run_path / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    res = json.loads((run_path / "results.json").read_text())
    true_mean = res["accuracy_flexible"]["mean"]
    res["accuracy_flexible"]["mean"] = true_mean - 0.25
    (run_path / "results.json").write_text(json.dumps(res))
    assert main(["rescore", str(run_path)]) == 0
    out = capsys.readouterr().out
    assert f"  accuracy_flexible: {true_mean - 0.25:.3f} -> {true_mean:.3f}" in out
    assert "  verdict changed: 1 of 4 samples" in out
    assert f"    {victim['item_id']} epoch 0: wrong -> right  (extracted '7' -> " in out
    assert "accuracy strict:" in out  # the usual block is still printed
    assert "samples: 4 (re-scored from the recorded answers, no model calls)" in out


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_run_files_get_the_mode_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        with FakeChatServer(responder=_responder(set())) as srv:
            assert (
                main(
                    [
                        "run",
                        "gsm8k",
                        "--model",
                        f"openai-compatible:fake@{srv.url}",
                        "--limit",
                        "2",
                        "--source",
                        "sample",
                        "--no-progress",
                        "--run-dir",
                        str(tmp_path),
                        "--run-id",
                        "m",
                    ]
                )
                == 0
            )
        assert main(["rescore", str(tmp_path / "m")]) == 0  # rewrites samples.jsonl and results.json
    finally:
        os.umask(old)
    for name in ("config.json", "samples.jsonl", "results.json"):
        assert stat.S_IMODE((tmp_path / "m" / name).stat().st_mode) == mode, name
