"""Files of an agent evaluation: results JSON, three figures and a self-contained HTML report."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from evalcore._io import bounded, read_json, terminal_safe, to_json_native, write_bytes_atomic
from evalcore.agent_eval._config import CATEGORIES, CATEGORY_WEIGHTS, PASS_THRESHOLD
from evalcore.errors import EvalcoreError


def _as_dict(result: Any) -> dict[str, Any]:
    return result.to_dict() if hasattr(result, "to_dict") else dict(result)


def printable(value: Any) -> Any:
    """``value`` with every string (keys included) made safe to show: a lone surrogate (which
    JSON text may carry as ``"\\udcff"``, and an agent may put in an error message) becomes its
    escape ``\\udcff`` as text, and every control character but a line break its escape
    (``\\x1b``: :func:`evalcore._io.terminal_safe`), so that a report or a table shown on a
    terminal cannot be driven by what an agent wrote. The results JSON keeps the agent's
    strings as they were (escaped by ``json``); the report, the figures and the CLI show this
    form."""
    if isinstance(value, str):
        return terminal_safe(value, keep_newlines=True)
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable(v) for v in value]
    return value


def save_results(result: Any, output_dir: str | os.PathLike[str], *, when: _dt.datetime | None = None) -> Path:
    """Write ``evaluation_YYYYMMDD_HHMMSS.json`` (atomically; a suffix avoids overwriting).

    Args:
        result: An :class:`EvaluationResult` or its ``to_dict()``.
        output_dir: Folder to write into.
        when: Timestamp for the name (default: now, UTC).

    Returns:
        The written path.
    """
    out = Path(output_dir)
    stamp = (when or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%d_%H%M%S")
    path = out / f"evaluation_{stamp}.json"
    n = 1
    while path.exists():
        path = out / f"evaluation_{stamp}_{n}.json"
        n += 1
    write_bytes_atomic(path, results_payload(result))
    return path


MAX_RESULTS_BYTES = 50_000_000
"""Largest results file :func:`save_results` writes (50 MB). Every value in it is bounded
(:func:`evalcore._io.bounded`); should the whole still be larger (thousands of tests, each with
details at their caps), the tests' details are bounded tighter, then dropped (name, score,
outcome and a short excerpt of the error stay), and ``config.results_bounded`` says so."""

_TIGHTER: tuple[dict[str, int], ...] = (
    {"chars": 200, "items": 50, "nodes": 500},
    {"chars": 80, "items": 10, "nodes": 40},
)


def _dump_capped(d: Any, limit: int) -> bytes | None:
    """``d`` as indented JSON (UTF-8), or None as soon as it passes ``limit`` bytes (the text is
    produced piece by piece: an oversized result is never held whole)."""
    parts: list[bytes] = []
    size = 0
    for chunk in json.JSONEncoder(indent=1, allow_nan=False).iterencode(d):
        piece = chunk.encode("utf-8", "surrogatepass")
        size += len(piece)
        if size > limit:
            return None
        parts.append(piece)
    return b"".join(parts)


def _rebound(d: dict[str, Any], caps: Mapping[str, int], drop: bool = False) -> dict[str, Any]:
    """A results dict with every value bounded by ``caps`` (the summary and config with room for
    10,000 items); with ``drop`` the tests' details, the metrics and notes are left out."""
    out = dict(d)
    cats: dict[str, Any] = {}
    for name, r in d["detailed_results"].items():
        r = dict(r)
        tests = []
        for t in r.get("tests", []):
            t = dict(t)
            t["error"] = bounded(t.get("error"), **caps)
            t["details"] = {} if drop else bounded(t.get("details"), **caps)
            tests.append(t)
        r["tests"] = tests
        r["metrics"] = {} if drop else bounded(r.get("metrics"), **caps)
        r["notes"] = [] if drop else bounded(r.get("notes"), **caps)
        r["critical_failures"] = bounded(r.get("critical_failures"), **caps)
        cats[name] = r
    out["detailed_results"] = cats
    out["summary"] = bounded(d["summary"], **{**caps, "items": 10_000, "nodes": 200_000})
    out["config"] = bounded(d["config"], **{**caps, "items": 10_000, "nodes": 200_000})
    return out


