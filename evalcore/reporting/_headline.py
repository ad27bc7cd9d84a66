"""The headline table of a suite run: the numbers a researcher reads first.

Built from the notebook records (the DataFrame :func:`evalcore.collect` returns, or the
runner's :func:`summary_frame`, which has the same columns), in a few small sections instead
of one wide sparse table:

- **benchmarks**: one row per benchmark run (model, dataset, n, accuracy with its 95%
  interval, parse failures, errors, cost);
- **comparisons**: one row per compared pair (difference with its interval, corrected p,
  verdict);
- **agents**: one row per agent category (score, tests passed, critical failures), plus the
  overview's overall score and status and the threshold sweep's best threshold;
- **routing**: one row per router (mean quality, cost, regret, convergence).

Each section is a ``pandas.DataFrame`` of raw values (``Headline.sections``), rendered as
fixed-width text for the terminal (:meth:`Headline.to_text`) and as small HTML tables for the
index (:meth:`Headline.to_html`).
"""

from __future__ import annotations

import html as _html
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Headline", "headline", "headline_tables"]

from evalcore.agent_eval import CATEGORIES as AGENT_CATEGORIES  # the agent evaluation's seven, in order

TITLES = {
    "benchmarks": "Benchmark runs",
    "comparisons": "Comparisons (paired, on shared items)",
    "agents": "Agent evaluation",
    "routing": "Routers",
}

_NOTES = {
    "benchmarks": "accuracy: mean score with its 95% interval over n scored samples (pass@1 for HumanEval; "
    "the items beside n when they differ: several epochs, or failed calls); parse failures: "
    "answers no rule could read; errors: failed model calls (not scored); cost in US dollars (a local model "
    "costs $0.0000); tokens: completion tokens generated.",
    "comparisons": "difference = A - B with its 95% paired interval; p corrected across the pairs of "
    "one comparison; verdict at the comparison's alpha.",
    "agents": "score in [0, 1]; a category passes at >= 0.7 with no critical failure.",
    "routing": "one row per router, replayed over the same R orderings of the same items. mean quality: "
    "share answered correctly per query, averaged over items and orderings; 95% interval: the "
    "central 95% of it over the orderings (arrival order, not a confidence interval); mean reward: "
    "quality - lambda x normalized cost per query on the same orderings (= mean quality at "
    "lambda 0); 95% CI (items): its item-bootstrap interval (items resampled, orderings nested), "
    "the one that speaks beyond these items; total cost: cost of routing all the items once "
    "(tokens for the local model), averaged over the orderings; oracle regret: reward lost over "
    "all the items against the best arm of each query; best-arm regret: the same against the best "
    "single arm; converges "
    "at: median step after which the router keeps to one arm (>= 90%); cost saving: 1 - total "
    "cost / always_best's total cost, negative only when the router costs more; AIQ: RouterBench's "
    "AIQ as the paper normalises it, the area under the router's non-decreasing cost-quality hull "
    "over the lambda sweep divided by the arms' cost range; margin over Zero router: AIQ - the Zero "
    "router's (the arms' hull, RouterBench), with its 95% item-bootstrap interval. "
    "(evalcore.routing.COLUMN_DEFINITIONS)",
}


