"""The outcome matrix: for every item × arm, quality, cost, latency, tokens and an error flag.

An *arm* is a model spec, optionally paired with an inference strategy
(``"local:smollm2/cot"``). :class:`OutcomeMatrix` holds the T × K arrays and validates them;
its long-table form (one row per item × arm: ``item_id, arm, quality, cost, latency`` and either
a ``query`` text column or numeric feature columns) is what :meth:`OutcomeMatrix.save` writes and
:func:`read_long_table` reads (CSV or Parquet), with errors naming the file, line and column;
the published formats (RouterBench, RouteLLM) are read in :mod:`evalcore.routing._published`.
:func:`no_signal_reason` says when a matrix cannot tell routers apart by quality.
Routers are replayed over a matrix counterfactually without calling any model again; the
matrix of recorded runs is built in :mod:`evalcore.routing._outcomes`.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalcore._io import atomic_path
from evalcore.errors import EvalcoreError
from evalcore.routing._csvrows import RecordLines
from evalcore.routing._reward import compute_rewards

REQUIRED_COLUMNS = ("item_id", "arm", "quality", "cost", "latency")
OPTIONAL_COLUMNS = ("query", "tokens", "error", "dataset")
_NUMERIC = ("quality", "cost", "latency", "tokens")


@dataclass
class OutcomeMatrix:
    """Outcomes of every arm on every item (T items × K arms).

    Attributes:
        item_ids: The T item ids (rows).
        arms: The K arm names (columns).
        quality: Objective quality in ``[0, 1]`` (exact match, pass/fail), shape (T, K).
            A failed call's quality is 0.
        cost: Cost of the call (USD, or tokens × price), shape (T, K).
        latency: Seconds, shape (T, K).
        tokens: Prompt + completion tokens, shape (T, K).
        error: True where the call failed, shape (T, K).
        queries: The query text of each item (context features are computed from it), or None.
        features: Numeric context features given with the table, shape (T, p), or None.
        feature_names: Names of the ``features`` columns.
        datasets: The dataset of each item, or None.
        source: Where the matrix came from (file or run directories), for messages.
    """

    item_ids: list[str]
    arms: list[str]
    quality: np.ndarray
    cost: np.ndarray
    latency: np.ndarray
    tokens: np.ndarray
    error: np.ndarray
    queries: list[str] | None = None
    features: np.ndarray | None = None
    feature_names: list[str] | None = None
    datasets: list[str] | None = None
    source: str = ""
    _feature_cache: dict[Any, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        t, k = len(self.item_ids), len(self.arms)
        if t == 0 or k == 0:
            raise EvalcoreError("the outcome matrix needs at least one item and one arm", path=self.source or None)
        if len(set(self.arms)) != k:
            raise EvalcoreError("arm names must be unique", path=self.source or None, field="arm")
        if len(set(self.item_ids)) != t:
            counts = Counter(self.item_ids)
            dup = next(i for i in self.item_ids if counts[i] > 1)
            raise EvalcoreError(
                f"item ids must be unique: {dup!r} appears {list(self.item_ids).count(dup)} times",
                path=self.source or None,
                field="item_id",
            )
        for name in ("quality", "cost", "latency", "tokens", "error"):
            arr = np.asarray(getattr(self, name), dtype=bool if name == "error" else float)
            if arr.shape != (t, k):
                raise EvalcoreError(
                    f"{name} has shape {arr.shape}, expected {(t, k)}", path=self.source or None, field=name
                )
            if name != "error" and not np.all(np.isfinite(arr)):
                raise EvalcoreError(
                    f"{name} has a missing or non-finite value ({self._cell(~np.isfinite(arr), arr)})",
                    path=self.source or None,
                    field=name,
                )
            setattr(self, name, arr)
        bad_q = (self.quality < 0) | (self.quality > 1)
        if np.any(bad_q):
            raise EvalcoreError(
                f"quality must lie in [0, 1] ({self._cell(bad_q, self.quality)})",
                path=self.source or None,
                field="quality",
            )
        if np.any(self.cost < 0):
            raise EvalcoreError(
                f"cost must be >= 0 ({self._cell(self.cost < 0, self.cost)})", path=self.source or None, field="cost"
            )
        self.quality = np.where(self.error, 0.0, self.quality)
        if self.queries is not None and len(self.queries) != t:
            raise EvalcoreError("one query per item is needed", path=self.source or None, field="query")
        if self.features is not None:
            self.features = np.asarray(self.features, dtype=float)
            if self.features.ndim != 2 or self.features.shape[0] != t:
                raise EvalcoreError("features must have one row per item", path=self.source or None, field="features")

    def _cell(self, mask: np.ndarray, values: np.ndarray) -> str:
        """``item 'x', arm 'y': value`` of the first True cell of ``mask`` (for messages)."""
        i, k = np.argwhere(mask)[0]
        return f"item {self.item_ids[i]!r}, arm {self.arms[k]!r}: {float(values[i, k]):g}"

    # ------------------------------------------------------------------ shape
    @property
    def n_items(self) -> int:
        """Number of items T."""
        return len(self.item_ids)

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return len(self.arms)

    def rewards(self, lam: float = 0.0) -> np.ndarray:
        """Reward matrix (T, K) under ``quality − λ · normalized cost`` (see ``compute_rewards``)."""
        return compute_rewards(self.quality, self.cost, self.error, lam=lam)

    def subset(
        self, items: Sequence[int] | np.ndarray | None = None, arms: Sequence[str] | None = None
    ) -> OutcomeMatrix:
        """A new matrix restricted to some item rows and/or arms (in the given order)."""
        rows = np.arange(self.n_items) if items is None else np.asarray(items, dtype=int)
        cols = np.arange(self.n_arms) if arms is None else np.array([self.arms.index(a) for a in arms], dtype=int)
        pick = lambda a: np.asarray(a)[np.ix_(rows, cols)]  # noqa: E731
        return OutcomeMatrix(
            item_ids=[self.item_ids[i] for i in rows],
            arms=[self.arms[j] for j in cols],
            quality=pick(self.quality),
            cost=pick(self.cost),
            latency=pick(self.latency),
            tokens=pick(self.tokens),
            error=pick(self.error),
            queries=None if self.queries is None else [self.queries[i] for i in rows],
            features=None if self.features is None else self.features[rows],
            feature_names=self.feature_names,
            datasets=None if self.datasets is None else [self.datasets[i] for i in rows],
            source=self.source,
        )

    def arm_table(self, lam: float = 0.0) -> pd.DataFrame:
        """Per-arm means: quality, cost, latency, tokens, error rate and reward."""
        r = self.rewards(lam)
        return pd.DataFrame(
            {
                "arm": self.arms,
                "mean_quality": self.quality.mean(0),
                "mean_cost": self.cost.mean(0),
                "total_cost": self.cost.sum(0),
                "mean_latency": self.latency.mean(0),
                "mean_tokens": self.tokens.mean(0),
                "error_rate": self.error.mean(0),
                "mean_reward": r.mean(0),
            }
        )

    def context(self, *, dims: int = 64, embedder: str = "auto", seed: int = 0) -> np.ndarray:
        """Context features for the contextual routers, shape (T, d) with d ≤ ``dims``.

        Given feature columns are used as they are (standardized, PCA-reduced to ``dims``);
        otherwise features are computed from the query text by
        :func:`evalcore.routing.query_features`. Cached on the matrix.
        """
        key = (dims, embedder, seed)
        if key not in self._feature_cache:
            from evalcore.routing._features import query_features, reduce_features

            if self.features is not None:
                x = reduce_features(self.features, dims=dims, seed=seed)
            elif self.queries is not None:
                x = query_features(self.queries, dims=dims, embedder=embedder, seed=seed)
            else:
                raise EvalcoreError(
                    "contextual routers need a query column or feature columns", path=self.source or None, field="query"
                )
            self._feature_cache[key] = x
        return self._feature_cache[key]

    # ------------------------------------------------------------------ tables
    def to_frame(self) -> pd.DataFrame:
        """Long table, one row per item × arm (the external table format)."""
        t, k = self.n_items, self.n_arms
        df = pd.DataFrame(
            {
                "item_id": np.repeat(np.asarray(self.item_ids, dtype=object), k),
                "arm": np.tile(np.asarray(self.arms, dtype=object), t),
                "quality": self.quality.ravel(),
                "cost": self.cost.ravel(),
                "latency": self.latency.ravel(),
                "tokens": self.tokens.ravel(),
                "error": self.error.ravel(),
            }
        )
        if self.datasets is not None:
            df["dataset"] = np.repeat(np.asarray(self.datasets, dtype=object), k)
        if self.queries is not None:
            df["query"] = np.repeat(np.asarray(self.queries, dtype=object), k)
        if self.features is not None:
            names = self.feature_names or [f"f{i}" for i in range(self.features.shape[1])]
            for j, name in enumerate(names):
                df[name] = np.repeat(self.features[:, j], k)
        return df

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the long table to ``.parquet`` or ``.csv`` atomically; returns the path."""
        path = Path(path)
        df = self.to_frame()
        with atomic_path(path) as tmp:
            if path.suffix.lower() == ".parquet":
                df.to_parquet(tmp, index=False)
            else:
                df.to_csv(tmp, index=False)
        return path

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        source: str = "",
        line_offset: int | None = 2,
        lines: Callable[[int, str], int] | None = None,
    ) -> OutcomeMatrix:
        """Build and validate a matrix from a long table.

        Args:
            df: One row per item × arm with ``item_id, arm, quality, cost, latency`` and either
                ``query`` or numeric feature columns; optional ``tokens``, ``error``,
                ``dataset``. Any other column is a feature column and must be numeric.
            source: The file it came from (named in error messages).
            line_offset: File line of the first data row (2 for a CSV with a header); None
                for formats without lines (messages then name the 1-based row).
            lines: ``(row, column) -> physical line`` of a field (a CSV whose quoted fields
                hold line breaks); when given it is used instead of ``line_offset``.

        Returns:
            The validated matrix (items in first-appearance order, arms in first-appearance
            order).

        Raises:
            EvalcoreError: naming file, line (or row) and column of the first problem.
        """
        src = source or None
        where = _locator(source, line_offset, lines)
        df = _checked_ids(df, src, where)
        num = _numeric_columns(df, where)
        err = _parse_bools(df["error"], where) if "error" in df.columns else np.zeros(len(df), dtype=bool)
        dup = df.duplicated(["item_id", "arm"])
        if dup.any():
            i = int(np.flatnonzero(dup.to_numpy())[0])
            raise EvalcoreError(
                f"duplicate row for item {df['item_id'].iloc[i]!r} and arm {df['arm'].iloc[i]!r}",
                **where(i, "arm"),
            )
        feature_cols = [c for c in df.columns if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
        if "query" not in df.columns and not feature_cols:
            raise EvalcoreError("need a 'query' text column or numeric feature columns", path=src, field="query")
        layout = _Layout.of(df, src)
        queries = None
        if "query" in df.columns:
            q = df["query"]
            if q.isna().any():
                i = int(np.flatnonzero(q.isna().to_numpy())[0])
                raise EvalcoreError("empty query", **where(i, "query"))
            queries = [str(q.iloc[j]) for j in layout.first]
        features = _feature_matrix(df, feature_cols, layout, where) if feature_cols else None
        datasets = [str(df["dataset"].iloc[j]) for j in layout.first] if "dataset" in df.columns else None
        return cls(
            item_ids=layout.items,
            arms=layout.arms,
            quality=layout.grid(num["quality"]),
            cost=layout.grid(num["cost"]),
            latency=layout.grid(num["latency"]),
            tokens=layout.grid(num["tokens"]) if "tokens" in num else np.zeros((len(layout.items), len(layout.arms))),
            error=layout.grid(err.astype(float)) > 0.5,
            queries=queries,
            features=features,
            feature_names=[str(c) for c in feature_cols] or None,
            datasets=datasets,
            source=source,
        )


_Where = Callable[[int, str], dict[str, Any]]


def _locator(source: str, line_offset: int | None, lines: Callable[[int, str], int] | None) -> _Where:
    """``(row, column) -> EvalcoreError location`` of a long table's field (see ``from_frame``)."""
    src = source or None

    def where(i: int, col: str) -> dict[str, Any]:
        if lines is not None:
            return {"path": src, "line": lines(i, col), "field": col}
        if line_offset is None:
            return {"path": f"{source} (row {i + 1})" if source else f"row {i + 1}", "field": col}
        return {"path": src, "line": i + line_offset, "field": col}

    return where


def _checked_ids(df: pd.DataFrame, src: str | None, where: _Where) -> pd.DataFrame:
    """The table with its required columns present, rows renumbered and ids as text."""
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise EvalcoreError(
            f"missing required column(s) {', '.join(missing)}; found {', '.join(map(str, df.columns))}",
            path=src,
            field=missing[0],
        )
    if len(df) == 0:
        raise EvalcoreError("the outcome table has no rows", path=src)
    df = df.reset_index(drop=True)
    for col in ("item_id", "arm"):
        bad = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if bad.any():
            raise EvalcoreError("empty value", **where(int(np.flatnonzero(bad)[0]), col))
    return df.assign(item_id=df["item_id"].astype(str), arm=df["arm"].astype(str))


_RANGES = (("quality", 0.0, 1.0), ("cost", 0.0, np.inf), ("latency", 0.0, np.inf), ("tokens", 0.0, np.inf))


def _numeric_columns(df: pd.DataFrame, where: _Where) -> dict[str, np.ndarray]:
    """The numeric columns present, each finite (first of all) and then within its range."""
    num: dict[str, np.ndarray] = {}
    for col in _NUMERIC:
        if col not in df.columns:
            continue
        vals = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raw = df[col].iloc[i]
            shown = (
                "missing value"
                if pd.isna(raw)
                else f"not a finite number: {raw!r}"
                if isinstance(raw, str)
                else f"not a finite number: {raw}"
            )
            raise EvalcoreError(shown, **where(i, col))
        num[col] = vals
    for col, lo, hi in _RANGES:
        if col in num:
            outside = (num[col] < lo) | (num[col] > hi)
            if outside.any():
                i = int(np.flatnonzero(outside)[0])
                rng = f"[{lo:g}, {hi:g}]" if np.isfinite(hi) else f">= {lo:g}"
                raise EvalcoreError(f"value {num[col][i]:g} out of range {rng}", **where(i, col))
    return num


@dataclass
class _Layout:
    """Where each row of a long table goes in the T × K grid (items and arms in first-appearance order)."""

    items: list[str]
    arms: list[str]
    ri: np.ndarray  # each row's item index
    ci: np.ndarray  # each row's arm index
    first: np.ndarray  # each item's first row

    @classmethod
    def of(cls, df: pd.DataFrame, src: str | None) -> _Layout:
        """The layout of ``df``; refused when an item lacks a row for some arm."""
        items = list(dict.fromkeys(df["item_id"]))
        arms = list(dict.fromkeys(df["arm"]))
        ri = pd.Index(items).get_indexer(df["item_id"])
        ci = pd.Index(arms).get_indexer(df["arm"])
        seen = np.zeros((len(items), len(arms)), dtype=bool)
        seen[ri, ci] = True
        if not seen.all():
            a, b = np.argwhere(~seen)[0]
            raise EvalcoreError(
                f"no row for item {items[a]!r} and arm {arms[b]!r}: every item needs an outcome for every arm",
                path=src,
                field="arm",
            )
        first = np.full(len(items), -1)
        first_rows = pd.Series(np.arange(len(df))).groupby(ri).min()
        first[first_rows.index.to_numpy()] = first_rows.to_numpy()
        return cls(items=items, arms=arms, ri=ri, ci=ci, first=first)

    def grid(self, vals: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """The rows' ``vals`` as a T × K array."""
        out = np.full((len(self.items), len(self.arms)), fill, dtype=float)
        out[self.ri, self.ci] = vals
        return out


def _feature_matrix(df: pd.DataFrame, feature_cols: list[Any], layout: _Layout, where: _Where) -> np.ndarray:
    """The (T, p) numeric features, one value per item (the same on every arm's row)."""
    ri, first = layout.ri, layout.first
    cols = []
    for col in feature_cols:
        vals = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise EvalcoreError(f"feature column must be numeric, got {df[col].iloc[i]!r}", **where(i, str(col)))
        per_item = vals[first]
        differs = np.abs(vals - per_item[ri]) > 1e-9 * (1 + np.abs(per_item[ri]))
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            raise EvalcoreError(
                f"feature differs between arms of item "
                f"{df['item_id'].iloc[i]!r} (features describe the "
                "query, not the arm)",
                **where(i, str(col)),
            )
        cols.append(per_item)
    return np.column_stack(cols)


def _parse_bools(col: pd.Series, where: _Where) -> np.ndarray:
    out = np.zeros(len(col), dtype=bool)
    for i, v in enumerate(col.tolist()):
        if isinstance(v, (bool, np.bool_)):
            out[i] = bool(v)
            continue
        if v is None or (isinstance(v, float) and np.isnan(v)):
            continue
        s = str(v).strip().lower()
        if s in ("1", "1.0", "true", "t", "yes", "y"):
            out[i] = True
        elif s in ("0", "0.0", "false", "f", "no", "n", ""):
            out[i] = False
        else:
            raise EvalcoreError(f"not a boolean: {v!r}", **where(i, "error"))
    return out


def read_long_table(path: str | os.PathLike[str]) -> OutcomeMatrix:
    """Read evalcore's own long outcome table (the ``long`` format) from CSV or Parquet.

    Columns: ``item_id, arm, quality, cost, latency`` and either ``query`` (text from which
    context features are computed) or numeric feature columns; optional ``tokens``,
    ``error`` (bool) and ``dataset``. A CSV error names the physical line of the field
    (a quoted query may span lines); a Parquet error names the 1-based row.

    Args:
        path: A ``.csv``, ``.tsv`` or ``.parquet`` file.

    Returns:
        The validated :class:`OutcomeMatrix`.

    Raises:
        EvalcoreError: a missing file, unknown format or a malformed row (file, line, column).
    """
    p = Path(path)
    if not p.is_file():
        raise EvalcoreError("no such outcome file", path=p)
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            df = pd.read_parquet(p)
            return OutcomeMatrix.from_frame(df, source=str(p), line_offset=None)
        if suffix in (".csv", ".tsv", ".txt"):
            sep = "\t" if suffix == ".tsv" else ","
            # ids and arm names are text: "7" and "007" are two items, "1e3" is not 1000
            df = pd.read_csv(p, sep=sep, keep_default_na=True, dtype={"item_id": str, "arm": str})
            rec = RecordLines(p, delimiter=sep)
            lines = rec.line if len(rec.starts) == len(df) else None
            return OutcomeMatrix.from_frame(df, source=str(p), line_offset=2, lines=lines)
    except EvalcoreError:
        raise
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise EvalcoreError(f"cannot read outcome table: {exc}", path=p) from exc
    raise EvalcoreError(f"unknown outcome table format {suffix!r} (use .csv or .parquet)", path=p)


class NoSignalWarning(UserWarning):
    """The outcome matrix cannot tell routers apart by quality (see :func:`no_signal_reason`)."""


def no_signal_reason(matrix: OutcomeMatrix) -> str | None:
    """Why a matrix carries no routing signal in its quality, or None when it does.

    There is no signal when no arm ever scores (quality 0 on every item × arm: a broken
    scorer or an unread quality column), or when every arm has the same quality on every
    item (choosing an arm then changes only the cost; every router's quality is the same).

    Args:
        matrix: The outcome matrix.

    Returns:
        One sentence naming the case and the matrix's size, or None.
    """
    q = matrix.quality
    size = f"{matrix.n_items} items × {matrix.n_arms} arms"
    where = f" in {matrix.source}" if matrix.source else ""
    if not np.any(q > 0):
        return (
            f"no signal{where}: no arm ever scores (quality 0 on all {size}); every router's "
            "quality, reward and regret will be 0 or a pure cost effect, so the tables say "
            "nothing about routing (check the quality column or the scorer)"
        )
    if np.all(q == q[:, :1]):
        return (
            f"no signal{where}: every arm has the same quality on every item ({size}, mean "
            f"{float(q.mean()):.3g}); routing can change only the cost, and every router's "
            "quality and regret vs oracle at λ = 0 will be the same"
        )
    return None


def warn_if_no_signal(matrix: OutcomeMatrix) -> None:
    """Issue a :class:`NoSignalWarning` when :func:`no_signal_reason` finds no signal."""
    reason = no_signal_reason(matrix)
    if reason is not None:
        warnings.warn(reason, NoSignalWarning, stacklevel=3)