def results_payload(result: Any, limit: int = MAX_RESULTS_BYTES) -> bytes:
    """The results JSON as :func:`save_results` writes it: every value bounded, at most ``limit``
    bytes (see :data:`MAX_RESULTS_BYTES`)."""
    d = result.to_dict() if hasattr(result, "to_dict") else _rebound(validate_results(dict(result)), {})
    d = {**d, "config": dict(d.get("config") or {})}
    payload = _dump_capped(d, limit)
    if payload is not None:
        return payload
    for caps, drop in ((_TIGHTER[0], False), (_TIGHTER[1], False), (_TIGHTER[1], True)):
        smaller = _rebound(d, caps, drop)
        smaller["config"]["results_bounded"] = f"the results passed {limit} bytes: the tests' " + (
            "details, metrics and notes were left out" if drop else f"details were bounded to {dict(caps)}"
        )
        payload = _dump_capped(smaller, limit)
        if payload is not None:
            return payload
    raise EvalcoreError(f"the results are larger than {limit} bytes even without the tests' details")


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a results JSON written by :func:`save_results`.

    Raises:
        EvalcoreError: Missing file, invalid JSON, or missing ``summary``/``detailed_results``.
    """
    p = Path(path)
    if not p.is_file():
        raise EvalcoreError("no such file", path=p)
    return validate_results(read_json(p), p)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def validate_results(data: Any, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Check the shape of an evaluation result dict (what :func:`compare_results` reads).

    Args:
        data: The parsed JSON.
        path: Its file, for error messages.

    Returns:
        ``data``.

    Raises:
        EvalcoreError: Naming the first missing or mistyped field.
    """
    for key in ("summary", "detailed_results", "config"):
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            raise EvalcoreError("not an agent evaluation result", path=path, field=key)
    if not _is_number(data["summary"].get("overall_score")):
        raise EvalcoreError("summary has no numeric overall_score", path=path, field="summary.overall_score")
    for cat, res in data["detailed_results"].items():
        where = f"detailed_results.{cat}"
        if not isinstance(res, dict) or not isinstance(res.get("tests"), list):
            raise EvalcoreError("category without a 'tests' list", path=path, field=where)
        if not _is_number(res.get("score")):
            raise EvalcoreError("category without a numeric score", path=path, field=f"{where}.score")
        for i, t in enumerate(res["tests"]):
            if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not _is_number(t.get("score")):
                raise EvalcoreError(
                    "test without a string name and a numeric score", path=path, field=f"{where}.tests[{i}]"
                )
    return data


# ------------------------------------------------------------------------------------- figures
_OUTCOME_COLOURS = {"pass": "#2a9d8f", "fail": "#f4a261", "critical": "#d62828"}
"""A test's colour in the agent figures by its outcome (the captions name these colours)."""


