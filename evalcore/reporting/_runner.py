"""The papermill batch runner behind ``evalcore notebooks run``.

Each suite entry is executed with papermill (kernel ``python3``, working directory = the
repository root, one at a time) into ``<output>/<suite-run-id>/<name>/``: the executed
notebook, its HTML export (inputs hidden), a PDF printed by headless Chromium, its figures as
PNG and its recorded numbers as ``records.json``. ``<output>/<suite-run-id>/index.html``
links everything and shows one summary table; ``<output>/latest`` points to the newest run.
A failing notebook does not stop the suite; it is marked failed in the index.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html as _html
import json
import math
import os
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import write_text_atomic
from evalcore.errors import EvalcoreError
from evalcore.reporting._export import (
    CHROMIUM_HINT,
    ExportResult,
    export_notebook,
    find_chromium,
)
from evalcore.reporting._record import (
    RECORD_DIR_ENV,
    RECORDS_FILENAME,
    _flatten,
    _write_json_atomic,
    read_records,
    read_sidecar,
    to_native,
)
from evalcore.reporting._suite import (
    SuiteEntry,
    check_parameters,
    find_root,
    load_suite,
    substitute,
)

__all__ = ["EntryResult", "SuiteResult", "display_summary", "new_suite_id", "run_suite", "summary_frame", "write_index"]

SUITE_DIR_ENV = "EVALCORE_SUITE_DIR"
KERNEL_NAME = "python3"


@dataclass
class EntryResult:
    """The outcome of one notebook run.

    Attributes:
        name: The suite entry's name.
        notebook: The source notebook (relative to the root where possible).
        status: ``"ok"``, ``"failed"`` or ``"pending"``.
        duration_s: Wall time of the execution.
        params: The parameters it ran with.
        executed: The executed notebook (relative to the suite folder), if written.
        html: The HTML export, if made.
        pdf: The PDF, if made.
        figures: The PNG files.
        records: The recorded numbers.
        error: For a failed run, the exception (type: message).
        messages: Notes, e.g. why no PDF was made.
    """

    name: str
    notebook: str
    status: str = "pending"
    duration_s: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    executed: str | None = None
    html: str | None = None
    pdf: str | None = None
    figures: list[str] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    messages: list[str] = field(default_factory=list)


@dataclass
class SuiteResult:
    """The outcome of a suite run.

    Attributes:
        suite_dir: ``<output>/<suite-run-id>``.
        results: One :class:`EntryResult` per executed entry, in order.
        index: The ``index.html`` path.
    """

    suite_dir: Path
    results: list[EntryResult]
    index: Path

    @property
    def ok(self) -> bool:
        """True when every notebook ran to its end."""
        return all(r.status == "ok" for r in self.results)

    @property
    def failed(self) -> list[str]:
        """Names of the runs that failed."""
        return [r.name for r in self.results if r.status != "ok"]


def new_suite_id(output: Path) -> str:
    """Return a fresh suite-run id: the UTC time ``YYYYmmddTHHMMSSZ`` (``-2``… if taken)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = stamp, 1
    while (output / candidate).exists():
        n += 1
        candidate = f"{stamp}-{n}"
    return candidate


