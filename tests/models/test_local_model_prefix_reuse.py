"""Calls of the embedded model that ask for log-probabilities start and end in a fresh context.

Completions without log-probabilities are decoded by the batch engine, which reuses a stream's
prefix only the way ``_prefix_reuse_is_exact`` checked (``tests/models/test_local_model_batching.py``).
The ones with log-probabilities run in the model's own context, always from nothing: after a
reused prefix llama-cpp-python reported other top alternatives for a first token, and a prompt
whose last token was evaluated again alone got other logits (by up to 0.7 on the project's VM),
so an answer depended on the call before it.
"""

from __future__ import annotations

import pytest

from evalcore.models import GenerationParams, _local

llama_cpp = pytest.importorskip("llama_cpp")

SHOTS = "".join(
    f"Question: Sam has {i} apples and buys {i + 3} more. How many apples?\nAnswer: {2 * i + 3}\n\n"
    for i in range(2, 9)
)
PROMPTS = [
    [{"role": "user", "content": SHOTS + f"Question: A shop sells {k} pens a day for {k + 1} days. How many pens?"}]
    for k in (3, 4, 4, 9)  # the third repeats the second
]


def _model() -> _local.LocalModel:
    try:
        _local.smollm2_gguf_path()
    except Exception:
        pytest.skip("no embedded model installed")
    return _local.LocalModel(n_threads=2)


def _run(model: _local.LocalModel, order: list[int]) -> dict[tuple[int, float], object]:
    out: dict[tuple[int, float], object] = {}
    for i in order:
        for temperature in (0.0, 0.9):
            params = GenerationParams(temperature=temperature, max_tokens=8, seed=11 + i, logprobs=True)
            c = model.complete(PROMPTS[i], params)
            assert c.error is None
            out[(i, temperature)] = (c.text, c.usage.prompt_tokens, c.logprobs)
    return out


@pytest.mark.integration
@pytest.mark.slow
def test_log_probability_answers_do_not_depend_on_the_calls_before() -> None:
    model = _model()
    forward = _run(model, [0, 1, 2, 3])
    backward = _run(model, [3, 2, 1, 0])
    assert forward == backward
    assert len({text for text, _, _ in forward.values()}) >= 4  # distinct answers: a change would show


class _FakeLlama:
    n_tokens = 7

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def create_chat_completion(self, **kwargs):  # noqa: ANN003, ANN201
        self.n_tokens = 30  # the prompt and answer stay cached, as in llama-cpp-python
        if self.fail:
            raise RuntimeError("decode failed")
        return {"choices": [{"message": {"content": "ok"}}], "usage": {}}


@pytest.mark.parametrize("fail", [False, True])
def test_a_log_probability_call_starts_and_ends_fresh(monkeypatch, fail) -> None:
    llm = _FakeLlama(fail)
    cleared: list[int] = []

    def fresh_context(target) -> None:  # noqa: ANN001
        cleared.append(target.n_tokens)
        target.n_tokens = 0

    monkeypatch.setattr(_local, "_fresh_context", fresh_context)
    monkeypatch.setattr(_local, "_fit_threads", lambda target: None)
    if fail:
        with pytest.raises(RuntimeError, match="decode failed"):
            _local._chat_completion(llm, {})
    else:
        assert _local._chat_completion(llm, {})["choices"][0]["message"]["content"] == "ok"
    assert cleared == [7, 30]  # what the context held before, then what the call left in it
