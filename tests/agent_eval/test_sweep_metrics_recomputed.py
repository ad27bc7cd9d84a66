"""The threshold sweep recomputed: every number recomputed independently (numpy, scikit-learn,
scipy, statsmodels) from search scores the test controls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import precision_recall_fscore_support, roc_curve
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evalcore.agent_eval import AgentCaseGenerator, threshold_sweep
from evalcore.agent_eval._oracle import tool_source
from evalcore.agents import AgentResponse, ToolMatch
from evalcore.errors import EvalcoreError

TOOLS = ["percentage", "reverse_string", "temperature_conversion", "decoy", "calculate_percentage"]
CASES = AgentCaseGenerator(seed=0, counts={"simple": 6, "medium": 0, "complex": 0, "edge": 0}).generate()
SEED = 3
UNRELATED = AgentCaseGenerator(seed=SEED).unrelated_queries(4)  # the sweep draws the same ones


def case_scores(c):
    """Search scores of a case: its kind's tool at exactly 0.6 (factorial is not registered),
    a second relevant tool (an alias) at exactly 0.55 for percentage, a decoy at 0.45."""
    out = [] if c.kind == "factorial" else [(c.kind, 0.6)]
    if c.kind == "percentage":
        out.append(("calculate_percentage", 0.55))
    return out + [("decoy", 0.45)]


def unrelated_scores(i):
    return [("decoy", 0.5)] if i % 2 == 0 else [("decoy", 0.3)]


SCORES = {c.query: case_scores(c) for c in CASES} | {q: unrelated_scores(i) for i, q in enumerate(UNRELATED)}


def _code(kind, name=None):
    code = tool_source(kind)[0]
    return code if name is None else code.replace(f"def {kind}(", f"def {name}(")


# Relevance is measured, not read from names (issue 37): the tools named like a kind compute it
# (calculate_percentage computes percentages under another name), the decoy computes nothing.
CODE = {k: _code(k) for k in ("percentage", "reverse_string", "temperature_conversion")} | {
    "calculate_percentage": _code("percentage", "calculate_percentage"),
    "decoy": "def decoy(**kw):\n    return 0\n",
}


class Registry:
    def __init__(self, clip=True, tools=TOOLS, describe=None):
        self.clip, self.tools, self._describe = clip, list(tools), CODE if describe is None else describe

    def search(self, query, k=5, threshold=0.0):
        hits = sorted(SCORES.get(query, []), key=lambda h: (-h[1], h[0]))
        return [ToolMatch(n, s) for n, s in hits if s >= threshold or not self.clip][:k]

    def list_tools(self):
        return list(self.tools)

    def describe(self, name):
        return {"code": self._describe.get(name)}


class Agent:
    """Answers every case but factorial while the threshold is ≤ 0.6, naming the case's kind."""

    def __init__(self, threshold, clip=True):
        self.threshold = threshold
        self.cases = {c.query: c for c in CASES}
        self.registry = Registry(clip)

    def reset(self):
        pass

    def process_request(self, query):
        c = self.cases.get(query)
        if c is None or c.kind == "factorial" or self.threshold > 0.6:
            return AgentResponse(success=False, error="no tool above the threshold")
        return AgentResponse(success=True, result=c.expected, tool_used=c.kind, reused=True)


GRID = [0.3, 0.45, 0.5, 0.55, 0.6, 0.65]  # ties at 0.45, 0.5, 0.55 and 0.6


def run(thresholds=GRID, agent=Agent, seed=SEED, **kw):
    return threshold_sweep(
        agent, thresholds, cases=CASES, n_unrelated=len(UNRELATED), seed=seed, progress=False, n_resamples=10_000, **kw
    )


def expected_items(t):
    """Per item values at threshold t, computed here (matches with score ≥ t)."""
    registered = set(TOOLS)
    rows = {}
    for c in CASES:
        hits = {n for n, s in SCORES[c.query] if s >= t}
        relevant = {
            n
            for n in registered
            if n == c.kind
            or n in ("percent", "calculate_percentage", "percentage_calculator")
            and c.kind == "percentage"
        }
        correct = float(c.kind != "factorial" and t <= 0.6)
        if relevant:
            universe = sorted(registered)
            y_true = [n in relevant for n in universe]
            y_pred = [n in hits for n in universe]
            p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="binary", zero_division=0)
            rows[c.id] = dict(precision=p, recall=r, f1=f, utility=0.5 * correct + 0.5 * f, correct=correct)
        else:
            rows[c.id] = dict(
                precision=np.nan,
                recall=np.nan,
                f1=np.nan,
                correct=correct,
                utility=0.5 * correct + 0.5 * (1.0 - float(bool(hits))),
            )
    for i, q in enumerate(UNRELATED):
        fp = float(any(s >= t for _, s in SCORES[q]))
        rows[f"unrelated-{i:02d}"] = dict(false_positive=fp, utility=1.0 - fp)
    return rows


