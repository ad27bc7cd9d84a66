"""Imported runs in the sample browser (issue 31 item 5): the model's reply as the response, the
prompt when the log has it, "unknown" for what the log lacks, the harness's own metric name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.imports import import_inspect, import_lm_eval
from evalcore.imports._common import write_run
from evalcore.reporting._browser import sample_browser_html
from evalcore.runs import load_run

FIXTURES = Path(__file__).parent / "fixtures"


def _page_data(page: str) -> dict:
    start = page.index('<script type="application/json" id="evalcore-samples">')
    end = page.index("</script>", start)
    return json.loads(page[start:end].split(">", 1)[1].replace("\\u003c", "<"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_lm_eval_import_shows_the_reply_prompt_and_its_metric(tmp_path: Path) -> None:
    (imported,) = import_lm_eval(FIXTURES / "lm_eval", task="ec_gsm8k", metric=["exact_match,strict-match"])
    run = load_run(write_run(imported, tmp_path))
    page = sample_browser_html(run)
    samples = {s["item_id"]: s for s in _page_data(page)["samples"]}
    (log,) = (FIXTURES / "lm_eval").glob("samples_ec_gsm8k_*.jsonl")
    rows = [r for r in _lines(log) if r["filter"] == "strict-match"]
    first = rows[0]
    shown = next(s for s in samples.values() if "Marco had 85 stickers" in s["messages"][0]["content"])
    # the model's reply (lm-eval's resps), not the filtered answer "60"
    assert shown["response"] == first["resps"][0][0]
    assert shown["response"].endswith("#### 60") and shown["response"] != "60"
    assert shown["extracted"] == "60" and shown["method"] == "lm-eval filter strict-match"
    assert shown["method_strict"] is None  # one extraction: no "(strict)" twin invented
    # the prompt: the chat messages lm-eval sent, from `arguments`
    assert shown["messages"] == json.loads(first["arguments"]["gen_args_0"]["arg_0"][0])
    assert shown["messages"][0]["role"] == "user"
    # what the log lacks is unknown, not zero
    assert shown["prompt_tokens"] is None and shown["completion_tokens"] is None and shown["latency_s"] is None
    # the harness's own metric name, not evalcore's "accuracy (flexible)"
    assert "exact_match,strict-match (scored by lm-evaluation-harness)" in page
    assert "accuracy (flexible)" not in page and "accuracy (strict)" not in page
    assert len(samples) == len(rows)


def test_lm_eval_loglikelihood_import_shows_context_and_options(tmp_path: Path) -> None:
    (imported,) = import_lm_eval(FIXTURES / "lm_eval_mc", metric=["acc,none"])
    run = load_run(write_run(imported, tmp_path))
    data = _page_data(sample_browser_html(run))
    (log,) = (FIXTURES / "lm_eval_mc").glob("samples_*.jsonl")
    first = _lines(log)[0]
    shown = next(
        s for s in data["samples"] if s["messages"] and s["messages"][0]["content"] == _context(first["arguments"])
    )
    roles = [m["role"] for m in shown["messages"]]
    assert roles[-1] == "continuations scored"
    options = [a["arg_1"] for a in first["arguments"].values()]
    assert shown["messages"][-1]["content"].splitlines() == [repr(o) for o in options]


def _context(arguments: dict) -> str:
    context = arguments["gen_args_0"]["arg_0"]
    return context[0] if isinstance(context, list) else context


def test_inspect_import_shows_the_input_the_scorers_answer_and_its_metric(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    imported = import_inspect(FIXTURES / "inspect" / "ec_gsm8k.eval")
    run = load_run(write_run(imported, tmp_path))
    page = sample_browser_html(run)
    data = _page_data(page)
    recorded = {(s["item_id"], s["epoch"]): s for s in run.samples}
    metric = run.config["imported"]["metric"]
    assert f"{metric} (scored by inspect_ai)" in page and "accuracy (flexible)" not in page
    for shown in data["samples"]:
        rec = recorded[(shown["item_id"], shown["epoch"])]
        assert shown["response"] == rec["completion"]["text"]
        assert shown["extracted"] == (None if rec["metadata"].get("answer") is None else str(rec["metadata"]["answer"]))
        assert shown["method"].startswith("inspect scorer")
        assert shown["messages"], "the prompt inspect logged is shown"
        text = rec["request"]["input"]
        if isinstance(text, str):
            assert shown["messages"][0]["content"] == text
        else:
            assert [m["content"] for m in shown["messages"]][: len(text)] == [
                m["content"] if isinstance(m["content"], str) else shown["messages"][i]["content"]
                for i, m in enumerate(text)
            ]
        usage = rec["completion"]["usage"]
        assert shown["prompt_tokens"] == usage.get("prompt_tokens")
        latency = rec["completion"]["latency_s"]
        assert shown["latency_s"] == (latency or None)


def test_compare_labels_default_to_harness_model_and_task_not_fingerprints(tmp_path: Path) -> None:
    """Issue 31 item 10: an imported run's id ends in a fingerprint hash; labels defaulted to it."""
    from evalcore.imports._sources import default_label, run_scores

    (imported,) = import_lm_eval(FIXTURES / "lm_eval", task="ec_gsm8k", metric=["exact_match,strict-match"])
    run_dir = write_run(imported, tmp_path)
    assert run_dir.name.endswith(imported.config["imported"]["fingerprint"][:8])
    scores = run_scores(run_dir)
    model = imported.config["model_name"].rsplit("/", 1)[-1]
    assert scores.label == f"lm-eval {model} · ec_gsm8k"
    assert imported.config["imported"]["fingerprint"][:8] not in scores.label
    assert run_scores(run_dir, label="mine").label == "mine"
    assert default_label("gsm8k-zeroshot", {"dataset": "gsm8k"}) == "gsm8k-zeroshot"  # an own run: its id
