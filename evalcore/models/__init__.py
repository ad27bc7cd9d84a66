"""Models: the ChatModel protocol, Completion records and model backends.

Backends: :class:`OpenAICompatibleModel` (any OpenAI-compatible endpoint, own retries),
:class:`LocalModel` (SmolLM2-135M-Instruct in process), :class:`RecordedModel` (answers from a
recorded run); :func:`from_spec` builds one from a spec string. Every name is imported when
first used (see :mod:`evalcore._lazy`); the ``openai`` package alone takes about a second.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.models._cache import CACHE_ENV as CACHE_ENV
    from evalcore.models._cache import ResponseCache as ResponseCache
    from evalcore.models._cache import cache_key as cache_key
    from evalcore.models._cache import cacheable as cacheable
    from evalcore.models._cache import request_hash as request_hash
    from evalcore.models._embeddings import load_minilm as load_minilm
    from evalcore.models._embeddings import minilm_path as minilm_path
    from evalcore.models._fakeserver import FakeChatServer as FakeChatServer
    from evalcore.models._fakeserver import FaultRates as FaultRates
    from evalcore.models._local import LocalModel as LocalModel
    from evalcore.models._local import smollm2_gguf_path as smollm2_gguf_path
    from evalcore.models._openai import OpenAICompatibleModel as OpenAICompatibleModel
    from evalcore.models._pricing import Price as Price
    from evalcore.models._pricing import load_pricing as load_pricing
    from evalcore.models._pricing import price_for as price_for
    from evalcore.models._recorded import RecordedModel as RecordedModel
    from evalcore.models._retry import RetryPolicy as RetryPolicy
    from evalcore.models._retry import parse_retry_after as parse_retry_after
    from evalcore.models._server import LocalServer as LocalServer
    from evalcore.models._server import serve_local as serve_local
    from evalcore.models._spec import from_spec as from_spec
    from evalcore.models._sync import check_reachable as check_reachable
    from evalcore.models._sync import run_sync as run_sync
    from evalcore.models._types import ChatModel as ChatModel
    from evalcore.models._types import Completion as Completion
    from evalcore.models._types import CompletionError as CompletionError
    from evalcore.models._types import GenerationParams as GenerationParams
    from evalcore.models._types import Message as Message
    from evalcore.models._types import Usage as Usage

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
