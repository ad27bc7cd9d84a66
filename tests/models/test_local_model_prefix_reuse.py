"""The embedded model reuses a cached prompt prefix only where that changes no bit of the answer.

Few-shot prompts, self-consistency samples and an agent's requests share long prefixes; reusing
their KV cache skips about half the prompt tokens of the demo. It is allowed once a probe found
the logits after reuse bit-identical to a whole evaluation on this machine
(``_prefix_reuse_is_exact``), and the answers are then the same as from fresh contexts.
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
    for k in (3, 4, 4, 9)  # the third repeats the second: only its last token is evaluated again
]


def _model() -> _local.LocalModel:
    try:
        _local.smollm2_gguf_path()
    except Exception:
        pytest.skip("no embedded model installed")
    return _local.LocalModel(n_threads=2)


def _run(model: _local.LocalModel, logprobs: bool) -> list[object]:
    out: list[object] = []
    for i, messages in enumerate(PROMPTS):
        for temperature in (0.0, 0.9):
            params = GenerationParams(temperature=temperature, max_tokens=8, seed=11 + i, logprobs=logprobs)
            c = model.complete(messages, params)
            assert c.error is None
            out.append((c.text, c.usage.prompt_tokens, c.logprobs))
    return out


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("logprobs", [False, True])
def test_answers_after_reuse_equal_answers_from_fresh_contexts(monkeypatch, logprobs) -> None:
    model = _model()
    llm = model._llama(logits_all=logprobs)
    with _local._llama_lock:
        _local._exact_reuse.pop(llm, None)
        _local._fresh_context(llm)
    evaluated: list[int] = []
    real_eval = llm.eval

    def counting_eval(tokens):  # noqa: ANN001, ANN202 - llama-cpp-python's signature
        evaluated.append(len(tokens))
        return real_eval(tokens)

    monkeypatch.setattr(llm, "eval", counting_eval)
    reused = _run(model, logprobs)
    if not logprobs and not _local._exact_reuse.get(llm):
        pytest.skip("prefix reuse is not exact on this machine: every call starts fresh (tested below)")
    prompt_evals = sum(n for n in evaluated if n > 1)
    evaluated.clear()
    monkeypatch.setitem(_local._exact_reuse, llm, False)
    fresh = _run(model, logprobs)
    assert reused == fresh
    assert len({text for text, _, _ in fresh}) >= 4  # distinct answers: a change would show
    whole = sum(n for n in evaluated if n > 1)
    if logprobs:  # every call evaluated its whole prompt (and the probe ran once, ~200 tokens)
        assert whole <= prompt_evals <= whole + 300, (prompt_evals, whole)
    else:  # the prompts share ~90% of their tokens: far fewer were evaluated (the probe included)
        assert prompt_evals < 0.5 * whole, (prompt_evals, whole)


def test_without_an_exact_probe_every_call_starts_fresh(monkeypatch) -> None:
    class FakeLlama:
        n_tokens = 0

        def create_chat_completion(self, **kwargs):  # noqa: ANN003, ANN201
            self.n_tokens = 50  # the prompt stays cached, as in llama-cpp-python
            return {"choices": [{"message": {"content": "ok"}}], "usage": {}}

    llm = FakeLlama()
    fresh: list[int] = []
    probes: list[int] = []

    def fresh_context(target) -> None:  # noqa: ANN001
        fresh.append(target.n_tokens)
        target.n_tokens = 0

    def probe(target) -> bool:  # noqa: ANN001
        probes.append(1)
        return False

    monkeypatch.setattr(_local, "_fresh_context", fresh_context)
    monkeypatch.setattr(_local, "_prefix_reuse_is_exact", probe)
    monkeypatch.setattr(_local, "_fit_threads", lambda target: None)
    for _ in range(3):
        _local._chat_completion(llm, {})
    assert probes == [1]  # checked once, before the second call (the first had nothing to reuse)
    assert fresh == [0, 50, 50]  # every call cleared the context first

    llm2 = FakeLlama()
    fresh.clear()
    monkeypatch.setattr(_local, "_prefix_reuse_is_exact", lambda target: True)
    for _ in range(3):
        _local._chat_completion(llm2, {})
    assert fresh == [0]  # the first call only: then the cached prefix is kept


def test_a_failed_call_leaves_a_fresh_context(monkeypatch) -> None:
    class FailingLlama:
        n_tokens = 7

        def create_chat_completion(self, **kwargs):  # noqa: ANN003, ANN201
            self.n_tokens = 30
            raise RuntimeError("decode failed")

    llm = FailingLlama()
    cleared: list[int] = []
    monkeypatch.setattr(_local, "_fresh_context", lambda target: cleared.append(target.n_tokens))
    monkeypatch.setattr(_local, "_fit_threads", lambda target: None)
    monkeypatch.setitem(_local._exact_reuse, llm, True)
    with pytest.raises(RuntimeError, match="decode failed"):
        _local._chat_completion(llm, {})
    assert cleared == [30]