def figure_category_scores(result: Any) -> Figure:
    """Bar chart of category scores with the pass threshold and the overall score.

    seaborn's ``barplot`` of the result's category scores (one bar per category in the
    result's order, ``errorbar=None``: the score is the category's, nothing is estimated),
    teal at or above the pass threshold and orange below it.
    """
    import seaborn as sns

    d = _as_dict(result)
    cats = list(d["detailed_results"])
    scores = [d["detailed_results"][c]["score"] for c in cats]
    weights = d["summary"].get("weights_used", {})
    fig = Figure(figsize=(8, 4), constrained_layout=True)
    ax = fig.add_subplot()
    colors = ["#2a9d8f" if s >= d["summary"].get("pass_threshold", PASS_THRESHOLD) else "#e76f51" for s in scores]
    sns.barplot(
        x=cats,
        y=scores,
        hue=cats,
        order=cats,
        hue_order=cats,
        palette=colors,
        saturation=1.0,
        errorbar=None,
        legend=False,
        ax=ax,
    )
    from matplotlib.patches import Rectangle

    bars = [p for p in ax.patches if isinstance(p, Rectangle)]  # the bars barplot drew
    for b, c in zip(bars, cats, strict=True):
        ax.annotate(
            f"{b.get_height():.2f}\nw={weights.get(c, CATEGORY_WEIGHTS.get(c, 0)):.2f}",
            (b.get_x() + b.get_width() / 2, b.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.axhline(d["summary"].get("pass_threshold", PASS_THRESHOLD), color="grey", ls="--", lw=1, label="pass threshold")
    ax.axhline(
        d["summary"]["overall_score"], color="#264653", lw=1.5, label=f"overall {d['summary']['overall_score']:.2f}"
    )
    ax.set_ylim(0, 1.32)
    ax.set_ylabel("score")
    ax.set_title("Category scores")
    ax.legend(loc="upper center", fontsize=8, ncol=2)
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def figure_test_distribution(result: Any) -> Figure:
    """Strip plot of every test score per category.

    seaborn's ``scatterplot`` of every test (category position plus a seeded jitter of at most
    0.18, the same picture on every draw), coloured by outcome: teal pass, orange fail, red
    critical.
    """
    import numpy as np
    import seaborn as sns

    d = _as_dict(result)
    cats = list(d["detailed_results"])
    fig = Figure(figsize=(8, 4), constrained_layout=True)
    ax = fig.add_subplot()
    rng = np.random.default_rng(0)
    xs: list[float] = []
    ys: list[float] = []
    outcome: list[str] = []
    for i, c in enumerate(cats):
        tests = d["detailed_results"][c]["tests"]
        ys.extend(float(t["score"]) for t in tests)
        xs.extend((i + rng.uniform(-0.18, 0.18, size=len(tests))).tolist())
        outcome.extend("critical" if t.get("critical") else ("pass" if t["passed"] else "fail") for t in tests)
    if xs:
        sns.scatterplot(
            x=xs, y=ys, hue=outcome, palette=_OUTCOME_COLOURS, s=18, alpha=0.8, edgecolor="face", legend=False, ax=ax
        )
    ax.axhline(d["summary"].get("pass_threshold", PASS_THRESHOLD), color="grey", ls="--", lw=1)
    ax.set_xticks(range(len(cats)), cats, rotation=20)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("test score")
    ax.set_title("Test scores (teal pass, orange fail, red critical)")
    return fig


def figure_performance(result: Any) -> Figure:
    """Request latencies per category (box plots, log scale) and load-test numbers."""
    d = _as_dict(result)
    cats, lat = [], []
    for c, r in d["detailed_results"].items():
        vals: list[float] = []
        for t in r["tests"]:
            det = t.get("details") or {}
            if isinstance(det.get("latencies_s"), list):
                vals.extend(v for v in det["latencies_s"] if isinstance(v, (int, float)))
            elif isinstance(det.get("elapsed_s"), (int, float)):
                vals.append(det["elapsed_s"])
            for call in det.get("calls", []) if isinstance(det.get("calls"), list) else []:
                if isinstance(call, dict) and isinstance(call.get("elapsed_s"), (int, float)):
                    vals.append(call["elapsed_s"])
        if vals:
            cats.append(c)
            lat.append([max(v, 1e-6) for v in vals])
    fig = Figure(figsize=(8, 4), constrained_layout=True)
    ax = fig.add_subplot()
    if lat:
        ax.boxplot(lat)
        ax.set_xticks(range(1, len(cats) + 1), cats, rotation=20)
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no timed requests", ha="center", va="center", transform=ax.transAxes)
    perf = d["detailed_results"].get("performance", {}).get("metrics", {})
    if perf:
        qps = perf.get("qps")
        mem = perf.get("memory_growth_mb")
        ax.set_title(
            f"Request latency per category — load test: {qps if qps is None else round(qps, 2)} QPS "
            f"({perf.get('workers')} workers), memory growth "
            f"{mem if mem is None else round(mem, 1)} MB",
            fontsize=9,
        )
    else:
        ax.set_title("Request latency per category")
    ax.set_ylabel("seconds")
    return fig


def figure_category_tests(result: Any, category: str) -> Figure:
    """Horizontal bars of every test score of one category (teal pass, orange fail, red critical;
    seaborn's ``barplot``, ``errorbar=None``), tests top to bottom in the result's order."""
    import seaborn as sns

    d = _as_dict(result)
    if category not in d["detailed_results"]:
        raise EvalcoreError(f"category {category!r} was not run", field="category")
    tests = d["detailed_results"][category]["tests"]
    fig = Figure(figsize=(8, max(2.5, 0.28 * len(tests) + 1)), constrained_layout=True)
    ax = fig.add_subplot()
    names = [t["name"] for t in tests]
    cols = ["#d62828" if t.get("critical") else ("#2a9d8f" if t["passed"] else "#f4a261") for t in tests]
    if tests:
        # one bar per test, first at the top (seaborn's categorical axis), positions not names:
        # two tests may share a name
        pos = list(range(len(tests)))
        sns.barplot(
            x=[float(t["score"]) for t in tests],
            y=pos,
            hue=pos,
            orient="h",
            order=pos,
            hue_order=pos,
            palette=cols,
            saturation=1.0,
            errorbar=None,
            legend=False,
            ax=ax,
        )
    else:
        ax.invert_yaxis()
    ax.set_yticks(range(len(tests)), names, fontsize=8, parse_math=False)  # a test's name is text
    ax.axvline(d["summary"].get("pass_threshold", PASS_THRESHOLD), color="grey", ls="--", lw=1)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("test score")
    ax.set_title(
        f"{category}: score {d['detailed_results'][category]['score']:.2f} (teal pass, orange fail, red critical)",
        fontsize=10,
    )
    return fig


FIGURES = {
    "category_scores": figure_category_scores,
    "test_distribution": figure_test_distribution,
    "performance": figure_performance,
}


def figure_caption(name: str, result: Any, category: str | None = None) -> str:
    """The caption of an agent figure: what it shows, in words (issue 39: the report captioned
    each figure with its file name).

    Args:
        name: A key of :data:`FIGURES`, or ``"category_tests"`` (:func:`figure_category_tests`);
            another name is returned as it is.
        result: The evaluation result (object or dict).
        category: The category of ``"category_tests"``.

    Returns:
        Plain text.
    """
    d = _as_dict(result)
    s = d["summary"]
    pt = float(s.get("pass_threshold", PASS_THRESHOLD))
    if name == "category_tests" and category in d["detailed_results"]:
        r = d["detailed_results"][category]
        return (
            f"Every {category} test's score, one bar per test in the order run ({len(r['tests'])} tests): teal "
            f"passed, orange failed, red a critical failure; dashed line: the pass threshold {pt:g}; the title "
            f"gives the category score, {float(r['score']):.2f}, the mean of its tests."
        )
    if name == "category_scores":
        return (
            f"Category scores: one bar per category run, teal at or above the pass threshold {pt:g}, orange "
            f"below, with the score and the category's weight w above it; dashed line: the pass threshold; "
            f"solid line: the weighted overall score, {float(s['overall_score']):.2f}."
        )
    if name == "test_distribution":
        n = sum(len(r["tests"]) for r in d["detailed_results"].values())
        return (
            f"Every test's score by category ({n} tests): teal passed, orange failed, red a critical failure; "
            f"points are spread sideways so that equal scores stay visible; dashed line: the pass threshold {pt:g}."
        )
    if name == "performance":
        load = (
            "; the title gives the load test's throughput and the memory growth measured in the performance category"
            if d["detailed_results"].get("performance", {}).get("metrics")
            else ""
        )
        return (
            "Request latency per category, in seconds on a log scale, from the timed requests of its tests "
            f"(box: quartiles and median; whiskers: 1.5 × the interquartile range){load}."
        )
    return name


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def _status(d: Mapping[str, Any]) -> str:
    """``PASSED``/``FAILED``/``partial`` as :attr:`EvaluationResult.status` has it (recomputed
    for a dict saved before the summary carried a status)."""
    s = d["summary"]
    if s.get("status") in ("PASSED", "FAILED", "partial"):
        return str(s["status"])
    if not set(CATEGORIES) <= set(d["detailed_results"]):
        return "partial"
    return "PASSED" if s.get("passed") else "FAILED"


def render_html(result: Any, figures: Mapping[str, bytes] | None = None) -> str:
    """A self-contained HTML report (figures embedded as base64 PNG).

    Args:
        result: The evaluation (object or dict).
        figures: PNG bytes per figure name (default: drawn here).

    Returns:
        The HTML text.
    """
    from evalcore._html import content_security_policy

    d = printable(to_json_native(_as_dict(result)))
    figs = dict(figures) if figures is not None else {n: _png(f(d)) for n, f in FIGURES.items()}
    s = d["summary"]
    e = html.escape
    # the page shows what the agent wrote (test names, errors, notes): escaped, and with no
    # script of its own the policy lets none run (defence in depth, as in the notebook reports)
    csp = content_security_policy()
    rows = "".join(
        f"<tr><td>{e(c)}</td><td>{r['score']:.3f}</td><td>{s.get('weights_used', {}).get(c, 0):.3f}</td>"
        f"<td>{'pass' if r['passed'] else 'FAIL'}</td><td>{r['n_passed']}/{r['n_tests']}</td>"
        f"<td>{e('; '.join(r.get('notes', [])))}</td></tr>"
        for c, r in d["detailed_results"].items()
    )
    failed = "".join(
        f"<tr><td>{e(c)}</td><td>{e(t['name'])}</td><td>{t['score']:.2f}</td>"
        f"<td>{'yes' if t.get('critical') else ''}</td><td>{e(str(t.get('error') or ''))}</td></tr>"
        for c, r in d["detailed_results"].items()
        for t in r["tests"]
        if not t["passed"]
    )
    metrics = "".join(
        f"<h3>{e(c)}</h3><pre>{e(json.dumps(r.get('metrics', {}), indent=1))}</pre>"
        for c, r in d["detailed_results"].items()
    )
    imgs = "".join(
        f'<figure><img alt="{e(figure_caption(n, d))}" src="data:image/png;base64,{base64.b64encode(b).decode()}">'
        f"<figcaption>{e(figure_caption(n, d))}</figcaption></figure>"
        for n, b in figs.items()
    )
    crit = s.get("critical_failures", [])
    verdict, below_text, trust_text = _verdict_texts(d)
    return f"""<!doctype html>
<html><head><meta charset="utf-8">{csp}<title>Agent evaluation — {e(str(d["config"].get("agent", "")))}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px}}img{{max-width:100%}}</style></head><body>
<h1>Agent evaluation: {e(str(d["config"].get("agent", "")))}</h1>
<p>Overall score <b>{s["overall_score"]:.3f}</b> (weighted mean over the categories run, weights renormalized) —
system {verdict}; {len(crit)} critical failure(s). {below_text} {trust_text}
Tests passed: {s["n_tests_passed"]}/{s["n_tests"]}.
Started {e(str(s.get("started_at", "")))}, {s.get("duration_s", 0):.1f} s.</p>
<table><tr><th>category</th><th>score</th><th>weight</th><th>status</th><th>tests passed</th><th>notes</th></tr>
{rows}</table>
{imgs}
<h2>Failed tests</h2>
<table><tr><th>category</th><th>test</th><th>score</th><th>critical</th><th>why</th></tr>{failed}</table>
<h2>Metrics</h2>{metrics}
<h2>Configuration</h2><pre>{e(json.dumps(d["config"], indent=1))}</pre>
</body></html>
"""


def _verdict_texts(d: dict[str, Any]) -> tuple[str, str, str]:
    """The report's verdict, its line on the categories below the floor and on trust (HTML)."""
    e = html.escape
    s = d["summary"]
    status = _status(d)
    floor = s.get("category_floor", 0.5)
    below = list(s.get("categories_below_floor", [c for c, r in d["detailed_results"].items() if r["score"] < floor]))
    trusted = s.get("trusted", d["config"].get("trusted", False))
    process = d["config"].get("agent_process", "")
    if status == "partial":
        verdict = "<b>partial</b> (not every category was run: no verdict for the system)"
    else:
        verdict = (
            f"<b>{status}</b> (needs all seven categories, overall ≥ {s.get('pass_threshold', PASS_THRESHOLD)}, "
            f"every category ≥ the floor {floor:g} and no critical failures)"
        )
    below_text = (
        f"Below the category floor {floor:g}: <b>{e(', '.join(below))}</b>."
        if below
        else f"No category below the floor {floor:g}."
    )
    iso = d["config"].get("agent_isolation")
    trust_text = (
        "Trusted: yes (the agent ran out of the evaluator's process"
        + (f", {e(str(process))}" if process else "")
        + (f"; isolation {e(str(iso))}" if iso else "")
        + ")."
        if trusted
        else "Trusted: <b>no</b> (the agent ran in the evaluator's process"
        + (f", {e(str(process))}" if process and process != "in-process" else "")
        + " and could reach it: debugging only)."
    )
    return verdict, below_text, trust_text


def write_outputs(result: Any, output_dir: str | os.PathLike[str], *, visualize: bool = True) -> dict[str, Path]:
    """Write the results JSON and, with ``visualize``, the three PNG figures and ``report.html``.

    Args:
        result: The evaluation (object or dict).
        output_dir: Folder to write into.
        visualize: Also draw figures and the HTML report.

    Returns:
        Paths by kind: ``json``, and with ``visualize`` ``category_scores``, ``test_distribution``,
        ``performance``, ``html``.
    """
    out = Path(output_dir)
    d = to_json_native(_as_dict(result))
    paths: dict[str, Path] = {"json": save_results(d, out)}
    if visualize:
        d = printable(d)
        pngs = {name: _png(fn(d)) for name, fn in FIGURES.items()}
        for name, data in pngs.items():
            p = out / f"{name}.png"
            write_bytes_atomic(p, data)
            paths[name] = p
        p = out / "report.html"
        write_bytes_atomic(p, render_html(d, pngs).encode("utf-8", "backslashreplace"))
        paths["html"] = p
    return paths
