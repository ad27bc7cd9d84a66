"""What a model or an agent wrote, shown in a report: always text, never markup or script, and it
never breaks the page, the figure or the numbers.

The payloads are model replies, item ids, subjects, run labels and agent notes; the pages are
checked with an HTML parser and in headless Chromium (``document.title`` is what a payload that
ran would change)."""

from __future__ import annotations

import gc
import json
import logging
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from evalcore.benchmarks import load
from evalcore.models import Completion, CompletionError, Usage
from evalcore.reporting import (
    difference_figure,
    format_table,
    item_scores,
    no_figure,
    notebook_to_html,
    pass_fail_figure,
    power_notes,
    sample_browser_html,
    samples_frame,
    subject_figure,
)
from evalcore.reporting._headline import headline_tables
from evalcore.reporting._notebooks import EntryResult, summary_frame, write_index
from evalcore.runs import RunInterrupted, load_run, run_benchmark, summarize

IMG = "<img src=x onerror=\"document.title='PWNED'\">"
SCRIPT = "<script>document.title='PWNED'</script>"


def _sample(item_id: str, text: str, score: float | None = 1.0, error: bool = False) -> dict:
    return {
        "item_id": item_id,
        "epoch": 0,
        "dataset": "gsm8k",
        "request": {"messages": [{"role": "user", "content": "Q?"}]},
        "completion": {
            "text": text,
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            "latency_s": 0.1,
            "cost_usd": 0.0,
            "error": {"type": "HTTP500", "message": "boom"} if error else None,
        },
        "scores": {}
        if error
        else {"score": score, "strict": score, "flexible": score, "extracted_flexible": "1", "method_flexible": "hash"},
        "reference": "1",
        "metadata": {},
        "error": error,
    }


# --------------------------------------------------------------------------- lone surrogates


def test_a_lone_surrogate_in_a_reply_or_an_item_id_does_not_break_the_views():
    """A JSON "\\ud800" in a reply decodes to a lone surrogate; pandas' pyarrow strings refused
    it (UnicodeEncodeError in samples_frame: the benchmark notebook failed)."""
    samples = [_sample("a\ud800", "lone \ud800 surrogate #### 1"), _sample("b", "#### 1", 0.0)]
    frame = samples_frame(samples)
    assert frame.loc[0, "response"] == "lone \\ud800 surrogate #### 1"
    assert frame.loc[0, "item_id"] == "a\\ud800"
    assert list(frame["score"]) == [1.0, 0.0]  # the numbers are untouched
    scores = item_scores(samples)
    assert scores.to_dict() == {"a\\ud800": 1.0, "b": 0.0}
    html = format_table(frame[["item_id", "response"]]).to_html()
    html.encode("utf-8")  # writable
    assert "lone \\ud800 surrogate" in html


# --------------------------------------------------------------------------- figures


def test_figure_labels_from_data_are_text_not_mathtext(tmp_path: Path):
    """An item id, subject or run label with "$\\foo$" stopped the figure (ParseFatalException);
    "$x^2$" was drawn as math."""
    grid = pd.DataFrame([[1.0, 0.0]], index=[r"id $\foo$ x"], columns=[0, 1])
    fig = pass_fail_figure(grid)
    fig.savefig(tmp_path / "grid.png")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [r"id $\foo$ x"]
    subjects = pd.DataFrame(
        {"subject": [r"$\foo$ law"], "n": [3], "accuracy": [0.5], "ci_low": [0.2], "ci_high": [0.8]}
    )
    subject_figure(subjects).savefig(tmp_path / "subjects.png")
    comparisons = pd.DataFrame(
        {
            "name_a": [r"$\foo$"],
            "name_b": ["b $x^2$"],
            "difference": [0.1],
            "ci_low": [0.0],
            "ci_high": [0.2],
            "significant": [False],
            "p_value": [0.3],
            "n": [10],
        }
    )
    difference_figure(comparisons).savefig(tmp_path / "diff.png")


# --------------------------------------------------------------------------- tables, Markdown


