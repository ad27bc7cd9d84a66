"""A pricing override with a key evalcore does not know, or a folder given for it, is refused."""

from __future__ import annotations

import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.models import FakeChatServer, Price, load_pricing

pytestmark = pytest.mark.timeout(120)

TYPO = "models:\n  mine: {input: 1, output: 2}\nmodles:\n  other: {input: 3, output: 4}\n"


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        (TYPO, 3, "modles"),
        ("currency: EUR\nmodels:\n  mine: {input: 1, output: 2}\n", 1, "currency"),
        ("models: {}\n7: x\n", 2, "7"),
    ],
)
def test_unknown_top_level_key_names_file_line_field(tmp_path, text, line, field) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(EvalcoreError, match="unknown top-level key") as info:
        load_pricing(f)
    assert (info.value.path, info.value.line, info.value.field) == (str(f), line, field)
    assert "allowed: models" in str(info.value)


def test_unknown_top_level_key_from_the_environment(tmp_path, monkeypatch) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TYPO)
    monkeypatch.setenv("EVALCORE_PRICING", str(f))
    with pytest.raises(EvalcoreError, match="unknown top-level key") as info:
        load_pricing()
    assert info.value.field == "modles"


def test_only_models_still_loads(tmp_path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("# prices\nmodels:\n  mine: {input: 1, output: 2}\n")
    assert load_pricing(f)["mine"] == Price(1.0, 2.0)
    assert "gpt-4o-mini" in load_pricing()  # the shipped table has only 'models'


def test_folder_for_pricing_file_says_folder(tmp_path) -> None:
    with pytest.raises(EvalcoreError, match="is a folder, not a file") as info:
        load_pricing(tmp_path)
    assert info.value.path == str(tmp_path) and "not found" not in str(info.value)


@pytest.mark.parametrize("kind", ["typo", "folder"])
def test_run_with_bad_pricing_exits_2_creates_nothing(tmp_path, capsys, kind) -> None:
    if kind == "typo":
        pricing = tmp_path / "p.yaml"
        pricing.write_text(TYPO)
        expect = f"{pricing}, line 3, field 'modles': unknown top-level key"
    else:
        pricing = tmp_path / "prices"
        pricing.mkdir()
        expect = f"{pricing}: is a folder, not a file"
    runs = tmp_path / "runs"
    with FakeChatServer() as srv:
        status = main(
            [
                "run",
                "gsm8k",
                "--model",
                f"openai-compatible:fake@{srv.url}",
                "--limit",
                "1",
                "--source",
                "sample",
                "--run-dir",
                str(runs),
                "--no-progress",
                "--pricing",
                str(pricing),
            ]
        )
        assert srv.counts["requests"] == 0  # refused before any model call
    err = capsys.readouterr().err
    assert status == 2 and expect in err and "Traceback" not in err
    assert not runs.exists()
