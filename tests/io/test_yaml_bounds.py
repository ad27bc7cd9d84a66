"""The one YAML reader is bounded: alias bombs, deep nesting, huge scalars and huge files are
refused with one line naming the file (and the line), before anything large is built."""

from __future__ import annotations

import pytest

from evalcore import _yaml
from evalcore._yaml import parse_yaml, read_yaml
from evalcore.errors import EvalcoreError


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    lines.append(f"description: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(_bomb())
    with pytest.raises(EvalcoreError) as info:
        read_yaml(path)
    msg = str(info.value)
    assert msg.startswith(str(path)) and "alias bomb" in msg
    assert "\n" not in msg and len(msg) < 400


def test_a_small_alias_reuse_is_fine():
    doc = parse_yaml("base: &b {x: 1, y: [1, 2]}\nother: *b\nmerged: {<<: *b, z: 3}\n", "t.yaml")
    assert doc.data["other"] == {"x": 1, "y": [1, 2]}
    assert doc.data["merged"] == {"x": 1, "y": [1, 2], "z": 3}
    assert doc.key_lines() == {"base": 1, "other": 2, "merged": 3}


def test_a_self_referring_anchor_is_refused():
    with pytest.raises(EvalcoreError, match="refers to itself"):
        parse_yaml("a: &a [1, *a]\n", "t.yaml")


@pytest.mark.parametrize("depth", [_yaml.MAX_DEPTH + 1, 3000, 200_000])
def test_deep_nesting_is_one_line_not_a_recursion_error(depth):
    text = "x: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(EvalcoreError) as info:
        parse_yaml(text, "deep.yaml")
    assert "nested more than" in str(info.value) or "nesting depth" in str(info.value)
    assert "deep.yaml, line 1" in str(info.value) and "\n" not in str(info.value)


def test_nesting_at_the_limit_is_read():
    depth = _yaml.MAX_DEPTH - 1  # the top mapping is one level
    doc = parse_yaml("x: " + "[" * depth + "1" + "]" * depth + "\n", "ok.yaml")
    value = doc.data["x"]
    for _ in range(depth - 1):
        value = value[0]
    assert value == [1]


def test_a_huge_scalar_names_its_line(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("name: x\n\ndescription: " + "a" * (_yaml.MAX_SCALAR_CHARS + 1) + "\n")
    with pytest.raises(EvalcoreError) as info:
        read_yaml(path)
    assert f"{path}, line 3" in str(info.value) and "over the limit" in str(info.value)


def test_a_huge_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "big.yaml"
    with path.open("wb") as fh:
        fh.truncate(_yaml.MAX_YAML_BYTES + 1)
    with pytest.raises(EvalcoreError, match="over the limit"):
        read_yaml(path)


def test_a_syntax_error_keeps_its_line_and_a_short_message():
    with pytest.raises(EvalcoreError) as info:
        parse_yaml("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml")
    assert "bad.yaml, line" in str(info.value) and "malformed YAML" in str(info.value)


def test_an_empty_document_is_none():
    assert parse_yaml("", "e.yaml").data is None
    assert parse_yaml("# only a comment\n", "e.yaml").data is None


def test_the_text_is_parsed_once(monkeypatch):
    made = []

    class Counting(_yaml._Loader):  # type: ignore[name-defined,misc]
        def __init__(self, stream):
            made.append(stream)
            super().__init__(stream)

    monkeypatch.setattr(_yaml, "_Loader", Counting)
    doc = parse_yaml("base: &b {x: 1, tags: [a, b]}\nother: *b\nn: 007\nwhen: 2:00\n", "once.yaml")
    assert len(made) == 1  # one parser over the text: the events it gives are checked, then composed
    assert doc.data == {
        "base": {"x": 1, "tags": ["a", "b"]},
        "other": {"x": 1, "tags": ["a", "b"]},
        "n": 7,
        "when": 120,
    }
    assert doc.data["other"] is doc.data["base"]  # an alias is one object, as yaml.safe_load builds it
    assert doc.key_lines() == {"base": 1, "other": 2, "n": 3, "when": 4}


def test_a_document_of_too_many_values_is_refused_while_its_events_are_read(monkeypatch):
    monkeypatch.setattr(_yaml, "MAX_EXPANDED_NODES", 50)
    text = "values: [" + ", ".join(["1"] * 60) + "]\n"
    with pytest.raises(EvalcoreError) as info:
        parse_yaml(text, "many.yaml")
    assert str(info.value) == "many.yaml, line 1: a YAML document of over 50 values"
    assert parse_yaml("values: [" + ", ".join(["1"] * 40) + "]\n", "ok.yaml").data == {"values": [1] * 40}
