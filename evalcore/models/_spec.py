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
    "'replay:RUN_DIR'"
)


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
            ``api_key``, ``pricing``, ``retry``, ``n_ctx`` ...).

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

        if not rest:
            raise EvalcoreError(f"'openai:' needs a model name; {SPEC_HELP}", field="model")
        overrides.setdefault("require_key", True)
        return _build(OpenAICompatibleModel, overrides, spec, model=rest, provider="openai")
    if kind == "openai-compatible":
        from evalcore.models._openai import OpenAICompatibleModel

        name, at, url = rest.partition("@")
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
