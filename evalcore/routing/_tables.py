"""The output tables of a routing study: what ``evalcore route`` and the routing notebook write."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError


def write_tables(
    directory: str | os.PathLike[str],
    *,
    summary: Any,
    curves: Any,
    selection_share: Any,
    points: Any,
    comparisons: Any,
    arms: Any,
    bootstrap: Any = None,
    bootstrap_comparisons: Any = None,
    sweep: Any = None,
    aiq: Any = None,
    curves_format: str = "csv",
    per_ordering: Any = None,
    design: dict[str, Any] | None = None,
) -> list[str]:
    """Write the tables of a routing study into ``directory``: all of them or none.

    The tables are written into a temporary folder inside ``directory`` and moved into place
    once every one is written, so a failure leaves the folder as it was.

    Args:
        directory: The output folder (created if missing).
        summary: :meth:`ReplayResult.summary` → ``summary.csv``.
        curves: :meth:`ReplayResult.curves` → ``curves.csv`` (or ``.parquet``).
        selection_share: :meth:`ReplayResult.selection_share` → ``selection_share.csv``
            (or ``.parquet``).
        points: :meth:`ReplayResult.points` → ``points.csv``.
        comparisons: :meth:`ReplayResult.compare` (the order-variability check) →
            ``comparisons.csv``.
        arms: :meth:`OutcomeMatrix.arm_table` → ``arms.csv``.
        bootstrap: :meth:`ItemBootstrap.summary` → ``bootstrap.csv`` (skipped when None).
        bootstrap_comparisons: :meth:`ItemBootstrap.compare` → ``bootstrap_comparisons.csv``.
        sweep: :func:`lambda_sweep` → ``sweep.csv``.
        aiq: :func:`aiq_table` → ``aiq.csv``.
        curves_format: ``"csv"`` or ``"parquet"``, the format of the two per-step tables.
        per_ordering: :meth:`ReplayResult.per_ordering_table` → ``per_ordering.csv``.
        design: :meth:`ReplayResult.design` → ``routing.json``; with ``per_ordering`` it makes
            the folder a routing result ``evalcore compare`` can pair with another.

    Returns:
        The names of the files written, in the order above (``routing.json`` last when
        given).

    Raises:
        EvalcoreError: An unknown ``curves_format``.
    """
    if curves_format not in ("csv", "parquet"):
        raise EvalcoreError(f"must be 'csv' or 'parquet', got {curves_format!r}", field="curves_format")
    ext = "." + curves_format
    tables = {
        "summary.csv": summary,
        f"curves{ext}": curves,
        f"selection_share{ext}": selection_share,
        "points.csv": points,
        "comparisons.csv": comparisons,
        "bootstrap.csv": bootstrap,
        "bootstrap_comparisons.csv": bootstrap_comparisons,
        "sweep.csv": sweep,
        "aiq.csv": aiq,
        "arms.csv": arms,
        "per_ordering.csv": per_ordering,
    }
    tables = {name: df for name, df in tables.items() if df is not None}
    return _write_all(Path(directory), tables, design)


def _write_all(out: Path, tables: dict[str, Any], design: dict[str, Any] | None) -> list[str]:
    """Write ``tables`` (and ``routing.json`` from ``design``) into a temporary folder in ``out``,
    then move each into place: all of them or none. Returns the names written."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".route-", dir=out))
    try:
        for name, df in tables.items():
            if name.endswith(".parquet"):
                df.to_parquet(tmp / name, index=False)
            else:
                df.to_csv(tmp / name, index=False)
        if design is not None:
            from evalcore._io import to_json_native

            (tmp / "routing.json").write_text(
                json.dumps(to_json_native(design), indent=2, allow_nan=False), encoding="utf-8"
            )
            tables["routing.json"] = design
        for name in tables:
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return list(tables)
