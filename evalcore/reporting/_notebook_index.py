"""The notebook suite's summary and index page: the summary table shown in a notebook
(:func:`display_summary`), the sparse table of every record (:func:`summary_frame`) and
``<suite-run>/index.html`` (:func:`write_index`).

Split from :mod:`evalcore.reporting._notebooks`, which re-exports these names.
"""

from __future__ import annotations

import html as _html
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore._io import to_json_native, write_text_atomic
from evalcore.reporting._record import RECORDS_FILENAME, _flatten, _write_sidecar_json

if TYPE_CHECKING:
    from evalcore.reporting._notebooks import EntryResult


def _rel(path: Path | None, base: Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict) and {"mean", "ci_low", "ci_high"} <= set(value):
        parts = [value.get(k) for k in ("mean", "ci_low", "ci_high")]
        if all(isinstance(v, (int, float)) for v in parts):
            return f"{parts[0]:.3g} [{parts[1]:.3g}, {parts[2]:.3g}]"
        return ""
    if isinstance(value, (list, dict)):
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + "..."
    text = str(value)
    return text if len(text) <= 60 else "..." + text[-57:]


def _short_param(value: Any) -> str:
    if isinstance(value, str) and ("/" in value or os.sep in value):
        parts = Path(value).parts
        return "/".join(parts[-2:]) if len(parts) > 2 else value
    if isinstance(value, list):
        return "[" + ", ".join(_short_param(v) for v in value) + "]"
    return _cell(value)


def display_summary(results: Sequence[EntryResult]) -> Any:
    """The index's compact summary: one row per run; parameters in one cell; an interval
    record (``{mean, ci_low, ci_high}``) as ``mean [low, high]``; list-valued records left out
    (they are in each run's ``records.json``).

    Args:
        results: The suite's entry results.

    Returns:
        A ``pandas.DataFrame`` of strings indexed by run name.
    """
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"run": r.name, "status": r.status}
        row["parameters"] = ", ".join(f"{k}={_short_param(v)}" for k, v in r.params.items())
        for key, value in r.records.items():
            if isinstance(value, list):
                continue
            if isinstance(value, dict) and not {"mean", "ci_low", "ci_high"} <= set(value):
                for sub, item in _flatten(value, prefix=f"{key}.").items():
                    if not isinstance(item, list):
                        row[sub] = _cell(item)
            else:
                row[key] = _cell(value)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("run").fillna("") if not frame.empty else frame


