"""The one JSON converter (`_io.to_json_native`) and the one YAML reader (`_yaml`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore._io import to_json_native
from evalcore._yaml import parse_yaml, read_packaged_yaml, read_yaml
from evalcore.errors import EvalcoreError


@dataclasses.dataclass
class _Point:
    x: float
    tags: tuple


def test_converts_numpy_pandas_and_python_values_to_strict_json():
    value = {
        "nan": float("nan"),
        "inf": np.float32("inf"),
        "i": np.int64(7),
        "b": np.bool_(True),
        "arr": np.array([[1, 2], [3, 4]]),
        "series": pd.Series([1.5, np.nan], index=["a", "b"]),
        "frame": pd.DataFrame({"x": [1, 2]}),
        "set": {3, 1, 2},
        "tuple": (1, "a"),
        "point": _Point(0.5, (1, 2)),
        "path": Path("/tmp/x"),
        "day": dt.date(2026, 1, 2),
        "na": pd.NA,
        3: "int key",
        np.int64(4): "numpy key",
    }
    out = to_json_native(value)
    assert out == {
        "nan": None,
        "inf": None,
        "i": 7,
        "b": True,
        "arr": [[1, 2], [3, 4]],
        "series": {"a": 1.5, "b": None},
        "frame": [{"x": 1}, {"x": 2}],
        "set": [1, 2, 3],
        "tuple": [1, "a"],
        "point": {"x": 0.5, "tags": [1, 2]},
        "path": "/tmp/x",
        "day": "2026-01-02",
        "na": None,
        "3": "int key",
        "4": "numpy key",
    }
    assert type(out["i"]) is int and type(out["b"]) is bool
    json.dumps(out, allow_nan=False)  # strict JSON


def test_huge_integers_and_unknown_objects():
    assert to_json_native(2**20_000) == "<int of 20001 bits>"
    assert to_json_native(-(2**100)) == -(2**100)

    class Thing:
        def __str__(self) -> str:
            return "a thing"

    assert to_json_native({"t": Thing()}) == {"t": "a thing"}
    with pytest.raises(EvalcoreError) as err:
        to_json_native({"rows": [1, {"t": Thing()}]}, strict=True)
    assert "value.rows[1].t" in str(err.value) and "Thing" in str(err.value)
    with pytest.raises(EvalcoreError, match="keys must be strings or numbers"):
        to_json_native({(1, 2): 1}, strict=True)


def test_subclasses_become_plain_types():
    class MyFloat(float):
        pass

    class MyStr(str):
        pass

    out = to_json_native([MyFloat(math.inf), MyFloat(1.25), MyStr("s")])
    assert out == [None, 1.25, "s"] and [type(v) for v in out[1:]] == [float, str]


def test_yaml_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: 1\nb: [1, 2\nc: 3\n")
    with pytest.raises(EvalcoreError) as err:
        read_yaml(bad)
    assert str(bad) in str(err.value) and "line 3" in str(err.value) and "malformed YAML" in str(err.value)
    with pytest.raises(EvalcoreError, match="pricing file not found"):
        read_yaml(tmp_path / "missing.yaml", what="pricing file")
    (tmp_path / "latin1.yaml").write_bytes(b"a: caf\xe9\n")
    with pytest.raises(EvalcoreError, match="not UTF-8"):
        read_yaml(tmp_path / "latin1.yaml")


def test_yaml_key_lines_follow_paths():
    doc = parse_yaml("runs:\n  - name: a\n    overrides:\n      seed: 1\n  - name: b\n", "suite.yaml")
    assert doc.key_lines() == {"runs": 1}
    assert doc.key_lines("runs", 1) == {"name": 5}
    assert doc.key_lines("runs", 0, "overrides") == {"seed": 4}
    assert doc.line("runs", 1) == 5 and doc.line("runs", 7) is None and doc.key_lines("nope") == {}


def test_packaged_yaml_reads():
    doc = read_packaged_yaml("evalcore.models", "pricing.yaml")
    assert isinstance(doc.data, dict) and "models" in doc.data