def test_per_threshold_metrics_agree_with_an_independent_computation():
    res = run()
    split = res.items[res.items.threshold == GRID[0]].set_index("item").split
    for t in GRID:
        exp = expected_items(t)
        got = res.items[res.items.threshold == t].set_index("item")
        for item, e in exp.items():
            for key, v in e.items():
                assert got.loc[item, key] == pytest.approx(v, nan_ok=True), (t, item, key)
        for part in ("all", "dev", "test"):
            ids = [i for i in exp if part == "all" or split[i] == part]
            cases = [i for i in ids if not i.startswith("unrelated")]
            unrel = [i for i in ids if i.startswith("unrelated")]
            row = res.metrics[(res.metrics.threshold == t) & (res.metrics.split == part)].iloc[0]
            for key in ("precision", "recall", "f1"):
                assert row[key] == pytest.approx(np.nanmean([exp[i][key] for i in cases]), nan_ok=True)
            fps = [exp[i]["false_positive"] for i in unrel]
            assert row.fpr == pytest.approx(np.mean(fps))
            assert row.success == pytest.approx(np.mean([exp[i]["correct"] for i in cases]))
            assert row.utility == pytest.approx(np.mean([exp[i]["utility"] for i in ids]))
            assert (row.n_cases, row.n_unrelated, row.n_items) == (len(cases), len(unrel), len(ids))
            assert row.n_labelled == sum(1 for i in cases if not np.isnan(exp[i]["f1"]))
            lo, hi = proportion_confint(int(sum(fps)), len(fps), alpha=0.05, method="wilson")
            assert (row.fpr_low, row.fpr_high) == pytest.approx((lo, hi))
            ok = sum(exp[i]["correct"] for i in cases)
            lo, hi = proportion_confint(int(ok), len(cases), alpha=0.05, method="wilson")
            assert (row.success_low, row.success_high) == pytest.approx((lo, hi))


def test_fpr_agrees_with_roc_curve_with_ties_at_the_threshold():
    res = run()
    m = res.metrics[res.metrics.split == "all"].set_index("threshold")
    neg = [max(s for _, s in SCORES[q]) for q in UNRELATED]
    pos = [s for c in CASES for n, s in SCORES[c.query] if n == c.kind]  # one relevant tool
    fpr, tpr, thr = roc_curve([0] * len(neg) + [1] * len(pos), neg + pos, drop_intermediate=False)
    for t in GRID:
        at = np.flatnonzero(thr >= t)  # roc_curve predicts positive at score >= threshold
        expected = fpr[at[-1]] if len(at) else 0.0
        assert m.loc[t, "fpr"] == pytest.approx(expected)


def test_several_relevant_tools_are_all_relevant():
    res = run([0.5, 0.55, 0.6])
    pct = res.items[res.items.kind == "percentage"].set_index("threshold")
    assert (pct.loc[0.55, "precision"] == 1.0).all() and (pct.loc[0.55, "recall"] == 1.0).all()
    # at 0.6 only "percentage" is at the threshold: half the relevant tools found
    assert (pct.loc[0.6, "recall"] == 0.5).all() and np.allclose(pct.loc[0.6, "f1"], 2 / 3)
    assert all(r == ["calculate_percentage", "percentage"] for r in pct.relevant)


def test_matches_below_the_threshold_are_not_counted():
    clipped, unclipped = run(), run(agent=lambda t: Agent(t, clip=False))
    cols = ["precision", "recall", "f1", "fpr", "success", "utility"]
    assert clipped.metrics[cols].equals(unclipped.metrics[cols])
    m = unclipped.metrics[unclipped.metrics.split == "all"].set_index("threshold")
    assert m.loc[0.65, "fpr"] == 0.0 and m.loc[0.5, "fpr"] == 0.5


