"""record / collect / save_figure."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # this test process only; kernels never get MPLBACKEND=Agg
import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.errors import EvalcoreError
from evalcore.reporting import (
    RECORD_MIMETYPE,
    collect,
    read_records,
    record,
    save_figure,
)


def test_record_converts_numpy_pandas_and_nan(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path))
    value = {
        "i": np.int64(3),
        "f": np.float32(0.5),
        "b": np.bool_(True),
        "nan": float("nan"),
        "inf": np.float64("inf"),
        "arr": np.array([[1, 2], [3, 4]]),
        "series": pd.Series([0.1, 0.2], index=["a", "b"]),
        "frame": pd.DataFrame({"x": [1, 2], "y": ["u", "v"]}),
        "tuple": (1, "two"),
        "path": Path("/tmp/x"),
        "na": pd.NA,
    }
    record("value", value)
    out = json.loads((tmp_path / "records.json").read_text(), parse_constant=pytest.fail)["value"]
    assert out == {  # strict JSON: no NaN or Infinity
        "i": 3,
        "f": 0.5,
        "b": True,
        "nan": None,
        "inf": None,
        "arr": [[1, 2], [3, 4]],
        "series": {"a": 0.1, "b": 0.2},
        "frame": [{"x": 1, "y": "u"}, {"x": 2, "y": "v"}],
        "tuple": [1, "two"],
        "path": "/tmp/x",
        "na": None,
    }
    assert type(out["i"]) is int and type(out["b"]) is bool and type(out["f"]) is float


def test_record_rejects_unknown_types_naming_the_field(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path))
    with pytest.raises(EvalcoreError, match="field 'acc.bad'"):
        record("acc", {"bad": object()})
    assert not (tmp_path / "records.json").exists()


def test_record_writes_and_merges_sidecar(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path / "rec"))
    record("accuracy", np.float64(0.25))
    record("n", np.int32(8))
    record("accuracy", 0.5)  # a later value replaces the earlier one
    data = json.loads((tmp_path / "rec" / "records.json").read_text())
    assert data == {"accuracy": 0.5, "n": 8}
    assert not list((tmp_path / "rec").glob(".*"))  # no temp or lock files left


def test_record_defaults_to_cwd_and_rejects_bad_names(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALCORE_RECORD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    evalcore.record("x", [1, 2])
    assert json.loads((tmp_path / "records.json").read_text()) == {"x": [1, 2]}
    with pytest.raises(EvalcoreError):
        record("  ", 1)


def _executed(path: Path, records: list[tuple[str, object]], params: dict, failed: bool = False) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("evalcore.record(...)")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={RECORD_MIMETYPE: {"name": name, "value": value}, "text/plain": f"{name} = {value}"},
        )
        for name, value in records
    ]
    nb.cells = [cell]
    nb.metadata["papermill"] = {"parameters": params, "exception": failed}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_collect_joins_records_with_parameters(tmp_path):
    a = _executed(
        tmp_path / "a" / "a.ipynb",
        [("acc", {"mean": 0.5, "ci_low": 0.2}), ("n", 8), ("n", 9)],
        {"dataset": "gsm8k", "limit": 9},
    )
    b = _executed(
        tmp_path / "b" / "b.ipynb",
        [("acc", {"mean": 0.75, "ci_low": 0.4})],
        {"dataset": "mmlu", "limit": 4, "runs": ["x", "y"]},
        failed=True,
    )
    frame = collect([a, b])
    assert list(frame["notebook"]) == [str(a), str(b)]
    assert list(frame["status"]) == ["ok", "failed"]
    assert list(frame["params.dataset"]) == ["gsm8k", "mmlu"]
    assert list(frame["acc.mean"]) == [0.5, 0.75]
    assert frame.loc[0, "n"] == 9  # the later output wins
    assert math.isnan(frame.loc[1, "n"])
    assert json.loads(frame.loc[1, "params.runs"]) == ["x", "y"]
    # a folder is searched recursively
    assert len(collect(tmp_path)) == 2


def test_collect_falls_back_to_sidecar(tmp_path):
    nb_path = _executed(tmp_path / "run" / "run.ipynb", [], {"seed": 3})
    (tmp_path / "run" / "records.json").write_text(json.dumps({"score": 0.125}))
    assert read_records(nb_path) == {"score": 0.125}
    frame = collect(nb_path)
    assert frame.loc[0, "score"] == 0.125 and frame.loc[0, "params.seed"] == 3


def test_collect_missing_path_is_an_evalcore_error(tmp_path):
    with pytest.raises(EvalcoreError, match="no such notebook"):
        collect(tmp_path / "nope.ipynb")
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    with pytest.raises(EvalcoreError, match="not a readable notebook"):
        collect(bad)


def test_save_figure_writes_png_into_record_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, "my figure/1")
    plt.close(fig)
    assert path == tmp_path / "figures" / "my_figure_1.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(EvalcoreError):
        save_figure(object(), "x")


def test_concurrent_writers_lose_no_record(tmp_path):
    # Several processes merging different names into one sidecar at once: every name survives.
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "os.environ['EVALCORE_RECORD_DIR'] = sys.argv[1]\n"
        "from evalcore.reporting import record\n"
        "for i in range(40):\n"
        "    record(f'{sys.argv[2]}_{i}', i)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "rec"), f"w{w}"]) for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    data = json.loads((tmp_path / "rec" / "records.json").read_text())
    assert len(data) == 160 and data["w3_39"] == 39
    assert not list((tmp_path / "rec").glob(".*"))
