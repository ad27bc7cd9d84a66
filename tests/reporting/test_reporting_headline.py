"""The headline table: built from notebook records, checked value by value (no kernel)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalcore.reporting._headline import headline_tables
from evalcore.reporting._notebooks import EntryResult, summary_frame, write_index

GSM8K = {
    "dataset": "gsm8k",
    "model": "local:smollm2",
    "run_id": "gsm8k-zeroshot",
    "n_items": 8,
    "n_samples": 8,
    "errors": 1,
    "accuracy": {"mean": 0.25, "ci_low": 0.0709, "ci_high": 0.5909, "n": 7},
    "accuracy_strict": {"mean": 0.125, "ci_low": 0.02, "ci_high": 0.47, "n": 7},
    "parse_failure_rate": 2 / 7,
    "latency_p50_s": 3.2,
    "completion_tokens": 1234,
    "cost_usd": 0.0,
    "run_path": "/somewhere/runs/gsm8k-zeroshot",
}
HUMANEVAL = {
    "dataset": "humaneval",
    "model": "openai:gpt-4o-mini",
    "n_items": 8,
    "n_samples": 16,
    "errors": 0,
    "accuracy": {"mean": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 16},
    "pass_at_k": {"1": 0.5, "2": 0.6},
    "completion_tokens": 900,
    "cost_usd": 0.01234,
}
COMPARE = {
    "runs": ["zero-shot", "3-shot"],
    "n_shared": 8,
    "comparisons": [
        {
            "name_a": "zero-shot",
            "name_b": "3-shot",
            "n": 8,
            "mean_a": 0.25,
            "mean_b": 0.5,
            "difference": -0.25,
            "ci_low": -0.5,
            "ci_high": 0.0,
            "test": "mcnemar",
            "p_value": 0.25,
            "p_adjusted": 0.5,
            "significant": False,
            "min_detectable_difference": 0.4,
            "power_observed": None,
        },
        {
            "name_a": "zero-shot",
            "name_b": "5-shot",
            "n": 8,
            "mean_a": 0.25,
            "mean_b": 0.0,
            "difference": 0.25,
            "ci_low": 0.1,
            "ci_high": 0.4,
            "test": "mcnemar",
            "p_value": 0.0001,
            "p_adjusted": 0.0002,
            "significant": True,
            "min_detectable_difference": 0.4,
            "power_observed": None,
        },
    ],
    "difference": {"mean": -0.25, "ci_low": -0.5, "ci_high": 0.0},
    "p_adjusted": 0.5,
}
FUNCTIONAL = {
    "agent_functional_score": 0.8,
    "agent_functional_passed": True,
    "agent_functional_n_tests": 4,
    "agent_functional_critical_failures": 0,
    "agent_functional_accuracy": 0.75,
}
OVERVIEW = {
    "agent_overall_score": 0.7,
    "agent_system_passed": False,
    "agent_system_status": "partial",
    "agent_tests": 10,
    "agent_tests_passed": 7,
    "agent_critical_failures": 1,
    "agent_functional_score": 0.9,
    "agent_synthesis_score": 0.5,
}
SWEEP = {"sweep_best_threshold": 0.55, "sweep_heldout_f1": 0.8, "sweep_heldout_utility": 0.7}
ROUTING = {
    "routing_items": 10,
    "routing_summary": {
        "linucb": {
            "mean_quality": 0.4,
            "total_cost": 123.4,
            "regret_vs_oracle": 2.5,
            "regret_vs_best_fixed": 0.5,
            "convergence_point": 7.0,
            "cost_savings_vs_always_best": 0.3,
        },
        "always_best": {
            "mean_quality": 0.45,
            "total_cost": 200.0,
            "regret_vs_oracle": 2.0,
            "regret_vs_best_fixed": 0.0,
            "convergence_point": None,
            "cost_savings_vs_always_best": 0.0,
        },
    },
    "routing_aiq": {"linucb": {"aiq": 0.61, "apgr": 0.5}, "always_best": {"aiq": 0.55, "apgr": 0.4}},
    "routing_bootstrap_summary": {
        "linucb": {"mean_reward": 0.4, "mean_reward_ci_low": 0.1, "mean_reward_ci_high": 0.7},
        "always_best": {"mean_reward": 0.45, "mean_reward_ci_low": 0.15, "mean_reward_ci_high": 0.75},
    },
}


def _results():
    def entry(name, notebook, records, status="ok"):
        return EntryResult(
            name=name, notebook=f"notebooks/{notebook}.ipynb", status=status, params={"limit": 8}, records=records
        )

    return [
        entry("benchmark_gsm8k", "benchmark", GSM8K),
        entry("benchmark_humaneval", "benchmark", HUMANEVAL),
        entry("compare_gsm8k_prompts", "compare", COMPARE),
        entry("agent_functional", "agent_category", FUNCTIONAL),
        entry("agent_overview", "agent_overview", OVERVIEW),
        entry("threshold_sweep", "threshold_sweep", SWEEP),
        entry("routing", "routing", ROUTING),
        entry("broken", "benchmark", {}, status="failed"),
    ]


def test_benchmark_rows_hold_the_recorded_values():
    table = headline_tables(summary_frame(_results()))
    bench = table.sections["benchmarks"].set_index("run")
    assert list(bench.index) == ["benchmark_gsm8k", "benchmark_humaneval"]  # the failed run recorded nothing
    g = bench.loc["benchmark_gsm8k"]
    assert (g["model"], g["dataset"], g["n"], g["samples"], g["errors"]) == ("local:smollm2", "gsm8k", 8, 8, 1)
    assert (g["accuracy"], g["ci_low"], g["ci_high"]) == (0.25, 0.0709, 0.5909)
    assert g["parse_failures"] == 2  # 2/7 of the 7 scored samples
    h = bench.loc["benchmark_humaneval"]
    assert h["accuracy"] == 0.5 and (h["parse_failures"] is None or math.isnan(h["parse_failures"]))
    shown = table.formatted()["benchmarks"].set_index("run")
    assert shown.loc["benchmark_gsm8k", "accuracy"] == "0.250"
    assert shown.loc["benchmark_gsm8k", "95% interval"] == "[0.071, 0.591]"
    assert shown.loc["benchmark_gsm8k", "parse failures"] == "2/7"
    # one format for every cost (it mixed "$0 (1234 tok)" with "$0.0123"); tokens in their own column
    assert shown.loc["benchmark_gsm8k", "cost"] == "$0.0000"
    assert shown.loc["benchmark_gsm8k", "tokens"] == "1234"
    assert shown.loc["benchmark_humaneval", "cost"] == "$0.0123"
    assert shown.loc["benchmark_humaneval", "parse failures"] == "—"


def test_comparison_rows_and_verdicts():
    table = headline_tables(summary_frame(_results()))
    comp = table.sections["comparisons"]
    assert len(comp) == 2
    first, second = comp.iloc[0], comp.iloc[1]
    assert (first["a"], first["b"], first["difference"], first["p_adjusted"]) == ("zero-shot", "3-shot", -0.25, 0.5)
    assert first["verdict"] == "no significant difference"
    assert second["verdict"] == "zero-shot better"  # significant and A - B > 0
    shown = table.formatted()["comparisons"]
    assert list(shown["p (corrected)"]) == ["0.500", "< 0.001"]
    assert list(shown["95% interval"]) == ["[-0.500, 0.000]", "[0.100, 0.400]"]
    flipped = dict(COMPARE, comparisons=[dict(COMPARE["comparisons"][1], difference=-0.25)])
    other = headline_tables(summary_frame([EntryResult("c", "compare.ipynb", "ok", records=flipped)]))
    assert other.sections["comparisons"].iloc[0]["verdict"] == "5-shot better"


def test_agent_rows_prefer_the_category_run_and_keep_the_overall_score():
    agents = headline_tables(summary_frame(_results())).sections["agents"]
    rows = {(r["run"], r["category"]): r for _, r in agents.iterrows()}
    assert rows[("agent_functional", "functional")]["score"] == 0.8
    assert ("agent_overview", "functional") not in rows  # measured by its own run
    assert rows[("agent_overview", "synthesis")]["score"] == 0.5  # only the overview measured it
    overall = rows[("agent_overview", "overall (weighted)")]
    assert overall["score"] == 0.7 and overall["status"] == "partial" and overall["tests_passed"] == 7
    assert rows[("threshold_sweep", "threshold sweep: best 0.55")]["score"] == 0.7
    shown = headline_tables(summary_frame(_results())).formatted()["agents"]
    assert list(shown[shown.category == "overall (weighted)"]["tests"]) == ["7/10"]
    assert list(shown[shown.category == "functional"]["status"]) == ["pass"]


def test_router_rows():
    routing = headline_tables(summary_frame(_results())).sections["routing"].set_index("router")
    assert list(routing.index) == ["linucb", "always_best"]
    assert routing.loc["linucb", "mean_quality"] == 0.4 and routing.loc["linucb", "aiq"] == 0.61
    assert routing.loc["linucb", "regret_vs_oracle"] == 2.5
    assert (routing.loc["linucb", "mean_reward_ci_low"], routing.loc["linucb", "mean_reward_ci_high"]) == (0.1, 0.7)
    shown = headline_tables(summary_frame(_results())).formatted()["routing"].set_index("router")
    assert shown.loc["always_best", "converges at"] == "—"
    assert shown.loc["linucb", "total cost"] == "123.40"
    assert shown.loc["always_best", "95% CI (items)"] == "[0.150, 0.750]"
    assert "run" not in shown.columns  # one routing study


def test_collect_shaped_frame_gives_the_same_rows():
    """collect() names rows by notebook path and flattens dicts the same way."""
    frame = summary_frame(_results()[:3]).reset_index()
    frame["notebook"] = [f"/r/{name}/{name}.ipynb" for name in frame.pop("run")]
    table = headline_tables(frame)
    assert list(table.sections["benchmarks"]["run"]) == ["benchmark_gsm8k", "benchmark_humaneval"]
    assert list(table.sections["comparisons"]["run"]) == ["compare_gsm8k_prompts"] * 2
    assert "agents" not in table.sections and "routing" not in table.sections


def test_text_sections_are_small_tables():
    text = headline_tables(summary_frame(_results())).to_text()
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        "Benchmark runs",
        "Comparisons (paired, on shared items)",
        "Agent evaluation",
        "Routers",
    ]
    assert max(len(line) for line in text.splitlines()) <= 140  # fits a 1,400 px terminal; no 215-column table
    bench = blocks[0].splitlines()
    assert bench[1].split() == [
        "run",
        "model",
        "dataset",
        "n",
        "accuracy",
        "95%",
        "interval",
        "parse",
        "failures",
        "errors",
        "cost",
        "tokens",
    ]
    assert "benchmark_gsm8k" in bench[3] and "0.250" in bench[3] and "[0.071, 0.591]" in bench[3]


def test_empty_and_missing():
    assert not headline_tables(pd.DataFrame())
    assert headline_tables(summary_frame([EntryResult("x", "n.ipynb", "failed")])).sections == {}


def test_index_starts_with_the_headline_and_links_the_full_table(tmp_path):
    index = write_index(tmp_path, _results(), {"id": "X"}).read_text()
    assert index.index("<h2>Headline</h2>") < index.index("<h2>Notebooks</h2>")
    assert index.count('<table class="headline') == 4
    assert '<td class="num">[0.071, 0.591]</td>' in index
    assert 'href="summary.csv"' in index
    csv = pd.read_csv(tmp_path / "summary.csv", index_col="run")
    assert csv.loc["benchmark_gsm8k", "accuracy.mean"] == pytest.approx(0.25)
    assert csv.loc["routing", "routing_summary.linucb.mean_quality"] == pytest.approx(0.4)
    assert "routing_summary.linucb.mean_quality" not in index  # the wide table is only the CSV


def test_index_in_headless_chromium_shows_the_headline_at_1400_px(tmp_path, chromium):
    index = write_index(tmp_path, _results(), {"id": "X"})
    chromium.open(index.as_uri())
    # every headline table lies inside the 1,400 px window: no horizontal scrolling to read it
    rights = chromium.js("[...document.querySelectorAll('table.headline')].map(t => t.getBoundingClientRect().right)")
    assert len(rights) == 4 and max(rights) <= 1400
    assert chromium.js("document.documentElement.scrollWidth") <= 1400
    # the headline comes first on the page, above the list of notebooks
    tops = chromium.js("[...document.querySelectorAll('h2')].map(h => [h.textContent, h.offsetTop])")
    order = [name for name, _ in sorted(tops, key=lambda t: t[1])]
    assert order.index("Headline") < order.index("Notebooks")
    cells = chromium.js("[...document.querySelectorAll('table.headline td')].map(td => td.textContent)")
    assert "[0.071, 0.591]" in cells
    assert chromium.problems() == []