def test_best_threshold_and_held_out_tests_agree_with_scipy_and_statsmodels():
    res = run()
    items = res.items
    dev = items[items.split == "dev"].groupby("threshold").utility.mean()
    best = float(dev.index[np.flatnonzero(dev.to_numpy() == dev.max())[0]])  # ties: the lower one
    assert res.best_threshold == best
    test = items[items.split == "test"].pivot(index="item", columns="threshold", values="utility")
    t = res.tests.set_index("threshold")
    assert sorted(t.index) == [g for g in GRID if g != best]
    for g in t.index:
        d = test[g] - test[best]
        if np.all(d == 0):
            p = 1.0
        else:
            p = sps.permutation_test(
                (test[g].to_numpy(), test[best].to_numpy()),
                lambda x, y: np.mean(x - y),
                permutation_type="samples",
                n_resamples=np.inf,
            ).pvalue
        assert t.loc[g, "p_value"] == pytest.approx(min(p, 1.0))
        assert t.loc[g, "mean_difference"] == pytest.approx(d.mean()) and t.loc[g, "n"] == len(d)
    assert t.p_adjusted.to_numpy() == pytest.approx(multipletests(t.p_value.to_numpy(), method="fdr_bh")[1])
    assert res.held_out()["utility"] == pytest.approx(test[best].mean())


def test_thresholds_unsorted_or_duplicated_run_once_each_and_give_the_same_result():
    a, b = run(GRID), run([0.6, 0.3, 0.6, 0.5, 0.45, 0.65, 0.55, 0.3])
    assert a.metrics.equals(b.metrics) and a.tests.equals(b.tests) and a.best_threshold == b.best_threshold
    assert (b.metrics[b.metrics.split == "all"].n_items == len(CASES) + len(UNRELATED)).all()
    assert b.config["thresholds"] == GRID
    c = run(GRID)  # same seed: same output
    assert c.metrics.equals(a.metrics) and c.tests.equals(a.tests) and c.items.equals(a.items)


@pytest.mark.parametrize("bad", [[1.5], [-1.01, 0.5], [float("nan")], [float("inf")], [True], ["0.5"], []])
def test_thresholds_outside_minus_one_one_are_refused(bad):
    with pytest.raises(EvalcoreError) as info:
        run(bad)
    assert info.value.field == "thresholds"


def test_malformed_search_answers_are_a_clear_error():
    class Twice(Registry):
        def search(self, query, k=5, threshold=0.0):
            return [ToolMatch("decoy", 0.9), ToolMatch("decoy", 0.8)]

    class TwiceAgent(Agent):
        def __init__(self, threshold):
            super().__init__(threshold)
            self.registry = Twice()

    with pytest.raises(EvalcoreError, match="registry.search answered a tool twice") as info:
        run([0.5], agent=TwiceAgent)
    assert info.value.field == "agent"


MEDIUM = AgentCaseGenerator(seed=0, counts={"simple": 2, "medium": 2, "complex": 0, "edge": 0}).generate()


class Claimer:
    """Answers cases needing a new tool with a starter tool it had at reset, claiming synthesis;
    optionally builds a real word_count tool during the session."""

    def __init__(self, threshold, build=False):
        self.cases = {c.query: c for c in MEDIUM}
        self.build = build
        self.registry = Registry(tools=["percentage", "reverse_string"])

    def reset(self):
        self.registry.tools = ["percentage", "reverse_string"]

    def process_request(self, query):
        c = self.cases[query]
        if self.build and c.kind == "word_count":
            self.registry.tools.append("word_count")
            self.registry._describe["word_count"] = "def word_count(text):\n    return len(text.split())\n"
            return AgentResponse(success=True, result=c.expected, tool_used="word_count", synthesized=True)
        return AgentResponse(success=True, result=c.expected, tool_used="percentage", synthesized=True)


def test_synthesis_rate_is_measured_not_the_agents_flag():
    res = threshold_sweep(
        lambda t: Claimer(t), [0.5], cases=MEDIUM, n_unrelated=2, seed=0, progress=False, n_resamples=100
    )
    syn = res.items[res.items.needs_synthesis]
    assert (syn.claimed_synthesized == 1.0).all() and (syn.synthesized == 0.0).all()
    assert res.metrics.synthesis_rate.dropna().eq(0.0).all()
    built = threshold_sweep(
        lambda t: Claimer(t, build=True), [0.5], cases=MEDIUM, n_unrelated=2, seed=0, progress=False, n_resamples=100
    )
    syn = built.items[built.items.needs_synthesis].set_index("kind")
    assert syn.loc["word_count", "synthesized"] == 1.0 and syn.loc["is_prime", "synthesized"] == 0.0
    assert built.metrics[built.metrics.split == "all"].synthesis_rate.iloc[0] == 0.5
