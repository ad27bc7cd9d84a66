"""Threshold sweep: an A/B study of the similarity threshold of an agent's tool search.

Thresholds must be finite numbers in [-1, 1]; they are sorted and duplicates dropped (each is
run once). For each threshold t a fresh agent is built (``agent_factory(t)``) and reset; it serves every
single-step case (end-to-end success, and whether a tool built during the session answered it),
then its registry is searched for every case (precision, recall, F1 of the matches with score ≥ t
— the evaluator keeps only those, whatever the search answers — against the relevant tools,
labelled by behaviour (:func:`~evalcore.agent_eval._sweep_measure.behaviour_labels`: the
registered tools that the evaluator ran on the kind's held-out requests and that answered every
one rightly; names count for nothing) and for unrelated queries (a false positive = any match ≥ t).
A search answer that breaks the protocol (raises; a name twice; more than k matches; not sorted best
first; a score that is not a finite number) ends the sweep with an error naming it.

Per item utility (the selection objective): a case scores ``0.5·correct + 0.5·F1``, an unrelated
query ``1 − false_positive``. A case whose kind has no tool in the registry (the agent never built
it) has no precision/recall/F1; its search should return nothing, so it scores
``0.5·correct + 0.5·(1 − any match ≥ t)``. Precision, recall and F1 are averaged over the cases
with a relevant tool (``n_labelled``; a case whose search returns nothing has precision 0, not 1);
the false-positive rate is that of the unrelated queries (``n_unrelated``), with a 95% Wilson
interval over those queries (``fpr_low``, ``fpr_high``), and end-to-end success has one over the
cases (``success_low``, ``success_high``). The synthesis rate is measured, never the agent's flag:
a case needing a new tool counts when it was answered correctly by a tool registered (or rewritten)
during the session that the evaluator ran on the request's inputs and on held-out ones.

Items are split once, seeded, into a development and a held-out part (stratified: starter-tool
cases, cases needing a new tool and unrelated queries separately). The best threshold maximizes
the mean utility on the development part (ties: the lower threshold); its metrics are reported on
the held-out part, where every other threshold is compared with it by a paired sign-flip
permutation test on the per-item utilities, with Benjamini–Hochberg correction over the
thresholds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalcore._io import to_json_native
from evalcore.agent_eval._cases.generator import AgentCaseGenerator
from evalcore.agent_eval._cases.kinds import VARIABLE_SLOTS
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._config import AgentEvalConfig, resolve_seed
from evalcore.agent_eval._measure import ToolChecker
from evalcore.agent_eval._sweep_measure import N_LABEL_REQUESTS, SweepPlan, measure_threshold
from evalcore.errors import EvalcoreError

INTERVAL_CONFIDENCE = 0.95


def parse_thresholds(spec: str) -> list[float]:
    """Parse ``"start:stop:step"`` (inclusive stop) or ``"0.3,0.5,0.7"``.

    Args:
        spec: The specification.

    Returns:
        Sorted distinct thresholds, rounded to 6 decimals.

    Raises:
        EvalcoreError: Malformed specification or a non-positive step.
    """
    try:
        if ":" in spec:
            start, stop, step = (float(x) for x in spec.split(":"))
            if step <= 0:
                raise EvalcoreError(f"the step must be positive, got {spec!r}", field="thresholds")
            if stop < start:
                raise EvalcoreError(
                    f"the range runs down ({start:g} > {stop:g}); write it upwards: {stop:g}:{start:g}:{step:g}",
                    field="thresholds",
                )
            n = int(np.floor((stop - start) / step + 1e-9)) + 1
            vals = [round(start + i * step, 6) for i in range(n)]
        else:
            vals = [round(float(x), 6) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise EvalcoreError(
            f"cannot parse thresholds {spec!r}; use start:stop:step or a comma list", field="thresholds"
        ) from None
    if not vals:
        raise EvalcoreError("no thresholds", field="thresholds")
    return sorted(set(vals))


@dataclass
class SweepResult:
    """Outcome of :func:`threshold_sweep`.

    Attributes:
        metrics: One row per (threshold, split) with ``precision``, ``recall``, ``f1``, ``fpr``,
            ``synthesis_rate``, ``success``, ``utility``, the counts ``n_items``, ``n_cases``,
            ``n_labelled`` (cases with a relevant tool), ``n_unrelated`` and 95% Wilson intervals
            ``fpr_low``/``fpr_high``, ``success_low``/``success_high``; split ∈ {all, dev, test}.
        items: One row per (threshold, item) with the item's split, kind and scores.
        best_threshold: Threshold with the highest development utility.
        tests: Held-out paired tests of every threshold against the best (BH-adjusted p).
        config: Settings.
    """

    metrics: pd.DataFrame
    items: pd.DataFrame
    best_threshold: float
    tests: pd.DataFrame
    config: dict[str, Any] = field(default_factory=dict)

    def held_out(self) -> dict[str, Any]:
        """Held-out metrics of the best threshold."""
        row = self.metrics[(self.metrics.threshold == self.best_threshold) & (self.metrics.split == "test")]
        return to_json_native(row.iloc[0].to_dict()) if len(row) else {}

    def edge_note(self) -> str | None:
        """The advice to widen the grid when the best threshold is at its edge, else None."""
        from evalcore.agent_eval._sweep_notes import edge_note

        return edge_note(self.config.get("thresholds") or list(self.metrics.threshold.unique()), self.best_threshold)

    def split_title(self, split: str, what: str) -> str:
        """A table's title naming its split and items, e.g. "held-out split (8 items: ...), every threshold"."""
        from evalcore.agent_eval._sweep_notes import split_title

        return split_title(self.metrics, split, what)

    def held_out_table(self, columns: Sequence[str]) -> pd.DataFrame:
        """The best threshold's held-out numbers as a one-row table, its split named."""
        from evalcore.agent_eval._sweep_notes import held_out_table

        return held_out_table(self, columns)

    def figure_caption(self) -> str:
        """The figure's caption: what it shows, and why precision can fall as the threshold rises."""
        from evalcore.agent_eval._sweep_notes import figure_caption

        return figure_caption(self)

    def to_dict(self) -> dict[str, Any]:
        return to_json_native(
            {
                "best_threshold": self.best_threshold,
                "best_threshold_note": self.edge_note(),
                "held_out": self.held_out(),
                "metrics": self.metrics.to_dict(orient="records"),
                "tests": self.tests.to_dict(orient="records"),
                "items": self.items.to_dict(orient="records"),
                "config": self.config,
            }
        )

    def figure(self) -> Figure:
        """Held-out metrics against the threshold, the best threshold marked.

        seaborn's ``lineplot`` of the held-out metrics in long form (one line per metric, its
        values at each threshold as measured: ``estimator=None``), each metric with its own
        colour, marker and dash; utility, the selection objective, drawn thicker. A metric
        that is missing at every threshold is left out; a missing value ends its line there.
        """
        import seaborn as sns

        fig = Figure(figsize=(8, 4.5), constrained_layout=True)
        ax = fig.add_subplot()
        m = self.metrics[self.metrics.split == "test"].sort_values("threshold")
        cols = [c for c in _FIGURE_STYLES if m[c].notna().any()]
        if cols:
            long = m.melt(id_vars="threshold", value_vars=cols, var_name="metric", value_name="value")
            # units: a metric's run of values between missing ones, so that its line breaks at a
            # missing value (as matplotlib's plot does) instead of joining its neighbours
            long["run"] = long.groupby("metric", sort=False)["value"].transform(lambda v: v.isna().cumsum())
            long = long.dropna(subset=["value"])
            long["segment"] = long["metric"] + "/" + long["run"].astype(str)
            sns.lineplot(
                data=long,
                x="threshold",
                y="value",
                hue="metric",
                style="metric",
                size="metric",
                units="segment",
                hue_order=cols,
                style_order=cols,
                size_order=cols,
                palette={c: f"C{i}" for i, c in enumerate(cols)},
                markers={c: _FIGURE_STYLES[c][1] for c in cols},
                dashes={c: _FIGURE_STYLES[c][0] for c in cols},
                sizes={c: 2.5 if c == "utility" else 1.2 for c in cols},
                estimator=None,
                sort=True,
                ax=ax,
            )
        handles: list[Any] = []
        labels: list[str] = []
        legend = ax.get_legend()
        if legend is not None:  # seaborn's legend, taken into the one drawn below
            handles = list(legend.legend_handles)
            labels = [t.get_text() for t in legend.get_texts()]
            legend.remove()
        best = ax.axvline(self.best_threshold, color="black", ls=":", lw=1)
        handles.append(best)
        labels.append(f"best on dev = {self.best_threshold:g}")
        sig = self.tests[self.tests.significant] if len(self.tests) else self.tests
        for _, r in sig.iterrows():
            ax.annotate("*", (r.threshold, 1.02), ha="center", fontsize=12)
        ax.set_ylim(-0.02, 1.08)
        ax.set_xlabel("similarity threshold")
        ax.set_ylabel("held-out value")
        ax.set_title("Threshold sweep (held-out split; * = differs from best, BH-adjusted p ≤ 0.05)", fontsize=10)
        ax.legend(handles, labels, fontsize=8, ncol=2)
        return fig


