"""The per-run sample browser (issue 15): built from a real run, driven in headless Chromium
through the DevTools protocol (over ``--remote-debugging-pipe``, no extra package): it loads
without console errors, its verdict filters and search work, hostile text stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.benchmarks import load
from evalcore.cli import main
from evalcore.models import Completion, CompletionError, GenerationParams, Usage
from evalcore.reporting._browser import (
    sample_browser_html,
    sample_browsers_section,
    sample_records,
    suite_sample_browsers,
    write_sample_browser,
)
from evalcore.runs import load_run, run_benchmark

HOSTILE = "</script><script>window.__pwned = 1</script><!-- & \u2028 <b>bold</b> #### 5"


class _Model:
    """Answers item i as: right (i % 4 == 0), wrong (1), no answer (2), a failed call (3);
    the first wrong answer carries hostile markup."""

    name = "table:test"
    endpoint = "memory"

    def __init__(self) -> None:
        self.items = load("gsm8k", source="sample")

    async def acomplete(self, messages: list[dict[str, str]], params: GenerationParams) -> Completion:
        return self.complete(messages, params)

    def complete(self, messages: list[dict[str, str]], params: GenerationParams) -> Completion:
        q = messages[-1]["content"]
        i, it = next((i, it) for i, it in enumerate(self.items) if it.fields["question"] in q)
        kind = i % 4
        if kind == 3:
            return Completion(text="", error=CompletionError(type="HTTP500", message="boom <x>"))
        text = {0: f"So.\n#### {it.reference}", 1: HOSTILE if i == 1 else "#### -1", 2: "I cannot tell."}[kind]
        return Completion(text=text, usage=Usage(11, 7), latency_s=0.25, model="table")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    model = _Model()
    # limit=None with the sample source: every item, so all four kinds occur
    return run_benchmark(
        "gsm8k", model, source="sample", progress=False, run_dir=base / "runs", run_id="b", cache=False
    )


def test_records_and_escaping(run_dir: Path) -> None:
    run = load_run(run_dir)
    page = sample_browser_html(run)
    # the data block cannot be closed by a sample's text; the text is still all there
    start = page.index('<script type="application/json" id="evalcore-samples">')
    end = page.index("</script>", start)
    block = page[start:end].split(">", 1)[1]
    assert "<" not in block and ">" not in block and "\u2028" not in block
    data = json.loads(block)
    assert len(data["samples"]) == len(run.samples)
    hostile = [s for s in data["samples"] if s["response"] == HOSTILE]
    assert len(hostile) == 1 and hostile[0]["verdict"] == "wrong" and hostile[0]["extracted"] == "5"
    verdicts = {s["verdict"] for s in data["samples"]}
    assert verdicts == {"right", "wrong", "parse failure", "error"}
    err = next(s for s in data["samples"] if s["verdict"] == "error")
    assert err["error"] == "HTTP500: boom <x>"
    right = next(s for s in data["samples"] if s["verdict"] == "right")
    assert right["method"] == "hash" and right["prompt_tokens"] == 11 and right["completion_tokens"] == 7
    recorded = next(s for s in run.samples if s["item_id"] == right["item_id"])
    assert right["messages"] == recorded["request"]["messages"] and right["reference"] == recorded["reference"]


def test_cli_browse_writes_the_page_and_refuses_a_non_run(run_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "page.html"
    assert main(["browse", str(run_dir), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"sample browser: {out}"
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["browse", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalcore: error: ") and "not a run directory" in err
    assert not (tmp_path / "samples.html").exists()


def test_suite_section_links_each_run(run_dir: Path) -> None:
    suite = run_dir.parent.parent  # <suite>/runs/b
    links = suite_sample_browsers(suite)
    assert links == [("b", "runs/b/samples.html")]
    assert (suite / "runs" / "b" / "samples.html").is_file()
    section = sample_browsers_section(suite)
    assert '<a href="runs/b/samples.html">b</a>' in section
    assert sample_browsers_section(run_dir) == ""  # no runs/ folder there


VISIBLE = "[...document.querySelectorAll('details.sample')].filter(d => !d.hidden).map(d => d.dataset.verdict)"


def test_page_in_headless_chromium_filters_and_searches(run_dir: Path, tmp_path: Path, chromium) -> None:
    page = write_sample_browser(run_dir, tmp_path / "samples.html")
    run = load_run(run_dir)
    n = len(run.samples)
    from collections import Counter

    want = Counter(r["verdict"] for r in sample_records(run.samples))
    chromium.open(page.as_uri())
    assert chromium.js("document.body.dataset.ready") == "1"
    assert chromium.js("typeof window.__pwned") == "undefined"  # the hostile answer stayed text
    assert chromium.js("document.getElementById('count').textContent") == f"showing {n} of {n}"
    assert Counter(chromium.js(VISIBLE)) == want
    # the filter chips: one per verdict present, with its count
    chips = chromium.js("[...document.querySelectorAll('#filters label')].map(l => l.textContent)")
    assert chips == [f"{v}{want[v]}" for v in ("right", "wrong", "parse failure", "error")]
    # untick "right": every other verdict stays, the hash remembers it
    chromium.js("document.getElementById('verdict-right').click()")
    shown = chromium.js(VISIBLE)
    assert "right" not in shown and len(shown) == n - want["right"]
    assert chromium.js("document.getElementById('count').textContent") == f"showing {n - want['right']} of {n}"
    assert chromium.js("decodeURIComponent(location.hash)") == "#verdict=wrong,parse_failure,error"
    # type a search: only the sample whose answer holds the text is left
    chromium.js("document.getElementById('search').focus()")
    chromium.type("pwned")
    chromium.js("new Promise(r => setTimeout(r, 400))")
    assert chromium.js(VISIBLE) == ["wrong"]
    # open it: prompt and response are shown verbatim, as text
    chromium.js("[...document.querySelectorAll('details.sample')].find(d => !d.hidden).open = true")
    assert chromium.js("document.querySelector('details.sample[open] pre.response').textContent") == HOSTILE
    hostile = next(s for s in run.samples if s["completion"]["text"] == HOSTILE)
    prompts = chromium.js("[...document.querySelectorAll('details.sample[open] pre.prompt')].map(p => p.textContent)")
    assert prompts == [m["content"] for m in hostile["request"]["messages"]]
    assert chromium.js("document.querySelectorAll('b').length") == 0
    # nothing matches: a sentence says so
    chromium.js(
        "const s = document.getElementById('search'); s.value = 'no such text anywhere'; "
        "s.dispatchEvent(new Event('input'))"
    )
    chromium.js("new Promise(r => setTimeout(r, 400))")
    assert chromium.js(VISIBLE) == [] and chromium.js("document.getElementById('empty').hidden") is False
    # a linked view: the fragment sets the filters (about:blank first: a new document, not a jump)
    chromium.open("about:blank")
    chromium.open(page.as_uri() + "#verdict=error")
    assert chromium.js(VISIBLE) == ["error"] * want["error"]
    assert chromium.js("document.getElementById('verdict-right').checked") is False
    assert (
        chromium.js("document.querySelector('details.sample:not([hidden]) .answer').textContent") == "HTTP500: boom <x>"
    )
    # the headline's name for them is the filter's key: #verdict=parse_failure shows them
    chromium.open("about:blank")
    chromium.open(page.as_uri() + "#verdict=parse_failure")
    assert chromium.js(VISIBLE) == ["parse failure"] * want["parse failure"] and want["parse failure"] > 0
    # readable at 1,400 px: no horizontal scrolling
    assert chromium.js("document.documentElement.scrollWidth") <= 1400
    assert chromium.problems() == []


def test_the_suite_index_links_the_sample_browsers(run_dir: Path) -> None:
    from evalcore.reporting._notebooks import write_index

    suite = run_dir.parent.parent
    index = write_index(suite, [], {"id": "t"}).read_text(encoding="utf-8")
    assert "<h2>Samples</h2>" in index and '<a href="runs/b/samples.html">b</a>' in index


def test_each_index_row_and_each_report_links_its_sample_browser(run_dir: Path, tmp_path: Path) -> None:
    """Issue 31 item 10: the browsers were linked only at the bottom of the index."""
    from evalcore.reporting import sample_browser_link
    from evalcore.reporting._notebooks import EntryResult, write_index

    suite = run_dir.parent.parent
    rows = [
        EntryResult(name="bench", notebook="notebooks/benchmark.ipynb", status="ok", params={"run_id": "b"}),
        EntryResult(name="other", notebook="notebooks/compare.ipynb", status="ok", params={}),
    ]
    index = write_index(suite, rows, {"id": "t"}).read_text(encoding="utf-8")
    bench_row = index.split("<td>bench</td>", 1)[1].split("</tr>", 1)[0]
    other_row = index.split("<td>other</td>", 1)[1].split("</tr>", 1)[0]
    assert '<a href="runs/b/samples.html"' in bench_row and ">samples</a>" in bench_row
    assert "samples.html" not in other_row
    # the report of a benchmark notebook (exported to <suite>/<name>/) links the same page
    link = sample_browser_link(run_dir, from_dir=suite / "bench").data
    assert "[sample browser](../runs/b/samples.html)" in link
    assert (suite / "runs" / "b" / "samples.html").is_file()


def test_imported_lm_eval_run_in_chromium_shows_reply_prompt_and_unknowns(tmp_path: Path, chromium) -> None:
    """Issue 31 item 5, as a reader sees it: the model's reply, the prompt, "unknown" where the
    log has no tokens or latency, the harness's metric name."""
    from evalcore.imports import import_lm_eval
    from evalcore.imports._common import write_run

    fixtures = Path(__file__).resolve().parents[1] / "imports" / "fixtures" / "lm_eval"
    (imported,) = import_lm_eval(fixtures, task="ec_gsm8k", metric=["exact_match,strict-match"])
    page = write_sample_browser(write_run(imported, tmp_path / "runs"), tmp_path / "samples.html")
    chromium.open(page.as_uri())
    assert chromium.js("document.body.dataset.ready") == "1"
    header = chromium.js("document.querySelector('header').textContent")
    assert "exact_match,strict-match (scored by lm-evaluation-harness)" in header
    assert "accuracy (flexible)" not in header
    row = chromium.js(
        "[...document.querySelectorAll('details.sample summary .num')].slice(0, 2).map(e => e.textContent)"
    )
    assert row == ["tokens unknown", "latency unknown"]
    chromium.js("document.querySelector('details.sample').open = true")
    response = chromium.js("document.querySelector('details.sample[open] pre.response').textContent")
    prompt = chromium.js("document.querySelector('details.sample[open] pre.prompt').textContent")
    first = imported.samples[0]
    assert response == first["completion"]["raw"][0][0] and response != first["completion"]["text"]
    assert prompt.startswith("Question: ")
    kv = chromium.js("document.querySelector('details.sample[open] .kv').textContent")
    assert "unknown (not in the log)" in kv and "0.000 s" not in kv and "lm-eval filter strict-match" in kv
    assert chromium.problems() == []