def test_format_table_escapes_column_names():
    frame = pd.DataFrame({IMG: [1, 2], "x": ["a", SCRIPT]})
    for html in (
        format_table(frame).to_html(),
        format_table(frame, headers=False).to_html(),
        format_table(frame.set_index(IMG), index=True).to_html(),
    ):
        assert IMG not in html and SCRIPT not in html
        soup = BeautifulSoup(html, "html.parser")
        assert soup.find("img") is None and soup.find("script") is None
        assert IMG in [th.get_text() for th in soup.find_all("th")]
        assert SCRIPT in [td.get_text() for td in soup.find_all("td")]


def test_power_notes_and_no_figure_show_names_as_text():
    power = pd.DataFrame(
        [
            {
                "pair": f"{IMG} − b",
                "n": 3,
                "min_detectable_difference": 0.2,
                "items_needed": 5,
                "observed_difference": 0.1,
            }
        ]
    )
    notes = power_notes(power)
    # Markdown backslash escapes, not HTML entities (the exporter escapes HTML once more)
    assert IMG not in notes and "\\<img src=x" in notes and "&lt;" not in notes
    shown = no_figure(f"the reference router `x` {IMG} was not replayed")
    text = getattr(shown, "data", shown)
    assert IMG not in text and "\\<img src=x" in text and "\\`x\\`" in text and "&lt;" not in text


def _exported_markdown(tmp_path: Path, *texts: str) -> tuple[str, BeautifulSoup]:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("show()")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"text/markdown": t, "text/plain": "<Markdown>"}) for t in texts
    ]
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "md.ipynb")
    page = notebook_to_html(tmp_path / "md.ipynb", tmp_path / "md.html").read_text("utf-8")
    return page, BeautifulSoup(page, "html.parser")


def test_exported_no_figure_and_power_notes_are_escaped_once(tmp_path: Path, chromium):
    """no_figure and power_notes escaped their text with html.escape and the exporter escaped
    it again: ``quality < 0.5 & cost > 0`` showed as ``quality &lt; 0.5 &amp; cost &gt; 0``."""
    power = pd.DataFrame(
        [
            {
                "pair": f"a_1 * [b] & {IMG} − c<d>",
                "n": 3,
                "min_detectable_difference": 0.2,
                "items_needed": 5,
                "observed_difference": 0.1,
            }
        ]
    )
    page, soup = _exported_markdown(
        tmp_path,
        no_figure("quality < 0.5 & cost > 0").data,
        no_figure(f"router {IMG} `x` *y* _z_ \\ [l](u)").data,
        power_notes(power),
    )
    rendered = soup.select(".jp-RenderedMarkdown")
    texts = [" ".join(r.get_text().split()) for r in rendered]
    assert texts[0] == "No figure: quality < 0.5 & cost > 0."
    assert "quality &lt; 0.5 &amp; cost &gt; 0" in page  # one level of escaping in the source
    assert "&amp;lt;" not in page and "&amp;amp;" not in page
    assert texts[1] == f"No figure: router {IMG} `x` *y* _z_ \\ [l](u)."  # every character as written
    assert texts[2].startswith(f"a_1 * [b] & {IMG} − c<d>: with n = 3 items")
    assert [e.name for e in rendered[1].find_all(True)] == ["p", "em"]  # no tag, code, link or emphasis of a name
    assert rendered[2].find("img") is None and rendered[2].strong.get_text().startswith("a_1 * [b]")
    chromium.open((tmp_path / "md.html").resolve().as_uri())
    assert chromium.js("document.title") == "md"  # the onerror payload did not run
    assert chromium.js("document.querySelectorAll('.jp-RenderedMarkdown img').length") == 0
    assert "quality < 0.5 & cost > 0" in chromium.js("document.body.innerText")


# --------------------------------------------------------------------------- notebook export

MARKDOWN_OUTPUTS = [
    f"**note** {IMG}",
    "*Note:* the first request used '<svg onload=\"document.title=`PWNED`\">', a tool",  # agent tool name
    "[click](javascript:document.title='PWNED')",
    f"```mermaid\n</pre>{IMG}\n```",
    "![a](attachment:not-there.png) and `<b>code</b>`",
    f"## A heading {SCRIPT}",
    f"lone \ud800 surrogate {IMG}",
]