_FIGURE_STYLES: dict[str, tuple[Any, str]] = {
    "precision": ("", "o"),
    "recall": ("", "s"),
    "f1": ("", "^"),
    "fpr": ((3.7, 1.6), "X"),
    "synthesis_rate": ((1, 1.65), "d"),
    "success": ((6.4, 1.6, 1, 1.6), "v"),
    "utility": ("", "."),
}
"""Dash pattern ("" solid; matplotlib's --, : and -. otherwise) and marker of each metric in
:meth:`SweepResult.figure` (``X``: seaborn draws filled markers only; ``.``: utility's line
is its point)."""


def _split(ids: Sequence[str], dev_fraction: float, rng: random.Random) -> dict[str, str]:
    ids = list(ids)
    rng.shuffle(ids)
    n_dev = int(round(len(ids) * dev_fraction))
    if len(ids) >= 2:
        n_dev = min(max(n_dev, 1), len(ids) - 1)
    elif len(ids) == 1:
        n_dev = int(rng.random() < dev_fraction)
    return {i: ("dev" if j < n_dev else "test") for j, i in enumerate(ids)}


def check_thresholds(thresholds: Sequence[Any]) -> list[float]:
    """The thresholds to run: finite numbers in [-1, 1], sorted, duplicates dropped.

    Raises:
        EvalcoreError: No threshold, or one that is not a finite number in [-1, 1].
    """
    vals: list[float] = []
    for t in thresholds:
        if (
            isinstance(t, bool)
            or not isinstance(t, (int, float, np.integer, np.floating))
            or not math.isfinite(float(t))
            or not -1.0 <= float(t) <= 1.0
        ):
            raise EvalcoreError(f"threshold {t!r} is not a finite number in [-1, 1]", field="thresholds")
        vals.append(float(t))
    if not vals:
        raise EvalcoreError("no thresholds", field="thresholds")
    return sorted(set(vals))


