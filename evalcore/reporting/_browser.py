"""A per-run sample browser: one static, offline HTML page for one benchmark run.

Like inspect's log viewer, but a single file that needs no server and no network: every sample
(item × epoch) with its prompt, response, extracted answer and how it was read, verdict,
tokens, latency and error; filterable by verdict and searchable. The samples travel inside the
page as JSON in a ``<script type="application/json">`` block, escaped so that no text of a
sample can close that block or become markup (``<``, ``>``, ``&`` and the JavaScript line
separators are written as ``\\u`` escapes); the page's script puts text into the document
with ``textContent`` only, never as HTML.

Filters and search also live in the address's fragment (``samples.html#verdict=wrong&q=eggs``),
so a filtered view can be linked to and reloaded.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._io import json_text, write_text_atomic
from evalcore.errors import EvalcoreError

__all__ = [
    "BROWSER_FILE",
    "sample_browser_html",
    "sample_browser_link",
    "sample_records",
    "suite_sample_browsers",
    "sample_browsers_section",
    "write_sample_browser",
]

BROWSER_FILE = "samples.html"
"""The browser's file name inside a run directory (``runs/<run_id>/samples.html``)."""

VERDICTS = ("right", "wrong", "parse failure", "passed", "failed", "error")
"""Verdicts in display order: exact match (right, wrong, parse failure = nothing could be
extracted, the name the headline's "parse failures" column uses), code execution (passed,
failed), and a failed model call (error)."""


def _verdict(sample: dict[str, Any]) -> str:
    if sample.get("error"):
        return "error"
    scores = sample.get("scores") or {}
    if "passed" in scores:
        return "passed" if scores.get("passed") else "failed"
    if scores.get("score") is None:
        return "error"
    if float(scores.get("score") or 0.0) >= 1.0:
        return "right"
    return "parse failure" if scores.get("parse_failure_flexible") else "wrong"


def _chat_messages(value: Any) -> list[dict[str, str]] | None:
    """Chat messages from a harness's logged prompt: a list of ``{role, content}`` dicts, or
    that list as JSON text (lm-eval's ``local-chat-completions`` logs it so); ``None``
    otherwise."""
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("[{"):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        out = []
        for m in value:
            content = m.get("content", "")
            if isinstance(content, list):  # inspect: content parts; the text ones are the prompt
                content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            out.append({"role": str(m.get("role", "")), "content": str(content)})
        return out
    return None


def _lm_eval_prompt(arguments: Any) -> list[dict[str, str]]:
    """The prompt lm-eval logged in a sample's ``arguments``: ``gen_args_0.arg_0`` is the
    context (chat messages as JSON for chat models, plain text otherwise); for a
    log-likelihood task every ``gen_args_N.arg_1`` is a scored continuation (an answer option)."""
    if not isinstance(arguments, dict) or not arguments:
        return []
    first = arguments.get("gen_args_0") or next(iter(arguments.values()))
    if not isinstance(first, dict) or "arg_0" not in first:
        return []
    context = first["arg_0"]
    while isinstance(context, list) and len(context) == 1 and isinstance(context[0], str):
        context = context[0]
    messages = _chat_messages(context) or [{"role": "prompt", "content": str(context)}]
    options = [a.get("arg_1") for a in arguments.values() if isinstance(a, dict)]
    if options and all(isinstance(o, str) for o in options):
        messages.append({"role": "continuations scored", "content": "\n".join(repr(o) for o in options)})
    return messages


def _harness(config: dict[str, Any] | None) -> str | None:
    imported = (config or {}).get("imported")
    return str(imported.get("harness")) if isinstance(imported, dict) and imported.get("harness") else None


