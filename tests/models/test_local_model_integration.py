"""The embedded SmolLM2 model (real weights, real llama.cpp)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from evalcore.models import GenerationParams, LocalModel, from_spec

pytestmark = pytest.mark.integration
llama_cpp = pytest.importorskip("llama_cpp")

MSG = [{"role": "user", "content": "Name three colours."}]


@pytest.fixture(scope="module")
def model() -> LocalModel:
    m = from_spec("local:smollm2")
    m.load()
    return m


def test_completion_record_tokens_cost_and_seeded_determinism(model) -> None:
    p = GenerationParams(temperature=0.8, max_tokens=24, seed=11)
    a, b = model.complete(MSG, p), model.complete(MSG, p)
    assert a.ok and a.text and a.text == b.text
    assert a.cost_usd == 0.0 and 0 < a.usage.completion_tokens <= 24
    # prompt tokens = the chat template rendered and tokenized independently
    assert a.usage.prompt_tokens == model.count_tokens(model.chat_prompt(MSG))
    assert a.model == "smollm2" and a.latency_s > 0


SAMPLED = GenerationParams(temperature=0.8, max_tokens=24, seed=11)
PROMPTS = [
    [{"role": "user", "content": text}]
    for text in ("Name three colours.", "Name three colours and a fruit.", "Say hello to the moon.")
]


def test_seeded_sampling_does_not_depend_on_what_was_asked_before(model) -> None:
    # Each prompt asked first thing on a context that was just loaded from the file.
    from evalcore.models._local import _instances

    alone = []
    for msgs in PROMPTS:
        _instances.clear()  # a brand-new llama context per prompt
        alone.append(model.complete(msgs, SAMPLED).text)
    assert len(set(alone)) == 3  # the prompts give different answers: the test can tell them apart
    # the same call repeated (llama-cpp-python would re-evaluate only the last prompt token)
    assert [model.complete(PROMPTS[0], SAMPLED).text for _ in range(3)] == [alone[0]] * 3
    # interleaved with other prompts sharing a prefix, and in reversed order
    interleaved = [
        model.complete(m, SAMPLED).text for m in (PROMPTS[1], PROMPTS[0], PROMPTS[2], PROMPTS[0], PROMPTS[1])
    ]
    assert interleaved == [alone[1], alone[0], alone[2], alone[0], alone[1]]
    assert [model.complete(m, SAMPLED).text for m in PROMPTS[::-1]] == alone[::-1]


def test_a_resumed_run_samples_what_an_uninterrupted_run_samples(tmp_path, model) -> None:
    import json

    from evalcore.runs import load_run, run_benchmark

    def run(run_id: str) -> dict[str, str]:
        path = run_benchmark(
            "gsm8k",
            model,
            limit=4,
            source="sample",
            progress=False,
            params={"temperature": 0.8, "max_tokens": 24},
            seed=3,
            run_dir=tmp_path,
            run_id=run_id,
            cache=False,
            concurrency=1,
        )
        return {s["item_id"]: s["completion"]["text"] for s in load_run(path).samples}

    whole = run("whole")
    assert len(whole) == 4
    run("cut")
    # The "crash": only the first sample reached the file; the second was in flight (asked,
    # its answer lost). Resuming asks it again on a context that still holds its prompt.
    samples = tmp_path / "cut" / "samples.jsonl"
    lines = samples.read_text().splitlines()
    samples.write_text(lines[0] + "\n")
    (tmp_path / "cut" / "results.json").unlink()
    in_flight = json.loads(lines[1])["request"]
    model.complete(
        in_flight["messages"],
        GenerationParams(
            **{k: v for k, v in in_flight["params"].items() if k in ("temperature", "max_tokens", "seed")}
        ),
    )
    resumed = run("cut")
    assert resumed == whole


def test_max_tokens_and_stop_sequences(model) -> None:
    p = GenerationParams(max_tokens=20, seed=0)
    full = model.complete(MSG, p)
    assert full.ok and full.usage.completion_tokens <= 20
    words = full.text.split()
    assert len(words) >= 3
    stop = words[2]  # a string the greedy answer is known to contain
    cut = model.complete(MSG, GenerationParams(max_tokens=20, seed=0, stop=(stop,)))
    assert cut.text == full.text[: full.text.index(stop)]
    assert cut.usage.completion_tokens < full.usage.completion_tokens


def test_concurrent_async_calls_are_serialized_and_agree(model) -> None:
    p = GenerationParams(max_tokens=12, seed=5)
    prompts = [[{"role": "user", "content": f"Say the number {i}."}] for i in range(3)]
    sequential = [model.complete(m, p).text for m in prompts]

    async def together():
        return await asyncio.gather(*(model.acomplete(m, p) for m in prompts))

    assert [c.text for c in asyncio.run(together())] == sequential


def test_letter_logprobs_match_an_independent_full_logits_pass(model) -> None:
    from scipy.special import log_softmax

    msgs = [{"role": "user", "content": "Which is a colour? (A) dog (B) red (C) car (D) run\nReply with the letter."}]
    got = model.letter_logprobs(msgs)
    assert set(got) == set("ABCD") and all(v < 0 for v in got.values())
    # independent: a separate llama with logits_all, the whole context + " X" evaluated at once
    from evalcore.models._local import _plain_weight_buffers

    with _plain_weight_buffers():  # as evalcore loads it: no AMX repacking where a VM lists AMX it lacks
        ref = llama_cpp.Llama(model_path=str(model.model_path), n_ctx=2048, logits_all=True, verbose=False)
    context = model.chat_prompt(msgs) + "Answer:"
    for letter, lp in got.items():
        ctx = ref.tokenize(context.encode(), add_bos=False, special=True)
        cont = ref.tokenize((" " + letter).encode(), add_bos=False, special=False)
        ref.reset()
        ref.eval(ctx + cont)
        rows = log_softmax(np.asarray(ref.scores[len(ctx) - 1 : len(ctx) + len(cont) - 1], dtype=np.float64), axis=-1)
        expected = sum(rows[j, t] for j, t in enumerate(cont))
        assert lp == pytest.approx(expected, abs=1e-3)
    # probabilities of the four letters are a part of the whole next-token distribution
    assert sum(np.exp(list(got.values()))) < 1.0


def test_mmlu_likelihood_run_records_mode_and_logprobs(tmp_path, model) -> None:
    from evalcore.runs import load_run, run_benchmark

    path = run_benchmark(
        "mmlu",
        model,
        limit=3,
        source="sample",
        choice_mode="likelihood",
        progress=False,
        run_dir=tmp_path,
        run_id="lik",
        cache=False,
    )
    run = load_run(path)
    assert run.config["choice_mode"] == "likelihood" and run.results["n_samples"] == 3
    for s in run.samples:
        top = s["completion"]["logprobs"][0]["top"]
        assert s["completion"]["text"] == max(top, key=top.get)
        assert s["scores"]["flexible"] == float(s["completion"]["text"] == s["reference"])


def test_cli_run_with_the_embedded_model_then_cached_rerun(tmp_path) -> None:
    import json
    import subprocess
    import sys

    def run(run_id: str) -> dict:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "evalcore.cli",
                "run",
                "gsm8k",
                "--model",
                "local:smollm2",
                "--limit",
                "2",
                "--max-tokens",
                "32",
                "--source",
                "sample",
                "--run-dir",
                str(tmp_path),
                "--run-id",
                run_id,
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads((tmp_path / run_id / "results.json").read_text())

    first = run("a")
    assert first["n_samples"] == 2 and first["errors"] == 0 and first["cached"] == 0
    assert 0 < first["tokens"]["completion"] <= 64 and first["cost_usd"] == 0.0
    second = run("b")  # identical request: answered from the SQLite cache, no generation
    assert second["cached"] == 2 and second["tokens"] == first["tokens"]
    assert second["accuracy_flexible"] == first["accuracy_flexible"]
