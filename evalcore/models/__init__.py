"""Models: the ChatModel protocol, Completion records and model backends.

Backends: :class:`OpenAICompatibleModel` (any OpenAI-compatible endpoint, own retries),
:class:`LocalModel` (SmolLM2-135M-Instruct in process), :class:`ReplayModel` (answers from a
recorded run); :func:`from_spec` builds one from a spec string. The ``openai`` package is
imported only when the client is first used (it takes about a second).
"""

from typing import Any

from evalcore.models._cache import ResponseCache, cache_key, request_hash
from evalcore.models._fakeserver import FakeChatServer, FaultRates
from evalcore.models._local import LocalModel, smollm2_gguf_path
from evalcore.models._pricing import Price, load_pricing, price_for
from evalcore.models._replay import ReplayModel
from evalcore.models._retry import RetryPolicy, parse_retry_after
from evalcore.models._server import LocalServer, serve_local
from evalcore.models._spec import from_spec
from evalcore.models._types import (
    ChatModel,
    Completion,
    CompletionError,
    GenerationParams,
    Message,
    Usage,
)

__all__ = ["ChatModel", "Completion", "CompletionError", "GenerationParams", "Message", "Usage"]
__all__ += [
    "FakeChatServer",
    "FaultRates",
    "LocalModel",
    "LocalServer",
    "OpenAICompatibleModel",
    "Price",
    "ReplayModel",
    "ResponseCache",
    "RetryPolicy",
    "cache_key",
    "from_spec",
    "load_pricing",
    "parse_retry_after",
    "price_for",
    "request_hash",
    "serve_local",
    "smollm2_gguf_path",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAICompatibleModel":
        from evalcore.models._openai import OpenAICompatibleModel

        return OpenAICompatibleModel
    raise AttributeError(f"module 'evalcore.models' has no attribute {name!r}")
