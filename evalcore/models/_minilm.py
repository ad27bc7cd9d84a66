"""all-MiniLM-L6-v2 sentence embeddings computed with NumPy from the packaged weights.

sentence-transformers computes the same thing (a 6-layer BERT, mean pooling over the tokens,
L2 normalisation), but importing it costs about 4.7 s of a process's start on the project's
2-core VM (torch, transformers and scikit-learn's metrics come with it), and every hosted agent
is a fresh interpreter (:mod:`evalcore.agents._host`): the demo started about twenty, so the
import alone was over a minute of it. Here the tokenizer is Hugging Face ``tokenizers`` (the
model's own ``tokenizer.json``), the weights are read with ``safetensors``, and the forward pass
is NumPy float32: start-up about 0.3 s. Outputs equal sentence-transformers' to about 1e-7
(``tests/models/test_minilm_numpy.py`` compares the two on the same texts), which no similarity
threshold can tell apart.

Only the configuration this model ships is accepted (BERT, absolute positions, GELU, mean
pooling); another model directory is refused with the reason, not approximated.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalcore.errors import EvalcoreError
from evalcore.models._compute_thread import on_compute_thread

_BLAS_CONTROLLER: Any = None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalcoreError(f"cannot read {path}: {exc}", field="embedder") from exc


class MiniLM:
    """A sentence-embedding BERT (all-MiniLM-L6-v2) with sentence-transformers' ``encode``.

    Args:
        model_dir: A sentence-transformers model directory (``config.json``,
            ``model.safetensors``, ``tokenizer.json``, ``1_Pooling/config.json``).
    """

    def __init__(self, model_dir: str | Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        d = Path(model_dir)
        cfg = _read_json(d / "config.json")
        pooling = _read_json(d / "1_Pooling" / "config.json")
        st_cfg = _read_json(d / "sentence_bert_config.json") if (d / "sentence_bert_config.json").is_file() else {}
        modules = _read_json(d / "modules.json") if (d / "modules.json").is_file() else []
        problems = []
        if cfg.get("model_type") != "bert":
            problems.append(f"model_type {cfg.get('model_type')!r} (not 'bert')")
        if cfg.get("hidden_act") != "gelu":
            problems.append(f"hidden_act {cfg.get('hidden_act')!r} (not 'gelu')")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            problems.append(f"position_embedding_type {cfg.get('position_embedding_type')!r}")
        if not pooling.get("pooling_mode_mean_tokens") or any(
            v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
        ):
            problems.append("a pooling other than the mean of the tokens")
        if problems:
            raise EvalcoreError(f"{d}: not a model this embedder computes: {', '.join(problems)}", field="embedder")
        try:
            weights = load_file(str(d / "model.safetensors"))
            self._tokenizer = Tokenizer.from_file(str(d / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001 - safetensors/tokenizers raise their own types
            raise EvalcoreError(f"cannot load the model in {d}: {exc}", field="embedder") from exc
        prefix = "" if "embeddings.word_embeddings.weight" in weights else "bert."
        self._w = {
            k[len(prefix) :]: v.astype(np.float32, copy=False) for k, v in weights.items() if k.startswith(prefix)
        }
        self.max_seq_length = int(st_cfg.get("max_seq_length", cfg.get("max_position_embeddings", 512)))
        self._tokenizer.no_padding()  # the shipped tokenizer.json pads every text to 128 tokens
        self._tokenizer.enable_truncation(self.max_seq_length)
        self._layers = int(cfg["num_hidden_layers"])
        self._heads = int(cfg["num_attention_heads"])
        self._eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.dim = int(cfg["hidden_size"])
        self._normalize = any(str(m.get("type", "")).endswith(".Normalize") for m in modules)

    def get_sentence_embedding_dimension(self) -> int:
        """The embedding's length (384), as sentence-transformers names it."""
        return self.dim

    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = False,
    ) -> np.ndarray:
        """Embed ``sentences`` (sentence-transformers' arguments and result).

        Runs on the process's compute thread with one BLAS thread (beside llama.cpp's OpenMP
        team, more threads than CPUs slow both). Texts are batched by length, longest first.

        Returns:
            A float32 array ``(len(sentences), 384)``, or ``(384,)`` for one string.
        """
        del show_progress_bar, convert_to_numpy  # no bar; always a NumPy array
        single = isinstance(sentences, str)
        texts = [sentences] if single else [str(s) for s in sentences]
        if batch_size < 1:
            raise EvalcoreError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
        out = on_compute_thread(self._encode_all, texts, batch_size)
        if normalize_embeddings or self._normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.maximum(norms, 1e-12)
        out = out.astype(np.float32, copy=False)
        return out[0] if single else out

    def _encode_all(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        with _one_blas_thread():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                out[idx] = self._forward([encodings[i].ids for i in idx])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        from scipy.special import erf, softmax

        w = self._w
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        heads, head_dim = self._heads, self.dim // self._heads
        bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
        scale = np.float32(1.0 / np.sqrt(head_dim))

        def split(h: np.ndarray) -> np.ndarray:
            return h.reshape(n, length, heads, head_dim).transpose(0, 2, 1, 3)

        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."
            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            attn = softmax((q @ k.transpose(0, 1, 3, 2)) * scale + bias, axis=-1)
            context = (attn @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = self._layer_norm(
                self._linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm"
            )
            h = self._linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / np.float32(np.sqrt(2.0))))
            x = self._layer_norm(self._linear(h, p + "output.dense") + x, p + "output.LayerNorm")
        m = mask[:, :, None]
        return (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._w[name + ".weight"].T + self._w[name + ".bias"]

    def _layer_norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + np.float32(self._eps)) * self._w[name + ".weight"] + self._w[name + ".bias"]


def _one_blas_thread() -> Any:
    """BLAS limited to one thread while a batch is computed (threadpoolctl), then as it was."""
    global _BLAS_CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        return contextlib.nullcontext()
    if _BLAS_CONTROLLER is None:
        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
