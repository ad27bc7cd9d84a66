"""Routing headline numbers (issue 31, item 2): every column defined once, cost saving from
total costs, reward = quality at λ = 0 in every table, the bootstrap's point values equal the
replay's; checked on the demo's outcome matrix with the routing notebook's parameters.

``fixtures/demo_outcomes.csv`` is the outcome matrix the demo builds
(``evalcore.routing.build_default_outcomes`` with params/routing.yaml: local:smollm2 × the four
default strategies on 5 GSM8K + 5 MMLU sample items, seed 0), written out as an outcome table;
the model run takes minutes, the replay on it seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from evalcore import routing
from evalcore.routing import OutcomeMatrix, item_bootstrap, load_outcomes, replay

ROOT = Path(__file__).resolve().parents[2]
DEMO = Path(__file__).parent / "fixtures" / "demo_outcomes.csv"


def _notebook_params() -> dict:
    """The routing notebook's parameters as the demo suite runs it: the notebook's defaults,
    then the params file named by params/suite.yaml's routing entry, then its overrides."""
    nb = json.loads((ROOT / "notebooks" / "routing.ipynb").read_text())
    (cell,) = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    defaults: dict = {}
    exec("".join(cell["source"]), {}, defaults)  # noqa: S102 - our own notebook's parameters
    suite = yaml.safe_load((ROOT / "params" / "suite.yaml").read_text())
    (entry,) = [r for r in suite["runs"] if r["notebook"] == "notebooks/routing.ipynb"]
    params = {**defaults, **yaml.safe_load((ROOT / entry["params"]).read_text())}
    params.update(entry.get("overrides") or {})
    return params


@pytest.fixture(scope="module")
def demo():
    p = _notebook_params()
    m = load_outcomes(DEMO)
    assert m.n_items == 2 * p["limit"] and p["source"] == "default"
    names = routing.parse_algorithms(p["algorithms"])
    res = replay(
        m,
        names,
        orderings=p["orderings"],
        seed=p["seed"],
        lam=p["lam"],
        feature_dims=p["feature_dims"],
        embedder=p["embedder"],
        progress=False,
    )
    boot = item_bootstrap(
        m,
        names,
        n_boot=p["n_boot"],
        orderings=p["boot_orderings"],
        seed=p["seed"],
        lam=p["lam"],
        feature_dims=p["feature_dims"],
        embedder=p["embedder"],
        base=res,
        progress=False,
    )
    return p, m, res, res.summary(), boot.summary()


