"""Published routing outcome matrices: RouterBench's wide table and RouteLLM's correctness CSVs.

Both are read as they are published, without conversion:

- **RouterBench** (Hu et al. 2024, ``withmartian/routerbench``: ``routerbench_0shot.pkl``,
  ``routerbench_5shot.pkl``, or the same table saved as CSV or Parquet): one row per prompt,
  columns ``sample_id, prompt, eval_name, oracle_model_to_route_to``, then per model
  ``<model>`` (quality in [0, 1]), ``<model>|model_response`` and ``<model>|total_cost``
  (USD). Arm = model, item = ``sample_id``, query = ``prompt``, dataset = ``eval_name``.
- **RouteLLM** (Ong et al. 2024, ``lm-sys/RouteLLM``: ``routellm/evals/mmlu/responses/
  mmlu_<domain>.csv``, ``routellm/evals/gsm8k/gsm8k_responses.csv``): one row per prompt,
  columns ``prompt``, then per model ``<model>`` (correctness, ``True``/``False``) and
  optionally ``<model>_response``. No ids and no costs are published: an item is
  ``<file stem>:<line>`` (the physical line the row starts on, so it can be found in the
  file), and the price of one call of each model must be given (``costs``).

Errors name the file, the physical line of the field in a CSV (a prompt or a response may
span many lines; the line is counted by :mod:`csv`, not as row + 2) or the row of a pickle or
Parquet file, and the column. A pickle is read by an unpickler that builds only the pandas and
numpy objects a data frame is made of (:func:`evalcore.routing.read_frame_pickle`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._csvrows import field_line, iter_records, read_records
from evalcore.routing._matrix import OutcomeMatrix, read_long_table, warn_if_no_signal
from evalcore.routing._pickle import read_frame_pickle

OUTCOME_FORMATS = ("auto", "long", "routerbench", "routellm")
ROUTERBENCH_COLUMNS = ("sample_id", "prompt", "eval_name", "oracle_model_to_route_to")
_PICKLE_SUFFIXES = (".pkl", ".pickle")
_CSV_SUFFIXES = (".csv", ".tsv", ".txt")

Where = Callable[[int, str], dict[str, Any]]
PathArg = str | os.PathLike[str]


# ------------------------------------------------------------------ tables as columns
class _Table:
    """A table's header and values as Python objects, with where each field sits.

    ``where(row, column)`` gives the ``EvalcoreError`` keywords locating a field: the
    physical line of the field in a CSV, the 1-based row of a pickle or Parquet file.
    """

    def __init__(self, path: Path, header: list[str], rows: list[list[Any]], where: Where, header_line: int | None):
        self.path = path
        self.header = header
        self.rows = rows
        self.where = where
        self.header_line = header_line

    def column(self, name: str) -> list[Any]:
        j = self.header.index(name)
        return [r[j] for r in self.rows]

    def at_header(self, column: str) -> dict[str, Any]:
        """Where a column's name sits (line 1 of a CSV; the file otherwise)."""
        return {"path": self.path, "line": self.header_line, "field": column}


def _csv_table(path: Path) -> _Table:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    (head_line, header), records = read_records(path, delimiter=delimiter)
    starts = [line for line, _ in records]
    rows = [fields for _, fields in records]
    for line, fields in records:
        if len(fields) != len(header):
            raise EvalcoreError(
                f"expected {len(header)} fields as in the header, found {len(fields)}", path=path, line=line
            )

    def where(i: int, col: str) -> dict[str, Any]:
        j = header.index(col) if col in header else 0
        return {"path": path, "line": field_line(starts[i], rows[i], j), "field": col}

    return _Table(path, header, rows, where, head_line)


def _frame_table(path: Path, df: pd.DataFrame) -> _Table:
    header = [str(c) for c in df.columns]
    if len(set(header)) != len(header):
        dup = next(c for c in header if header.count(c) > 1)
        raise EvalcoreError("column appears twice", path=path, field=dup)
    rows = df.astype(object).to_numpy().tolist()

    def where(i: int, col: str) -> dict[str, Any]:
        return {"path": f"{path} (row {i + 1})", "field": col}

    return _Table(path, header, rows, where, None)


def _is_index_column(name: str) -> bool:
    """The unnamed index column ``DataFrame.to_csv`` writes by default (``""``, ``Unnamed: 0``)."""
    return name.strip() == "" or name.startswith("Unnamed: ")