def _wilson(successes: float, n: int) -> tuple[float, float]:
    from evalcore import stats

    if n == 0:
        return (np.nan, np.nan)
    return stats.wilson_interval(successes, n, INTERVAL_CONFIDENCE)


def threshold_sweep(
    agent_factory: Callable[[float], Any],
    thresholds: Sequence[float],
    *,
    cases: Sequence[AgentCase] | None = None,
    seed: int | None = None,
    counts: dict[str, int] | None = None,
    n_unrelated: int = 16,
    k: int = 5,
    dev_fraction: float = 0.5,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    tool_aliases: dict[str, list[str]] | None = None,
    request_timeout_s: float | None = None,
    progress: bool | None = None,
) -> SweepResult:
    """Sweep the similarity threshold (see the module docstring for every definition).

    Args:
        agent_factory: Builds an agent for a threshold (called once per threshold).
        thresholds: Thresholds to try.
        cases: Cases (default: generated with ``seed``/``counts``); single-step answer cases are used.
        seed: Seed of the generator and of the dev/held-out split (None: a fresh secret one,
            recorded in the result's ``config``; see :class:`AgentEvalConfig`).
        counts: Cases per complexity for the generator.
        n_unrelated: Unrelated queries.
        k: Search depth.
        dev_fraction: Share of items in the development split.
        alpha: Significance level after correction.
        n_resamples: Resamples of the permutation tests.
        tool_aliases: Other names of the starter tools (see :class:`AgentEvalConfig`); relevance
            no longer reads names, so they only reach the config.
        request_timeout_s: Give up on a request after this many seconds (counts as wrong).
        progress: Progress bar over the agent requests (None: on a terminal or in JupyterLab, see
            :func:`evalcore._progress.progress_enabled`).

    Returns:
        The :class:`SweepResult`.
    """
    from evalcore._progress import progress_bar

    thresholds = check_thresholds(thresholds)
    if not 0.0 < dev_fraction < 1.0:
        raise EvalcoreError(f"dev_fraction must lie strictly between 0 and 1, got {dev_fraction}", field="dev_fraction")
    seed, seed_source = resolve_seed(seed)
    plan = _plan(seed, cases, counts, n_unrelated, dev_fraction, k, request_timeout_s, tool_aliases)
    rows: list[dict[str, Any]] = []
    # one step per agent request, so the bar moves within a threshold too; its clock ticks while
    # an agent starts (10-20 s each), and the postfix says so
    bar = progress_bar(
        total=len(thresholds) * len(plan.use), desc="sweep", unit="request", progress=progress, tick_s=1.0
    )
    for t in thresholds:
        bar.set_postfix_str(f"threshold {float(t):g}: starting the agent")
        agent = agent_factory(float(t))
        agent.reset()
        bar.set_postfix_str(f"threshold {float(t):g}")
        rows += measure_threshold(agent, float(t), plan, bar)
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    bar.close()
    items = pd.DataFrame(rows)
    mtab = _metrics_table(items)
    best, tests = _best_and_tests(items, mtab, n_resamples, seed, alpha)
    config = {
        "thresholds": [float(t) for t in thresholds],
        "seed": seed,
        "seed_source": seed_source,
        "k": k,
        "dev_fraction": dev_fraction,
        "alpha": alpha,
        "intervals": f"{INTERVAL_CONFIDENCE:.0%} Wilson over the split's unrelated queries (fpr) and cases (success)",
        "n_cases": len(plan.use),
        "n_unrelated": len(plan.unrelated),
        "correction": "benjamini_hochberg",
        "objective": "mean utility: cases 0.5*correct + 0.5*F1 (no relevant tool: 0.5*correct + "
        "0.5*(1 - any match)), unrelated 1 - false_positive",
    }
    return SweepResult(metrics=mtab, items=items, best_threshold=best, tests=tests, config=config)


