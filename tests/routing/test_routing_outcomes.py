"""Outcome matrices: external tables, validation, building from run directories, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.routing import (
    OutcomeMatrix,
    load_outcomes,
    majority_vote,
    outcomes_from_runs,
    simulate_outcomes,
)


def _table() -> pd.DataFrame:
    rows = []
    for i, q in enumerate(["what is 2+2?", "name a prime", "capital of France"]):
        for arm, qual, cost in (("small", i % 2, 0.1), ("big", 1, 1.0)):
            rows.append({"item_id": f"q{i}", "arm": arm, "quality": qual, "cost": cost, "latency": 0.2, "query": q})
    return pd.DataFrame(rows)


def test_csv_and_parquet_roundtrip(tmp_path):
    df = _table()
    df.to_csv(tmp_path / "o.csv", index=False)
    m = load_outcomes(tmp_path / "o.csv")
    assert m.arms == ["small", "big"] and m.item_ids == ["q0", "q1", "q2"]
    np.testing.assert_allclose(m.quality[:, 0], [0, 1, 0])
    np.testing.assert_allclose(m.cost[:, 1], 1.0)
    assert m.queries[2] == "capital of France"
    m.save(tmp_path / "o.parquet")
    p = load_outcomes(tmp_path / "o.parquet")
    np.testing.assert_allclose(p.quality, m.quality)
    assert p.queries == m.queries and p.arms == m.arms
    sim = simulate_outcomes(20, seed=0, error_rate=0.2)
    sim.save(tmp_path / "s.csv")
    back = load_outcomes(tmp_path / "s.csv")
    np.testing.assert_allclose(back.features, sim.features)
    assert np.array_equal(back.error, sim.error)
    assert back.feature_names == sim.feature_names


@pytest.mark.parametrize(
    "mutate, line, field",
    [
        (lambda d: d.assign(quality=d.quality.astype(object).where(d.index != 3, "abc")), 5, "quality"),
        (lambda d: d.assign(quality=d.quality.where(d.index != 2, 1.5)), 4, "quality"),
        (lambda d: d.assign(cost=d.cost.where(d.index != 4, -1.0)), 6, "cost"),
        (lambda d: d.assign(latency=d.latency.where(d.index != 1, np.nan)), 3, "latency"),
        (lambda d: pd.concat([d, d.iloc[[1]]], ignore_index=True), 8, "arm"),
        (lambda d: d.assign(error=["no", "yes", "x", "0", "1", "0"]), 4, "error"),
        (lambda d: d.assign(arm=d.arm.where(d.index != 5, "")), 7, "arm"),
    ],
)
def test_csv_validation_names_line_and_column(tmp_path, mutate, line, field):
    path = tmp_path / "bad.csv"
    mutate(_table()).to_csv(path, index=False)
    with pytest.raises(EvalcoreError) as exc:
        load_outcomes(path)
    assert exc.value.path == str(path)
    assert exc.value.line == line
    assert exc.value.field == field


def test_structural_validation(tmp_path):
    path = tmp_path / "b.csv"
    _table().drop(columns=["latency"]).to_csv(path, index=False)
    with pytest.raises(EvalcoreError, match="latency"):
        load_outcomes(path)
    _table().iloc[:-1].to_csv(path, index=False)  # q2 has no 'big' row
    with pytest.raises(EvalcoreError, match="q2.*big"):
        load_outcomes(path)
    _table().drop(columns=["query"]).to_csv(path, index=False)
    with pytest.raises(EvalcoreError, match="query"):
        load_outcomes(path)
    _table().assign(feat="x").to_csv(path, index=False)
    with pytest.raises(EvalcoreError) as exc:
        load_outcomes(path)
    assert exc.value.field == "feat" and exc.value.line == 2
    _table().drop(columns=["query"]).assign(f1=[0.1, 0.1, 0.2, 0.3, 0.5, 0.5]).to_csv(path, index=False)
    with pytest.raises(EvalcoreError, match="differs between arms") as exc:
        load_outcomes(path)
    assert exc.value.field == "f1" and exc.value.line == 5
    with pytest.raises(EvalcoreError, match="no such"):
        load_outcomes(tmp_path / "missing.csv")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(EvalcoreError, match="format"):
        load_outcomes(tmp_path / "x.json")
    pq = tmp_path / "bad.parquet"
    _table().assign(cost=[0.1, 1, -2, 1, 0.1, 1]).to_parquet(pq)
    with pytest.raises(EvalcoreError, match=r"row 3"):
        load_outcomes(pq)


def test_matrix_context_features_from_queries():
    m = OutcomeMatrix.from_frame(_table())
    x = m.context(dims=2, embedder="tfidf")
    assert x.shape == (3, 2) and np.all(np.isfinite(x))
    assert m.context(dims=2, embedder="tfidf") is x  # cached


# ------------------------------------------------------------------ from runs
def _record(
    run_id,
    item_id,
    epoch,
    dataset,
    score,
    extracted,
    reference,
    *,
    tokens=(50, 20),
    cost=0.0,
    latency=1.0,
    error=False,
    question="Q?",
):
    return {
        "run_id": run_id,
        "item_id": item_id,
        "epoch": epoch,
        "dataset": dataset,
        "request": {
            "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": question}],
            "params": {"temperature": 0.7, "seed": epoch},
        },
        "request_hash": f"h{item_id}{epoch}",
        "completion": {
            "text": "" if error else f"#### {extracted}",
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
            "cost_usd": cost,
            "latency_s": latency,
            "model": "m",
            "error": {"type": "Timeout", "message": "x"} if error else None,
            "retries": 0,
            "logprobs": None,
        },
        "scores": {}
        if error
        else {"score": score, "strict": score, "flexible": score, "extracted_flexible": extracted},
        "reference": reference,
        "metadata": {},
        "error": error,
    }


def _write_run(root: Path, name: str, records: list[dict], config: dict | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(config or {"model": "m"}))
    (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / "results.json").write_text("{}")
    return d


def test_majority_vote():
    assert majority_vote(["3", "4", "3", None, ""]) == "3"
    assert majority_vote(["4", "3", "3", "4"]) == "4"  # tie: first seen
    assert majority_vote([None, ""]) is None


def test_outcomes_from_runs(tmp_path):
    direct = _write_run(
        tmp_path,
        "gsm8k-direct",
        [
            _record("d", "g/1", 0, "gsm8k", 1.0, "3", "3", tokens=(40, 5), question="one?"),
            _record("d", "g/2", 0, "gsm8k", 0.0, "7", "8", tokens=(40, 5), question="two?"),
            _record("d", "g/3", 0, "gsm8k", 0.0, None, "1", error=True),
        ],
        {"model": "local:smollm2", "strategy": "direct"},
    )
    sc = _write_run(
        tmp_path,
        "gsm8k-sc",
        [
            # item g/1: votes 3,3,5 -> 3 == reference -> 1 although two epochs score 1
            *[_record("s", "g/1", e, "gsm8k", float(a == "3"), a, "3") for e, a in enumerate(["3", "5", "3"])],
            # item g/2: votes 8, 9, 9 -> 9 wrong
            *[_record("s", "g/2", e, "gsm8k", float(a == "8"), a, "8") for e, a in enumerate(["8", "9", "9"])],
            *[_record("s", "g/3", e, "gsm8k", 1.0, "1.0", "1") for e in range(3)],
            _record("s", "g/4", 0, "gsm8k", 1.0, "2", "2"),  # not answered by the other arm
        ],
        {"model": "local:smollm2", "strategy": "sc3"},
    )
    m = outcomes_from_runs([direct, sc])
    assert m.arms == ["local:smollm2/direct", "local:smollm2/sc3"]
    assert m.item_ids == ["g/1", "g/2", "g/3"]
    np.testing.assert_allclose(m.quality, [[1, 1], [0, 0], [0, 1]])
    assert m.error.tolist() == [[False, False], [False, False], [True, False]]
    # local model: no money cost, so cost = tokens, summed over the epochs
    np.testing.assert_allclose(m.cost[:, 0], [45, 45, 70])
    np.testing.assert_allclose(m.cost[:, 1], [210, 210, 210])
    np.testing.assert_allclose(m.latency[:, 1], 3.0)
    assert m.queries[:2] == ["one?", "two?"]
    mean = outcomes_from_runs({"d": [direct], "s": [sc]}, aggregate="mean", token_price=0.01)
    np.testing.assert_allclose(mean.quality[:, 1], [2 / 3, 1 / 3, 1])
    np.testing.assert_allclose(mean.cost[:, 1], 2.1)


def test_outcomes_from_runs_cache_and_errors(tmp_path):
    a = _write_run(tmp_path / "runs", "a", [_record("a", "i", 0, "mmlu", 1.0, "A", "A", cost=0.002)])
    b = _write_run(tmp_path / "runs", "b", [_record("b", "i", 0, "mmlu", 0.0, "B", "A", cost=0.02)])
    cache = tmp_path / "cache"
    m1 = outcomes_from_runs([tmp_path / "runs"], cache_dir=cache)
    files = list(cache.glob("outcomes-*.parquet"))
    assert len(files) == 1
    np.testing.assert_allclose(m1.cost, [[0.002, 0.02]])  # money cost used when recorded
    m2 = outcomes_from_runs([a, b], cache_dir=cache)
    assert m2.source == str(files[0])  # served from the cache
    np.testing.assert_allclose(m2.quality, m1.quality)
    # a changed run gets a new fingerprint
    with (b / "samples.jsonl").open("a") as fh:
        fh.write(json.dumps(_record("b", "j", 0, "mmlu", 1.0, "C", "C")) + "\n")
    outcomes_from_runs([a, b], cache_dir=cache)
    assert len(list(cache.glob("outcomes-*.parquet"))) == 2
    # the run store reads the samples: a torn last line (an interrupted append) is left out,
    # a corrupted line before it is an error naming its line
    with (a / "samples.jsonl").open("a") as fh:
        fh.write("{not json\n")
    np.testing.assert_allclose(outcomes_from_runs([a, b]).quality, m1.quality)
    with (a / "samples.jsonl").open("a") as fh:
        fh.write(json.dumps(_record("a", "j", 0, "mmlu", 1.0, "C", "C")) + "\n")
    with pytest.raises(EvalcoreError) as exc:
        outcomes_from_runs([a, b])
    assert exc.value.line == 2 and exc.value.path.endswith("samples.jsonl")
    with pytest.raises(EvalcoreError, match="not found: expected an outcome table"):
        outcomes_from_runs([tmp_path / "nope"])


def test_a_retried_error_is_superseded_not_another_epoch(tmp_path):
    """A resumed run appends the retry of an errored sample with the same (item, epoch): the
    retry stands, as in results.json; the error is not counted as a second epoch."""
    run = _write_run(
        tmp_path,
        "gsm8k-direct",
        [
            _record("d", "g/1", 0, "gsm8k", 0.0, None, "3", error=True, tokens=(40, 0)),
            _record("d", "g/2", 0, "gsm8k", 0.0, "7", "8", tokens=(40, 5)),
            _record("d", "g/1", 0, "gsm8k", 1.0, "3", "3", tokens=(40, 5)),  # the retry
        ],
        {"model": "local:smollm2", "strategy": "direct"},
    )
    other = _write_run(
        tmp_path,
        "gsm8k-other",
        [
            _record("o", "g/1", 0, "gsm8k", 0.0, "4", "3"),
            _record("o", "g/2", 0, "gsm8k", 1.0, "8", "8"),
        ],
        {"model": "m2", "strategy": "direct"},
    )
    m = outcomes_from_runs([run, other])
    assert m.item_ids == ["g/1", "g/2"]
    np.testing.assert_allclose(m.quality[:, 0], [1.0, 0.0])  # the retry's score, one epoch
    assert m.error[:, 0].tolist() == [False, False]
    np.testing.assert_allclose(m.cost[:, 0], [45, 45])  # the retry's tokens only


# ------------------------------------------------------------------ CLI
def test_cli_route_writes_tables(tmp_path, capsys):
    simulate_outcomes(120, seed=0).save(tmp_path / "o.csv")
    out = tmp_path / "out"
    rc = main(
        [
            "route",
            "--outcomes",
            str(tmp_path / "o.csv"),
            "--algorithms",
            "ucb1,random,oracle,linucb",
            "--orderings",
            "12",
            "--seed",
            "3",
            "--lambda",
            "0.2",
            "--output",
            str(out),
            "--sweep",
            "0,1",
            "--sweep-orderings",
            "3",
            "--curves-format",
            "parquet",
            "--bootstrap",
            "8",
            "--bootstrap-orderings",
            "2",
        ]
    )
    assert rc == 0
    s = pd.read_csv(out / "summary.csv")
    assert list(s.algorithm) == ["ucb1", "random", "oracle", "linucb"]
    for col in (
        "algorithm",
        "mean_quality",
        "total_cost",
        "regret_vs_oracle",
        "regret_vs_best_fixed",
        "convergence_point",
        "mean_quality_ci_low",
        "regret_vs_oracle_ci_high",
        "convergence_point_ci_low",
    ):
        assert col in s.columns
    assert s.set_index("algorithm").loc["oracle", "regret_vs_oracle"] == 0
    curves = pd.read_parquet(out / "curves.parquet")
    assert curves.step.max() == 120 and len(curves) == 4 * 120
    for name in (
        "selection_share.parquet",
        "points.csv",
        "comparisons.csv",
        "arms.csv",
        "sweep.csv",
        "aiq.csv",
        "bootstrap.csv",
        "bootstrap_comparisons.csv",
    ):
        assert (out / name).is_file(), name
    assert not list(out.glob(".route-*"))
    boot = pd.read_csv(out / "bootstrap.csv").set_index("algorithm")
    assert boot.loc["oracle", "mean_reward_ci_low"] <= boot.loc["oracle", "mean_reward"]
    assert len(pd.read_csv(out / "bootstrap_comparisons.csv")) == 6  # 4 routers: 6 pairs
    assert set(pd.read_csv(out / "comparisons.csv")["varies_over"]) == {"arrival order (same items)"}
    printed = capsys.readouterr().out
    assert "regret_vs_oracle" in printed and "resampled items (8 item resamples" in printed
    assert "order variability, not generalization" in printed


def test_cli_route_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    _table().assign(quality=["1", "x", "0", "1", "0", "1"]).to_csv(bad, index=False)
    out = tmp_path / "out"
    assert main(["route", "--outcomes", str(bad), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, line 3, field 'quality'" in err
    assert not out.exists()
    good = tmp_path / "good.csv"
    _table().to_csv(good, index=False)
    assert main(["route", "--outcomes", str(good), "--algorithms", "ucb1,foo", "--output", str(out)]) == 2
    assert main(["route", "--outcomes", str(good), "--orderings", "0", "--output", str(out)]) == 2
    for flag, value in (
        ("--lambda", "nan"),
        ("--lambda", "-1"),
        ("--sweep", "0,inf"),
        ("--bootstrap", "1"),
        ("--bootstrap-orderings", "0"),
    ):
        assert main(["route", "--outcomes", str(good), flag, value, "--output", str(out)]) == 2
        assert flag in capsys.readouterr().err
    assert main(["route", "--outcomes", str(tmp_path / "none"), "--output", str(out)]) == 2


def test_folder_of_runs_groups_arms_across_datasets(tmp_path):
    tpl = {"user": "Solve it.\n\nProblem: {question}\nAnswer:"}
    mc = {"user": "About {subject}.\n\n{question}\n{choices_text}\n\nReply with the letter."}
    root = tmp_path / "runs"
    for strat in ("direct", "cot"):
        _write_run(
            root,
            f"gsm8k-{strat}",
            [_record("r", "g/1", 0, "gsm8k", 1.0, "4", "4", question="Solve it.\n\nProblem: What is 2+2?\nAnswer:")],
            {"model": "m", "run_id": f"gsm8k-{strat}", "dataset": "gsm8k", "prompt": tpl},
        )
        _write_run(
            root,
            f"mmlu-{strat}",
            [
                _record(
                    "r",
                    "m/1",
                    0,
                    "mmlu",
                    0.0,
                    "B",
                    "A",
                    question="About x.\n\nWhich?\n(A) a\n(B) b\n\nReply with the letter.",
                )
            ],
            {"model": "m", "run_id": f"mmlu-{strat}", "dataset": "mmlu", "prompt": mc},
        )
    m = outcomes_from_runs([root])
    assert m.arms == ["m/cot", "m/direct"]
    assert m.item_ids == ["g/1", "m/1"]
    assert m.queries == ["What is 2+2?", "Which?\n(A) a\n(B) b"]
    dup = _write_run(
        tmp_path / "other",
        "gsm8k-cot",
        [_record("r", "g/1", 0, "gsm8k", 1.0, "4", "4")],
        {"model": "m", "run_id": "gsm8k-cot", "dataset": "gsm8k"},
    )
    with pytest.raises(EvalcoreError, match="two runs"):
        outcomes_from_runs([root, dup])


def test_route_cli_refuses_more_than_64_feature_dims(tmp_path) -> None:
    from evalcore.cli import main

    table = tmp_path / "o.csv"
    table.write_text("item_id,arm,quality,cost,latency,query\nq1,a,1,0.1,0.1,hi\nq1,b,0,0.2,0.1,hi\n")
    assert main(["route", "--outcomes", str(table), "--output", str(tmp_path / "out"), "--feature-dims", "65"]) == 2
    assert not (tmp_path / "out").exists()


def test_voted_answer_matches_the_reference_by_the_scorers_rule():
    from evalcore.benchmarks import get_benchmark
    from evalcore.datasets import numbers_equal, parse_number
    from evalcore.routing._outcomes import _answers_match

    gsm8k, mmlu = get_benchmark("gsm8k"), get_benchmark("mmlu")
    # the benchmark's own rule (Benchmark.answers_equal), the same numeric rule as exact match:
    # "$1,248" = 1248, 72 = 72.00, 1/3 != 0.333
    assert _answers_match("$1,248", "1248", gsm8k) == 1.0
    assert _answers_match("72.00", "#### 72".removeprefix("#### "), gsm8k) == 1.0
    assert _answers_match("0.333", "1/3", gsm8k) == float(numbers_equal(parse_number("0.333"), parse_number("1/3")))
    assert _answers_match("71", "72", gsm8k) == 0.0
    assert _answers_match("c", "C", mmlu) == 1.0 and _answers_match(None, "C", mmlu) == 0.0
    # no benchmark (a run of an unregistered dataset): the texts compare
    assert _answers_match(" x ", "x", None) == 1.0 and _answers_match("72.0", "72", None) == 0.0


def test_write_tables_writes_all_or_nothing(tmp_path):
    """The one writer of a study's tables (``evalcore route`` and the notebook): the names, the
    curves format, and nothing replaced when one table fails to write."""
    from evalcore.errors import EvalcoreError
    from evalcore.routing import write_tables

    frame = pd.DataFrame({"algorithm": ["ucb1"], "x": [1.0]})
    tables = dict(summary=frame, curves=frame, selection_share=frame, points=frame, comparisons=frame, arms=frame)
    out = tmp_path / "out"
    assert write_tables(out, **tables, aiq=frame) == [
        "summary.csv",
        "curves.csv",
        "selection_share.csv",
        "points.csv",
        "comparisons.csv",
        "aiq.csv",
        "arms.csv",
    ]
    pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv"), frame)
    names = write_tables(out, **tables, curves_format="parquet")
    assert "curves.parquet" in names and "selection_share.parquet" in names
    pd.testing.assert_frame_equal(pd.read_parquet(out / "curves.parquet"), frame)

    class Broken:
        def to_csv(self, *args, **kwargs):
            raise OSError("disk full")

    before = (out / "summary.csv").stat().st_mtime_ns
    with pytest.raises(OSError, match="disk full"):
        write_tables(out, **{**tables, "summary": frame.assign(x=2.0)}, sweep=Broken())
    assert (out / "summary.csv").stat().st_mtime_ns == before and not (out / "sweep.csv").exists()
    assert not list(out.glob(".route-*"))
    with pytest.raises(EvalcoreError, match="curves_format"):
        write_tables(out, **tables, curves_format="json")


def test_item_ids_are_text_so_7_and_007_are_two_items(tmp_path):
    from evalcore.routing import load_outcomes

    path = tmp_path / "ids.csv"
    path.write_text(
        "item_id,arm,quality,cost,latency,query\n7,a,1,0.1,1,q\n7,b,0,0.2,1,q\n007,a,0,0.1,1,r\n007,b,1,0.2,1,r\n"
    )
    m = load_outcomes(path)
    assert sorted(m.item_ids) == ["007", "7"] and m.n_items == 2