def _read_table(path: Path) -> _Table:
    suffix = path.suffix.lower()
    if suffix in _CSV_SUFFIXES:
        return _csv_table(path)
    if suffix in _PICKLE_SUFFIXES:
        return _frame_table(path, read_frame_pickle(path))
    if suffix == ".parquet":
        try:
            df = pd.read_parquet(path)
        except (ValueError, OSError) as exc:
            raise EvalcoreError(f"cannot read the Parquet file: {exc}", path=path) from exc
        return _frame_table(path, df)
    raise EvalcoreError(f"unknown table format {suffix!r} (use .csv, .parquet or .pkl)", path=path)


# ------------------------------------------------------------------ values
def _number(value: Any, what: str, where: dict[str, Any], *, lo: float, hi: float) -> float:
    """A finite number in [lo, hi]; a missing value, NaN or text is an error at ``where``."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        raise EvalcoreError(f"missing {what} (an empty field)", **where)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise EvalcoreError(f"{what} is not a number: {value!r}", **where) from None
    if np.isnan(x):
        raise EvalcoreError(f"{what} is NaN: every model needs a value for every prompt", **where)
    if not lo <= x <= hi:
        rng = f"[{lo:g}, {hi:g}]" if np.isfinite(hi) else f">= {lo:g}"
        raise EvalcoreError(f"{what} {x:g} out of range {rng}", **where)
    return x


_TRUE = {"true", "1", "1.0"}
_FALSE = {"false", "0", "0.0"}


def _correct(value: Any, where: dict[str, Any]) -> float:
    """RouteLLM's correctness (``True``/``False``, also 1/0) as quality 1.0/0.0."""
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == "":
        raise EvalcoreError("missing correctness (an empty field or NaN)", **where)
    s = str(value).strip().lower()
    if s in _TRUE:
        return 1.0
    if s in _FALSE:
        return 0.0
    raise EvalcoreError(f"not a correctness value (True or False): {value!r}", **where)


def _text(value: Any, what: str, where: dict[str, Any]) -> str:
    if isinstance(value, (list, tuple)):  # a multi-turn prompt as a list of turns
        value = "\n\n".join(str(v) for v in value)
    if value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == "":
        raise EvalcoreError(f"empty {what}", **where)
    return str(value)


# ------------------------------------------------------------------ RouterBench
def load_routerbench(path: PathArg) -> OutcomeMatrix:
    """Load RouterBench's wide table (pickle, CSV or Parquet) as an outcome matrix.

    Schema: ``sample_id`` (unique), ``prompt``, optional ``eval_name`` (the dataset) and
    ``oracle_model_to_route_to`` (ignored); per model ``<model>`` (quality in [0, 1]) and
    ``<model>|total_cost`` (USD, >= 0, required); ``<model>|model_response`` and other
    ``<model>|...`` columns are not needed and are ignored. A leading unnamed index column
    (what ``DataFrame.to_csv`` writes) is ignored. Latency and tokens are not published:
    they are 0.

    Args:
        path: ``.pkl``/``.pickle`` (read by :func:`read_frame_pickle`), ``.csv`` or ``.parquet``.

    Returns:
        The matrix: items = sample ids in file order, arms = models in column order.

    Raises:
        EvalcoreError: a missing cost column, a NaN or out-of-range quality or cost, a
            duplicate ``sample_id`` ... naming the file, line (or row) and column.
    """
    p = Path(path)
    if not p.is_file():
        raise EvalcoreError("no such outcome file", path=p)
    t = _read_table(p)
    cols = [c for c in t.header if not _is_index_column(c)]
    models = _routerbench_models(t, cols, p)
    if not t.rows:
        raise EvalcoreError("the table has no rows", path=p)
    ids = _unique_sample_ids(t)
    prompts = [_text(v, "prompt", t.where(i, "prompt")) for i, v in enumerate(t.column("prompt"))]
    datasets = None
    if "eval_name" in cols:
        datasets = ["" if v is None else str(v) for v in t.column("eval_name")]
    n, k = len(ids), len(models)
    quality = np.zeros((n, k))
    cost = np.zeros((n, k))
    for j, m in enumerate(models):
        cc = f"{m}|total_cost"
        for i, v in enumerate(t.column(m)):
            quality[i, j] = _number(v, "quality", t.where(i, m), lo=0.0, hi=1.0)
        for i, v in enumerate(t.column(cc)):
            cost[i, j] = _number(v, "cost", t.where(i, cc), lo=0.0, hi=np.inf)
    return OutcomeMatrix(
        item_ids=ids,
        arms=models,
        quality=quality,
        cost=cost,
        latency=np.zeros((n, k)),
        tokens=np.zeros((n, k)),
        error=np.zeros((n, k), dtype=bool),
        queries=prompts,
        datasets=datasets,
        source=str(p),
    )


