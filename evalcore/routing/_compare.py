"""``evalcore compare`` on routing results: two (or more) routing configurations replayed over
the same orderings of the same items, compared router by router, paired by ordering.

A routing result is a folder written by :func:`evalcore.routing.write_tables` with
``routing.json`` (:meth:`ReplayResult.design`: λ, seed, items and orderings fingerprints) and
``per_ordering.csv`` (:meth:`ReplayResult.per_ordering_table`): ``evalcore route --output`` and
the routing notebook write both. Two results are paired when they replayed the same item ids
in the same orderings (equal fingerprints); then each router present in both is compared on its
per-ordering values (mean quality, total cost, and mean reward when both used the same λ): the
paired t-test over the R orderings, p-values Holm-corrected over every router × metric of the
pair. Like the replay's own ``comparisons.csv`` this says how stable a difference is over the
arrival orders of *these* items, not whether it holds for other queries (the item bootstrap
does that, within one result).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError

DESIGN_FILE = "routing.json"
PER_ORDERING_FILE = "per_ordering.csv"
_METRICS = ("mean_quality", "total_cost", "mean_reward")


def is_routing_result(path: str | os.PathLike[str]) -> bool:
    """True for a folder holding a routing study's tables (``routing.json`` or ``summary.csv``
    beside ``arms.csv``), the kind ``evalcore compare`` pairs by ordering."""
    p = Path(path)
    return p.is_dir() and (
        (p / DESIGN_FILE).is_file() or ((p / "summary.csv").is_file() and (p / "arms.csv").is_file())
    )


@dataclass
class _Result:
    label: str
    path: Path
    design: dict[str, Any]
    values: pd.DataFrame  # per_ordering.csv


def _load(path: str | os.PathLike[str], label: str) -> _Result:
    p = Path(path)
    if not (p / DESIGN_FILE).is_file() or not (p / PER_ORDERING_FILE).is_file():
        raise EvalcoreError(
            f"a routing result without {DESIGN_FILE} and {PER_ORDERING_FILE} (written by an "
            "older evalcore): its per-ordering values are not kept, so it cannot be paired; "
            "run `evalcore route` (or the routing notebook) again",
            path=p,
            field="sources",
        )
    try:
        design = json.loads((p / DESIGN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalcoreError(f"unreadable {DESIGN_FILE}: {exc}", path=p / DESIGN_FILE) from None
    need = ("lambda", "n_orderings", "n_items", "items_sha256", "orderings_sha256", "algorithms")
    missing = [k for k in need if k not in design]
    if missing:
        raise EvalcoreError(f"lacks {', '.join(missing)}", path=p / DESIGN_FILE)
    try:
        values = pd.read_csv(p / PER_ORDERING_FILE)
    except (OSError, ValueError) as exc:
        raise EvalcoreError(f"unreadable: {exc}", path=p / PER_ORDERING_FILE) from None
    cols = {"algorithm", "ordering", *_METRICS}
    if not cols <= set(values.columns):
        raise EvalcoreError(f"needs the columns {', '.join(sorted(cols))}", path=p / PER_ORDERING_FILE)
    return _Result(label=label, path=p, design=design, values=values)


@dataclass
class RoutingComparison:
    """What ``evalcore compare`` reports for routing results.

    Attributes:
        results: One dict per result (label, path, λ, orderings, items, routers).
        table: One row per pair of results × router × metric: ``a, b, algorithm, metric,
            mean_a, mean_b, difference, ci_low, ci_high, p_value, p_adjusted, significant,
            n_orderings, note``.
        correction: The correction over the rows of a pair of results.
        alpha: Significance level.
    """

    results: list[dict[str, Any]]
    table: pd.DataFrame
    correction: str
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        from evalcore._io import to_json_native

        return to_json_native(
            {
                "kind": "routing",
                "results": self.results,
                "paired_over": "the same orderings of the same items",
                "correction": self.correction,
                "alpha": self.alpha,
                "comparisons": self.table.to_dict(orient="records"),
            }
        )


def compare_routing(
    paths: Sequence[str | os.PathLike[str]],
    *,
    labels: Sequence[str] | None = None,
    correction: str = "holm",
    alpha: float = 0.05,
) -> RoutingComparison:
    """Compare routing results router by router, paired over their shared orderings.

    Args:
        paths: Two or more routing result folders.
        labels: Display names, one per path (default: the folder names, made unique).
        correction: ``holm``, ``bh`` or ``none``, over the router × metric rows of each pair.
        alpha: Significance level.

    Returns:
        The :class:`RoutingComparison`.

    Raises:
        EvalcoreError: fewer than two folders, a folder that is not a routing result (or one
            written without per-ordering values), results over other items or orderings
            (not paired), or no router in common.
    """
    if isinstance(paths, (str, os.PathLike)) or len(paths) < 2:
        raise EvalcoreError("compare needs at least two routing results", field="sources")
    if labels and len(labels) != len(paths):
        raise EvalcoreError(f"{len(labels)} labels for {len(paths)} routing results", field="labels")
    if correction not in ("holm", "bh", "none"):
        raise EvalcoreError(f"unknown correction {correction!r}; use holm, bh or none", field="correction")
    results = _load_all(paths, labels)
    rows: list[dict[str, Any]] = []
    for ra, rb in combinations(results, 2):
        rows.extend(_compare_pair(ra, rb, correction=correction, alpha=alpha))
    table = pd.DataFrame(rows, columns=list(_TABLE_COLUMNS))
    table["significant"] = table["p_adjusted"] <= alpha
    infos = [
        {
            "label": r.label,
            "path": str(r.path),
            "lambda": float(r.design["lambda"]),
            "seed": r.design.get("seed"),
            "n_orderings": int(r.design["n_orderings"]),
            "n_items": int(r.design["n_items"]),
            "arms": r.design.get("arms"),
            "algorithms": list(r.design["algorithms"]),
        }
        for r in results
    ]
    return RoutingComparison(results=infos, table=table, correction=correction, alpha=alpha)


_TABLE_COLUMNS = (
    "a",
    "b",
    "algorithm",
    "metric",
    "mean_a",
    "mean_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "n_orderings",
    "note",
)


def _load_all(paths: Sequence[str | os.PathLike[str]], labels: Sequence[str] | None) -> list[_Result]:
    """Each routing result folder loaded under its label (the folder name unless given; made unique)."""
    results: list[_Result] = []
    seen: set[str] = set()
    for i, p in enumerate(paths):
        if not is_routing_result(p):
            raise EvalcoreError(
                "not a routing result (no routing.json, or summary.csv and "
                "arms.csv); a run cannot be compared with a routing result",
                path=p,
                field="sources",
            )
        label = str(labels[i]) if labels else Path(p).resolve().name
        base, k = label, 2
        while label in seen:
            label, k = f"{base}#{k}", k + 1
        seen.add(label)
        results.append(_load(p, label))
    return results


def _check_paired(ra: _Result, rb: _Result) -> list[str]:
    """The routers both results replayed; refused unless they replayed the same items in the same orderings."""
    da, db = ra.design, rb.design
    if da["items_sha256"] != db["items_sha256"]:
        raise EvalcoreError(
            f"{ra.label!r} and {rb.label!r} replayed different items ({da['n_items']} and "
            f"{db['n_items']} items, other ids): routing results are compared only over the "
            "same items",
            field="sources",
        )
    if da["orderings_sha256"] != db["orderings_sha256"]:
        raise EvalcoreError(
            f"{ra.label!r} and {rb.label!r} replayed the same items in different orderings "
            f"(R = {da['n_orderings']} and {db['n_orderings']}, seeds {da.get('seed')} and "
            f"{db.get('seed')}): not paired; replay both with the same --orderings and "
            "--seed",
            field="sources",
        )
    common = [n for n in da["algorithms"] if n in db["algorithms"]]
    if not common:
        raise EvalcoreError(f"{ra.label!r} and {rb.label!r} share no router", field="sources")
    return common


def _compare_pair(ra: _Result, rb: _Result, *, correction: str, alpha: float) -> list[dict[str, Any]]:
    """The rows of one pair of results: each common router × metric, p-values corrected over the pair."""
    from evalcore import stats

    common = _check_paired(ra, rb)
    same_lam = float(ra.design["lambda"]) == float(rb.design["lambda"])
    metrics = _METRICS if same_lam else _METRICS[:2]
    pair_rows = []
    for name in common:
        va = ra.values[ra.values["algorithm"] == name].sort_values("ordering")
        vb = rb.values[rb.values["algorithm"] == name].sort_values("ordering")
        if va["ordering"].tolist() != vb["ordering"].tolist():
            raise EvalcoreError(
                f"router {name!r}: the per-ordering values do not cover the same orderings",
                path=rb.path / PER_ORDERING_FILE,
            )
        for m in metrics:
            row = {"a": ra.label, "b": rb.label, "algorithm": name, "metric": m}
            row.update(_paired_difference(va[m].to_numpy(float), vb[m].to_numpy(float), alpha))
            pair_rows.append(row)
    frame = pd.DataFrame(pair_rows)
    frame["p_adjusted"] = np.nan
    ok = frame["p_value"].notna().to_numpy()
    if ok.any():
        frame.loc[ok, "p_adjusted"] = stats.adjust_p_values(frame.loc[ok, "p_value"].to_numpy(), correction)
    return [{str(k): v for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


def _paired_difference(x: np.ndarray, y: np.ndarray, alpha: float) -> dict[str, Any]:
    """Means, mean difference, its interval and the paired t-test's p over the orderings (none when
    the difference is the same in every ordering)."""
    from evalcore import stats

    d = x - y
    row: dict[str, Any] = {
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "difference": float(d.mean()),
        "n_orderings": int(d.size),
    }
    if d.size < 2 or np.ptp(d) <= 1e-12 * max(1.0, float(np.abs(d).max())):
        row.update(
            ci_low=float(d.mean()),
            ci_high=float(d.mean()),
            p_value=float("nan"),
            note="same difference in every ordering: nothing to test",
        )
    else:
        res = stats.paired_t(x, y, confidence=1 - alpha)
        row.update(ci_low=res.ci_low, ci_high=res.ci_high, p_value=res.p_value, note="")
    return row


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) >= 10**-digits or v == 0 else f"{v:.2g}"
    return str(v)


def format_routing_comparison(cmp: RoutingComparison) -> str:
    """Plain text: what was compared, then one line per router × metric."""
    lines = ["routing results:"]
    for r in cmp.results:
        lines.append(
            f"  {r['label']}: λ = {r['lambda']:g}, seed {r['seed']}, {r['n_orderings']} "
            f"orderings of {r['n_items']} items, arms {', '.join(r['arms'] or [])}; "
            f"{len(r['algorithms'])} routers"
        )
    first = cmp.results[0]
    lams = {r["lambda"] for r in cmp.results}
    lines.append(
        f"compared: each router present in both results, paired over the same "
        f"{first['n_orderings']} orderings of the same {first['n_items']} items (per-ordering "
        f"mean quality, total cost{', mean reward' if len(lams) == 1 else ''}; "
        + ("mean reward left out: the results use different λ; " if len(lams) > 1 else "")
        + f"paired t over orderings, p adjusted: {cmp.correction} over each pair's rows). "
        "An order-variability check on these items, not a test for other queries."
    )
    head = ["A", "B", "router", "metric", "mean A", "mean B", "A-B", "interval", "p", "p adj"]
    rows = [
        [
            str(r.a),
            str(r.b),
            str(r.algorithm),
            str(r.metric),
            _fmt(r.mean_a),
            _fmt(r.mean_b),
            _fmt(r.difference),
            f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]",
            _fmt(r.p_value, 4),
            _fmt(r.p_adjusted, 4),
        ]
        for r in cmp.table.itertuples()
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for row in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)))
    return "\n".join(lines)


def write_routing_comparison(cmp: RoutingComparison, output: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``compare.csv`` (the rows) and ``compare.json`` (results and rows) to ``output``."""
    from evalcore import _io

    out = Path(output)
    csv_path, json_path = out / "compare.csv", out / "compare.json"
    _io.write_text_atomic(csv_path, cmp.table.to_csv(index=False))
    _io.write_json_atomic(json_path, cmp.to_dict(), indent=2, allow_nan=False)
    return csv_path, json_path
