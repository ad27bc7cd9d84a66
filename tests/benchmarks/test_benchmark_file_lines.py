"""A user's benchmark CSV: errors name the physical line a row starts on (after multi-line quoted
fields and blank lines), invalid UTF-8 names its line, and ids are text ("7" and "007" differ)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.benchmarks import get_benchmark, unregister
from evalcore.errors import EvalcoreError

_YAML = """\
name: {name}
data: caps.csv
id_field: id
answer_field: capital
scorer:
  type: exact
prompt:
  user: "What is the capital of {{country}}?"
"""


def _bench(tmp_path: Path, name: str, csv_bytes: bytes):
    d = tmp_path / name
    d.mkdir()
    (d / "caps.csv").write_bytes(csv_bytes)
    (d / "bench.yaml").write_text(_YAML.format(name=name))
    return d / "bench.yaml"


@pytest.fixture(autouse=True)
def _forget():
    yield
    for name in ("lines", "utf", "ids"):
        try:
            unregister(name)
        except Exception:  # noqa: BLE001 - not registered in this test
            pass


def test_a_row_after_a_multiline_field_and_blank_lines_is_named_by_its_own_line(tmp_path):
    data = b'id,country,capital\n1,"France\nthe republic",Paris\n\n\n2,"Peru\nthe republic",\n3,Chile,Santiago\n'
    #        line 1              line 2-3 (one row)               4,5 blank  lines 6-7 (the bad row)
    path = _bench(tmp_path, "lines", data)
    with pytest.raises(EvalcoreError) as info:
        get_benchmark(str(path)).load()
    assert info.value.line == 6 and info.value.field == "capital"


def test_invalid_utf8_names_its_line(tmp_path):
    path = _bench(tmp_path, "utf", b"id,country,capital\n1,France,Paris\n2,Peru,Lima\n3,Caf\xe9,X\n")
    with pytest.raises(EvalcoreError) as info:
        get_benchmark(str(path)).load()
    assert info.value.line == 4 and "not UTF-8" in info.value.reason


def test_ids_are_text_so_7_and_007_are_two_items(tmp_path):
    path = _bench(tmp_path, "ids", b"id,country,capital\n7,France,Paris\n007,Peru,Lima\n")
    items = get_benchmark(str(path)).load()
    assert [it.id for it in items] == ["ids/7", "ids/007"]