def _hostile_notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("show()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"agent: \ud800 {SCRIPT}\n")]
    cell.outputs += [nbformat.v4.new_output("display_data", data={"text/markdown": md}) for md in MARKDOWN_OUTPUTS]
    nb.cells = [nbformat.v4.new_markdown_cell("# Report\n\nThe author's <b>markup</b> stays."), cell]
    # as the kernel saves it: JSON escapes, so the lone surrogate survives in the file
    path.write_text(json.dumps(nb, ensure_ascii=True), "utf-8")
    return path


def test_markdown_outputs_are_rendered_as_text(tmp_path: Path):
    """Markdown outputs carry agent text (``display(Markdown(f"*Note:* {note}"))``); nbconvert
    rendered its HTML as markup, a lone surrogate stopped the write (UnicodeEncodeError) and an
    ``attachment:`` image stopped the export (InvalidNotebook)."""
    html = notebook_to_html(_hostile_notebook(tmp_path / "nb.ipynb"), tmp_path / "nb.html")
    page = html.read_text("utf-8")
    soup = BeautifulSoup(page, "html.parser")
    outputs = soup.select(".jp-OutputArea-output")
    assert not any(o.find(["img", "svg", "script"]) for o in outputs if o.find("img", alt="a") is None)
    text = "\n".join(o.get_text() for o in outputs)
    assert IMG in text and SCRIPT in text and "lone \\ud800 surrogate" in text
    assert all(not (a.get("href") or "").startswith("javascript:") for a in soup.find_all("a"))
    assert [img.get("src") for img in soup.find_all("img")] == ["#harmful-link"]  # the attachment, as a link
    assert "<b>code</b>" in text  # code spans still code
    assert soup.select_one(".jp-MarkdownCell b").get_text() == "markup"  # the author's markdown as before
    assert soup.select(".jp-RenderedMarkdown h2")  # a heading output is still a heading (PDF layout)
    assert "cdnjs" not in page  # no mermaid.js from the network
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert csp is not None and "script-src 'sha256-" in csp["content"]


def test_exported_page_runs_no_payload_in_chromium(tmp_path: Path, chromium):
    html = notebook_to_html(_hostile_notebook(tmp_path / "nb.ipynb"), tmp_path / "nb.html")
    chromium.open(html.resolve().as_uri() + "#print")
    assert chromium.js("document.title") == "nb"
    assert chromium.js("document.documentElement.classList.contains('evalcore-print')")  # own script runs
    assert (
        chromium.js(
            "document.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg,"
            " .jp-OutputArea-output script').length"
        )
        == 1
    )  # only the attachment link
    assert "PWNED" in chromium.js("document.body.innerText")


# --------------------------------------------------------------------------- sample browser


class _Model:
    """Replies with payloads; item 3 fails; stops (Ctrl-C) at call ``stop`` when given."""

    name = "hostile:test"
    endpoint = "memory"

    def __init__(self, stop: int | None = None) -> None:
        self.items = load("gsm8k", source="sample")
        self.stop, self.calls = stop, 0

    async def acomplete(self, messages, params):
        return self.complete(messages, params)

    def complete(self, messages, params):
        self.calls += 1
        if self.stop is not None and self.calls >= self.stop:
            raise KeyboardInterrupt
        q = messages[-1]["content"]
        i, it = next((i, it) for i, it in enumerate(self.items) if it.fields["question"] in q)
        if i == 3:
            return Completion(text="", error=CompletionError(type="HTTP500", message=SCRIPT))
        text = {0: f"{SCRIPT} #### {it.reference}", 1: f"</script>{IMG}", 2: "lone \ud800 #### 2"}.get(
            i, f"#### {it.reference}" if i % 2 else "#### -1"
        )
        return Completion(text=text, usage=Usage(5, 3), latency_s=0.1, model="m")


def _facts(page: str) -> dict[str, str]:
    soup = BeautifulSoup(page, "html.parser")
    return {d.dt.get_text(): d.dd.get_text() for d in soup.select("dl div")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile") / "runs"
    run_benchmark(
        "gsm8k", _Model(), source="sample", progress=False, run_dir=base, run_id="full", cache=False, concurrency=1
    )
    # Ctrl-C at the 12th call; asyncio logs the interrupted task when it is collected (noise)
    log = logging.getLogger("asyncio")
    log.disabled = True
    try:
        with pytest.raises(RunInterrupted):
            run_benchmark(
                "gsm8k",
                _Model(stop=12),
                source="sample",
                progress=False,
                run_dir=base,
                run_id="partial",
                cache=False,
                concurrency=1,
            )
        gc.collect()
    finally:
        log.disabled = False
    return base


def test_browser_header_marks_errors_and_partial_runs_and_its_numbers_are_the_samples(runs: Path, tmp_path: Path):
    run = load_run(runs / "full")
    facts = _facts(sample_browser_html(run))
    scored = [s for s in run.samples if not s.get("error")]
    right = sum(float(s["scores"]["flexible"]) for s in scored)
    assert facts["status"] == "complete"
    assert facts["errors"] == "1 failed model call (not scored)"
    assert facts["accuracy (flexible)"].startswith(f"{right / len(scored):.1%}")
    assert facts["accuracy (flexible)"].endswith(f"n = {len(scored)}")
    assert "results.json" not in facts

    partial = load_run(runs / "partial")
    facts = _facts(sample_browser_html(partial))
    assert facts["status"] == f"INCOMPLETE: {len(partial.samples)} of 45 samples recorded (interrupted)"
    assert facts["accuracy (flexible)"].endswith(f"n = {len(partial.samples) - 1}")

    # results.json older than the samples (a resumed run killed before it wrote its summary)
    stale = tmp_path / "stale"
    shutil.copytree(runs / "full", stale)
    results = json.loads((stale / "results.json").read_text())
    results["accuracy_flexible"] = dict(results["accuracy_flexible"], mean=0.99, n=3)
    (stale / "results.json").write_text(json.dumps(results))
    facts = _facts(sample_browser_html(load_run(stale)))
    want = summarize(run.samples, "gsm8k", epochs=1)["accuracy_flexible"]
    assert facts["accuracy (flexible)"].startswith(f"{want['mean']:.1%}")
    assert facts["results.json"].startswith("out of date: it says 99.0%")


def test_browser_page_has_a_csp_and_runs_no_payload(runs: Path, tmp_path: Path, chromium):
    page = sample_browser_html(load_run(runs / "full"))
    soup = BeautifulSoup(page, "html.parser")
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert csp is not None and "script-src 'sha256-" in csp["content"]
    out = tmp_path / "samples.html"
    out.write_text(page, "utf-8")
    # a malformed link (a stray % in the fragment) stopped the page's script (URIError)
    chromium.open(out.resolve().as_uri() + "#q=%E0%A4%A")
    assert chromium.js("document.body.dataset.ready") == "1"
    chromium.open(out.resolve().as_uri())
    chromium.js("document.querySelectorAll('details.sample').forEach(d => { d.open = true; }); 1")
    assert chromium.js("document.title") == "samples · full"
    assert chromium.js("document.querySelectorAll('main img, main script, main svg').length") == 0
    assert chromium.js("document.body.innerText").count("PWNED") >= 3
    assert chromium.problems() == []


# --------------------------------------------------------------------------- headline, index


def test_headline_n_is_the_n_of_the_interval(tmp_path: Path):
    records = {
        "dataset": "gsm8k",
        "model": "m",
        "n_items": 8,
        "n_samples": 8,
        "errors": 1,
        "accuracy": {"mean": 0.25, "ci_low": 0.07, "ci_high": 0.59, "n": 7},
        "parse_failure_rate": 0.0,
    }
    table = headline_tables(summary_frame([EntryResult("b", "benchmark.ipynb", "ok", records=records)]))
    assert table.formatted()["benchmarks"].iloc[0]["n"] == "7 (8 items)"
    same = dict(records, errors=0, accuracy=dict(records["accuracy"], n=8))
    table = headline_tables(summary_frame([EntryResult("b", "benchmark.ipynb", "ok", records=same)]))
    assert table.formatted()["benchmarks"].iloc[0]["n"] == "8"


def test_index_has_a_csp_and_survives_a_lone_surrogate_in_an_error(tmp_path: Path):
    failed = EntryResult("agent", "agent_category.ipynb", "failed", error=f"agent said \ud800 {SCRIPT}")
    page = write_index(tmp_path, [failed], {"id": "X"}).read_text("utf-8")
    soup = BeautifulSoup(page, "html.parser")
    assert "script-src 'none'" in soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert soup.find("script") is None
    assert soup.select_one(".err").get_text() == f"agent said \\ud800 {SCRIPT}"
