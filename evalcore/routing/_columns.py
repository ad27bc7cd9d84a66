"""Every column of the routing tables, defined once: the notebook prints these definitions
beside each table (:func:`describe_columns`) and docs/routing.md points here.

Identities that hold between the columns (checked by ``tests/routing/test_routing_headline.py``
on the demo's outcome matrix with the notebook's parameters):

- ``mean_reward`` = ``mean_quality`` at λ = 0, in every table (a failed call has quality 0
  and reward −λ);
- ``cost_savings_vs_always_best`` = 1 − ``total_cost`` / always_best's ``total_cost`` (both
  averaged over the orderings), so it is negative exactly when the router costs more;
- the item bootstrap's point values (``bootstrap.csv``) are the replay's (``summary.csv``):
  both are the mean over the same orderings of the same items; only the intervals differ.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_SPREAD = "the central 95% range over the orderings (arrival order, not a confidence interval)"

COLUMN_DEFINITIONS: dict[str, str] = {
    "algorithm": "the router",
    "arm": "a model with an inference strategy",
    "n_orderings": "R, the random arrival orders of the items replayed (the same for every router)",
    "n_items": "T, the items (queries) of the outcome matrix",
    "mean_quality": "quality per query (share answered correctly): for an arm its mean over the T items, "
    "for a router also averaged over the R orderings",
    "mean_reward": "reward per query, quality − λ · normalized cost (a failed call: −λ), averaged like "
    "mean_quality; equal to mean_quality at λ = 0",
    "mean_cost": "cost per query (USD, or tokens for the local model), averaged like mean_quality",
    "total_cost": "cost of answering all T items once (USD, or tokens; for a router averaged over "
    "the orderings) = mean_cost × T",
    "regret_vs_oracle": "Σ over the T steps of (reward of the best arm for that query − reward of the "
    "router's choice), averaged over the orderings",
    "regret_vs_best_fixed": "Σ over the T steps of (reward of the best single arm in hindsight − the "
    "router's reward); negative when routing beats every single arm",
    "convergence_point": "median over orderings of the first step after which every window of "
    "W = max(10, T/20) steps picks the router's final dominant arm ≥ 90% of the "
    "time (blank: most orderings never settle)",
    "converged_share": "share of orderings that settled on one arm",
    "cost_savings_vs_always_best": "1 − total_cost / always_best's total_cost (both averaged over the "
    "orderings): the share of always_best's cost the router saves; "
    "negative only when it costs more in total",
    "quality_vs_always_best": "mean_quality − always_best's mean_quality",
    "seconds": "wall-clock seconds the replay of the router took",
    "error_rate": "share of calls that failed (they count as quality 0, reward −λ)",
    "mean_latency": "seconds per call",
    "mean_tokens": "prompt + completion tokens per call",
    "a": "router A of the pair",
    "b": "router B of the pair",
    "difference": "A − B of the value compared (mean reward unless said otherwise)",
    "ci_low": "lower end of the 95% interval of the difference",
    "ci_high": "upper end of the 95% interval of the difference",
    "p_value": "two-sided p-value of the difference",
    "p_adjusted": "the p-value corrected over all pairs (Holm unless said otherwise)",
    "significant": "p_adjusted ≤ 0.05",
    "note": "why a value is missing or cannot be tested",
    "order_p": "paired t p-value over the orderings of the same items (order-variability check)",
    "order_p_adjusted": "order_p, Holm-corrected over all pairs",
    "stable_over_orderings": "order_p_adjusted ≤ 0.05: the difference keeps its sign across arrival "
    "orders of these items (not a claim about other queries)",
    "aiq": "mean quality of the router's non-decreasing cost–quality hull over the arms' cost range (λ sweep)",
    "aiq_paper": "RouterBench paper's AIQ: area under the router's non-decreasing convex cost–quality hull "
    "(λ sweep; 0 below its cheapest point) over the arms' cost range, divided by that range",
    "aiq_routerbench": "RouterBench code's AIQ (calc_AIQ): the same hull's area from its cheapest point to the "
    "dearest point of all routers compared, divided by that dearest cost",
    "margin_paper": "aiq_paper − the Zero router's aiq_paper (RouterBench: > 0 beats mixing the models at random)",
    "margin_routerbench": "aiq_routerbench − the Zero router's aiq_routerbench",
    "apgr_routellm": "RouteLLM's APGR: area under the router's raw quality vs strong-call-share curve over the "
    "gap between the cheapest (weak) and best (strong) arm; random ≈ 0.5; two-arm matrices only",
    "cpt_20": "RouteLLM's CPT(20%): smallest strong-call share reaching 20% of the weak–strong quality gap",
    "cpt_50": "RouteLLM's CPT(50%): smallest strong-call share reaching 50% of the gap",
    "cpt_80": "RouteLLM's CPT(80%): smallest strong-call share reaching 80% of the gap",
    "strong_share_min": "smallest strong-call share of the router's curve (APGR averages over the shares it spans)",
    "strong_share_max": "largest strong-call share of the router's curve",
    "strong_share": "share of calls on the best-quality (strong) arm",
    "pgr": "RouteLLM's PGR of the point: (mean_quality − weak arm's) / (strong arm's − weak arm's); two arms only",
    "threshold": "random_swept: quantile level of the score threshold (RouteLLM's sweep)",
    "n_boot": "item resamples of the bootstrap",
    "best_arm_quality": "mean quality of the best-quality arm",
    "cost_at_best_arm_quality": "least mean cost at which the router's hull reaches best_arm_quality",
    "savings_at_best_arm_quality": "1 − cost_at_best_arm_quality / the best arm's mean cost",
    "lambda": "λ, the cost weight of the reward",
    "name": "a router or an arm",
    "kind": "algorithm (a router) or arm (one arm always)",
    "pareto": "no other point has lower or equal cost and higher or equal quality, one strictly",
}

_INTERVALS = {
    "_ci_low": "lower end",
    "_ci_high": "upper end",
}


def _interval_text(base: str, table: str) -> str:
    if table == "bootstrap":
        return f"95% item-bootstrap interval of {base} (items resampled with replacement, orderings nested)"
    return f"{_SPREAD} of {base}"


def describe_columns(columns: Iterable[str], *, table: str = "replay") -> str:
    """Markdown definitions of ``columns`` (interval columns ``x_ci_low``/``x_ci_high`` are
    described once with ``x``).

    Args:
        columns: The columns shown.
        table: ``"replay"`` (intervals are spreads over orderings) or ``"bootstrap"``
            (intervals are item-bootstrap intervals).

    Returns:
        A Markdown bullet list, one line per column.

    Raises:
        KeyError: a column without a definition (every column shown must have one).
    """
    cols = list(columns)
    lines = []
    done: set[str] = set()
    for col in cols:
        base = col
        for suffix in _INTERVALS:
            if col.endswith(suffix):
                base = col[: -len(suffix)]
        if base in done:
            continue
        done.add(base)
        if base not in COLUMN_DEFINITIONS:
            raise KeyError(f"routing column {base!r} has no definition in COLUMN_DEFINITIONS")
        text = f"- `{base}`: {COLUMN_DEFINITIONS[base]}"
        if any(f"{base}{s}" in cols for s in _INTERVALS):
            text += f"; `_ci_low`/`_ci_high`: {_interval_text(base, table)}"
        lines.append(text)
    return "\n".join(lines)


def headline_checks(
    summary: Any, bootstrap: Any = None, *, lam: float, reference: str = "always_best", tol: float = 1e-9
) -> list[str]:
    """The identities the headline columns must satisfy; a list of what fails (empty: all hold).

    - at λ = 0, ``mean_reward`` = ``mean_quality`` in the replay summary and in the bootstrap;
    - ``cost_savings_vs_always_best`` = 1 − ``total_cost`` / the reference's ``total_cost``,
      negative exactly when the router's total cost is higher;
    - the bootstrap's point values equal the replay's (``mean_reward``, ``mean_quality``, and
      ``mean_cost`` × T = ``total_cost``).

    Args:
        summary: :meth:`ReplayResult.summary`.
        bootstrap: :meth:`ItemBootstrap.summary` (of a bootstrap given ``base=`` the replay),
            or None.
        lam: λ of both.
        reference: The router savings are measured against.
        tol: Absolute tolerance.
    """
    s = summary.set_index("algorithm")
    problems: list[str] = []
    if float(lam) == 0.0:
        for name, row in s.iterrows():
            problems += _reward_is_quality(name, row, tol, "replay")
    if reference in s.index and "cost_savings_vs_always_best" in s.columns:
        problems += _savings_checks(s, reference, tol)
    if bootstrap is not None:
        problems += _bootstrap_checks(s, bootstrap.set_index("algorithm"), lam=lam, tol=tol)
    return problems


def _reward_is_quality(name: Any, row: Any, tol: float, where: str) -> list[str]:
    """At λ = 0 a router's mean reward is its mean quality."""
    if abs(row["mean_reward"] - row["mean_quality"]) > tol:
        return [
            f"{name}: mean reward {row['mean_reward']:.6g} ≠ mean quality {row['mean_quality']:.6g} at λ = 0 ({where})"
        ]
    return []


