"""The embedded model's batch engine: an answer is a function of the prompt, parameters and seed.

Every chat completion of the embedded model is decoded by :class:`evalcore.models._batching.BatchEngine`;
those asked at once share its decoding steps, and a stream reuses the prefix it holds only where
that gives the bits of a whole evaluation. The reference here is llama-cpp-python's own
``create_chat_completion`` from a fresh context, one call at a time: the engine's answers, alone
or four at once, after any history, must be its answers exactly.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import GenerationParams, _batching, _local
from evalcore.models._compute_thread import on_compute_thread

SHOTS = "".join(
    f"Question: Sam has {i} apples and buys {i + 3} more. How many apples?\nAnswer: {2 * i + 3}\n\n"
    for i in range(2, 9)
)
QUESTIONS = [
    "List five animals and one fact each.",
    "What is 17 times 23? Think step by step.",
    "Name three colours.",
    SHOTS + "Question: A shop sells 4 pens a day for 5 days. How many pens?",
    SHOTS + "Question: A shop sells 9 pens a day for 10 days. How many pens?",
]


def _cases() -> list[tuple[list[dict[str, str]], GenerationParams]]:
    cases = []
    for i, question in enumerate(QUESTIONS):
        # the same prompt three times in a row (greedy, then two seeds): the second and third
        # follow a completion of the same prompt (once answered differently before the engine:
        # the re-evaluated last prompt token was computed alone, with other kernels)
        for temperature, seed in ((0.0, 0), (0.8, 5), (0.8, 105)):
            stop = ["\n\n"] if i == 1 else []
            params = GenerationParams(temperature=temperature, seed=seed, max_tokens=24, stop=stop)
            cases.append(([{"role": "user", "content": question}], params))
    return cases


def _model() -> _local.LocalModel:
    pytest.importorskip("llama_cpp")
    try:
        _local.smollm2_gguf_path()
    except Exception:
        pytest.skip("no embedded model installed")
    return _local.LocalModel(n_threads=2)


def _fresh_answer(llm: Any, messages: list[dict[str, str]], p: GenerationParams) -> tuple[str, int]:
    def run() -> tuple[str, int]:
        _local._fresh_context(llm)
        out = llm.create_chat_completion(
            messages=messages,
            temperature=p.temperature,
            top_p=p.top_p,
            max_tokens=p.max_tokens,
            stop=list(p.stop) or None,
            seed=p.seed,
        )
        _local._fresh_context(llm)
        return out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"]

    return on_compute_thread(run)


@pytest.fixture()
def fresh_engine(monkeypatch) -> _local.LocalModel:
    """The model with no batch engine yet (the test's own, dropped afterwards)."""
    model = _model()
    monkeypatch.setattr(_local, "_engines", {})
    return model


@pytest.mark.integration
@pytest.mark.slow
def test_answers_alone_and_four_at_once_equal_fresh_contexts(fresh_engine, monkeypatch) -> None:
    model = fresh_engine
    llm = model._llama()
    cases = _cases()
    expected = [_fresh_answer(llm, m, p) for m, p in cases]
    assert len({text for text, _ in expected}) >= 8  # distinct answers: a changed one would show

    evaluated: list[int] = []
    real_eval = llm.eval

    def counting_eval(tokens):  # noqa: ANN001, ANN202 - llama-cpp-python's signature
        evaluated.append(len(tokens))
        return real_eval(tokens)

    monkeypatch.setattr(llm, "eval", counting_eval)
    alone = [model.complete(m, p) for m, p in cases]  # one at a time: the model's own context
    assert all(c.error is None for c in alone)
    assert [(c.text, c.usage.completion_tokens) for c in alone] == expected
    assert model._key() not in _local._engines  # no engine: nothing was asked at once
    exact_reuse = _local._exact_reuse.get(llm)
    assert exact_reuse is not None  # the prompts share prefixes: the probe ran
    if exact_reuse:  # the shared prefixes were not evaluated again
        whole = sum(len(llm.tokenize(_prompt(model, m), add_bos=False, special=True)) for m, _ in cases)
        prompt_evals = sum(n for n in evaluated if n > 1)
        assert prompt_evals < 0.6 * whole, (prompt_evals, whole)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda case: model.complete(*case), cases))
    assert [(c.text, c.usage.completion_tokens) for c in together] == expected
    engine = _local._engines[model._key()]
    if engine.exact:
        assert len(engine.streams) == 4 and engine.most_together >= 2
    else:  # decoding together changes bits on this machine: one sequence at a time
        assert engine.most_together == 1


