"""`evalcore compare ROUTE_A ROUTE_B` (issue 31, item 8): routing results are paired over the
same orderings of the same items, compared router by router, and the output says so."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore.cli import main
from evalcore.routing import simulate_outcomes

ROUTERS = "random,always_best,always_cheapest,oracle,ucb1"


def _route(tmp_path, name, *extra):
    out = tmp_path / name
    assert (
        main(
            [
                "route",
                "--outcomes",
                str(tmp_path / "o.csv"),
                "--output",
                str(out),
                "--algorithms",
                ROUTERS,
                "--orderings",
                "12",
                "--bootstrap",
                "0",
                "--embedder",
                "tfidf",
                *extra,
            ]
        )
        == 0
    )
    return out


@pytest.fixture()
def results(tmp_path):
    simulate_outcomes(40, seed=1).save(tmp_path / "o.csv")
    return tmp_path, _route(tmp_path, "lam0"), _route(tmp_path, "lam1", "--lambda", "1")


def test_compare_two_routing_results_router_by_router(results, capsys):
    tmp_path, a, b = results
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "paired over the same 12 orderings of the same 40 items" in out
    assert "mean reward left out: the results use different λ" in out
    assert "lam0: λ = 0" in out and "lam1: λ = 1" in out
    table = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    assert set(table["algorithm"]) == set(ROUTERS.split(","))
    assert set(table["metric"]) == {"mean_quality", "total_cost"}
    # the values are the per-ordering values of each folder, paired by ordering
    pa, pb = pd.read_csv(a / "per_ordering.csv"), pd.read_csv(b / "per_ordering.csv")
    x = pa[pa.algorithm == "ucb1"].sort_values("ordering")["total_cost"].to_numpy()
    y = pb[pb.algorithm == "ucb1"].sort_values("ordering")["total_cost"].to_numpy()
    row = table[(table.algorithm == "ucb1") & (table.metric == "total_cost")].iloc[0]
    assert row["difference"] == pytest.approx((x - y).mean())
    assert row["p_value"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
    assert row["n_orderings"] == 12
    # always_cheapest does not depend on λ: nothing to test
    same = table[(table.algorithm == "always_cheapest") & (table.metric == "total_cost")].iloc[0]
    assert same["difference"] == 0 and np.isnan(same["p_value"])
    assert "nothing to test" in same["note"]
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert doc["kind"] == "routing" and doc["paired_over"] == "the same orderings of the same items"
    # same λ: mean reward is compared too
    assert main(["compare", str(a), str(a), "-o", str(tmp_path / "cmp2")]) == 0
    again = pd.read_csv(tmp_path / "cmp2" / "compare.csv")
    assert "mean_reward" in set(again["metric"]) and (again["difference"] == 0).all()


def test_routing_results_over_other_orderings_or_items_are_refused(results, capsys):
    tmp_path, a, _ = results
    c = _route(tmp_path, "seed7", "--seed", "7")
    capsys.readouterr()
    assert main(["compare", str(a), str(c), "-o", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert "different orderings" in err and "not paired" in err
    simulate_outcomes(30, seed=1).save(tmp_path / "o.csv")
    d = _route(tmp_path, "other_items")
    capsys.readouterr()
    assert main(["compare", str(a), str(d), "-o", str(tmp_path / "cmp")]) == 2
    assert "different items" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


def test_a_routing_result_with_a_run_or_an_old_folder_is_refused(results, capsys):
    tmp_path, a, b = results
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    capsys.readouterr()
    assert main(["compare", str(a), str(run), "-o", str(tmp_path / "cmp")]) == 2
    assert "not a routing result" in capsys.readouterr().err
    old = tmp_path / "old"
    shutil.copytree(b, old)
    (old / "routing.json").unlink()
    (old / "per_ordering.csv").unlink()
    assert main(["compare", str(a), str(old), "-o", str(tmp_path / "cmp")]) == 2
    assert "cannot be paired" in capsys.readouterr().err
