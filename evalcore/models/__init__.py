"""Models: the ChatModel protocol, Completion records and model backends.

Backends: :class:`OpenAICompatibleModel` (any OpenAI-compatible endpoint, own retries),
:class:`LocalModel` (SmolLM2-135M-Instruct in process), :class:`RecordedModel` (answers from a
recorded run); :func:`from_spec` builds one from a spec string. Every name is imported when
first used (see :mod:`evalcore._lazy`); the ``openai`` package alone takes about a second.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.models._types": ("ChatModel", "Completion", "CompletionError", "GenerationParams", "Message", "Usage"),
    "evalcore.models._cache": ("CACHE_ENV", "ResponseCache", "cache_key", "cacheable", "request_hash"),
    "evalcore.models._embeddings": ("load_minilm", "minilm_path"),
    "evalcore.models._fakeserver": ("FakeChatServer", "FaultRates"),
    "evalcore.models._local": ("LocalModel", "smollm2_gguf_path"),
    "evalcore.models._openai": ("OpenAICompatibleModel",),
    "evalcore.models._pricing": ("Price", "load_pricing", "price_for"),
    "evalcore.models._recorded": ("RecordedModel",),
    "evalcore.models._retry": ("RetryPolicy", "parse_retry_after"),
    "evalcore.models._server": ("LocalServer", "serve_local"),
    "evalcore.models._spec": ("from_spec",),
    "evalcore.models._sync": ("check_reachable", "run_sync"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
