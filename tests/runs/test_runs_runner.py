"""run_benchmark with an in-memory counting model: records, cache, resume, results, rescore."""

from __future__ import annotations

import json

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from evalcore.benchmarks import load
from evalcore.errors import EvalcoreError
from evalcore.models import RecordedModel
from evalcore.runs import load_run, rescore, run_benchmark


def _run(model, tmp_path, **kw):
    kw.setdefault("limit", 10)
    kw.setdefault("progress", False)
    kw.setdefault("run_id", "r1")
    kw.setdefault("source", "sample")
    kw.setdefault("cache", tmp_path / "c.sqlite")
    return run_benchmark("gsm8k", model, run_dir=tmp_path / "runs", **kw)


def test_run_records_every_sample_and_summarizes(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, truth = make_gsm8k_answerer(lambda i: i % 3 != 0)
    model = counting_model(answer)
    path = _run(model, tmp_path, epochs=2)
    assert path == tmp_path / "runs" / "r1"
    assert sorted(p.name for p in path.iterdir()) == [".lock", "config.json", "results.json", "samples.jsonl"]
    run = load_run(path)
    assert model.calls == 20 and len(run.samples) == 20
    s = run.samples[0]
    for key in (
        "run_id",
        "item_id",
        "epoch",
        "dataset",
        "request",
        "request_hash",
        "completion",
        "scores",
        "reference",
        "metadata",
        "error",
    ):
        assert key in s
    assert set(s["request"]) >= {"messages", "params"}
    assert {"score", "strict", "flexible", "extracted_flexible", "method_flexible"} <= set(s["scores"])
    # epochs sample with seed + epoch
    seeds = {(r["epoch"], r["request"]["params"]["seed"]) for r in run.samples}
    assert seeds == {(0, 0), (1, 1)}
    # accuracy equals the truth table, and the frame agrees
    df = run.frame()
    expected = np.mean([truth[i] for i in df["item_id"]])
    res = run.results
    assert res["accuracy_flexible"]["mean"] == pytest.approx(expected)
    assert df["score"].mean() == pytest.approx(expected)
    assert res["n_samples"] == 20 and res["errors"] == 0 and res["n_items"] == 10
    assert res["tokens"]["completion"] == int(df["completion_tokens"].sum())
    assert res["cost_usd"] == pytest.approx(0.02)
    assert res["latency_p50_s"] == pytest.approx(0.01) and res["qps"] > 0
    assert res["parse_failure_rate"] == 0.0 and res["complete"] is True
    # two epochs -> interval clustered by item
    assert res["accuracy_flexible"]["method"] == "wilson_clustered"
    cfg = run.config
    assert cfg["dataset_fingerprint"] and cfg["versions"]["openai"] and cfg["epochs"] == 2
    assert cfg["prompt"]["name"] == "gsm8k-steps-v1" and len(cfg["item_ids"]) == 10
    assert "git_revision" in cfg and cfg["params"]["max_tokens"] == 512


def test_wilson_interval_for_one_epoch_matches_statsmodels(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, truth = make_gsm8k_answerer(lambda i: i % 4 != 1)
    path = _run(counting_model(answer), tmp_path, limit=12)
    res = load_run(path).results
    k = sum(truth[i] for i in load_run(path).frame()["item_id"])
    low, high = proportion_confint(k, 12, alpha=0.05, method="wilson")
    acc = res["accuracy_strict"]
    assert acc["mean"] == pytest.approx(k / 12)
    assert (acc["ci_low"], acc["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_interval_over_epochs_is_wilson_on_the_effective_sample_size() -> None:
    from evalcore.runs._results import clustered_wilson

    def check(values, clusters, n_eff):
        res = clustered_wilson(values, clusters)
        p = float(np.mean(values))
        low, high = proportion_confint(p * n_eff, n_eff, alpha=0.05, method="wilson")
        assert res["n_eff"] == pytest.approx(n_eff)
        assert (res["ci_low"], res["ci_high"]) == (pytest.approx(low), pytest.approx(high))
        assert 0.0 <= res["ci_low"] <= p <= res["ci_high"] <= 1.0
        return res

    items = [str(i // 2) for i in range(20)]  # 10 items x 2 epochs
    # every sample right: not a zero-width interval, but Wilson over the 10 items
    assert check([1.0] * 20, items, 10.0)["ci_high"] == 1.0
    assert check([0.0] * 20, items, 10.0)["ci_low"] == 0.0
    # epochs agree within each item: 10 independent observations, not 20
    check([1.0, 1.0, 0.0, 0.0] * 5, items, 10.0)
    # epochs independent of the item (each item 1 right, 1 wrong): all 20 count
    check([1.0, 0.0] * 10, items, 20.0)
    # in between: n_eff = p(1-p)/SE_c^2 with SE_c = sqrt(sum_c (sum_i (x_i - p))^2) / n
    vals = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0] * 2
    x = np.array(vals)
    sums = np.array([x[2 * c : 2 * c + 2].sum() - 2 * x.mean() for c in range(10)])
    se = np.sqrt((sums**2).sum()) / 20
    res = check(vals, items, min(20.0, x.mean() * (1 - x.mean()) / se**2))
    assert res["se"] == pytest.approx(se)
    # the normal interval p +- 1.96 SE_c would leave [0, 1] here; this one cannot
    near = [1.0] * 19 + [0.0]
    res = check(near, items, 20.0)
    assert 0.95 + 1.96 * res["se"] > 1.0 and res["ci_high"] < 1.0


def test_second_identical_run_calls_no_model(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: True)
    first = counting_model(answer)
    _run(first, tmp_path, run_id="a")
    second = counting_model(answer)
    path = _run(second, tmp_path, run_id="b")
    assert first.calls == 10 and second.calls == 0
    run = load_run(path)
    assert run.results["cached"] == 10 and run.results["accuracy_flexible"]["mean"] == 1.0
    # the responses cost what they cost when first made; this run itself paid nothing
    first_run = load_run(tmp_path / "runs" / "a").results
    assert run.results["cost_usd"] == pytest.approx(first_run["cost_usd"]) == pytest.approx(0.01)
    assert run.results["fresh"] == {"calls": 0, "cost_usd": 0.0, "retries": 0}
    assert first_run["fresh"]["calls"] == 10 and first_run["fresh"]["cost_usd"] == pytest.approx(0.01)
    # cache hits are not queries: no call was made, so no queries-per-second figure
    assert run.results["qps"] is None and load_run(tmp_path / "runs" / "a").results["qps"] > 0
    # a different generation parameter is a different request: calls again
    third = counting_model(answer)
    _run(third, tmp_path, run_id="c", params={"temperature": 0.5})
    assert third.calls == 10


def test_resume_skips_recorded_and_drops_torn_line(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: True)
    path = _run(counting_model(answer), tmp_path, cache=False)
    samples = path / "samples.jsonl"
    lines = samples.read_bytes().splitlines(keepends=True)
    # keep 6 whole lines and half of the 7th (as a kill -9 mid-write would leave)
    samples.write_bytes(b"".join(lines[:6]) + lines[6][: len(lines[6]) // 2])
    model = counting_model(answer)
    _run(model, tmp_path, cache=False)
    assert model.calls == 4
    qps = load_run(path).results["qps"]
    idle = counting_model(answer)
    _run(idle, tmp_path, cache=False)  # complete run: nothing to ask, timing figures kept
    assert idle.calls == 0 and load_run(path).results["qps"] == qps > 0
    text = samples.read_text()
    recs = [json.loads(x) for x in text.splitlines()]
    keys = [(r["item_id"], r["epoch"]) for r in recs]
    assert len(recs) == 10 and len(set(keys)) == 10
    assert load_run(path).results["n_samples"] == 10


def test_a_run_being_written_by_another_process_is_refused(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    import fcntl

    answer, _ = make_gsm8k_answerer(lambda i: True)
    path = _run(counting_model(answer), tmp_path)
    with open(path / ".lock", "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(EvalcoreError, match="another process"):
            _run(counting_model(answer), tmp_path)
    model = counting_model(answer)
    _run(model, tmp_path)  # released: resumes (nothing left to ask)
    assert model.calls == 0


def test_resume_with_other_config_is_refused(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: True)
    _run(counting_model(answer), tmp_path)
    with pytest.raises(EvalcoreError) as info:
        _run(counting_model(answer), tmp_path, params={"max_tokens": 7})
    assert info.value.field == "params"
    with pytest.raises(EvalcoreError) as info:
        _run(counting_model(answer), tmp_path, limit=5)
    assert info.value.field == "dataset_fingerprint"


def test_failed_calls_are_errors_not_wrong_answers_and_are_retried_on_resume(
    tmp_path, counting_model, make_gsm8k_answerer
) -> None:
    answer, truth = make_gsm8k_answerer(lambda i: True)
    items = load("gsm8k", source="sample", limit=10, seed=0)
    bad = {items[1].fields["question"], items[4].fields["question"]}
    flaky = counting_model(answer, fail=lambda q: any(b in q for b in bad))
    path = _run(flaky, tmp_path)
    res = load_run(path).results
    assert res["errors"] == 2 and res["n_scored"] == 8 and res["error_types"] == {"HTTP500": 2}
    assert res["accuracy_flexible"]["mean"] == 1.0  # errors are not counted as wrong
    assert res["retries"] == 6
    errs = [s for s in load_run(path).samples if s["error"]]
    assert all(s["scores"]["score"] is None for s in errs)
    healed = counting_model(answer)
    _run(healed, tmp_path)
    assert healed.calls == 2  # only the failed samples are asked again
    run = load_run(path)
    assert run.results["errors"] == 0 and len(run.samples) == 10
    # appended while running (12 lines), then compacted: one line per item x epoch, the latest
    lines = [json.loads(x) for x in path.joinpath("samples.jsonl").read_text().splitlines()]
    assert len(lines) == 10 and len({(r["item_id"], r["epoch"]) for r in lines}) == 10
    assert not any(r["error"] for r in lines)


def test_rescore_recomputes_without_a_model(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: i % 2 == 0)
    path = _run(counting_model(answer), tmp_path)
    before = load_run(path)
    # tamper with the recorded scores: rescore must restore them from the completions
    lines = [json.loads(x) for x in (path / "samples.jsonl").read_text().splitlines()]
    for r in lines:
        r["scores"] = {"score": 0.0, "strict": 0.0, "flexible": 0.0}
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    res = rescore(path)
    after = load_run(path)
    assert res["accuracy_flexible"]["mean"] == before.results["accuracy_flexible"]["mean"]
    assert [s["scores"] for s in after.samples] == [s["scores"] for s in before.samples]
    assert res["rescored"] is True and res["qps"] == before.results["qps"]


def test_rescore_refuses_a_run_that_another_process_is_writing(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    import fcntl

    answer, _ = make_gsm8k_answerer(lambda i: True)
    path = _run(counting_model(answer), tmp_path)
    original = (path / "samples.jsonl").read_bytes()
    with open(path / ".lock", "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(EvalcoreError, match="another process"):
            rescore(path)
    assert (path / "samples.jsonl").read_bytes() == original  # untouched
    assert rescore(path)["accuracy_flexible"]["mean"] == 1.0  # lock released: it works
    with pytest.raises(EvalcoreError, match="not a run directory"):
        rescore(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


def test_replay_model_answers_from_the_recording(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: i < 5)
    path = _run(counting_model(answer), tmp_path, epochs=2)
    replay = RecordedModel(path)
    assert len(replay) == 20 and replay.recorded_model == "counting:test"
    p2 = run_benchmark(
        "gsm8k",
        f"replay:{path}",
        limit=10,
        epochs=2,
        progress=False,
        source="sample",
        run_dir=tmp_path / "runs",
        run_id="replayed",
    )
    a, b = load_run(path), load_run(p2)
    assert b.config["cache"] is None
    assert [s["completion"]["text"] for s in a.samples] == [s["completion"]["text"] for s in b.samples]
    assert a.results["accuracy_flexible"]["mean"] == b.results["accuracy_flexible"]["mean"]
    miss = replay.complete(
        [{"role": "user", "content": "never asked"}], __import__("evalcore").models.GenerationParams()
    )
    assert not miss.ok and miss.error.type == "ReplayMiss"


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"dataset": "squad"}, "dataset"),
        ({"model": "nonsense"}, "model"),
        ({"params": {"temprature": 0.1}}, "temprature"),
        ({"params": {"max_tokens": 0}}, "max_tokens"),
        ({"epochs": 0}, "epochs"),
        ({"limit": -2}, "limit"),
        ({"choice_mode": "likelihood"}, "choice_mode"),
        ({"choice_mode": "loglik"}, "choice_mode"),
        ({"scorer": "judge"}, "scorer"),
        ({"run_id": "../escape"}, "run_id"),
        ({"prompt": "/nonexistent/prompt.yaml"}, "prompt"),
        ({"params": {"temperature": "hot"}}, "temperature"),
        ({"params": {"temperature": float("nan")}}, "temperature"),
        ({"params": {"top_p": None}}, "top_p"),
        ({"params": {"max_tokens": 1.5}}, "max_tokens"),
        ({"params": {"max_tokens": True}}, "max_tokens"),
        ({"params": {"seed": "abc"}}, "seed"),
        ({"params": {"stop": 5}}, "stop"),
        ({"params": {"stop": ["ok", 3]}}, "stop"),
        ({"params": {"logprobs": 2}}, "logprobs"),
    ],
)
def test_bad_input_leaves_no_run_directory(tmp_path, kwargs, field) -> None:
    args = {"dataset": "gsm8k", "model": "openai-compatible:x@http://127.0.0.1:9/v1"}
    args.update(kwargs)
    with pytest.raises(EvalcoreError) as info:
        run_benchmark(
            args.pop("dataset"),
            args.pop("model"),
            run_dir=tmp_path / "runs",
            progress=False,
            source="sample",
            check_endpoint=False,
            **args,
        )
    assert info.value.field == field
    assert not (tmp_path / "runs").exists()


def test_judge_object_is_refused_as_scorer(tmp_path, counting_model) -> None:
    from evalcore.evaluators.judge import LLMJudge

    judge = LLMJudge(counting_model(lambda q: "{}"))
    with pytest.raises(EvalcoreError, match="LLM judge"):
        run_benchmark("gsm8k", counting_model(lambda q: "x"), scorer=judge, run_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_mmlu_generate_and_likelihood_modes(tmp_path, counting_model) -> None:
    items = load("mmlu", source="sample", limit=8, seed=0)
    ref = {it.fields["question"]: it.reference for it in items}

    class LetterModel(counting_model):
        def letter_logprobs(self, messages, letters=("A", "B", "C", "D")):
            self.calls += 1
            q = messages[-1]["content"]
            right = next(r for k, r in ref.items() if k in q)
            return {L: (-0.1 if L == right else -3.0 - i) for i, L in enumerate(letters)}

        def chat_prompt(self, messages):
            return messages[-1]["content"]

        def count_tokens(self, text):
            return len(text.split())

    def answer(q: str) -> str:
        return "The answer is (" + next(r for k, r in ref.items() if k in q) + ")."

    gen = run_benchmark(
        "mmlu",
        counting_model(answer),
        limit=8,
        source="sample",
        progress=False,
        run_dir=tmp_path / "runs",
        run_id="gen",
        cache=False,
    )
    lik_model = LetterModel(lambda q: "unused")
    lik = run_benchmark(
        "mmlu",
        lik_model,
        limit=8,
        source="sample",
        progress=False,
        run_dir=tmp_path / "runs",
        run_id="lik",
        choice_mode="likelihood",
        cache=False,
    )
    g, l_ = load_run(gen), load_run(lik)
    assert g.results["accuracy_flexible"]["mean"] == 1.0 == l_.results["accuracy_flexible"]["mean"]
    assert l_.config["choice_mode"] == "likelihood" and g.config["choice_mode"] == "generate"
    assert "mmlu_mode" not in l_.config
    s = l_.samples[0]
    assert s["request"]["mode"] == "likelihood" and set(s["completion"]["logprobs"][0]["top"]) == set("ABCD")
    assert s["completion"]["usage"]["prompt_tokens"] > 0
    assert "subject" in l_.frame().columns and l_.results["by_subject"]
    prompt = g.samples[0]["request"]["messages"][-1]["content"]
    assert all(f"({L})" in prompt for L in "ABCD") and "letter" in prompt
    calls = lik_model.calls
    rep = run_benchmark(
        "mmlu",
        f"replay:{lik}",
        limit=8,
        source="sample",
        progress=False,
        run_dir=tmp_path / "runs",
        run_id="rep",
        choice_mode="likelihood",
    )
    assert lik_model.calls == calls
    assert [s["completion"] for s in load_run(rep).samples] == [s["completion"] for s in l_.samples]
    with pytest.raises(EvalcoreError, match="letter log-probabilities"):
        run_benchmark(
            "mmlu", counting_model(answer), choice_mode="likelihood", run_dir=tmp_path / "runs2", source="sample"
        )
    assert not (tmp_path / "runs2").exists()


def test_few_shot_examples_exclude_the_item(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: True)
    path = _run(counting_model(answer), tmp_path, few_shot=3, limit=45)
    run = load_run(path)
    assert run.config["few_shot"] == 3
    for s in run.samples:
        msgs = s["request"]["messages"]
        assert len(msgs) == 1 + 2 * 3 + 1  # system, 3 example pairs, the question
        assert s["item_id"] not in s["few_shot_ids"] and len(s["few_shot_ids"]) == 3
        assert msgs[2]["role"] == "assistant" and "####" in msgs[2]["content"]
        assert "<<" not in msgs[2]["content"]  # calculator annotations stripped


def test_progress_bar_shows_running_accuracy_cost_and_errors(
    tmp_path, counting_model, make_gsm8k_answerer, monkeypatch
) -> None:
    import tqdm.auto

    bars = []

    class Recorder:
        def __init__(self, *args, **kwargs) -> None:
            self.kwargs, self.n, self.postfixes = kwargs, 0, []
            self.disable = kwargs.get("disable")
            bars.append(self)

        def update(self, n: int = 1) -> None:
            self.n += n

        def set_postfix(self, **kw) -> None:
            self.postfixes.append(kw)

        def close(self) -> None:
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorder)
    monkeypatch.setenv("EVALCORE_PROGRESS", "1")  # as on a terminal (pytest's stderr is not one)
    answer, truth = make_gsm8k_answerer(lambda i: i % 3 != 0)
    items = load("gsm8k", source="sample", limit=12, seed=0)
    failing = {it.fields["question"] for it in items[:2]}
    model = counting_model(answer, fail=lambda q: any(f in q for f in failing))
    path = _run(model, tmp_path, limit=12, progress=True)
    (bar,) = bars
    assert bar.n == 12 and bar.kwargs["total"] == 12 and len(bar.postfixes) == 12
    assert bar.kwargs["disable"] is False  # shown: a terminal or JupyterLab (evalcore._progress decides)
    assert bar.kwargs["desc"] == "gsm8k (sample) counting:test"  # says which data it asks
    last = bar.postfixes[-1]
    right = [truth[it.id] for it in items[2:]]
    assert last["acc"] == f"{np.mean(right):.3f}"  # errors are left out of the running accuracy
    assert last["cost"] == f"${0.001 * 10:.4f}" and last["errors"] == 2
    res = load_run(path).results
    assert res["accuracy_flexible"]["mean"] == pytest.approx(np.mean(right)) and res["errors"] == 2
    # running values: after the k-th sample the bar shows the mean of the first k scored ones
    accs = [float(p["acc"]) for p in bar.postfixes]
    assert all(0.0 <= a <= 1.0 for a in accs) and len(set(accs)) > 1
    # progress=False hides it
    bars.clear()
    _run(counting_model(answer), tmp_path, limit=3, run_id="quiet")
    assert bars[0].kwargs["disable"] is True


def test_runs_without_a_run_id_never_share_a_directory(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    # three runs within one second of each other: the timestamp id gets a -N suffix
    answer, _ = make_gsm8k_answerer(lambda i: True)
    paths = [
        run_benchmark(
            "gsm8k",
            counting_model(answer),
            limit=2,
            progress=False,
            source="sample",
            run_dir=tmp_path / "runs",
            cache=False,
            params={"temperature": 0.1 * k},
        )
        for k in range(3)
    ]
    assert len(set(paths)) == 3
    first = paths[0].name
    assert all(p.name in (first, f"{first}-2", f"{first}-3") or p.name.startswith("gsm8k-") for p in paths)
    for k, p in enumerate(paths):  # each holds its own run, none resumed another
        run = load_run(p)
        assert run.config["params"]["temperature"] == pytest.approx(0.1 * k)
        assert len(run.samples) == 2 and "resumed_utc" not in run.config


def test_few_shot_pool_is_recorded_and_an_older_test_split_run_is_not_resumed(
    tmp_path, counting_model, make_gsm8k_answerer
) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: True)
    path = _run(counting_model(answer), tmp_path, limit=3, few_shot=2)
    cfg = json.loads((path / "config.json").read_text())
    pool = cfg["few_shot_pool"]
    assert pool["split"] == ["train"] and pool["n"] == 8 and len(pool["fingerprint"]) == 64
    # every prompt's examples come from that split, none is a test item
    test_ids = {it.id for it in load("gsm8k", split="test", source="sample")}
    for s in json.loads("[" + ",".join((path / "samples.jsonl").read_text().splitlines()) + "]"):
        shots = [m["content"] for m in s["request"]["messages"] if m["role"] == "assistant"]
        assert len(shots) == 2
    from evalcore.benchmarks import few_shot_pool

    assert not {ex.id for ex in few_shot_pool("gsm8k")} & test_ids
    # a run recorded before the pool was recorded took its examples from the test split
    del cfg["few_shot_pool"]
    (path / "config.json").write_text(json.dumps(cfg))
    lines = (path / "samples.jsonl").read_text().splitlines()
    (path / "samples.jsonl").write_text(lines[0] + "\n")
    with pytest.raises(EvalcoreError) as err:
        _run(counting_model(answer), tmp_path, limit=3, few_shot=2)
    assert err.value.field == "few_shot_pool" and "test split" in str(err.value)
    assert (path / "samples.jsonl").read_text() == lines[0] + "\n"  # nothing added
    # without few-shot examples the pool is not recorded (and older runs resume as before)
    p0 = _run(counting_model(answer), tmp_path, limit=3, run_id="r0")
    assert json.loads((p0 / "config.json").read_text())["few_shot_pool"] is None