@contextlib.contextmanager
def _kernel_env(record_dir: Path, suite_dir: Path) -> Iterator[None]:
    """Environment the kernel inherits: record dir set, a non-interactive MPLBACKEND removed."""
    saved = {k: os.environ.get(k) for k in (RECORD_DIR_ENV, SUITE_DIR_ENV, "MPLBACKEND")}
    os.environ[RECORD_DIR_ENV] = str(record_dir)
    os.environ[SUITE_DIR_ENV] = str(suite_dir)
    # An inherited MPLBACKEND=Agg would make inline figures vanish from the notebook.
    if os.environ.get("MPLBACKEND", "").lower() in {"agg", "pdf", "svg", "cairo", "ps", "template"}:
        del os.environ["MPLBACKEND"]
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _rel(path: Path | None, base: Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def _update_latest(output: Path, suite_id: str) -> bool:
    """Point ``output/latest`` at ``suite_id`` (atomically); False when ``latest`` is a real
    file or folder, which is left alone."""
    link = output / "latest"
    if link.exists() and not link.is_symlink():
        return False
    tmp = output / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(suite_id, tmp)
    os.replace(tmp, link)
    return True


def _execute(entry: SuiteEntry, params: dict[str, Any], out_nb: Path, root: Path, suite_dir: Path) -> tuple[str, str | None]:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    with _kernel_env(out_nb.parent, suite_dir):
        try:
            pm.execute_notebook(
                str(entry.notebook),
                str(out_nb),
                parameters=params,
                kernel_name=KERNEL_NAME,
                cwd=str(root),
                progress_bar=False,
                log_output=False,
                report_mode=False,
                # The kernel's own log (e.g. its TCP transport warning) is noise in suite output;
                # errors in cells still land in the executed notebook.
                extra_arguments=["--IPKernelApp.log_level=ERROR"],
            )
        except PapermillExecutionError as exc:
            where = f" (cell {exc.exec_count})" if exc.exec_count is not None else ""
            return "failed", f"{exc.ename}: {exc.evalue}{where}"
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - kernel death, timeouts: the suite goes on
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return "failed", last
    return "ok", None


def run_suite(
    suite: str | os.PathLike[str] = "params/suite.yaml",
    *,
    only: Sequence[str] | None = None,
    output: str | os.PathLike[str] = "reports",
    root: str | os.PathLike[str] | None = None,
    smoke: Mapping[str, Mapping[str, Any]] | None = None,
    pdf: bool = True,
    echo: Callable[[str], None] | None = print,
) -> SuiteResult:
    """Execute a suite of notebooks and write a report folder.

    Every entry is checked before the first one runs (missing notebook, malformed parameter
    file, unknown parameter), so a typo costs nothing. Then each entry is executed in order;
    a failure is recorded and the suite continues.

    Args:
        suite: The suite YAML (see :mod:`evalcore.reporting._suite`).
        only: Run only the entries with these names.
        output: Folder that receives ``<suite-run-id>/`` and the ``latest`` link.
        root: Repository root (working directory of the notebooks, base of relative paths);
            found from the suite file when ``None``.
        smoke: Optional per-run overrides (``params/smoke.yaml`` shape) merged on top.
        pdf: Also print each HTML export to PDF (needs Chromium).
        echo: Receives progress lines; ``None`` is silent.

    Returns:
        The :class:`SuiteResult` (``.ok`` is False when a notebook failed).

    Raises:
        EvalcoreError: The suite is malformed, names a missing file, an unknown run
            (``only``) or an unknown parameter.
    """
    say = echo or (lambda _msg: None)
    suite_path = Path(suite)
    base = Path(root).resolve() if root is not None else find_root(suite_path)
    entries = load_suite(suite_path, root=base, smoke=smoke)
    if only:
        names = {e.name for e in entries}
        missing = [n for n in only if n not in names]
        if missing:
            raise EvalcoreError(
                f"no run named {missing[0]!r} (runs: {', '.join(e.name for e in entries)})",
                path=suite_path, field="name",
            )
        entries = [e for e in entries if e.name in set(only)]
    for entry in entries:
        check_parameters(entry)

    out_root = Path(output).resolve()
    if out_root.exists() and not out_root.is_dir():
        raise EvalcoreError("the report folder exists and is not a directory", path=out_root,
                            field="output")
    out_root.mkdir(parents=True, exist_ok=True)
    suite_id = new_suite_id(out_root)
    suite_dir = out_root / suite_id
    suite_dir.mkdir(parents=True)
    markers = {"suite_dir": str(suite_dir), "root": str(base)}
    results = [
        EntryResult(
            name=e.name,
            notebook=_rel(e.notebook, base) or str(e.notebook),
            params=to_native(substitute(e.params, markers)),
        )
        for e in entries
    ]
    meta = {"suite": str(suite_path.resolve()), "root": str(base), "id": suite_id,
            "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    index = write_index(suite_dir, results, meta)
    if pdf and find_chromium() is None:
        say(CHROMIUM_HINT)
    say(f"evalcore: suite {suite_path} -> {suite_dir} ({len(entries)} notebook(s))")
    for number, (entry, result) in enumerate(zip(entries, results), start=1):
        run_dir = suite_dir / entry.name
        run_dir.mkdir(parents=True, exist_ok=True)
        out_nb = run_dir / f"{entry.name}.ipynb"
        say(f"[{number}/{len(entries)}] {entry.name}: {result.notebook} ...")
        start = time.perf_counter()
        result.status, result.error = _execute(entry, result.params, out_nb, base, suite_dir)
        result.duration_s = round(time.perf_counter() - start, 2)
        _finish_entry(result, out_nb, run_dir, suite_dir, pdf)
        tail = f"  {result.status} in {result.duration_s:.1f} s"
        if result.error:
            tail += f": {result.error}"
        say(tail)
        meta["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        index = write_index(suite_dir, results, meta)
    if not _update_latest(out_root, suite_id):
        say(f"evalcore: {out_root / 'latest'} is not a symbolic link; left as it is "
            f"(remove it to let it point to the newest run)")
    failed = [r.name for r in results if r.status != "ok"]
    say(f"evalcore: {len(results) - len(failed)}/{len(results)} notebook(s) ok"
        + (f"; failed: {', '.join(failed)}" if failed else ""))
    say(f"evalcore: report index: {index}")
    return SuiteResult(suite_dir=suite_dir, results=results, index=index)


def has_figures(folder: Path) -> bool:
    """True when ``folder/figures`` already holds PNGs (saved by the notebook with
    ``save_figure``); the PNG outputs are then not extracted a second time."""
    figures = Path(folder) / "figures"
    return figures.is_dir() and any(figures.glob("*.png"))


def _finish_entry(result: EntryResult, out_nb: Path, run_dir: Path, suite_dir: Path, pdf: bool) -> None:
    """Export an executed notebook and gather its records (also after a failure)."""
    sidecar = run_dir / RECORDS_FILENAME
    records: dict[str, Any] = read_sidecar(sidecar) if sidecar.exists() else {}
    if not out_nb.exists():
        result.records = records
        return
    result.executed = _rel(out_nb, suite_dir)
    try:
        records.update(read_records(out_nb))
        exported: ExportResult = export_notebook(out_nb, run_dir, pdf=pdf, figures=not has_figures(run_dir))
    except EvalcoreError as exc:
        result.messages.append(f"export failed: {exc}")
    else:
        result.html = _rel(exported.html, suite_dir)
        result.pdf = _rel(exported.pdf, suite_dir)
        result.messages.extend(m for m in exported.messages if m != CHROMIUM_HINT)
    figures = sorted((run_dir / "figures").glob("*.png")) if (run_dir / "figures").is_dir() else []
    result.figures = [_rel(f, suite_dir) or str(f) for f in figures]
    result.records = records
    _write_json_atomic(sidecar, records)


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
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em} th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top} th{background:#f3f3f3}
.ok{color:#176317;font-weight:bold} .failed{color:#b00020;font-weight:bold}
.pending{color:#777} .nb td:nth-child(4),.nb td:nth-child(5){white-space:nowrap} .err{font-family:monospace;color:#b00020;white-space:pre-wrap}
.scroll{overflow-x:auto;max-width:100%}
.summary td,.summary th{white-space:nowrap}
.summary td:nth-of-type(2){min-width:24em;max-width:40em;white-space:normal;font-size:.9em}
"""


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
    _write_json_atomic(
        suite_dir / "suite.json",
        to_native({"meta": dict(meta), "runs": [asdict(r) for r in results]}),
    )
    frame = summary_frame(results)
    if not frame.empty:
        csv = frame.to_csv()
        write_text_atomic(suite_dir / "summary.csv", csv, chmod=0o644)
    done = sum(r.status == "ok" for r in results)
    failed = sum(r.status == "failed" for r in results)
    rows = []
    for r in results:
        links = []
        for label, target in (("notebook", r.executed), ("HTML", r.html), ("PDF", r.pdf)):
            if target:
                links.append(f'<a href="{esc(target)}">{label}</a>')
        records_file = suite_dir / r.name / RECORDS_FILENAME
        if records_file.exists():
            links.append(f'<a href="{esc(r.name)}/{RECORDS_FILENAME}">records JSON</a>')
        figs = " ".join(f'<a href="{esc(f)}">{esc(Path(f).name)}</a>' for f in r.figures)
        detail = f'<div class="err">{esc(r.error)}</div>' if r.error else ""
        if r.messages:
            detail += "".join(f"<div>{esc(m)}</div>" for m in r.messages)
        duration = f"{r.duration_s:.1f} s" if r.duration_s is not None else ""
        rows.append(
            f'<tr><td>{esc(r.name)}</td><td>{esc(r.notebook)}</td>'
            f'<td class="{esc(r.status)}">{esc(r.status)}</td><td>{duration}</td>'
            f'<td>{" · ".join(links)}</td><td>{figs}</td><td>{detail}</td></tr>'
        )
    if frame.empty:
        summary = "<p>No runs.</p>"
    else:
        summary = display_summary(results).to_html(escape=True, na_rep="", border=0)
    head = " · ".join(f"{esc(str(k))}: {esc(str(v))}" for k, v in meta.items())
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalcore report {esc(str(meta.get('id', '')))}</title>
<style>{_CSS}</style></head><body>
<h1>evalcore report {esc(str(meta.get('id', '')))}</h1>
<p>{head}</p>
<p>{done} ok · {failed} failed · {len(results) - done - failed} pending</p>
<h2>Notebooks</h2>
<table class="nb"><thead><tr><th>run</th><th>notebook</th><th>status</th><th>time</th><th>outputs</th>
<th>figures</th><th>details</th></tr></thead><tbody>
{''.join(rows)}
</tbody></table>
<h2>Summary</h2>
<p>Recorded numbers (<code>evalcore.record</code>; intervals as mean [low, high]) and papermill
parameters, one row per run. Every column, and list-valued records, are in
<a href="summary.csv">summary.csv</a>, <a href="suite.json">suite.json</a> and each run's records JSON.</p>
<div class="scroll summary">{summary}</div>
</body></html>
"""
    index = suite_dir / "index.html"
    write_text_atomic(index, body, chmod=0o644)
    return index