def _savings_checks(s: Any, reference: str, tol: float) -> list[str]:
    """``cost_savings_vs_always_best`` = 1 − total cost / the reference's, negative exactly when dearer."""
    problems: list[str] = []
    ref = float(s.loc[reference, "total_cost"])
    if ref <= 0:
        return problems
    for name, row in s.iterrows():
        sav = float(row["cost_savings_vs_always_best"])
        if abs(sav - (1.0 - row["total_cost"] / ref)) > tol:
            problems.append(
                f"{name}: cost saving {sav:.6g} ≠ 1 − total cost / {reference}'s ({1.0 - row['total_cost'] / ref:.6g})"
            )
        if (sav < -tol) != (row["total_cost"] > ref * (1 + tol)):
            problems.append(
                f"{name}: cost saving {sav:.6g} has the wrong sign for total "
                f"cost {row['total_cost']:.6g} against {ref:.6g}"
            )
    return problems


def _bootstrap_checks(s: Any, b: Any, *, lam: float, tol: float) -> list[str]:
    """The bootstrap's point values are the replay's (and its reward is its quality at λ = 0)."""
    problems: list[str] = []
    n_items = s["n_items"].iloc[0] if "n_items" in s.columns else None
    for name, row in b.iterrows():
        if float(lam) == 0.0:
            problems += _reward_is_quality(name, row, tol, "bootstrap")
        if name not in s.index:
            continue
        for col in ("mean_reward", "mean_quality"):
            if abs(row[col] - s.loc[name, col]) > tol:
                problems.append(f"{name}: {col} {row[col]:.6g} (bootstrap) ≠ {s.loc[name, col]:.6g} (replay)")
        if n_items is not None and abs(row["mean_cost"] * n_items - s.loc[name, "total_cost"]) > tol * max(
            1.0, abs(s.loc[name, "total_cost"])
        ):
            problems.append(f"{name}: mean cost × {n_items} items ≠ total cost {s.loc[name, 'total_cost']:.6g}")
    return problems