@dataclass
class Headline:
    """The headline sections of a suite run.

    Attributes:
        sections: Section name (``benchmarks``, ``comparisons``, ``agents``, ``routing``) to
            a DataFrame of raw values; empty sections are left out.
    """

    sections: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(len(frame) for frame in self.sections.values())

    def formatted(self) -> dict[str, Any]:
        """Every section as a DataFrame of display strings (numbers rounded, intervals joined)."""
        return {name: _FORMATTERS[name](frame) for name, frame in self.sections.items() if len(frame)}

    def to_text(self) -> str:
        """Fixed-width text, one small table per section (for the terminal)."""
        blocks = []
        for name, frame in self.formatted().items():
            blocks.append(f"{TITLES[name]}\n{_text_table(frame)}")
        return "\n\n".join(blocks)

    def to_html(self) -> str:
        """One ``<h3>`` and small ``<table class="headline">`` per section (for the index)."""
        esc = _html.escape
        parts = []
        for name, frame in self.formatted().items():
            head = "".join(f"<th>{esc(str(c))}</th>" for c in frame.columns)
            rows = []
            for _, row in frame.iterrows():
                cells = []
                for column, value in row.items():
                    cls = ' class="num"' if column in _NUMERIC_COLUMNS else ""
                    cells.append(f"<td{cls}>{esc(str(value))}</td>")
                rows.append("<tr>" + "".join(cells) + "</tr>")
            parts.append(
                f'<h3>{esc(TITLES[name])}</h3>\n<p class="note">{esc(_NOTES[name])}</p>\n'
                f'<table class="headline {esc(name)}"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        return "\n".join(parts)


def _value(value: Any) -> Any:
    """None for missing values (NaN, None, pandas NA)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return value


def _run_names(frame: Any) -> list[str]:
    if "run" in frame.columns:
        return [str(v) for v in frame["run"]]
    if frame.index.name == "run":
        return [str(v) for v in frame.index]
    if "notebook" in frame.columns:
        return [Path(str(v)).stem for v in frame["notebook"]]
    return [str(v) for v in frame.index]


def _nested(row: dict[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """``{"<prefix>.<key>.<metric>": v}`` columns -> ``{key: {metric: v}}``."""
    out: dict[str, dict[str, Any]] = {}
    start = prefix + "."
    for column, value in row.items():
        if not column.startswith(start):
            continue
        key, _, metric = column[len(start) :].partition(".")
        if metric and _value(value) is not None:  # a frame of many runs has NaN in others' columns
            out.setdefault(key, {})[metric] = _value(value)
    return out


def _list(value: Any) -> list[Any]:
    value = _value(value)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return list(value) if isinstance(value, (list, tuple)) else []


def _benchmark_row(run: str, row: dict[str, Any]) -> dict[str, Any] | None:
    if _value(row.get("accuracy.mean")) is None and _value(row.get("dataset")) is None:
        return None
    if _value(row.get("dataset")) is None:
        return None
    n_samples = _value(row.get("n_samples"))
    errors = _value(row.get("errors"))
    rate = _value(row.get("parse_failure_rate"))
    scored = (n_samples - (errors or 0)) if n_samples is not None else None
    parse_failures = int(round(rate * scored)) if rate is not None and scored is not None else None
    return {
        "run": run,
        "model": _value(row.get("model")),
        "dataset": row.get("dataset"),
        "n": _value(row.get("n_items")),
        "samples": n_samples,
        "n_scored": _value(row.get("accuracy.n")),
        "accuracy": _value(row.get("accuracy.mean")),
        "ci_low": _value(row.get("accuracy.ci_low")),
        "ci_high": _value(row.get("accuracy.ci_high")),
        "parse_failures": parse_failures,
        "errors": errors,
        "cost_usd": _value(row.get("cost_usd")),
        "completion_tokens": _value(row.get("completion_tokens")),
        "status": row.get("status", "ok"),
    }


def _comparison_rows(run: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for pair in _list(row.get("comparisons")):
        if not isinstance(pair, dict):
            continue
        diff = _value(pair.get("difference"))
        significant = pair.get("significant")
        p_adj = _value(pair.get("p_adjusted"))
        if p_adj is None:
            p_adj = _value(pair.get("p_value"))
        a, b = pair.get("name_a"), pair.get("name_b")
        if diff is None or significant is None:
            verdict = "not tested"
        elif significant:
            verdict = f"{a} better" if diff > 0 else f"{b} better"
        else:
            verdict = "no significant difference"
        out.append(
            {
                "run": run,
                "a": a,
                "b": b,
                "n": _value(pair.get("n")),
                "mean_a": _value(pair.get("mean_a")),
                "mean_b": _value(pair.get("mean_b")),
                "difference": diff,
                "ci_low": _value(pair.get("ci_low")),
                "ci_high": _value(pair.get("ci_high")),
                "test": pair.get("test"),
                "p_adjusted": p_adj,
                "verdict": verdict,
            }
        )
    return out


def _agent_rows(run: str, row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of a category run (first) and of an overview run (second)."""
    categories: list[dict[str, Any]] = []
    for category in AGENT_CATEGORIES:
        score = _value(row.get(f"agent_{category}_score"))
        if score is None:
            continue
        passed = _value(row.get(f"agent_{category}_passed"))
        n_tests = _value(row.get(f"agent_{category}_n_tests"))
        critical = _value(row.get(f"agent_{category}_critical_failures"))
        categories.append(
            {
                "run": run,
                "category": category,
                "score": score,
                "passed": passed,
                "tests": n_tests,
                "critical_failures": critical,
                "status": None,
            }
        )
    overall = _value(row.get("agent_overall_score"))
    if overall is None:
        return categories, []
    overview = [
        {
            "run": run,
            "category": "overall (weighted)",
            "score": overall,
            "passed": _value(row.get("agent_system_passed")),
            "tests": _value(row.get("agent_tests")),
            "tests_passed": _value(row.get("agent_tests_passed")),
            "critical_failures": _value(row.get("agent_critical_failures")),
            "status": _value(row.get("agent_system_status")),
        }
    ]
    return [], overview + [dict(c, run=run) for c in categories]


def _sweep_row(run: str, row: dict[str, Any]) -> dict[str, Any] | None:
    best = _value(row.get("sweep_best_threshold"))
    if best is None:
        return None
    f1 = _value(row.get("sweep_heldout_f1"))
    return {
        "run": run,
        "category": f"threshold sweep: best {best:g}",
        "score": _value(row.get("sweep_heldout_utility")),
        "passed": None,
        "tests": None,
        "critical_failures": None,
        "status": f"held-out F1 {f1:.3f}" if f1 is not None else None,
    }


_ROUTER_METRICS = (
    "mean_quality",
    "mean_quality_ci_low",
    "mean_quality_ci_high",
    "total_cost",
    "regret_vs_oracle",
    "regret_vs_best_fixed",
    "convergence_point",
    "cost_savings_vs_always_best",
)


def _routing_rows(run: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    summary = _nested(row, "routing_summary")
    aiq = _nested(row, "routing_aiq")
    boot = _nested(row, "routing_bootstrap_summary")
    out = []
    for router, metrics in summary.items():
        entry: dict[str, Any] = {"run": run, "router": router}
        for metric in _ROUTER_METRICS:
            if metric in metrics:
                entry[metric] = metrics[metric]
        # the interval that generalizes: items resampled (orderings nested), when recorded
        for metric in ("mean_reward", "mean_reward_ci_low", "mean_reward_ci_high"):
            if metric in boot.get(router, {}):
                entry[metric] = boot[router][metric]
        published = aiq.get(router, {})
        # RouterBench's paper AIQ and the margin over its Zero router (records before issue 36
        # carried an "aiq" of another definition: shown as it was recorded)
        if "aiq_paper" in published or "aiq" in published:
            entry["aiq"] = published.get("aiq_paper", published.get("aiq"))
        for metric in ("margin_paper", "margin_paper_ci_low", "margin_paper_ci_high"):
            if metric in published:
                entry[metric] = published[metric]
        out.append(entry)
    return out


def headline_tables(frame: Any) -> Headline:
    """Build the headline sections from a frame of notebook records.

    Args:
        frame: :func:`evalcore.collect`'s DataFrame (one row per executed notebook, records
            flattened to ``<record>.<key>`` columns), or the runner's ``summary_frame``
            (indexed by run name). The run name is the ``run`` column, the index when it is
            named ``run``, else the notebook's file stem.

    Returns:
        The :class:`Headline`; a section is present only when some run recorded its numbers.
    """
    import pandas as pd

    benchmarks: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    category_rows: list[dict[str, Any]] = []
    overview_rows: list[dict[str, Any]] = []
    sweep_rows: list[dict[str, Any]] = []
    routers: list[dict[str, Any]] = []
    if frame is not None and len(frame):
        names = _run_names(frame)
        for run, (_, series) in zip(names, frame.iterrows()):
            row = {str(k): v for k, v in series.items()}
            bench = _benchmark_row(run, row)
            if bench is not None:
                benchmarks.append(bench)
            comparisons.extend(_comparison_rows(run, row))
            cats, overview = _agent_rows(run, row)
            category_rows.extend(cats)
            overview_rows.extend(overview)
            sweep = _sweep_row(run, row)
            if sweep is not None:
                sweep_rows.append(sweep)
            routers.extend(_routing_rows(run, row))
    # Per category: the category's own run; the overview's numbers only for categories no
    # category run measured; the overview's overall row always.
    measured = {r["category"] for r in category_rows}
    agents = list(category_rows)
    for entry in overview_rows:
        if entry["category"] == "overall (weighted)" or entry["category"] not in measured:
            agents.append(entry)
    agents.extend(sweep_rows)
    sections = {
        "benchmarks": pd.DataFrame(benchmarks),
        "comparisons": pd.DataFrame(comparisons),
        "agents": pd.DataFrame(agents),
        "routing": pd.DataFrame(routers),
    }
    return Headline({k: v for k, v in sections.items() if len(v)})


def headline(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> Headline:
    """The headline of executed notebooks (a suite folder such as ``reports/latest``).

    Args:
        paths: Notebooks or folders, as for :func:`evalcore.collect`.

    Returns:
        The :class:`Headline`.
    """
    from evalcore.reporting._record import collect

    return headline_tables(collect(paths))


# ---------------------------------------------------------------- formatting

_NUMERIC_COLUMNS = {
    "n",
    "samples",
    "accuracy",
    "95% interval",
    "parse failures",
    "errors",
    "cost",
    "tokens",
    "mean reward",
    "95% CI (items)",
    "difference",
    "p (corrected)",
    "score",
    "tests",
    "critical",
    "mean quality",
    "total cost",
    "oracle regret",
    "best-arm regret",
    "converges at",
    "AIQ",
    "cost saving",
}


def _f(value: Any, digits: int = 3) -> str:
    value = _value(value)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6 and digits == 0:
            return str(int(value))
        return f"{value:.{digits}f}"
    return str(value)


def _interval(low: Any, high: Any, digits: int = 3) -> str:
    low, high = _value(low), _value(high)
    if low is None or high is None:
        return "—"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _p(value: Any) -> str:
    value = _value(value)
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _cost(value: Any) -> str:
    """Every cost in one format: dollars with four decimals (``$0.0000`` for a local model);
    the tokens are a column of their own."""
    value = _value(value)
    if value is None:
        return "—"
    return f"${value:,.4f}"


def _count(value: Any, total: Any = None) -> str:
    value = _value(value)
    if value is None:
        return "—"
    total = _value(total)
    return f"{int(value)}/{int(total)}" if total else str(int(value))


def _n_shown(scored: Any, items: Any) -> str:
    """The n of the accuracy's interval (samples scored: errors left out, every epoch counted),
    with the number of items beside it when the two differ."""
    scored, items = _value(scored), _value(items)
    if scored is None:
        return _f(items, 0)
    if items is None or int(items) == int(scored):
        return _f(scored, 0)
    return f"{int(scored)} ({int(items)} items)"


def _fmt_benchmarks(frame: Any) -> Any:
    import pandas as pd

    rows = []
    for _, r in frame.iterrows():
        scored = (_value(r.get("samples")) or 0) - (_value(r.get("errors")) or 0)
        rows.append(
            {
                "run": r["run"],
                "model": _f(r.get("model")),
                "dataset": _f(r.get("dataset")),
                "n": _n_shown(r.get("n_scored"), r.get("n")),
                "accuracy": _f(r.get("accuracy")),
                "95% interval": _interval(r.get("ci_low"), r.get("ci_high")),
                "parse failures": _count(r.get("parse_failures"), scored or None),
                "errors": _count(r.get("errors")),
                "cost": _cost(r.get("cost_usd")),
                "tokens": _f(r.get("completion_tokens"), 0),
            }
        )
    return pd.DataFrame(rows)


def _fmt_comparisons(frame: Any) -> Any:
    import pandas as pd

    rows = []
    for _, r in frame.iterrows():
        rows.append(
            {
                "run": r["run"],
                "A vs B": f"{r['a']} vs {r['b']}",
                "n": _f(r.get("n"), 0),
                "difference": _f(r.get("difference")),
                "95% interval": _interval(r.get("ci_low"), r.get("ci_high")),
                "p (corrected)": _p(r.get("p_adjusted")),
                "verdict": r["verdict"],
            }
        )
    return pd.DataFrame(rows)


def _fmt_agents(frame: Any) -> Any:
    import pandas as pd

    rows = []
    for _, r in frame.iterrows():
        passed = _value(r.get("passed"))
        status = _value(r.get("status"))
        if status is None:
            status = "—" if passed is None else ("pass" if passed else "FAIL")
        tests = _value(r.get("tests"))
        tests_passed = _value(r.get("tests_passed")) if "tests_passed" in r else None
        rows.append(
            {
                "run": r["run"],
                "category": r["category"],
                "score": _f(r.get("score")),
                "status": str(status),
                "tests": _count(tests_passed, tests) if tests_passed is not None else _f(tests, 0),
                "critical": _f(r.get("critical_failures"), 0),
            }
        )
    return pd.DataFrame(rows)


def _fmt_routing(frame: Any) -> Any:
    import pandas as pd

    rows = []
    for _, r in frame.iterrows():
        row = {"run": r["run"], "router": r["router"], "mean quality": _f(r.get("mean_quality"))}
        if _value(r.get("mean_quality_ci_low")) is not None:
            row["95% interval"] = _interval(r.get("mean_quality_ci_low"), r.get("mean_quality_ci_high"))
        if _value(r.get("mean_reward")) is not None:
            row["mean reward"] = _f(r.get("mean_reward"))
            row["95% CI (items)"] = _interval(r.get("mean_reward_ci_low"), r.get("mean_reward_ci_high"))
        row.update(
            {
                "total cost": _f(r.get("total_cost"), 2),
                "oracle regret": _f(r.get("regret_vs_oracle"), 2),
                "best-arm regret": _f(r.get("regret_vs_best_fixed"), 2),
                "converges at": _f(r.get("convergence_point"), 0),
                "cost saving": _f(r.get("cost_savings_vs_always_best")),
            }
        )
        if "aiq" in r:
            row["AIQ"] = _f(r.get("aiq"))
        if _value(r.get("margin_paper")) is not None:
            margin = _f(r.get("margin_paper"))
            if _value(r.get("margin_paper_ci_low")) is not None:
                margin += " " + _interval(r.get("margin_paper_ci_low"), r.get("margin_paper_ci_high"))
            row["margin over Zero router"] = margin
        rows.append(row)
    frame = pd.DataFrame(rows).fillna("—")
    if frame["run"].nunique() == 1:  # one routing study: its name is in the section's note
        frame = frame.drop(columns=["run"])
    return frame


_FORMATTERS = {
    "benchmarks": _fmt_benchmarks,
    "comparisons": _fmt_comparisons,
    "agents": _fmt_agents,
    "routing": _fmt_routing,
}


def _text_table(frame: Any) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    columns = [str(c) for c in frame.columns]
    cells = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [c in _NUMERIC_COLUMNS for c in columns]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)