def test_demo_reward_equals_quality_at_lambda_zero_in_every_table(demo):
    p, m, res, summary, boot = demo
    assert p["lam"] == 0.0
    np.testing.assert_allclose(summary["mean_reward"], summary["mean_quality"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(boot["mean_reward"], boot["mean_quality"], rtol=0, atol=1e-12)
    for tr in res.traces.values():  # step by step, not only on average
        np.testing.assert_allclose(tr.reward, tr.quality, rtol=0, atol=1e-12)


def test_demo_bootstrap_point_values_are_the_replays(demo):
    _, m, _, summary, boot = demo
    s, b = summary.set_index("algorithm"), boot.set_index("algorithm")
    assert list(b.index) == list(s.index)
    np.testing.assert_allclose(b["mean_quality"], s["mean_quality"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b["mean_reward"], s["mean_reward"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b["mean_cost"] * m.n_items, s["total_cost"], rtol=1e-12)


def test_demo_cost_saving_is_computed_from_total_costs(demo):
    _, _, res, summary, boot = demo
    s = summary.set_index("algorithm")
    ref = s.loc["always_best", "total_cost"]
    np.testing.assert_allclose(s["cost_savings_vs_always_best"], 1 - s["total_cost"] / ref, rtol=0, atol=1e-12)
    # negative exactly when the router costs more in total
    assert ((s["cost_savings_vs_always_best"] < 0) == (s["total_cost"] > ref)).all()
    assert s.loc["always_best", "cost_savings_vs_always_best"] == 0.0
    # the interval is the spread over orderings of the same quantity, around the point value
    assert (s["cost_savings_vs_always_best_ci_low"] <= s["cost_savings_vs_always_best"] + 1e-12).all()
    assert (s["cost_savings_vs_always_best"] <= s["cost_savings_vs_always_best_ci_high"] + 1e-12).all()
    assert routing.headline_checks(summary, boot, lam=0.0) == []


def test_cost_saving_is_not_a_mean_of_per_ordering_ratios():
    # always_best's calibration (first 10% of each ordering) picks the cheap arm in some
    # orderings and the dear one in others, so its own total cost changes with the ordering:
    # a mean of per-ordering ratios said random saved a negative share while costing less
    rng = np.random.default_rng(5)
    t = 30
    quality = np.c_[rng.random(t) < 0.5, rng.random(t) < 0.55].astype(float)
    cost = np.c_[np.full(t, 1.0), np.full(t, 20.0)]
    m = OutcomeMatrix(
        item_ids=[f"i{i}" for i in range(t)],
        arms=["cheap", "dear"],
        quality=quality,
        cost=cost,
        latency=cost,
        tokens=cost,
        error=np.zeros((t, 2), bool),
    )
    res = replay(m, ["random", "always_best"], orderings=200, seed=0, progress=False)
    s = res.summary().set_index("algorithm")
    rand, best = res.traces["random"].cost.sum(1), res.traces["always_best"].cost.sum(1)
    old = float(np.mean(1 - rand / best))  # the old column
    assert rand.mean() < best.mean() and old < 0  # the contradiction the issue reported
    assert s.loc["random", "cost_savings_vs_always_best"] == pytest.approx(1 - rand.mean() / best.mean())
    assert s.loc["random", "cost_savings_vs_always_best"] > 0


def test_every_column_shown_by_the_notebook_is_defined_once(demo):
    _, m, res, summary, boot = demo
    text = routing.describe_columns(summary.columns.drop("seconds"))
    # one line per base column; the interval columns share their column's line
    assert text.count("- `mean_quality`:") == 1 and "`mean_quality_ci_low`" not in text
    assert "negative only when it costs more in total" in text
    assert "equal to mean_quality at λ = 0" in text
    assert "item-bootstrap interval" in routing.describe_columns(boot.columns, table="bootstrap")
    for table in (m.arm_table(0.0), res.compare(), res.points()):
        routing.describe_columns(
            table.columns.drop(["statistic", "test", "correction", "varies_over"], errors="ignore")
        )
    with pytest.raises(KeyError, match="no definition"):
        routing.describe_columns(["made_up_column"])


def test_headline_checks_name_what_disagrees(demo):
    _, _, _, summary, boot = demo
    bad = summary.copy()
    bad.loc[bad.algorithm == "random", "cost_savings_vs_always_best"] = -0.83
    broken_boot = boot.copy()
    broken_boot.loc[broken_boot.algorithm == "always_best", "mean_reward"] += 0.01
    problems = routing.headline_checks(bad, broken_boot, lam=0.0)
    assert any(p.startswith("random: cost saving -0.83") for p in problems)
    assert any("always_best: mean reward" in p and "(bootstrap)" in p for p in problems)


def test_item_bootstrap_refuses_a_base_replay_of_another_design(demo):
    from evalcore.errors import EvalcoreError

    _, m, res, _, _ = demo
    with pytest.raises(EvalcoreError, match="λ = 0, not 0.5"):
        item_bootstrap(m, ["random"], n_boot=2, orderings=2, lam=0.5, base=res, progress=False)
    other = replay(m, ["random"], orderings=3, progress=False)
    with pytest.raises(EvalcoreError, match="lacks ucb1"):
        item_bootstrap(m, ["random", "ucb1"], n_boot=2, orderings=2, base=other, progress=False)


def test_the_suite_index_defines_every_routing_column_beside_its_table():
    import pandas as pd

    from evalcore.reporting import _headline

    frame = pd.DataFrame(
        [
            {
                "run": "routing",
                "router": "ucb1",
                "mean_quality": 0.2,
                "mean_quality_ci_low": 0.1,
                "mean_quality_ci_high": 0.3,
                "mean_reward": 0.2,
                "mean_reward_ci_low": 0.0,
                "mean_reward_ci_high": 0.4,
                "total_cost": 10.0,
                "regret_vs_oracle": 1.0,
                "regret_vs_best_fixed": 0.5,
                "convergence_point": 3.0,
                "cost_savings_vs_always_best": 0.1,
                "aiq": 0.2,
            }
        ]
    )
    shown = _headline._fmt_routing(frame)
    note = _headline._NOTES["routing"]
    for label in shown.columns.drop("router"):
        assert note.count(f"{label}:") == 1, label  # defined once, in the note beside the table
    assert "negative only when the router costs more" in note and "= mean quality at lambda 0" in note
