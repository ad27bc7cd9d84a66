"""Published outcome matrices (RouterBench's wide table, RouteLLM's correctness CSVs) and the
no-signal warning: values read as published, errors naming the true physical line."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.routing import (
    NoSignalWarning,
    OutcomeMatrix,
    detect_format,
    load_outcomes,
    no_signal_reason,
    parse_costs,
    read_frame_pickle,
    simulate_outcomes,
)

FIX = Path(__file__).parent / "fixtures"
RB = FIX / "routerbench_wide.csv"
RL_MMLU = FIX / "routellm_mmlu"
RL_GSM8K = FIX / "routellm_gsm8k_responses.csv"
GPT4, MIXTRAL, WIZARD = "gpt-4-1106-preview", "mistralai/mixtral-8x7b-chat", "WizardLM/WizardLM-13B-V1.2"
WEAK, STRONG = "mixtral-8x7b-instruct-v0.1", "gpt-4-1106-preview"
RL_COSTS = {WEAK: 0.6, STRONG: 30.0}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _line_of(path: Path, text: str) -> int:
    """1-based physical line holding ``text`` (to check the lines the loaders report by hand)."""
    return next(i for i, line in enumerate(_lines(path), 1) if text in line)


# ------------------------------------------------------------------ RouterBench
def test_routerbench_csv_values_as_published():
    m = load_outcomes(RB)
    assert m.arms == [GPT4, MIXTRAL, WIZARD]
    assert m.item_ids[:2] == ["mmlu-astronomy.test.3", "mmlu-astronomy.test.7"] and m.n_items == 6
    np.testing.assert_allclose(m.quality[:, 0], [1, 1, 1, 1, 0, 0.9])
    np.testing.assert_allclose(m.quality[5], [0.9, 0.7, 0.5])
    np.testing.assert_allclose(m.cost[0], [0.000921, 0.0000378, 0.0000189])
    assert m.datasets == ["mmlu-astronomy"] * 2 + ["grade-school-math"] * 2 + ["mbpp", "mt-bench"]
    assert m.queries[0].startswith("Which planet has the shortest year?\nA. Mercury") and m.queries[0].endswith(
        "Answer:"
    )
    assert not m.error.any() and not m.latency.any()


@pytest.mark.parametrize("protocol", [2, 4, 5])
@pytest.mark.parametrize("as_object", [True, False])
def test_routerbench_pickle_and_parquet_equal_the_csv(tmp_path, protocol, as_object):
    df = pd.read_csv(RB)
    if as_object:  # the published pickle was written by pandas 2: object columns
        df = df.astype({c: object for c in df.columns if df[c].dtype.kind not in "fi"})
    pkl = tmp_path / "routerbench_0shot.pkl"
    pkl.write_bytes(pickle.dumps(df, protocol=protocol))
    assert detect_format(pkl) == "routerbench"
    a, b = load_outcomes(RB), load_outcomes(pkl)
    assert a.item_ids == b.item_ids and a.arms == b.arms and a.queries == b.queries and a.datasets == b.datasets
    np.testing.assert_array_equal(a.quality, b.quality)
    np.testing.assert_array_equal(a.cost, b.cost)
    df.to_parquet(tmp_path / "rb.parquet")
    c = load_outcomes(tmp_path / "rb.parquet")
    np.testing.assert_array_equal(a.quality, c.quality)
    assert detect_format(tmp_path / "rb.parquet") == "routerbench"


def test_routerbench_csv_with_index_column(tmp_path):
    path = tmp_path / "rb.csv"
    pd.read_csv(RB).to_csv(path)  # pandas' default: a leading unnamed index column
    m = load_outcomes(path)
    assert m.arms == [GPT4, MIXTRAL, WIZARD]
    np.testing.assert_array_equal(m.quality, load_outcomes(RB).quality)


def _edit(tmp_path: Path, old: str, new: str, *, after: str | None = None) -> Path:
    """The fixture with the first ``old`` (after ``after``) replaced by ``new``."""
    text = RB.read_text(encoding="utf-8")
    start = text.index(after) if after else 0
    i = text.index(old, start)
    path = tmp_path / "rb.csv"
    path.write_text(text[:i] + new + text[i + len(old) :], encoding="utf-8")
    return path


def test_routerbench_nan_quality_names_the_physical_line(tmp_path):
    # the second record starts on line 8 (the first spans lines 2-7); its quality fields sit on
    # the last line of its 6-line prompt, line 13: row + 2 would say 3
    path = _edit(tmp_path, "gpt-4-1106-preview,1.0,C,0.000804,0.0,B", "gpt-4-1106-preview,1.0,C,0.000804,nan,B")
    with pytest.raises(EvalcoreError, match="NaN") as exc:
        load_outcomes(path)
    assert exc.value.line == 13 == _line_of(path, 'Answer:",mmlu-astronomy,gpt-4-1106-preview,1.0,C,0.000804,nan')
    assert exc.value.field == MIXTRAL and exc.value.path == str(path)
    path = _edit(tmp_path, "0.000804,0.0,B", "0.000804,,B")
    with pytest.raises(EvalcoreError, match="missing quality") as exc:
        load_outcomes(path)
    assert (exc.value.line, exc.value.field) == (13, MIXTRAL)


def test_routerbench_field_after_a_multiline_response(tmp_path):
    # in grade-school-math.dev.11 the responses span lines: mixtral's cost is 3 lines below the id
    path = _edit(tmp_path, "0.000211", "-0.5")
    line = _line_of(path, "-0.5")
    with pytest.raises(EvalcoreError, match="cost -0.5 out of range") as exc:
        load_outcomes(path)
    assert exc.value.line == line and exc.value.field == f"{MIXTRAL}|total_cost"
    # record 3 starts on line 14 (after 1 + 6 + 6 lines); 2 line breaks in gpt-4's response and
    # 1 in mixtral's own come before mixtral's cost
    assert line == 17
    path = _edit(tmp_path, "0.00501", "cheap")
    with pytest.raises(EvalcoreError, match="not a number: 'cheap'") as exc:
        load_outcomes(path)
    assert exc.value.line == _line_of(path, "cheap") and exc.value.field == f"{GPT4}|total_cost"


def test_routerbench_quality_out_of_range(tmp_path):
    path = _edit(tmp_path, "mbpp,mistralai/mixtral-8x7b-chat,0.0", "mbpp,mistralai/mixtral-8x7b-chat,1.5")
    with pytest.raises(EvalcoreError, match=r"quality 1.5 out of range \[0, 1\]") as exc:
        load_outcomes(path)
    assert exc.value.line == _line_of(path, "mbpp,mistralai/mixtral-8x7b-chat,1.5") and exc.value.field == GPT4


def test_routerbench_duplicate_sample_id(tmp_path):
    path = _edit(tmp_path, "mbpp.dev.4", "grade-school-math.dev.11")
    with pytest.raises(
        EvalcoreError, match=r"duplicate sample_id 'grade-school-math.dev.11' \(first on line 14\)"
    ) as exc:
        load_outcomes(path)
    assert exc.value.line == _line_of(path, "grade-school-math.dev.11,Write") and exc.value.field == "sample_id"


def test_routerbench_missing_cost_column(tmp_path):
    df = pd.read_csv(RB).drop(columns=[f"{WIZARD}|total_cost"])
    df.to_csv(tmp_path / "rb.csv", index=False)
    with pytest.raises(EvalcoreError, match="missing cost column for model 'WizardLM/WizardLM-13B-V1.2'") as exc:
        load_outcomes(tmp_path / "rb.csv")
    assert exc.value.line == 1 and exc.value.field == f"{WIZARD}|total_cost"
    df.to_pickle(tmp_path / "rb.pkl")
    with pytest.raises(EvalcoreError, match="missing cost column") as exc:
        load_outcomes(tmp_path / "rb.pkl")
    assert exc.value.field == f"{WIZARD}|total_cost"
    pd.read_csv(RB).drop(columns=[GPT4]).to_csv(tmp_path / "rb.csv", index=False)
    with pytest.raises(EvalcoreError, match="no quality column 'gpt-4-1106-preview'"):
        load_outcomes(tmp_path / "rb.csv")


def test_routerbench_pickle_errors_name_the_row(tmp_path):
    df = pd.read_csv(RB)
    df.loc[3, MIXTRAL] = np.nan
    df.to_pickle(tmp_path / "rb.pkl")
    with pytest.raises(EvalcoreError, match="NaN") as exc:
        load_outcomes(tmp_path / "rb.pkl")
    assert exc.value.path == f"{tmp_path / 'rb.pkl'} (row 4)" and exc.value.field == MIXTRAL


def test_pickle_outside_a_data_frame_is_refused_not_run(tmp_path):
    marker = tmp_path / "ran"

    class Hostile:
        def __reduce__(self):
            return (Path.touch, (marker,))

    path = tmp_path / "routerbench_0shot.pkl"
    path.write_bytes(pickle.dumps(Hostile()))
    with pytest.raises(EvalcoreError, match=r"refers to pathlib\.") as exc:
        read_frame_pickle(path)
    assert not marker.exists() and exc.value.path == str(path)
    path.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(EvalcoreError, match="holds a list"):
        load_outcomes(path)
    path.write_bytes(b"not a pickle")
    with pytest.raises(EvalcoreError, match="cannot read the pickle"):
        load_outcomes(path)


# ------------------------------------------------------------------ RouteLLM
def test_routellm_folder_of_mmlu_domains():
    m = load_outcomes(RL_MMLU, costs=RL_COSTS)
    assert m.arms == [WEAK, STRONG]
    # ids are <file stem>:<line the row starts on>; each MMLU prompt spans 6 lines
    assert m.item_ids == [f"mmlu_abstract_algebra:{n}" for n in (2, 8, 14, 20)] + [
        f"mmlu_anatomy:{n}" for n in (2, 8, 14)
    ]
    np.testing.assert_array_equal(m.quality[:, 0], [1, 0, 1, 0, 1, 0, 1])
    np.testing.assert_array_equal(m.quality[:, 1], [1, 1, 1, 0, 1, 1, 0])
    np.testing.assert_array_equal(m.cost, np.tile([0.6, 30.0], (7, 1)))
    assert m.datasets == ["mmlu_abstract_algebra"] * 4 + ["mmlu_anatomy"] * 3
    assert m.queries[5].startswith('The "Adam\'s apple" is formed') and m.queries[5].endswith("Answer:")
    files = sorted(RL_MMLU.glob("*.csv"))
    same = load_outcomes(files, costs=RL_COSTS)
    assert same.item_ids == m.item_ids
    np.testing.assert_array_equal(same.quality, m.quality)


def test_routellm_gsm8k_with_response_columns():
    m = load_outcomes(RL_GSM8K, format="routellm", costs=RL_COSTS)
    assert m.arms == [WEAK, STRONG]  # the *_response columns are not arms
    np.testing.assert_array_equal(m.quality, [[1, 1], [0, 1], [1, 1]])
    assert m.item_ids == ["routellm_gsm8k_responses:2", "routellm_gsm8k_responses:7", "routellm_gsm8k_responses:9"]
    assert _lines(RL_GSM8K)[6].startswith('"A train travels')


def test_routellm_costs_are_required_and_checked():
    with pytest.raises(EvalcoreError, match="carry no cost") as exc:
        load_outcomes(RL_MMLU)
    assert exc.value.field == "costs" and f"{WEAK}=PRICE,{STRONG}=PRICE" in str(exc.value)
    with pytest.raises(EvalcoreError, match="no cost for model 'gpt-4-1106-preview'"):
        load_outcomes(RL_MMLU, costs={WEAK: 1.0})
    with pytest.raises(EvalcoreError, match="no model 'gpt-4'"):
        load_outcomes(RL_MMLU, costs={**RL_COSTS, "gpt-4": 1.0})
    with pytest.raises(EvalcoreError, match="own costs") as exc:
        load_outcomes(RB, costs=RL_COSTS)
    assert exc.value.field == "costs"


def test_routellm_bad_correctness_names_line_and_model(tmp_path):
    text = (RL_MMLU / "mmlu_anatomy.csv").read_text(encoding="utf-8")
    path = tmp_path / "mmlu_anatomy.csv"
    path.write_text(text.replace('Answer:",False,True', 'Answer:",False,maybe'), encoding="utf-8")
    with pytest.raises(EvalcoreError, match="not a correctness value") as exc:
        load_outcomes(path, costs=RL_COSTS)
    assert exc.value.line == 13 == _line_of(path, "maybe") and exc.value.field == STRONG
    path.write_text(text.replace('Answer:",True,False', 'Answer:",,False'), encoding="utf-8")
    with pytest.raises(EvalcoreError, match="missing correctness") as exc:
        load_outcomes(path, costs=RL_COSTS)
    assert exc.value.line == 19 and exc.value.field == WEAK


def test_routellm_files_must_name_the_same_models(tmp_path):
    df = pd.read_csv(RL_MMLU / "mmlu_anatomy.csv").rename(columns={STRONG: "gpt-4o"})
    df.to_csv(tmp_path / "mmlu_anatomy.csv", index=False)
    with pytest.raises(EvalcoreError, match="different models") as exc:
        load_outcomes([RL_MMLU / "mmlu_abstract_algebra.csv", tmp_path / "mmlu_anatomy.csv"], costs=RL_COSTS)
    assert exc.value.path == str(tmp_path / "mmlu_anatomy.csv") and exc.value.line == 1


def test_malformed_csv_and_detection(tmp_path):
    bad = tmp_path / "mmlu_x.csv"
    bad.write_text('prompt,a,b\n"What?\nA. x",True,False\n"unterminated,True,False\n', encoding="utf-8")
    with pytest.raises(EvalcoreError, match="malformed CSV") as exc:
        load_outcomes(bad, costs={"a": 1.0, "b": 2.0})
    assert exc.value.line == 4  # the record that opens the quote starts on line 4
    short = tmp_path / "short.csv"
    short.write_text('prompt,a,b\n"What?\nA. x",True\n', encoding="utf-8")
    with pytest.raises(EvalcoreError, match="expected 3 fields") as exc:
        load_outcomes(short, costs={"a": 1.0, "b": 2.0})
    assert exc.value.line == 2
    assert detect_format(RB) == "routerbench" and detect_format(RL_GSM8K) == "routellm"
    assert detect_format(RL_MMLU) == "routellm" and detect_format(FIX / "demo_outcomes.csv") == "long"
    other = tmp_path / "o.csv"
    other.write_text("x,y\n1,2\n", encoding="utf-8")
    with pytest.raises(EvalcoreError, match="cannot tell the format") as exc:
        load_outcomes(other)
    assert exc.value.line == 1
    with pytest.raises(EvalcoreError, match="unknown format"):
        load_outcomes(RB, format="wide")
    with pytest.raises(EvalcoreError, match="different formats"):
        load_outcomes([RB, RL_GSM8K], costs=RL_COSTS)


def test_parse_costs():
    assert parse_costs("gpt-4-1106-preview=30, mistralai/mixtral-8x7b-chat=0.6") == {
        "gpt-4-1106-preview": 30.0,
        "mistralai/mixtral-8x7b-chat": 0.6,
    }
    for bad in ("gpt4", "a=x", "a=-1", "a=1,a=2", " , "):
        with pytest.raises(EvalcoreError) as exc:
            parse_costs(bad)
        assert exc.value.field == "--costs"


# ------------------------------------------------------------------ long table lines
def test_long_table_errors_name_the_physical_line(tmp_path):
    rows = []
    for i in range(3):
        for arm, q in (("small", 0.0), ("big", 1.0)):
            rows.append(
                {"item_id": f"q{i}", "arm": arm, "quality": q, "cost": 1.0, "latency": 0.1, "query": f"line a\nb{i}"}
            )
    df = pd.DataFrame(rows)
    df.loc[4, "cost"] = -3.0
    path = tmp_path / "o.csv"
    df.to_csv(path, index=False)
    with pytest.raises(EvalcoreError, match="out of range") as exc:
        load_outcomes(path)
    # each record spans 2 lines (the query holds a line break): record 5 starts on line 10,
    # and its cost precedes the query, so it is on that line (row + 2 would say 6)
    assert exc.value.line == 10 == _line_of(path, "q2,small,0.0,-3.0")
    assert exc.value.field == "cost"


# ------------------------------------------------------------------ no signal
def _with_quality(quality: np.ndarray) -> OutcomeMatrix:
    t, k = quality.shape
    return OutcomeMatrix(
        item_ids=[f"i{i}" for i in range(t)],
        arms=[f"a{j}" for j in range(k)],
        quality=quality,
        cost=np.tile(np.arange(1.0, k + 1), (t, 1)),
        latency=np.zeros((t, k)),
        tokens=np.zeros((t, k)),
        error=np.zeros((t, k), dtype=bool),
    )


def test_no_signal_reason():
    assert "no arm ever scores (quality 0 on all 5 items × 3 arms)" in no_signal_reason(_with_quality(np.zeros((5, 3))))
    same = np.repeat(np.array([[1.0], [0.0], [0.5], [1.0]]), 3, axis=1)
    assert "every arm has the same quality on every item (4 items × 3 arms, mean 0.625)" in no_signal_reason(
        _with_quality(same)
    )
    assert "same quality" in no_signal_reason(_with_quality(np.ones((4, 2))))
    varied = same.copy()
    varied[2, 1] = 0.0
    assert no_signal_reason(_with_quality(varied)) is None
    # two arms of equal mean on different items: an oracle gains, so there is signal
    assert no_signal_reason(_with_quality(np.array([[1.0, 0.0], [0.0, 1.0]]))) is None
    assert no_signal_reason(simulate_outcomes(20, seed=0)) is None


def test_load_warns_on_no_signal():
    with pytest.warns(NoSignalWarning, match="no arm ever scores"):
        load_outcomes(FIX / "routerbench_no_signal.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoSignalWarning)
        load_outcomes(RB)  # has signal: no warning


# ------------------------------------------------------------------ CLI
def _route(tmp_path: Path, *outcomes: str | Path, extra: tuple[str, ...] = ()) -> int:
    return main(
        [
            "route",
            "--outcomes",
            *map(str, outcomes),
            "--output",
            str(tmp_path / "out"),
            "--algorithms",
            "random,oracle,always_cheapest,ucb1",
            "--orderings",
            "3",
            "--bootstrap",
            "0",
            "--embedder",
            "tfidf",
            *extra,
        ]
    )


def test_cli_routes_published_matrices(tmp_path, capsys):
    assert _route(tmp_path, RB) == 0
    out = capsys.readouterr()
    assert "6 items × 3 arms" in out.out and "warning" not in out.err
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    oracle = summary.set_index("algorithm").loc["oracle", "mean_quality"]
    assert oracle == pytest.approx(np.mean([1, 1, 1, 1, 1, 0.9]))
    assert _route(tmp_path, RL_MMLU, extra=("--costs", f"{WEAK}=0.6,{STRONG}=30", "--format", "routellm")) == 0
    assert "7 items × 2 arms" in capsys.readouterr().out


def test_cli_no_signal_warning_and_bad_input(tmp_path, capsys):
    assert _route(tmp_path, FIX / "routerbench_no_signal.csv") == 0
    err = capsys.readouterr().err
    assert "evalcore route: warning: no signal in" in err and "no arm ever scores" in err
    assert _route(tmp_path, RL_MMLU) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "field 'costs'" in err and "Traceback" not in err
    path = _edit(tmp_path, "0.000804,0.0,B", "0.000804,nan,B")
    assert _route(tmp_path, path) == 2
    err = capsys.readouterr().err.strip()
    reason = "quality is NaN: every model needs a value for every prompt"
    assert err == f"evalcore: error: {path}, line 13, field '{MIXTRAL}': {reason}"
