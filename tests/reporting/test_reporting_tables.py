"""format_table / format_number / shown_path: how report tables print numbers, text, code and paths."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalcore.reporting import format_number, format_table, no_figure, shown_path


def _cells(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", html, re.S)]


@pytest.mark.parametrize(
    "value, decimals, text",
    [
        (2.0, 3, "2"),
        (107.715757, 1, "107.7"),
        (0.5, 3, "0.500"),
        (float("nan"), 3, "—"),
        (None, 3, "—"),
        (np.int64(7), 3, "7"),
        (True, 3, "yes"),
        (9.3e-17, 3, "0"),
        (float("inf"), 3, "∞"),
        (-0.25, 2, "-0.25"),
    ],
)
def test_format_number(value, decimals, text):
    assert format_number(value, decimals) == text


def test_format_number_keeps_tiny_p_values():
    assert format_number(3.6e-87, 3, tiny=0) == "3.6e-87"


def test_format_table_numbers_index_text_and_code():
    df = pd.DataFrame(
        {
            "mode": ["strict", "flexible"],
            "n": [8, 8],
            "correct": [2.0, 3.0],
            "mean": [0.25, 0.375],
            "p_value": [3.6e-87, 0.2],
            "wall_s": [107.715757, np.nan],
            "code": ["def f(x):\n    return x < 1", None],
            "significant": [True, False],
        },
        index=[5, 6],
    )
    html = format_table(df, code=["code"]).to_html()
    cells = _cells(html)
    header, rows = cells[:8], cells[8:]
    assert header == ["mode", "n", "correct", "mean", "p value", "wall s", "code", "significant"]
    assert rows[:8] == ["strict", "8", "2", "0.250", "3.6e-87", "107.7", "def f(x):\n    return x &lt; 1", "yes"]
    assert rows[8:] == ["flexible", "8", "3", "0.375", "0.200", "—", "—", "no"]
    # no index column, code in a monospace pre block keeping its lines, text left-aligned
    assert ">5<" not in html and "row_heading" not in html
    assert re.search(r"<pre[^>]*monospace[^>]*>def f\(x\):\n    return x &lt; 1</pre>", html)
    left = re.search(r"(#T_\w+_row0_col0[^{]*)\{([^}]*)\}", html)
    assert "text-align: left" in left.group(2)


def test_format_table_mixed_column_and_percent():
    df = pd.DataFrame({"field": ["wall time (s)", "run id"], "value": [107.715757, "gsm8k-1"], "share": [0.5123, 0.1]})
    cells = _cells(format_table(df, percent=["share"]).to_html())
    assert cells[3:] == ["wall time (s)", "107.7", "51.2%", "run id", "gsm8k-1", "10.0%"]


def test_format_table_escapes_html():
    cells = _cells(format_table(pd.DataFrame({"response": ["<script>x</script>"]})).to_html())
    assert cells[1] == "&lt;script&gt;x&lt;/script&gt;"


def test_no_figure_is_a_sentence():
    assert no_figure("every call cost $0 (local model).").data == "*No figure: every call cost $0 (local model).*"


def test_fraction_columns_keep_their_decimals():
    cells = _cells(format_table(pd.DataFrame({"ci_low": [0.0, 0.1], "ci_high": [0.324, 1.0]})).to_html())
    assert cells[2:] == ["0.000", "0.324", "0.100", "1.000"]


def test_docstring_markdown_dedents_and_converts_rst_literals():
    from evalcore.reporting import docstring_markdown

    doc = """Tool synthesis, measured.

        For each case the tool that answered (``tool_used``) is run; see :func:`evalcore.stats.paired_t`.
        Score = ``success · 0.5``.

        Args:
            agent: ignored.
        """
    text = docstring_markdown(doc)
    assert text == (
        "Tool synthesis, measured.\n\nFor each case the tool that answered (`tool_used`) is run; "
        "see `evalcore.stats.paired_t`.\nScore = `success · 0.5`."
    )
    assert "``" not in text and not any(line.startswith("    ") for line in text.splitlines())


def test_shown_path_is_relative_and_never_an_absolute_machine_path(tmp_path, monkeypatch):
    """The routing report names its output folder (and a report any path) relative to the
    notebook's record folder or the working directory (the repository root in the suite)."""
    repo = tmp_path / "repo"
    suite = repo / "reports" / "20260101-000000" / "routing"
    suite.mkdir(parents=True)
    (repo / "link").symlink_to(repo / "reports")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EVALCORE_RECORD_DIR", str(suite))
    elsewhere = tmp_path / "elsewhere" / "outcomes.csv"
    cases = {
        "reports/routing": "reports/routing",  # the default output_dir, below the working directory
        str(repo / "reports" / "routing"): "reports/routing",  # the same, given absolute
        str(suite / "summary.csv"): "summary.csv",  # the record folder comes first
        str(suite): ".",
        "link/x/../routing": "reports/routing",  # symlinks and .. resolved
        str(elsewhere): "outcomes.csv",  # below no base: the name alone
        "": "",
    }
    for given, shown in cases.items():
        assert shown_path(given) == shown, given
    assert shown_path(elsewhere, tmp_path / "elsewhere", repo) == "outcomes.csv"
    assert shown_path(repo / "runs" / "a", repo) == "runs/a"
    for given in [*cases, str(elsewhere), "/", str(tmp_path)]:
        text = shown_path(given)
        assert not text.startswith("/") and str(tmp_path) not in text, (given, text)