def _routerbench_models(t: _Table, cols: list[str], p: Path) -> list[str]:
    """The models of RouterBench's header (quality columns ``<model>``, each with its
    ``<model>|total_cost``); refused without ``sample_id``/``prompt`` or with an unpaired column."""
    for need in ("sample_id", "prompt"):
        if need not in cols:
            raise EvalcoreError(
                f"not RouterBench's wide table: no {need!r} column; found {', '.join(cols[:8])}"
                + (" ..." if len(cols) > 8 else ""),
                **t.at_header(need),
            )
    models = [c for c in cols if "|" not in c and c not in ROUTERBENCH_COLUMNS]
    if not models:
        raise EvalcoreError("no model quality column (a column '<model>' beside '<model>|total_cost')", path=p)
    for c in cols:
        if "|" in c and c.rpartition("|")[0] not in models:
            raise EvalcoreError(f"no quality column {c.rpartition('|')[0]!r} for this column", **t.at_header(c))
    for m in models:
        if f"{m}|total_cost" not in cols:
            raise EvalcoreError(
                f"missing cost column for model {m!r} (RouterBench gives each model's cost as '<model>|total_cost')",
                **t.at_header(f"{m}|total_cost"),
            )
    return models


def _unique_sample_ids(t: _Table) -> list[str]:
    """The ``sample_id`` of each row; a repeated one is refused, naming where it first was."""
    ids: list[str] = []
    first_at: dict[str, int] = {}
    for i, raw in enumerate(t.column("sample_id")):
        sid = _text(raw, "sample_id", t.where(i, "sample_id"))
        if sid in first_at:
            w = t.where(first_at[sid], "sample_id")
            seen = f"line {w['line']}" if w.get("line") is not None else str(w["path"])
            raise EvalcoreError(f"duplicate sample_id {sid!r} (first on {seen})", **t.where(i, "sample_id"))
        first_at[sid] = i
        ids.append(sid)
    return ids


# ------------------------------------------------------------------ RouteLLM
def _routellm_files(paths: Sequence[PathArg]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() == ".csv")
            if not found:
                raise EvalcoreError("the folder holds no .csv file", path=p)
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise EvalcoreError("no such outcome file", path=p)
    seen: set[Path] = set()
    for f in files:
        if f.resolve() in seen:
            raise EvalcoreError("the same file is given twice", path=f)
        seen.add(f.resolve())
    return files


def routellm_models(header: Sequence[str]) -> list[str]:
    """The models of a RouteLLM table: every column but ``prompt``, ``<model>_response``
    (where ``<model>`` is a column too) and an unnamed index column."""
    names = set(header)
    return [
        c
        for c in header
        if c != "prompt"
        and not _is_index_column(c)
        and not (c.endswith("_response") and c[: -len("_response")] in names)
    ]


def load_routellm(paths: PathArg | Sequence[PathArg], *, costs: Mapping[str, float] | None) -> OutcomeMatrix:
    """Load RouteLLM's per-benchmark correctness CSVs as one outcome matrix.

    Schema: ``prompt``, then per model a correctness column ``<model>`` (``True``/``False``;
    1/0 accepted) and optionally ``<model>_response`` (ignored). Several files (the 57 MMLU
    domains, or a folder of them) are stacked; they must name the same models. Item id =
    ``<file stem>:<line>`` (RouteLLM publishes no ids; a repeated prompt stays two items, as
    in RouteLLM's own accuracy), dataset = the file stem, query = the prompt, quality = 1.0
    for ``True``. RouteLLM publishes no costs: ``costs`` gives the price of one call of each
    model (the same unit for all; only ratios matter to the normalized reward).

    Args:
        paths: One or more ``.csv`` files, or folders of them.
        costs: Model name → cost of one call (>= 0), one entry per model of the files.

    Returns:
        The matrix, items in file then line order.

    Raises:
        EvalcoreError: no ``costs`` or a model without one, files with different models, a
            missing or non-boolean correctness, naming the file, line and column.
    """
    files = _routellm_files([paths] if isinstance(paths, (str, os.PathLike)) else list(paths))
    if not files:
        raise EvalcoreError("no RouteLLM file given", field="outcomes")
    ids: list[str] = []
    prompts: list[str] = []
    datasets: list[str] = []
    rows: list[list[float]] = []
    models: list[str] | None = None
    for f in files:
        t = _read_table(f)
        if "prompt" not in t.header:
            raise EvalcoreError(
                f"not a RouteLLM table: no 'prompt' column; found {', '.join(t.header[:8])}", **t.at_header("prompt")
            )
        these = routellm_models(t.header)
        if models is None:
            if not these:
                raise EvalcoreError("no model correctness column beside 'prompt'", path=f, line=t.header_line)
            models = these
        elif sorted(these) != sorted(models):
            other = sorted(set(these) ^ set(models))
            raise EvalcoreError(
                f"the files name different models ({', '.join(other)}); {files[0].name} has {', '.join(models)}",
                **t.at_header(other[0]),
            )
        stem = f.stem
        for i, row in enumerate(t.rows):
            at = t.where(i, "prompt")
            prompts.append(_text(row[t.header.index("prompt")], "prompt", at))
            ids.append(f"{stem}:{at['line']}" if at.get("line") is not None else f"{stem}:row{i + 1}")
            datasets.append(stem)
            rows.append([_correct(row[t.header.index(m)], t.where(i, m)) for m in models])
    assert models is not None
    if not ids:
        raise EvalcoreError("the RouteLLM files have no rows", path=files[0])
    price = _routellm_costs(models, costs, files[0])
    n, k = len(ids), len(models)
    return OutcomeMatrix(
        item_ids=ids,
        arms=models,
        quality=np.asarray(rows, dtype=float),
        cost=np.tile(price, (n, 1)),
        latency=np.zeros((n, k)),
        tokens=np.zeros((n, k)),
        error=np.zeros((n, k), dtype=bool),
        queries=prompts,
        datasets=datasets,
        source=str(files[0]) if len(files) == 1 else f"{files[0]} and {len(files) - 1} more",
    )


