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
from evalcore.reporting._browser_page import _BROWSER_CSP, _PAGE

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
    return [_sample_record(s, harness, scorer) for s in samples]


def _sample_record(s: dict[str, Any], harness: str | None, scorer: str) -> dict[str, Any]:
    """One sample's entry of :func:`sample_records`."""
    comp = s.get("completion") or {}
    usage = comp.get("usage") or {}
    scores = s.get("scores") or {}
    err = comp.get("error") or None
    request = s.get("request") or {}
    messages = [
        {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
        for m in request.get("messages") or []
        if isinstance(m, dict)
    ]
    latency = comp.get("latency_s")
    seen: dict[str, Any] = {
        "messages": messages,
        "response": str(comp.get("text") or ""),
        "extracted": scores.get("extracted_flexible"),
        "method": scores.get("method_flexible"),
        "latency_s": float(latency) if isinstance(latency, (int, float)) else None,
    }
    if harness is not None:
        seen.update(_imported_view(s, harness, scorer, seen["latency_s"]))
    return {
        "item_id": str(s.get("item_id")),
        "epoch": int(s.get("epoch", 0)),
        "verdict": _verdict(s),
        "messages": seen["messages"],
        "response": seen["response"],
        "reference": None if s.get("reference") is None else str(s.get("reference")),
        "extracted": seen["extracted"],
        "method": seen["method"],
        "extracted_strict": scores.get("extracted_strict"),
        "method_strict": scores.get("method_strict"),
        "result": scores.get("result"),
        "prompt_tokens": int(usage["prompt_tokens"]) if usage.get("prompt_tokens") is not None else None,
        "completion_tokens": (int(usage["completion_tokens"]) if usage.get("completion_tokens") is not None else None),
        "latency_s": seen["latency_s"],
        "cached": bool(s.get("cached")),
        "error": (
            f"{err.get('type', '?')}: {err.get('message', '')}"
            if isinstance(err, dict)
            else (str(err) if err else None)
        ),
        "subject": (s.get("metadata") or {}).get("subject"),
    }


def _imported_view(s: dict[str, Any], harness: str, scorer: str, latency: float | None) -> dict[str, Any]:
    """What a run imported from another harness shows as it logged it: ``messages``,
    ``response``, ``extracted``, ``method`` and ``latency_s`` (see :func:`sample_records`)."""
    comp = s.get("completion") or {}
    meta = s.get("metadata") or {}
    request = s.get("request") or {}
    if harness == "lm-evaluation-harness":
        seen: dict[str, Any] = {"messages": _lm_eval_prompt(request.get("arguments"))}
        if comp.get("raw") is not None:  # the model's reply; `text` is lm-eval's filtered answer
            from evalcore.imports import lm_eval_reply_text as lm_eval_text

            seen["response"] = lm_eval_text(comp["raw"])
        seen["extracted"] = str(comp.get("text") or "")
        seen["method"] = f"lm-eval filter {meta.get('filter') or '?'}"
        seen["latency_s"] = None  # lm-eval logs no timing
        return seen
    # inspect_ai
    messages = _chat_messages(request.get("input")) or (
        [{"role": "user", "content": str(request["input"])}] if request.get("input") else []
    )
    if request.get("choices"):
        messages.append({"role": "choices", "content": "\n".join(map(str, request["choices"]))})
    answer = meta.get("answer")
    return {
        "messages": messages,
        "extracted": None if answer is None else str(answer),
        "method": f"inspect scorer {scorer.split('/', 1)[0]}" if scorer else "inspect scorer",
        "latency_s": latency or None,  # inspect wrote no total_time: 0 is unknown
    }


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