def _plan(
    seed: int,
    cases: Sequence[AgentCase] | None,
    counts: dict[str, int] | None,
    n_unrelated: int,
    dev_fraction: float,
    k: int,
    request_timeout_s: float | None,
    tool_aliases: dict[str, list[str]] | None,
) -> SweepPlan:
    """The sweep's items (single-step answer cases and unrelated queries), their seeded,
    stratified dev/held-out split and each kind's held-out requests (drawn once from a secret
    seed, the same at every threshold).

    Raises:
        EvalcoreError: No single-step answer case, or too few items to fill both splits.
    """
    gen = AgentCaseGenerator(seed, counts)
    pool = list(cases) if cases is not None else gen.generate()
    use = [c for c in pool if c.expected_behavior == "answer" and not c.is_multi_step]
    if not use:
        raise EvalcoreError("no single-step answer cases to sweep over", field="cases")
    unrelated = gen.unrelated_queries(n_unrelated)
    rng = random.Random(f"{seed}-sweep-split")
    split = {
        **_split([c.id for c in use if not c.needs_synthesis], dev_fraction, rng),
        **_split([c.id for c in use if c.needs_synthesis], dev_fraction, rng),
        **_split([f"unrelated-{i:02d}" for i in range(len(unrelated))], dev_fraction, rng),
    }
    parts = set(split.values())
    if parts != {"dev", "test"}:
        raise EvalcoreError(
            f"{len(split)} item(s) cannot fill both a development and a held-out split; "
            "use more cases or unrelated queries",
            field="cases",
        )
    cfg = AgentEvalConfig(tool_aliases=tool_aliases)
    checker = ToolChecker(cfg.n_held_out, cfg.sandbox_timeout_s)
    held_out = {
        kind: checker.held_out(kind, next(c.inputs for c in use if c.kind == kind), N_LABEL_REQUESTS)
        for kind in dict.fromkeys(c.kind for c in use)
        if kind in VARIABLE_SLOTS and all(c.inputs for c in use if c.kind == kind)
    }
    return SweepPlan(use, unrelated, split, held_out, checker, k, request_timeout_s)