def _routellm_costs(models: Sequence[str], costs: Mapping[str, float] | None, path: Path) -> np.ndarray:
    example = ",".join(f"{m}=PRICE" for m in models)
    if not costs:
        raise EvalcoreError(
            f"RouteLLM tables carry no cost: give the price of one call of each model ({example}); "
            "on the command line: --costs " + example,
            path=path,
            field="costs",
        )
    unknown = [m for m in costs if m not in models]
    if unknown:
        raise EvalcoreError(
            f"no model {unknown[0]!r} in the table (its models: {', '.join(models)})", path=path, field="costs"
        )
    out = []
    for m in models:
        if m not in costs:
            raise EvalcoreError(f"no cost for model {m!r} (give {example})", path=path, field="costs")
        c = float(costs[m])
        if not np.isfinite(c) or c < 0:
            raise EvalcoreError(f"the cost of {m!r} must be a finite number >= 0, got {c:g}", field="costs")
        out.append(c)
    return np.asarray(out, dtype=float)


def parse_costs(text: str, *, field: str = "--costs") -> dict[str, float]:
    """Parse ``model=price,model=price`` (what ``evalcore route --costs`` takes).

    The model name is what precedes the last ``=`` of an entry, so names with ``/`` or ``:``
    work. Raises :class:`EvalcoreError` naming ``field`` on a malformed entry.
    """
    out: dict[str, float] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        name, eq, value = entry.rpartition("=")
        if not eq or not name.strip():
            raise EvalcoreError(f"expected MODEL=PRICE, got {entry!r}", field=field)
        try:
            price = float(value)
        except ValueError:
            raise EvalcoreError(f"not a number: {value!r} in {entry!r}", field=field) from None
        if not np.isfinite(price) or price < 0:
            raise EvalcoreError(f"a price must be a finite number >= 0, got {entry!r}", field=field)
        if name.strip() in out:
            raise EvalcoreError(f"model {name.strip()!r} is given twice", field=field)
        out[name.strip()] = price
    if not out:
        raise EvalcoreError("no MODEL=PRICE entry", field=field)
    return out


# ------------------------------------------------------------------ detection and dispatch
def _columns(path: Path) -> list[str]:
    suffix = path.suffix.lower()
    if suffix in _CSV_SUFFIXES:
        head = next(iter_records(path, delimiter="\t" if suffix == ".tsv" else ","), None)
        if head is None:
            raise EvalcoreError("the CSV file is empty (no header)", path=path)
        return head[1]
    if suffix == ".parquet":
        try:
            try:
                import pyarrow.parquet as pq  # type: ignore[import-untyped]
            except ImportError:  # another Parquet engine: read the table for its columns
                return [str(c) for c in pd.read_parquet(path).columns]
            return [str(n) for n in pq.read_schema(path).names]
        except (ImportError, OSError, ValueError) as exc:
            raise EvalcoreError(f"cannot read the Parquet file: {exc}", path=path) from exc
    raise EvalcoreError(f"unknown outcome table format {suffix!r} (use .csv, .parquet or .pkl)", path=path)


