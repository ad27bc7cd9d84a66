"""The figures a researcher reads are drawn with seaborn from the numbers they show (issue 32
item 6): each test reads back what was drawn (bar lengths, error-bar ends, heatmap cells,
histogram counts, line points, colours) and compares it with the data the figure was given, so
a figure drawn from the wrong data, in the wrong order or with the wrong interval fails."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns
from matplotlib.colors import to_hex, to_rgba

from evalcore.agent_eval._output import figure_category_scores, figure_category_tests, figure_test_distribution
from evalcore.agent_eval._sweep import SweepResult
from evalcore.reporting import _benchmark_views as bv
from evalcore.routing._plots import router_color, sweep_figure

TEAL, ORANGE, RED, CORAL = "#2a9d8f", "#f4a261", "#d62828", "#e76f51"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bars_top_to_bottom(ax):
    """Horizontal bars as (centre y, length), top of the figure first (the y axis is inverted)."""
    bars = sorted(ax.patches, key=lambda p: p.get_y())
    assert ax.yaxis_inverted()
    return [(p.get_y() + p.get_height() / 2, p.get_width()) for p in bars]


def _seaborn_calls(monkeypatch, *names):
    calls = []
    for name in names:
        original = getattr(sns, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(sns, name, spy)
    return calls


# --------------------------------------------------------------------------- per-subject bars
SUBJECTS = pd.DataFrame(
    {
        "subject": ["law", r"$\foo$ art", "biology", "chemistry"],
        "n": [3, 4, 5, 6],
        "accuracy": [0.9, 0.5, 0.2, 0.0],
        "ci_low": [0.6, 0.2, 0.05, 0.0],
        "ci_high": [1.0, 0.8, 0.5, 0.35],
    }
)


def test_subject_bars_are_the_table_accuracies_in_its_order(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "barplot")
    ax = bv.subject_figure(SUBJECTS).axes[0]
    assert calls == ["barplot"]
    bars = _bars_top_to_bottom(ax)
    assert [length for _, length in bars] == pytest.approx(SUBJECTS["accuracy"].tolist())
    labels = {round(t.get_position()[1]): t.get_text() for t in ax.get_yticklabels()}
    assert [labels[round(y)] for y, _ in bars] == [f"{s} (n={n})" for s, n in zip(SUBJECTS.subject, SUBJECTS.n)]


def test_subject_error_bars_span_the_table_intervals():
    ax = bv.subject_figure(SUBJECTS).axes[0]
    (lines,) = [c for c in ax.collections if isinstance(c, matplotlib.collections.LineCollection)]
    centres = {round(y): length for y, length in _bars_top_to_bottom(ax)}
    spans = sorted((seg[0][1], seg[0][0], seg[1][0]) for seg in lines.get_segments())
    # each bar's error bar: at the bar's height, from ci_low to ci_high of that row
    np.testing.assert_allclose([(lo, hi) for _, lo, hi in spans], SUBJECTS[["ci_low", "ci_high"]].to_numpy())
    for y, _, _ in spans:
        assert round(y) in centres


def test_subject_error_bars_follow_a_changed_interval():
    wider = SUBJECTS.assign(ci_high=[1.0, 0.95, 0.6, 0.4])
    (lines,) = [
        c for c in bv.subject_figure(wider).axes[0].collections if isinstance(c, matplotlib.collections.LineCollection)
    ]
    assert sorted(seg[1][0] for seg in lines.get_segments()) == pytest.approx(sorted(wider.ci_high))


# --------------------------------------------------------------------------- pass/fail heatmap
def test_pass_fail_heatmap_cells_are_the_grid(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "heatmap")
    grid = pd.DataFrame(
        [[1.0, 0.0, np.nan], [0.0, 1.0, 1.0], [np.nan, np.nan, 0.0]],
        index=["HumanEval/0", "id $x$", "HumanEval/7"],
        columns=[0, 1, 2],
    )
    ax = bv.pass_fail_figure(grid).axes[0]
    assert calls == ["heatmap"]
    mesh = ax.collections[0]
    drawn = mesh.get_array()
    assert np.ma.getmaskarray(drawn).tolist() == grid.isna().to_numpy().tolist()
    assert np.ma.filled(drawn, -1).tolist() == grid.fillna(-1).to_numpy().tolist()
    # first row at the top, labelled by its item id (as text), columns by epoch
    assert ax.yaxis_inverted()
    assert [t.get_text() for t in ax.get_yticklabels()] == list(grid.index)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["epoch 0", "epoch 1", "epoch 2"]
    faces = [to_hex(c) for c in mesh.get_facecolors()]
    expected = {1.0: "#5cb85c", 0.0: "#d9534f"}
    assert faces == [expected.get(v, "#bbbbbb") for v in grid.fillna(-1).to_numpy().ravel()]


# --------------------------------------------------------------------------- histograms
def test_usage_histograms_count_the_samples(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "histplot")
    frame = pd.DataFrame(
        {
            "latency_s": [0.1, 0.2, 0.3, 0.35, 1.0, 0.4, 0.2, 0.25, 0.3, 0.5, 0.6, 0.7],
            "completion_tokens": [3.0, 9, 12, 12, 40, 41, 7, 8, 100, 3, 5, 6],
            "cost_usd": [0.001 * i for i in range(12)],
        }
    )
    fig = bv.latency_cost_figure(frame)
    assert calls == ["histplot"] * 3
    for ax, column in zip(fig.axes, ["latency_s", "completion_tokens", "cost_usd"]):
        counts, edges = np.histogram(frame[column], bins=min(20, max(5, len(frame) // 2)))
        bars = sorted(ax.patches, key=lambda p: p.get_x())
        assert [p.get_height() for p in bars] == counts.tolist()
        assert [p.get_x() for p in bars] == pytest.approx(edges[:-1].tolist())
        assert ax.get_ylabel() == "samples"
        (median,) = [line for line in ax.lines if line.get_label() == "median"]
        assert median.get_xdata()[0] == pytest.approx(frame[column].median())


# --------------------------------------------------------------------------- agent evaluation
AGENT = {
    "summary": {
        "pass_threshold": 0.7,
        "overall_score": 0.55,
        "weights_used": {"functional": 0.4, "retrieval": 0.3, "robustness": 0.3},
    },
    "detailed_results": {
        "functional": {
            "score": 0.8,
            "tests": [
                {"name": "adds", "score": 1.0, "passed": True, "critical": False},
                {"name": "adds", "score": 0.4, "passed": False, "critical": False},
                {"name": "$boom$", "score": 0.0, "passed": False, "critical": True},
            ],
        },
        "retrieval": {"score": 0.3, "tests": [{"name": "finds", "score": 0.3, "passed": False}]},
        "robustness": {
            "score": 0.7,
            "tests": [{"name": "a", "score": 0.7, "passed": True}, {"name": "b", "score": 0.9, "passed": True}],
        },
    },
}


def test_category_bars_are_the_category_scores(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "barplot")
    ax = figure_category_scores(AGENT).axes[0]
    assert calls == ["barplot"]
    bars = sorted(ax.patches, key=lambda p: p.get_x())
    assert [p.get_height() for p in bars] == pytest.approx([0.8, 0.3, 0.7])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["functional", "retrieval", "robustness"]
    # teal at or above the pass threshold (0.7 passes), coral below
    assert [to_hex(p.get_facecolor()) for p in bars] == [TEAL, CORAL, TEAL]
    notes = sorted((t.xy[0], t.get_text()) for t in ax.texts)
    assert [text for _, text in notes] == ["0.80\nw=0.40", "0.30\nw=0.30", "0.70\nw=0.30"]
    assert [x for x, _ in notes] == pytest.approx([p.get_x() + p.get_width() / 2 for p in bars])


def test_category_test_bars_keep_every_test_in_order(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "barplot")
    ax = figure_category_tests(AGENT, "functional").axes[0]
    assert calls == ["barplot"]
    bars = sorted(ax.patches, key=lambda p: p.get_y())
    assert ax.yaxis_inverted()
    # two tests named "adds": two bars, not one averaged
    assert [p.get_width() for p in bars] == pytest.approx([1.0, 0.4, 0.0])
    assert [to_hex(p.get_facecolor()) for p in bars] == [TEAL, ORANGE, RED]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["adds", "adds", "$boom$"]


def test_test_distribution_points_are_the_test_scores(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "scatterplot")
    ax = figure_test_distribution(AGENT).axes[0]
    assert calls == ["scatterplot"]
    (points,) = ax.collections
    xy = points.get_offsets()
    colours = [to_hex(c) for c in points.get_facecolors()]
    expected = [(0, 1.0, TEAL), (0, 0.4, ORANGE), (0, 0.0, RED), (1, 0.3, ORANGE), (2, 0.7, TEAL), (2, 0.9, TEAL)]
    assert len(xy) == len(expected)
    for (x, y), colour, (pos, score, want) in zip(xy, colours, expected):
        assert abs(x - pos) <= 0.18 and y == pytest.approx(score) and colour == want
    # the jitter is seeded: the same figure twice
    again = figure_test_distribution(AGENT).axes[0].collections[0].get_offsets()
    assert np.array_equal(np.asarray(again), np.asarray(xy))


# --------------------------------------------------------------------------- threshold sweep
def _sweep_result() -> SweepResult:
    rows = []
    for split in ("dev", "test"):
        for i, t in enumerate([0.6, 0.3, 0.5, 0.4]):  # unsorted on purpose
            rows.append(
                {
                    "split": split,
                    "threshold": t,
                    "precision": [0.8, 0.5, 0.7, np.nan][i],
                    "recall": 0.9 - t,
                    "f1": 0.6 + (split == "dev"),
                    "fpr": 0.3 - t / 4,
                    "synthesis_rate": np.nan,
                    "success": 0.5 + t / 2,
                    "utility": 0.4 + t / 3,
                }
            )
    tests = pd.DataFrame({"threshold": [0.3, 0.6], "significant": [True, False]})
    return SweepResult(metrics=pd.DataFrame(rows), items=pd.DataFrame(), best_threshold=0.5, tests=tests)


def test_threshold_curves_are_the_held_out_metrics(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "lineplot")
    sweep = _sweep_result()
    ax = sweep.figure().axes[0]
    assert calls == ["lineplot"]
    legend = ax.get_legend()
    names = [t.get_text() for t in legend.get_texts()]
    # synthesis_rate is missing at every threshold: left out
    assert names == ["precision", "recall", "f1", "fpr", "success", "utility", "best on dev = 0.5"]
    colour_of = {n: to_rgba(h.get_color()) for n, h in zip(names, legend.legend_handles) if n in names[:-1]}
    held = sweep.metrics[sweep.metrics.split == "test"].sort_values("threshold")
    for name, colour in colour_of.items():
        drawn = [
            (x, y)
            for line in ax.lines
            if to_rgba(line.get_color()) == colour
            for x, y in zip(line.get_xdata(), line.get_ydata())
        ]
        want = [(t, v) for t, v in zip(held.threshold, held[name]) if not np.isnan(v)]
        np.testing.assert_allclose(np.array(drawn, dtype=float), np.array(want, dtype=float), err_msg=name)
    # precision is missing at 0.4: its line stops there instead of joining 0.3 to 0.5
    precision = [
        line for line in ax.lines if to_rgba(line.get_color()) == colour_of["precision"] and len(line.get_xdata())
    ]
    assert sorted(list(line.get_xdata()) for line in precision) == [[0.3], [0.5, 0.6]]
    widths = {
        n: max(line.get_linewidth() for line in ax.lines if to_rgba(line.get_color()) == c)
        for n, c in colour_of.items()
    }
    assert widths["utility"] == 2.5 and widths["recall"] == 1.2
    (best,) = [line for line in ax.lines if list(line.get_xdata()) == [0.5, 0.5]]
    assert best.get_linestyle() == ":"


# --------------------------------------------------------------------------- routing λ sweep
def test_routing_sweep_curves_join_each_routers_points_in_lambda_order(monkeypatch):
    calls = _seaborn_calls(monkeypatch, "lineplot")
    sweep = pd.DataFrame(
        {
            "algorithm": ["ucb1"] * 3 + ["my_router"] * 3,
            "lambda": [0.5, 0.0, 1.0] * 2,
            "mean_quality": [0.6, 0.7, 0.5, 0.65, 0.72, 0.4],
            "mean_cost": [0.2, 0.3, 0.1, 0.25, 0.35, 0.05],
        }
    )
    arms = pd.DataFrame({"arm": ["small", "large"], "mean_cost": [0.1, 0.4], "mean_quality": [0.5, 0.8]})
    ax = sweep_figure(sweep, arms).axes[0]
    assert calls == ["lineplot"]
    # RouterBench's Zero router (the hull of the single arms) is drawn with them, dashed
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["ucb1", "my_router", "zero_router", "arm: small", "arm: large"]
    for name in ("ucb1", "my_router"):
        (line,) = [ln for ln in ax.lines if to_hex(ln.get_color()) == router_color(name) and len(ln.get_xdata())]
        g = sweep[sweep.algorithm == name].sort_values("lambda")
        assert list(line.get_xdata()) == pytest.approx(g.mean_cost.tolist())
        assert list(line.get_ydata()) == pytest.approx(g.mean_quality.tolist())
    arm_points = [tuple(c.get_offsets()[0]) for c in ax.collections]
    assert arm_points == [(0.1, 0.5), (0.4, 0.8)]