def sample_records(samples: Sequence[dict[str, Any]], config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """What the browser shows of each sample record (plain JSON values only).

    A run imported from another harness (``config["imported"]``) is shown as that harness
    logged it: the model's reply as the response (for lm-eval, ``resps``, not the filtered
    answer), the filtered answer (lm-eval) or the scorer's answer (inspect) as what was
    extracted, the prompt when the log has it, and ``None`` (shown as "unknown") for tokens and
    latency the log does not have.

    Args:
        samples: Sample records of a run (``Run.samples``).
        config: The run's ``config.json`` (tells an imported run apart).

    Returns:
        One dict per sample: ``item_id``, ``epoch``, ``verdict``, ``messages`` (role, content),
        ``response``, ``reference``, ``extracted``/``method`` (flexible and strict),
        ``result`` (the sandbox's verdict text for code), ``prompt_tokens``,
        ``completion_tokens``, ``latency_s`` (``None``: unknown), ``cached``, ``error`` and
        ``subject``.
    """
    harness = _harness(config)
    scorer = str((config or {}).get("scorer") or "")
    out = []
    for s in samples:
        comp = s.get("completion") or {}
        usage = comp.get("usage") or {}
        scores = s.get("scores") or {}
        meta = s.get("metadata") or {}
        err = comp.get("error") or None
        request = s.get("request") or {}
        messages = [
            {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
            for m in request.get("messages") or []
            if isinstance(m, dict)
        ]
        response = str(comp.get("text") or "")
        extracted, method = scores.get("extracted_flexible"), scores.get("method_flexible")
        extracted_strict, method_strict = scores.get("extracted_strict"), scores.get("method_strict")
        latency = comp.get("latency_s")
        latency = float(latency) if isinstance(latency, (int, float)) else None
        if harness == "lm-evaluation-harness":
            messages = _lm_eval_prompt(request.get("arguments"))
            if comp.get("raw") is not None:  # the model's reply; `text` is lm-eval's filtered answer
                from evalcore.imports._lm_eval import _text as lm_eval_text

                response = lm_eval_text(comp["raw"])
            extracted, method = str(comp.get("text") or ""), f"lm-eval filter {meta.get('filter') or '?'}"
            latency = None  # lm-eval logs no timing
        elif harness is not None:  # inspect_ai
            messages = _chat_messages(request.get("input")) or (
                [{"role": "user", "content": str(request["input"])}] if request.get("input") else []
            )
            if request.get("choices"):
                messages.append({"role": "choices", "content": "\n".join(map(str, request["choices"]))})
            answer = meta.get("answer")
            extracted = None if answer is None else str(answer)
            method = f"inspect scorer {scorer.split('/', 1)[0]}" if scorer else "inspect scorer"
            if not latency:  # inspect wrote no total_time
                latency = None
        out.append(
            {
                "item_id": str(s.get("item_id")),
                "epoch": int(s.get("epoch", 0)),
                "verdict": _verdict(s),
                "messages": messages,
                "response": response,
                "reference": None if s.get("reference") is None else str(s.get("reference")),
                "extracted": extracted,
                "method": method,
                "extracted_strict": extracted_strict,
                "method_strict": method_strict,
                "result": scores.get("result"),
                "prompt_tokens": int(usage["prompt_tokens"]) if usage.get("prompt_tokens") is not None else None,
                "completion_tokens": (
                    int(usage["completion_tokens"]) if usage.get("completion_tokens") is not None else None
                ),
                "latency_s": latency,
                "cached": bool(s.get("cached")),
                "error": (
                    f"{err.get('type', '?')}: {err.get('message', '')}"
                    if isinstance(err, dict)
                    else (str(err) if err else None)
                ),
                "subject": meta.get("subject"),
            }
        )
    return out


def _script_json(obj: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (cannot end the block)."""
    text = json_text(obj, ensure_ascii=False, allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _fmt_ci(d: Any) -> str:
    if not isinstance(d, dict) or d.get("mean") is None:
        return "n/a"
    lo, hi = d.get("ci_low"), d.get("ci_high")
    ci = f" (95% CI {lo:.1%} – {hi:.1%})" if lo is not None and hi is not None else ""
    return f"{d['mean']:.1%}{ci}, n = {d.get('n')}"


def _summary(run: Any) -> dict[str, Any]:
    """The run's numbers computed from the samples the page shows (as ``results.json`` computes
    them: :func:`evalcore.runs.summarize`), so the header always describes those samples;
    ``results.json`` when the samples cannot be summarized."""
    from evalcore.benchmarks import benchmark_names, benchmark_of_run
    from evalcore.runs import summarize

    cfg = run.config
    dataset = str(cfg.get("dataset"))
    benchmark = None if _harness(cfg) else benchmark_of_run(cfg)  # a benchmark file's too
    if _harness(cfg) and dataset in benchmark_names():
        dataset = "imported"  # as the import summarized it: the harness's scores, not evalcore's rules
    try:
        return summarize(run.samples, dataset, epochs=int(cfg.get("epochs") or 1), benchmark=benchmark)
    except (KeyError, TypeError, ValueError, AttributeError):
        return dict(run.results or {})


def _same_ci(a: Any, b: Any) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a == b
    if a.get("n") != b.get("n") or (a.get("mean") is None) != (b.get("mean") is None):
        return False
    return a.get("mean") is None or abs(float(a["mean"]) - float(b["mean"])) < 1e-9


def _facts(run: Any, n_records: int) -> list[tuple[str, Any]]:
    """The header's facts: what was run, whether every sample is there, and the accuracy with
    its interval and n, computed from the samples shown."""
    cfg, res = run.config, run.results or {}
    summary = _summary(run)
    wanted = len(cfg.get("item_ids") or []) * int(cfg.get("epochs") or 1)
    interrupted = bool((res.get("invocation") or {}).get("interrupted"))
    if (wanted and n_records < wanted) or res.get("complete") is False:
        why = " (interrupted)" if interrupted else "" if res else " (no results.json: the run never finished)"
        status = f"INCOMPLETE: {n_records} of {wanted} samples recorded{why}"
    elif not res:
        status = "every sample recorded, but no results.json (the run did not finish)"
    else:
        status = "complete"
    facts: list[tuple[str, Any]] = [
        ("run", run.run_id),
        ("dataset", f"{cfg.get('dataset')} ({cfg.get('split')}, {', '.join(map(str, cfg.get('source') or []))})"),
        ("model", cfg.get("model")),
        ("samples", f"{n_records} of {wanted}"),
        ("status", status),
    ]
    errors = int(summary.get("errors") or 0)
    if errors:
        facts.append(("errors", f"{errors} failed model call{'s' if errors != 1 else ''} (not scored)"))
    harness = _harness(cfg)
    if harness:  # an import is scored by the harness's own metric: named as the harness names it
        metric = str((cfg.get("imported") or {}).get("metric") or cfg.get("scorer") or "score")
        facts.append((f"{metric} (scored by {harness})", _fmt_ci(summary.get("accuracy_flexible"))))
    else:
        facts += [
            ("accuracy (flexible)", _fmt_ci(summary.get("accuracy_flexible"))),
            ("accuracy (strict)", _fmt_ci(summary.get("accuracy_strict"))),
        ]
    if summary.get("pass_at_k"):
        facts.append(("pass@k", ", ".join(f"{k} {v:.3f}" for k, v in summary["pass_at_k"].items())))
    if res and not all(_same_ci(res.get(k), summary.get(k)) for k in ("accuracy_flexible", "accuracy_strict")):
        said = _fmt_ci(res.get("accuracy_flexible"))
        facts.append(
            (
                "results.json",
                f"out of date: it says {said}{'' if harness else ' (flexible)'}; the numbers above are "
                "computed from the samples shown",
            )
        )
    facts.append(("created", cfg.get("created_utc")))
    return facts


def sample_browser_html(run: Any) -> str:
    """The browser page of a loaded run (see :func:`evalcore.runs.load_run`).

    The header's accuracy (with its interval and n), error count and pass@k are computed from
    the samples the page shows, and a run that is not complete (interrupted, or never
    finished) says so. A Content-Security-Policy lets only the page's own script run.

    Args:
        run: A :class:`~evalcore.runs.Run`.

    Returns:
        The complete HTML document (no external resources).
    """
    from evalcore.reporting._tables import printable_text

    cfg = run.config
    records = sample_records(run.samples, cfg)
    esc = html.escape
    head = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(str(v))}</dd></div>" for k, v in _facts(run, len(records)))
    meta = {"run_id": run.run_id, "dataset": cfg.get("dataset"), "verdicts": list(VERDICTS)}
    page = _PAGE.format(
        title=esc(f"samples · {run.run_id}"),
        facts=head,
        csp=_BROWSER_CSP,
        data=_script_json({"meta": meta, "samples": records}),
    )
    return printable_text(page)  # a lone surrogate in a run id or model name: its escape


def write_sample_browser(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Write the sample browser of a run directory.

    Args:
        run_dir: The run directory (``config.json``, ``samples.jsonl``).
        out: The HTML file (default: ``<run_dir>/samples.html``).

    Returns:
        The written file.

    Raises:
        EvalcoreError: Not a run directory, or an unreadable run (nothing is written then).
    """
    from evalcore._runstore import load_run

    run = load_run(run_dir)
    target = Path(out) if out is not None else Path(run_dir) / BROWSER_FILE
    if target.is_dir():
        raise EvalcoreError("is a folder; give the HTML file to write", path=target, field="--output")
    write_text_atomic(target, sample_browser_html(run))
    return target


def sample_browser_link(run_dir: str | os.PathLike[str], from_dir: str | os.PathLike[str] | None = None) -> Any:
    """Write a run's sample browser and return a Markdown link to it, for a report.

    Args:
        run_dir: The run directory.
        from_dir: The folder the report is written to (default: :func:`record_dir`, where the
            notebook suite exports the HTML); the link is relative to it.

    Returns:
        An ``IPython.display.Markdown`` object.
    """
    from IPython.display import Markdown

    from evalcore.reporting._record import record_dir
    from evalcore.reporting._tables import markdown_escape

    page = write_sample_browser(run_dir)
    base = Path(from_dir) if from_dir is not None else record_dir()
    from urllib.parse import quote

    href = quote(Path(os.path.relpath(page.resolve(), base.resolve())).as_posix())
    return Markdown(
        f"Every sample of this run, with its prompt, response, extracted answer and verdict "
        f"(filter and search, offline): [sample browser]({href}) "
        f"(run {markdown_escape(Path(run_dir).name)})."
    )


def _newest_input(run_dir: Path) -> float:
    from evalcore._runstore import CONFIG_FILE, RESULTS_FILE, SAMPLES_FILE

    times = [
        p.stat().st_mtime for p in (run_dir / CONFIG_FILE, run_dir / SAMPLES_FILE, run_dir / RESULTS_FILE) if p.exists()
    ]
    return max(times, default=0.0)


def suite_sample_browsers(suite_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Write (or refresh) a sample browser for every run under ``<suite_dir>/runs``.

    A browser newer than its run's files is kept as it is. A folder that is not a readable
    run is skipped.

    Args:
        suite_dir: A suite run's folder (the benchmark notebooks write ``{suite_dir}/runs``).

    Returns:
        ``(run_id, href)`` per run, sorted by run id; ``href`` is relative to ``suite_dir``.
    """
    suite = Path(suite_dir)
    out: list[tuple[str, str]] = []
    runs = suite / "runs"
    if not runs.is_dir():
        return out
    from evalcore._runstore import CONFIG_FILE

    for run_dir in sorted(p for p in runs.iterdir() if (p / CONFIG_FILE).is_file()):
        page = run_dir / BROWSER_FILE
        try:
            if not page.exists() or page.stat().st_mtime < _newest_input(run_dir):
                write_sample_browser(run_dir, page)
        except (EvalcoreError, OSError, ValueError):
            continue
        out.append((run_dir.name, page.relative_to(suite).as_posix()))
    return out


def sample_browsers_section(suite_dir: str | os.PathLike[str]) -> str:
    """The index's "Samples" section: a link to each run's sample browser (empty: no runs).

    Args:
        suite_dir: A suite run's folder.

    Returns:
        An HTML fragment (``""`` when the suite has no benchmark runs).
    """
    links = suite_sample_browsers(suite_dir)
    if not links:
        return ""
    items = "".join(f'<li><a href="{html.escape(href)}">{html.escape(run_id)}</a></li>' for run_id, href in links)
    return (
        "<h2>Samples</h2>\n<p>Every answer of each benchmark run, with its prompt, extracted "
        f"answer, verdict, tokens and latency (filter and search offline):</p>\n<ul>{items}</ul>\n"
    )


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
{csp}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body{{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#fafbfc}}
header{{padding:12px 20px;background:#fff;border-bottom:1px solid #dde2e8}}
h1{{font-size:18px;margin:0 0 6px}}
dl{{display:flex;flex-wrap:wrap;gap:4px 22px;margin:0}} dl div{{display:flex;gap:6px}}
dt{{color:#5b6673}} dd{{margin:0;font-weight:600}}
#controls{{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;
  padding:10px 20px;background:#f1f4f7;border-bottom:1px solid #dde2e8}}
#controls label{{display:inline-flex;gap:4px;align-items:center;cursor:pointer;white-space:nowrap}}
#search{{flex:1 1 260px;max-width:480px;padding:5px 8px;border:1px solid #b9c2cc;border-radius:4px;font:inherit}}
#count{{color:#5b6673;margin-left:auto}}
main{{padding:8px 20px 40px}}
details.sample{{background:#fff;border:1px solid #dde2e8;border-radius:5px;margin:6px 0}}
details.sample>summary{{display:grid;grid-template-columns:minmax(150px,1.4fr) 90px minmax(120px,2fr) 130px 90px;
  gap:10px;padding:7px 10px;cursor:pointer;align-items:baseline}}
summary .id{{font-family:ui-monospace,monospace;overflow-wrap:anywhere}}
.v{{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;text-align:center}}
.v-right,.v-passed{{background:#dcf2e3;color:#155d2c}} .v-wrong,.v-failed{{background:#fbe0df;color:#8a1c16}}
.v-no-answer{{background:#fdf0cf;color:#6d5100}} .v-error{{background:#e6e1f5;color:#3c2a80}}
.num{{color:#5b6673;font-variant-numeric:tabular-nums;text-align:right}}
.body{{padding:4px 12px 12px;border-top:1px solid #eef1f4}}
.body h3{{font-size:13px;margin:10px 0 4px;color:#5b6673}}
pre{{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:8px;background:#f5f7f9;border-radius:4px;
  font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:420px;overflow:auto}}
.kv{{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}} .kv span:nth-child(odd){{color:#5b6673}}
#empty{{color:#5b6673;padding:20px 0}}
</style></head>
<body>
<header><h1>{title}</h1><dl>{facts}</dl></header>
<div id="controls" role="search">
  <span id="filters" aria-label="verdicts"></span>
  <input id="search" type="search" placeholder="search prompt, response, answer, item id" aria-label="search">
  <span id="count"></span>
</div>
<main><div id="list"></div><p id="empty" hidden>No sample matches these filters.</p></main>
<script type="application/json" id="evalcore-samples">{data}</script>
<script>
"use strict";
(function () {{
  var payload = JSON.parse(document.getElementById("evalcore-samples").textContent);
  var samples = payload.samples;
  var list = document.getElementById("list");
  var filters = document.getElementById("filters");
  var search = document.getElementById("search");
  var count = document.getElementById("count");
  var empty = document.getElementById("empty");
  var checks = {{}};

  function el(tag, cls, text) {{
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }}
  function slug(v) {{ return v.replace(/[^a-z]+/g, "-"); }}
  function shown(v) {{ return v === null || v === undefined || v === "" ? "—" : String(v); }}
  function known(v) {{ return v === null || v === undefined ? "unknown" : String(v); }}
  function hashKey(v) {{ return v.replace(/ /g, "_"); }}  // #verdict=parse_failure
  function fromKey(v) {{ return v.replace(/[_-]/g, " "); }}

  var counts = {{}};
  samples.forEach(function (s) {{ counts[s.verdict] = (counts[s.verdict] || 0) + 1; }});
  payload.meta.verdicts.forEach(function (v) {{
    if (!counts[v]) return;
    var label = el("label");
    var box = el("input");
    box.type = "checkbox"; box.checked = true; box.value = v; box.id = "verdict-" + slug(v);
    box.addEventListener("change", function () {{ apply(true); }});
    checks[v] = box;
    label.appendChild(box);
    label.appendChild(el("span", "v v-" + slug(v), v));
    label.appendChild(el("span", "num", counts[v]));
    filters.appendChild(label);
  }});

  var rows = samples.map(function (s, i) {{
    var d = el("details", "sample");
    d.dataset.verdict = s.verdict;
    d.dataset.index = String(i);
    var sum = el("summary");
    sum.title = "show the prompt, the response and how it was scored";
    sum.appendChild(el("span", "id", s.item_id + (s.epoch ? " · epoch " + s.epoch : "")));
    var badge = el("span", "v v-" + slug(s.verdict), s.verdict);
    var vcell = el("span"); vcell.appendChild(badge); sum.appendChild(vcell);
    var answer = s.error ? s.error : s.result !== null && s.result !== undefined ? s.result
      : shown(s.extracted) + (s.method ? " (" + s.method + ")" : "") + "  ·  reference " + shown(s.reference);
    sum.appendChild(el("span", "answer", answer));
    sum.appendChild(el("span", "num", s.prompt_tokens === null && s.completion_tokens === null ? "tokens unknown"
      : known(s.prompt_tokens) + " → " + known(s.completion_tokens) + " tok"));
    sum.appendChild(el("span", "num", s.latency_s === null ? "latency unknown"
      : s.latency_s.toFixed(2) + " s" + (s.cached ? " (cache)" : "")));
    d.appendChild(sum);
    d.addEventListener("toggle", function () {{
      if (d.open && !d.dataset.filled) {{ fill(d, s); d.dataset.filled = "1"; }}
    }});
    list.appendChild(d);
    s._text = [s.item_id, s.response, s.reference, s.extracted, s.extracted_strict, s.result, s.error,
               s.subject].concat(s.messages.map(function (m) {{ return m.content; }}))
               .filter(function (x) {{ return x !== null && x !== undefined; }}).join("\\n").toLowerCase();
    return d;
  }});

  function fill(d, s) {{
    var body = el("div", "body");
    s.messages.forEach(function (m) {{
      body.appendChild(el("h3", null, "prompt · " + m.role));
      body.appendChild(el("pre", "prompt", m.content));
    }});
    body.appendChild(el("h3", null, "response"));
    body.appendChild(el("pre", "response", s.response || "(empty)"));
    body.appendChild(el("h3", null, "scoring"));
    var kv = el("div", "kv");
    var pairs = [["verdict", s.verdict], ["reference", shown(s.reference)]];
    if (s.result !== null && s.result !== undefined) pairs.push(["sandbox", s.result]);
    if (s.method !== null && s.method !== undefined) {{
      var both = s.method_strict !== null && s.method_strict !== undefined;
      pairs.push([both ? "extracted (flexible)" : "extracted", shown(s.extracted) + " via " + s.method]);
      if (both) pairs.push(["extracted (strict)", shown(s.extracted_strict) + " via " + s.method_strict]);
    }}
    if (s.subject) pairs.push(["subject", s.subject]);
    pairs.push(["tokens", known(s.prompt_tokens) + " prompt, " + known(s.completion_tokens) + " completion"]);
    pairs.push(["latency", s.latency_s === null ? "unknown (not in the log)"
      : s.latency_s.toFixed(3) + " s" + (s.cached ? " (answered from the response cache)" : "")]);
    if (s.error) pairs.push(["error", s.error]);
    pairs.forEach(function (p) {{ kv.appendChild(el("span", null, p[0])); kv.appendChild(el("span", null, p[1])); }});
    body.appendChild(kv);
    d.appendChild(body);
  }}

  function apply(toHash) {{
    var q = search.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (d, i) {{
      var s = samples[i];
      var ok = (!checks[s.verdict] || checks[s.verdict].checked) && (!q || s._text.indexOf(q) >= 0);
      d.hidden = !ok;
      if (ok) n += 1;
    }});
    count.textContent = "showing " + n + " of " + samples.length;
    empty.hidden = n > 0;
    if (toHash) {{
      var off = Object.keys(checks).filter(function (v) {{ return !checks[v].checked; }});
      var parts = [];
      if (off.length) parts.push("verdict=" + Object.keys(checks).filter(function (v) {{ return checks[v].checked; }})
        .map(function (v) {{ return encodeURIComponent(hashKey(v)); }}).join(","));
      if (q) parts.push("q=" + encodeURIComponent(search.value.trim()));
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    }}
  }}

  function decode(text) {{
    try {{ return decodeURIComponent(text); }} catch (e) {{ return text; }}  // a malformed link: as typed
  }}
  function fromHash() {{
    var params = {{}};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {{
      if (!kv) return;
      var i = kv.indexOf("=");
      params[decode(kv.slice(0, i < 0 ? kv.length : i))] = i < 0 ? "" : decode(kv.slice(i + 1));
    }});
    if (params.verdict !== undefined) {{
      var want = params.verdict.split(",").map(fromKey);
      Object.keys(checks).forEach(function (v) {{ checks[v].checked = want.indexOf(v) >= 0; }});
    }}
    search.value = params.q || "";
    apply(false);
  }}

  var timer = null;
  search.addEventListener("input", function () {{
    clearTimeout(timer);
    timer = setTimeout(function () {{ apply(true); }}, 120);
  }});
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.ready = "1";
}})();
</script>
</body></html>
"""


def _browser_csp() -> str:
    import re

    from evalcore.reporting._export import content_security_policy

    page = _PAGE.format(title="", facts="", csp="", data="")
    return content_security_policy(re.findall(r"<script>(.*?)</script>", page, re.DOTALL)[-1])


_BROWSER_CSP = _browser_csp()