def detect_format(path: PathArg) -> str:
    """Which format a file or folder is: ``"long"``, ``"routerbench"`` or ``"routellm"``.

    A pickle is RouterBench's (the only published pickle of the three); a folder is a folder
    of RouteLLM CSVs. Otherwise the header decides: ``item_id`` and ``arm`` → long;
    ``sample_id`` or a ``<model>|...`` column → RouterBench; ``prompt`` → RouteLLM.

    Raises:
        EvalcoreError: a missing path, or a header that fits none (pass the format).
    """
    p = Path(path)
    if p.is_dir():
        return "routellm"
    if not p.is_file():
        raise EvalcoreError("no such outcome file", path=p)
    if p.suffix.lower() in _PICKLE_SUFFIXES:
        return "routerbench"
    cols = _columns(p)
    if "item_id" in cols and "arm" in cols:
        return "long"
    if "sample_id" in cols or any("|" in c for c in cols):
        return "routerbench"
    if "prompt" in cols:
        return "routellm"
    raise EvalcoreError(
        "cannot tell the format from the header: expected evalcore's long table (item_id, arm, "
        "quality, cost, latency ...), RouterBench's wide table (sample_id, prompt, <model>, "
        "<model>|total_cost ...) or RouteLLM's (prompt, <model> ...); found "
        + ", ".join(cols[:8])
        + (" ..." if len(cols) > 8 else "")
        + " (pass the format: --format long|routerbench|routellm)",
        path=p,
        line=1,
    )


def read_outcome_files(
    paths: Sequence[PathArg], *, format: str = "auto", costs: Mapping[str, float] | None = None
) -> OutcomeMatrix:
    """Load an outcome matrix from files of one format, without the no-signal warning.

    See :func:`load_outcomes`.
    """
    if format not in OUTCOME_FORMATS:
        raise EvalcoreError(f"unknown format {format!r} (use {', '.join(OUTCOME_FORMATS)})", field="format")
    if not paths:
        raise EvalcoreError("no outcome file given", field="outcomes")
    fmt = format
    if fmt == "auto":
        found = {str(p): detect_format(p) for p in paths}
        kinds = sorted(set(found.values()))
        if len(kinds) > 1:
            raise EvalcoreError(
                f"the files are of different formats ({', '.join(f'{k}: {v}' for k, v in found.items())})",
                field="format",
            )
        fmt = kinds[0]
    if fmt == "routellm":
        return load_routellm(paths, costs=costs)
    if costs:
        raise EvalcoreError(f"the {fmt} format carries its own costs; costs are for RouteLLM tables", field="costs")
    if len(paths) != 1:
        raise EvalcoreError(f"the {fmt} format is one file; got {len(paths)}", field="outcomes")
    if fmt == "routerbench":
        return load_routerbench(paths[0])
    return read_long_table(paths[0])


def load_outcomes(
    path: PathArg | Sequence[PathArg], *, format: str = "auto", costs: Mapping[str, float] | None = None
) -> OutcomeMatrix:
    """Load an outcome matrix from a table: evalcore's long table or a published matrix.

    Formats (``format="auto"`` tells them apart by suffix and header, :func:`detect_format`):

    - ``"long"``: one row per item × arm, ``item_id, arm, quality, cost, latency`` and either
      ``query`` or numeric feature columns; optional ``tokens``, ``error``, ``dataset``
      (CSV or Parquet; what :meth:`OutcomeMatrix.save` writes).
    - ``"routerbench"``: RouterBench's wide table (:func:`load_routerbench`).
    - ``"routellm"``: RouteLLM's correctness CSVs, several files or a folder at once, with
      ``costs`` (:func:`load_routellm`).

    A :class:`~evalcore.routing.NoSignalWarning` is issued when no arm ever scores or every
    arm scores the same on every item (:func:`~evalcore.routing.no_signal_reason`).

    Args:
        path: A file, or (RouteLLM) several files or a folder.
        format: ``"auto"``, ``"long"``, ``"routerbench"`` or ``"routellm"``.
        costs: RouteLLM only: model → price of one call.

    Returns:
        The validated :class:`OutcomeMatrix`.

    Raises:
        EvalcoreError: a missing file, an unknown format or a malformed field, naming the
            file, the physical line (CSV) or row, and the column.
    """
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    matrix = read_outcome_files(paths, format=format, costs=costs)
    warn_if_no_signal(matrix)
    return matrix