def _prompt(model: _local.LocalModel, messages: list[dict[str, str]]) -> bytes:
    return model.chat_prompt(messages).encode("utf-8")


@pytest.mark.integration
def test_a_failed_step_is_a_recorded_error_and_the_next_calls_answer(fresh_engine, monkeypatch) -> None:
    model = fresh_engine
    messages = [[{"role": "user", "content": f"Name {n} colours."}] for n in ("two", "three")]
    params = GenerationParams(temperature=0.0, max_tokens=6)
    first = [model.complete(m, params) for m in messages]  # one at a time
    assert all(c.error is None and c.text for c in first)
    real_decode = _batching.BatchEngine._decode
    calls: list[int] = []

    def failing_once(self):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("llama_decode returned -3")
        return real_decode(self)

    monkeypatch.setattr(_batching.BatchEngine, "_decode", failing_once)

    def together() -> list[Any]:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            return list(pool.map(lambda m: model.complete(m, params), messages))

    failed = together()  # both at once: the engine's first decode fails
    errors = [c.error for c in failed if c.error is not None]
    assert errors and all(e.type == "RuntimeError" and "llama_decode returned -3" in e.message for e in errors)
    assert all(c.text == "" for c in failed if c.error is not None)
    again = together()  # the streams start afresh: the answers of the first calls
    assert [(c.error, c.text) for c in again] == [(None, c.text) for c in first]


class _FakeLlm:
    n_batch = 8

    def n_ctx(self) -> int:
        return 64


def _engine(reuse_exact: bool = True) -> _batching.BatchEngine:
    return _batching.BatchEngine(
        _FakeLlm(), 4, threads=lambda: 1, reuse_exact=lambda: reuse_exact, reference_rows=lambda t, s: []
    )


@pytest.mark.parametrize(
    ("held", "reusable", "prompt", "keep"),
    [
        (list(range(20)), 20, list(range(20)) + [99, 98, 97], 20),  # the shared prefix, the rest evaluated
        (list(range(20)), 20, list(range(20)), 18),  # the same prompt: its last two tokens again
        (list(range(20)), 20, list(range(21)), 19),  # one new token: it and the one before
        (list(range(20)), 12, list(range(20)) + [99, 98], 12),  # beyond 12 the stream holds decoded tokens
        (list(range(20)), 20, list(range(5)) + [50] * 10, 5),
        (list(range(20)), 20, [7] + list(range(1, 20)), 0),  # nothing shared
        (list(range(20)), 20, list(range(17)), 0),  # 17 = 2 x 8 + 1: a whole evaluation ends in one token
        (list(range(40)), 40, list(range(30)) + [99] * 9, 29),  # 39 - 30 = 9 = 8 + 1: one token less kept
    ],
)
def test_the_prefix_reused_never_makes_a_chunk_of_one_token(held, reusable, prompt, keep) -> None:
    engine = _engine()
    stream = engine.streams[0]
    stream.tokens, stream.reusable = held, reusable
    got = engine._reusable(stream, prompt)
    assert got == keep
    if got:
        rest = len(prompt) - got
        assert rest >= 2 and rest % _FakeLlm.n_batch != 1  # the rest: chunks of two tokens or more


def test_no_prefix_is_reused_where_reuse_was_not_found_exact() -> None:
    engine = _engine(reuse_exact=False)
    stream = engine.streams[0]
    stream.tokens, stream.reusable = list(range(20)), 20
    assert engine._reusable(stream, list(range(20)) + [99, 98, 97]) == 0


@pytest.mark.parametrize(("raw", "streams"), [("", 4), ("1", 1), ("6", 6), (" 2 ", 2)])
def test_batch_size_from_the_environment(monkeypatch, raw, streams) -> None:
    monkeypatch.setenv(_batching.BATCH_ENV, raw)
    assert _batching.batch_streams() == streams


@pytest.mark.parametrize("raw", ["0", "-2", "four", "1.5"])
def test_a_bad_batch_size_is_refused_naming_the_variable(monkeypatch, raw) -> None:
    monkeypatch.setenv(_batching.BATCH_ENV, raw)
    with pytest.raises(EvalcoreError, match="EVALCORE_LLAMA_BATCH") as info:
        _batching.batch_streams()
    assert repr(raw) in str(info.value)
