"""Model specs as strings: ``local:smollm2``, ``openai:MODEL``, ``openai-compatible:NAME@URL``,
``replay:RUN_DIR``."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.models._types import ChatModel

SPEC_HELP = (
    "model specs: 'local:smollm2' (or 'local:FILE.gguf'), 'openai:MODEL' "
    "(key from OPENAI_API_KEY), 'openai-compatible:NAME@http://HOST:PORT/v1', "
    "'replay:RUN_DIR'; an endpoint spec may end in '?rpm=N&tpm=N' (rate limits per minute)"
)

#: rate-limit settings an endpoint spec may carry after ``?``, and the option each one sets
_SPEC_RATES = {"rpm": "requests_per_minute", "tpm": "tokens_per_minute"}


def _rate_query(spec: str, rest: str, overrides: dict[str, Any]) -> str:
    """Split ``?rpm=N&tpm=N`` off an endpoint spec into ``overrides``; returns the rest."""
    if "?" not in rest:
        return rest
    rest, _, query = rest.rpartition("?")
    for part in query.split("&"):
        key, eq, value = part.partition("=")
        if key not in _SPEC_RATES or not eq:
            raise EvalcoreError(
                f"unknown setting {part!r} in model spec {spec!r}; allowed: rpm=N, tpm=N", field="model"
            )
        try:
            number = float(value)
        except ValueError:
            raise EvalcoreError(
                f"{key} must be a number, got {value!r} in model spec {spec!r}", field="model"
            ) from None
        overrides.setdefault(_SPEC_RATES[key], number)  # an explicit option wins over the spec
    return rest


def _build(cls: Any, overrides: dict[str, Any], spec: str, **fixed: Any) -> Any:
    allowed = set(inspect.signature(cls.__init__).parameters) - {"self"} - set(fixed)
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise EvalcoreError(
            f"unknown option(s) {unknown} for model {spec!r}; allowed: {sorted(allowed)}", field="model"
        )
    return cls(**fixed, **overrides)


def from_spec(spec: str, **overrides: Any) -> ChatModel:
    """Build a ChatModel from its spec string.

    Args:
        spec: ``local:smollm2``, ``local:PATH.gguf``, ``openai:gpt-4o-mini``,
            ``openai-compatible:NAME@http://127.0.0.1:8000/v1`` or ``replay:RUN_DIR``.
        **overrides: Constructor options of the backend (``timeout``, ``concurrency``,
            ``api_key``, ``pricing``, ``retry``, ``requests_per_minute``,
            ``tokens_per_minute``, ``n_ctx`` ...); they win over ``?rpm=``/``?tpm=`` in the spec.

    Returns:
        The model.

    Raises:
        EvalcoreError: Unknown spec, unknown option, missing API key, missing file.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise EvalcoreError(f"unknown model spec {spec!r}; {SPEC_HELP}", field="model")
    kind, _, rest = spec.partition(":")
    if kind == "local":
        from evalcore.models._local import LocalModel

        if rest == "smollm2":
            return _build(LocalModel, overrides, spec)
        if rest.endswith(".gguf"):
            return _build(LocalModel, overrides, spec, model_path=rest, alias=Path(rest).stem)
        raise EvalcoreError(f"unknown local model {rest!r}; {SPEC_HELP}", field="model")
    if kind == "openai":
        from evalcore.models._openai import OpenAICompatibleModel

        rest = _rate_query(spec, rest, overrides)
        if not rest:
            raise EvalcoreError(f"'openai:' needs a model name; {SPEC_HELP}", field="model")
        overrides.setdefault("require_key", True)
        return _build(OpenAICompatibleModel, overrides, spec, model=rest, provider="openai")
    if kind == "openai-compatible":
        from evalcore.models._openai import OpenAICompatibleModel

        name, at, url = _rate_query(spec, rest, overrides).partition("@")
        if not name or not at or not url.startswith(("http://", "https://")):
            raise EvalcoreError(f"malformed spec {spec!r}; {SPEC_HELP}", field="model")
        return _build(OpenAICompatibleModel, overrides, spec, model=name, base_url=url, provider="openai-compatible")
    if kind == "replay":
        from evalcore.models._recorded import RecordedModel

        if not rest:
            raise EvalcoreError(f"'replay:' needs a run directory; {SPEC_HELP}", field="model")
        from evalcore._runstore import SAMPLES_FILE, is_run_dir

        if not is_run_dir(rest):
            raise EvalcoreError(f"not a run directory (no {SAMPLES_FILE})", path=rest, field="model")
        return _build(RecordedModel, overrides, spec, run_dir=rest)
    raise EvalcoreError(f"unknown model spec {spec!r}; {SPEC_HELP}", field="model")