def _summarize(df: pd.DataFrame) -> dict[str, Any]:
    """A split's metrics at one threshold (see the module docstring)."""
    cs, un = df[df.type == "case"], df[df.type == "unrelated"]
    syn = cs[cs.needs_synthesis]
    fpr_lo, fpr_hi = _wilson(float(un.false_positive.sum()), len(un))
    suc_lo, suc_hi = _wilson(float(cs.correct.sum()), len(cs))
    return {
        "precision": cs.precision.mean(),
        "recall": cs.recall.mean(),
        "f1": cs.f1.mean(),
        "fpr": un.false_positive.mean() if len(un) else np.nan,
        "synthesis_rate": syn.synthesized.mean() if len(syn) else np.nan,
        "success": cs.correct.mean(),
        "utility": df.utility.mean(),
        "n_items": len(df),
        "n_cases": len(cs),
        "n_labelled": int(cs.f1.notna().sum()),
        "n_unrelated": len(un),
        "fpr_low": fpr_lo,
        "fpr_high": fpr_hi,
        "success_low": suc_lo,
        "success_high": suc_hi,
    }


def _metrics_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per threshold and split (``all``, ``dev``, ``test``) the metrics of :func:`_summarize`."""
    mrows = []
    for thr, g in items.groupby("threshold"):
        for name, part in (("all", g), ("dev", g[g.split == "dev"]), ("test", g[g.split == "test"])):
            mrows.append({"threshold": thr, "split": name, **_summarize(part)})
    return pd.DataFrame(mrows)


def _best_and_tests(
    items: pd.DataFrame, mtab: pd.DataFrame, n_resamples: int, seed: int, alpha: float
) -> tuple[float, pd.DataFrame]:
    """The best threshold (highest development utility; the lowest on ties, as idxmax; NaN
    utilities skipped) and, on the held-out split, every other threshold's paired permutation
    test against it with Benjamini–Hochberg correction."""
    from evalcore import stats

    dev = mtab[mtab.split == "dev"].sort_values("threshold")
    best = float(dev["threshold"].to_numpy()[int(np.nanargmax(dev["utility"].to_numpy(dtype=float)))])
    test_items = items[items.split == "test"]
    best_u = test_items[test_items.threshold == best].set_index("item").utility
    trows = []
    for t in sorted(items.threshold.unique()):
        if t == best:
            continue
        u = test_items[test_items.threshold == t].set_index("item").utility.reindex(best_u.index)
        res = stats.permutation_test(u.to_numpy(), best_u.to_numpy(), n_resamples=n_resamples, seed=seed)
        trows.append(
            {"threshold": float(t), "best": best, "mean_difference": res.difference, "p_value": res.p_value, "n": res.n}
        )
    tests = pd.DataFrame(trows, columns=["threshold", "best", "mean_difference", "p_value", "n"])
    if len(tests):
        tests["p_adjusted"] = stats.benjamini_hochberg(tests.p_value.to_numpy())
        tests["significant"] = tests.p_adjusted <= alpha
    else:
        tests["p_adjusted"] = []
        tests["significant"] = []
    return best, tests