def summary_frame(results: Sequence[EntryResult]) -> Any:
    """Build the index's summary table: one row per run, parameters then recorded numbers.

    Args:
        results: The suite's entry results.

    Returns:
        A ``pandas.DataFrame`` indexed by run name with ``status``, ``params.<name>`` and
        one column per (flattened) record.
    """
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"run": r.name, "status": r.status}
        row.update({f"params.{k}": v for k, v in r.params.items()})
        row.update(_flatten(r.records))
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("run") if not frame.empty else frame


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em;color:#222;max-width:1320px}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em} h3{font-size:1.05em;margin:1.4em 0 .3em}
table{border-collapse:collapse;font-size:.85em} th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top} th{background:#f3f3f3}
.ok{color:#176317;font-weight:bold} .failed,.interrupted{color:#b00020;font-weight:bold}
.pending,.running{color:#777} .nb td:nth-child(4),.nb td:nth-child(5){white-space:nowrap}
.err{font-family:monospace;color:#b00020;white-space:pre-wrap}
.headline td.num,.headline th{font-variant-numeric:tabular-nums} .headline td.num{text-align:right;white-space:nowrap}
.headline td{max-width:22em;overflow-wrap:anywhere} p.note{color:#555;font-size:.85em;margin:.2em 0 .4em}
"""


def _meta_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _row_sample_browser(suite_dir: Path, result: EntryResult) -> str | None:
    """The sample browser of the benchmark run a notebook made (its ``run_path`` record, else
    its ``run_id`` parameter under ``<suite_dir>/runs``), relative to ``suite_dir``; ``None``
    when it made none or the page is not there."""
    from evalcore.reporting._browser import BROWSER_FILE

    candidates = []
    if isinstance(result.records.get("run_path"), str):
        candidates.append(Path(result.records["run_path"]))
    if isinstance(result.params.get("run_id"), str) and result.params["run_id"]:
        candidates.append(suite_dir / "runs" / result.params["run_id"])
    for run in candidates:
        page = (run if run.is_absolute() else suite_dir / run) / BROWSER_FILE
        if page.is_file():
            rel = _rel(page, suite_dir)
            if rel and not rel.startswith(("/", "..")):
                return rel
    return None


def _index_row(suite_dir: Path, r: EntryResult) -> str:
    """One notebook's row of ``index.html``: status, time, links to its outputs and logs, figures
    and details (error, messages)."""
    esc = _html.escape
    links = []
    for label, target in (("notebook", r.executed), ("HTML", r.html), ("PDF", r.pdf)):
        if target:
            links.append(f'<a href="{esc(target)}">{label}</a>')
    browser = _row_sample_browser(suite_dir, r)
    if browser:
        links.append(
            f'<a href="{esc(browser)}" title="every sample of this run: prompt, response, '
            f'extracted answer, verdict">samples</a>'
        )
    records_file = suite_dir / r.name / RECORDS_FILENAME
    if records_file.exists():
        links.append(f'<a href="{esc(r.name)}/{RECORDS_FILENAME}">records JSON</a>')
    for log, label in (
        ("stderr.log", "progress bars and warnings moved out of the report"),
        ("kernel.log", "the kernel's own log"),
    ):
        if (suite_dir / r.name / log).exists():
            links.append(f'<a href="{esc(r.name)}/{log}" title="{esc(label)}">{log}</a>')
    figs = " ".join(f'<a href="{esc(f)}">{esc(Path(f).name)}</a>' for f in r.figures)
    detail = f'<div class="err">{esc(r.error)}</div>' if r.error else ""
    if r.messages:
        detail += "".join(f"<div>{esc(m)}</div>" for m in r.messages)
    duration = f"{r.duration_s:.1f} s" if r.duration_s is not None else ""
    return (
        f"<tr><td>{esc(r.name)}</td><td>{esc(r.notebook)}</td>"
        f'<td class="{esc(r.status)}">{esc(r.status)}</td><td>{duration}</td>'
        f"<td>{' · '.join(links)}</td><td>{figs}</td><td>{detail}</td></tr>"
    )


def write_index(suite_dir: Path, results: Sequence[EntryResult], meta: Mapping[str, Any]) -> Path:
    """Write ``index.html``, ``suite.json`` and ``summary.csv`` of a suite run.

    Args:
        suite_dir: The suite run's folder.
        results: The entry results so far.
        meta: Suite facts shown in the header (``suite``, ``id``, ``started``...).

    Returns:
        The ``index.html`` path.
    """
    esc = _html.escape
    _write_sidecar_json(
        suite_dir / "suite.json",
        to_json_native({"meta": dict(meta), "runs": [asdict(r) for r in results]}, strict=True),
    )
    frame = summary_frame(results)
    if not frame.empty:
        csv = frame.to_csv()
        write_text_atomic(suite_dir / "summary.csv", csv)
    done = sum(r.status == "ok" for r in results)
    failed = sum(r.status == "failed" for r in results)
    from evalcore.reporting._browser import sample_browsers_section

    samples = sample_browsers_section(suite_dir)  # a sample browser per benchmark run: written, listed
    rows = [_index_row(suite_dir, r) for r in results]
    from evalcore.reporting._export import content_security_policy  # no script runs in the index
    from evalcore.reporting._headline import headline_tables
    from evalcore.reporting._tables import printable_text

    table = headline_tables(frame)
    headline = table.to_html() if table else "<p>No numbers recorded yet.</p>"
    shown_meta = {k: v for k, v in meta.items() if k not in {"smoke", "only", "root"}}
    if meta.get("root") and meta.get("suite"):  # the suite file as the user named it, not a machine path
        shown_meta["suite"] = _rel(Path(str(meta["suite"])), Path(str(meta["root"])))
    head = " · ".join(f"{esc(str(k))}: {esc(_meta_value(v))}" for k, v in shown_meta.items())
    title = f"evalcore report {esc(str(meta.get('id', '')))}"
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{content_security_policy()}<title>{title}</title>
<style>{_CSS}</style></head><body>
<h1>evalcore report {esc(str(meta.get("id", "")))}</h1>
<p>{head}</p>
<p>{done} ok · {failed} failed · {len(results) - done - failed} pending</p>
<h2>Headline</h2>
{headline}
<p>Every recorded number (<code>evalcore.record</code>) with the papermill parameters, one row per
notebook: <a href="summary.csv">summary.csv</a>; list-valued records in <a href="suite.json">suite.json</a>
and each run's records JSON.</p>
<h2>Notebooks</h2>
<table class="nb"><thead><tr><th>run</th><th>notebook</th><th>status</th><th>time</th><th>outputs</th>
<th>figures</th><th>details</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table>
{samples}</body></html>
"""
    index = suite_dir / "index.html"
    write_text_atomic(index, printable_text(body))  # a lone surrogate in an error: its escape
    return index
