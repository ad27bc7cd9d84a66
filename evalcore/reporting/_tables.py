"""Tables as a reader meets them in a report: formatted numbers, no index, text left-aligned.

:func:`format_table` turns a DataFrame into a pandas ``Styler`` for ``display`` in a notebook
(and so in its HTML and PDF export): counts print as integers (``2``, not ``2.0``), other
numbers with a few digits chosen per column (``107.7``, ``0.512``, ``3.6e-87``), missing
values as ``—``, the pandas index is hidden, text columns are left-aligned and wrap at word
boundaries, code columns are shown as monospace ``<pre>`` blocks, and column names are shown
with spaces for underscores so that headers wrap between words.
"""

from __future__ import annotations

import html
import inspect
import math
import os
import re
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

__all__ = ["docstring_markdown", "format_number", "format_table", "shown_path"]

NA = "—"


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _decimals(values: Iterable[float], digits: int) -> int:
    """Decimals for a column: ``digits`` for values below 10, fewer for larger ones."""
    finite = [abs(float(v)) for v in values if not _is_missing(v) and math.isfinite(float(v))]
    big = max(finite, default=0.0)
    if big >= 1000:
        return 0
    if big >= 100:
        return 1
    if big >= 10:
        return max(1, digits - 1)
    return digits


def _is_p_column(name: Any) -> bool:
    words = str(name).lower().replace("-", "_").replace(" ", "_").split("_")
    return "p" in words or "pvalue" in words


def format_number(value: Any, decimals: int = 3, *, tiny: float = 1e-12, whole: bool = True) -> str:
    """One number as a reader wants it.

    Integers (and integer-valued floats) without decimals; other numbers with ``decimals``
    decimals, except non-zero values that would round to zero, which get two significant
    digits in scientific notation (``3.6e-87``); NaN and None as ``—``; ±inf as ``∞``.
    Values smaller in size than ``tiny`` are floating-point noise and print as ``0``.

    Args:
        value: The number.
        decimals: Decimals for non-integers.
        tiny: Below this size a value is 0 (pass 0 for p-values, which can be tiny).
        whole: Print integer-valued floats without decimals (False in a column of fractions,
            so that ``0.000`` lines up with ``0.324``).

    Returns:
        The text.
    """
    if _is_missing(value):
        return NA
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    v = float(value)
    if abs(v) < tiny:
        v = 0.0
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v.is_integer() and abs(v) < 1e15 and (whole or decimals == 0):
        return str(int(v))
    if v != 0 and abs(v) < 0.5 * 10 ** (-decimals):
        return f"{v:.1e}"
    return f"{v:.{decimals}f}"


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def printable_text(value: str) -> str:
    """Text that UTF-8 can encode: a lone surrogate (a JSON ``"\\ud800"`` escape in a model's
    reply decodes to one) is shown as its escape, ``\\ud800``, instead of breaking a
    DataFrame (pyarrow strings), a notebook or a file write; other text is returned as is.

    Args:
        value: The text.

    Returns:
        The text, with lone surrogates written as ``\\uXXXX``.
    """
    if not _SURROGATE.search(value):
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>&])")


def markdown_escape(value: Any) -> str:
    """Text to put inside Markdown so that it reads as itself, live and exported.

    A backslash before each of ``\\ ` * _ [ ] < > &`` (Markdown's escapes), not HTML
    entities: a renderer that escapes HTML itself (the report exporter) would show an entity
    as ``&lt;``, while a backslash escape is one level in every renderer (Jupyter's too).
    No tag of a name (``<img onerror=...>``) becomes markup, no ``*``/``_`` starts emphasis, no
    ``[..](..)`` a link and no backtick a code span.

    Args:
        value: The text (a run label, a router, a category, a reason).

    Returns:
        The escaped text (lone surrogates written as ``\\uXXXX``).
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", printable_text(str(value)))


def _text(value: Any) -> str:
    if _is_missing(value):
        return NA
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    return html.escape(printable_text(str(value)))


def _is_integer_column(col: pd.Series) -> bool:
    vals = pd.to_numeric(col, errors="coerce").dropna()
    return (
        bool(len(vals))
        and bool(np.all(np.isfinite(vals)))
        and bool(np.all(np.asarray(vals, float) == np.round(np.asarray(vals, float))))
    )


def _percent_formatter(decimals: int) -> Callable[[Any], str]:
    """A cell formatter showing a fraction as a percentage with ``decimals`` decimals."""

    def fmt(value: Any) -> str:
        return NA if _is_missing(value) else f"{100 * float(value):.{decimals}f}%"

    return fmt


def _number_formatter(decimals: int, *, tiny: float = 1e-12, whole: bool = True) -> Callable[[Any], str]:
    """A cell formatter: :func:`format_number` with these settings."""

    def fmt(value: Any) -> str:
        return format_number(value, decimals, tiny=tiny, whole=whole)

    return fmt


def format_table(
    frame: pd.DataFrame,
    *,
    digits: int = 3,
    percent: Iterable[str] = (),
    code: Iterable[str] = (),
    index: bool = False,
    caption: str | None = None,
    headers: bool = True,
) -> Any:
    """A DataFrame styled for a report (see the module docstring).

    Args:
        frame: The table.
        digits: Decimals of non-integer numbers below 10 (fewer for larger ones).
        percent: Columns of shares in [0, 1] shown as percentages (``51.2%``).
        code: Columns shown as monospace ``<pre>`` blocks (source code, long responses).
        index: Keep the index as the first column(s) (for a meaningful index).
        caption: A caption above the table.
        headers: Show column names with spaces for underscores (wrap between words).

    Returns:
        A ``pandas.io.formats.style.Styler`` (displays as HTML in notebooks; ``to_html()``).
    """
    df = frame.copy()
    if index:
        df = df.reset_index()
    percent, code = set(percent), set(code)
    formatters: dict[Any, str | Callable[[object], str] | None] = {}
    kinds: dict[Any, str] = {}
    for name in df.columns:
        formatters[name], kinds[name] = _column_formatter(name, df[name], digits, percent, code)
    styler = df.style.format(formatters, na_rep=NA).hide(axis="index")
    styler = _style_table(styler, df, kinds, headers)
    if caption:
        styler = styler.set_caption(html.escape(caption))
    styler.__class__ = InlineStyler
    return styler


def _code_cell(value: Any) -> str:
    """A code column's cell: a monospace ``<pre>`` block (see :data:`CODE_STYLE`), escaped."""
    return NA if _is_missing(value) else f'<pre style="{CODE_STYLE}">{html.escape(printable_text(str(value)))}</pre>'


def _column_formatter(
    name: Any, col: pd.Series, digits: int, percent: set[Any], code: set[Any]
) -> tuple[Callable[[Any], str], str]:
    """How one column of :func:`format_table` is written: ``(formatter, kind)``, the kind
    ``"code"``, ``"text"`` (left-aligned, wraps) or ``"number"`` (right-aligned, no wrap)."""
    if name in code:
        return _code_cell, "code"
    if name in percent:
        return _percent_formatter(max(digits - 2, 1)), "number"
    if pd.api.types.is_bool_dtype(col):
        return _text, "number"
    if pd.api.types.is_numeric_dtype(col):
        tiny = 0.0 if _is_p_column(name) else 1e-12
        if _is_integer_column(col):
            return (lambda v: format_number(v, 0)), "number"
        return _number_formatter(_decimals(col, digits), tiny=tiny, whole=False), "number"
    numeric = pd.to_numeric(col, errors="coerce")
    if (
        numeric.notna().sum() == col.notna().sum()
        and col.notna().any()
        and not any(isinstance(v, (str, bool, np.bool_)) for v in col if not _is_missing(v))
    ):
        return _number_formatter(0 if _is_integer_column(col) else _decimals(numeric, digits)), "number"

    def mixed(v: Any) -> str:
        if isinstance(v, (float, np.floating)) and not _is_missing(v):
            return format_number(v, _decimals([float(v)], digits))
        return _text(v)

    return mixed, "text"


def _style_table(styler: Any, df: pd.DataFrame, kinds: dict[Any, str], headers: bool) -> Any:
    """The header labels and the alignment of :func:`format_table`'s columns by kind."""
    # column names may be data (a pivot by subject, model or item id): shown as text, escaped
    if headers:
        labels = [html.escape(printable_text(str(c).replace("_", " "))) for c in df.columns]
        styler = styler.relabel_index(labels, axis="columns")
    else:
        styler = styler.format_index(escape="html", axis="columns")
    styler = styler.set_table_styles(
        [
            {
                "selector": "th",
                "props": "text-align: left; vertical-align: bottom; "
                "word-break: normal; overflow-wrap: normal; hyphens: none;",
            },
            {"selector": "td", "props": "vertical-align: top;"},
        ]
    )
    numeric_cols: list[Hashable] = [c for c in df.columns if kinds[c] == "number"]
    left = [c for c in df.columns if kinds[c] == "text"]
    code_cols = [c for c in df.columns if kinds[c] == "code"]
    if numeric_cols:
        styler = styler.set_properties(subset=numeric_cols, **{"text-align": "right", "white-space": "nowrap"})
    if left:
        styler = styler.set_properties(
            subset=left,
            **{"text-align": "left", "white-space": "normal", "overflow-wrap": "break-word", "max-width": "40em"},
        )
    if code_cols:  # the <pre> keeps its lines and scrolls sideways: code is never wrapped mid-word
        styler = styler.set_properties(subset=code_cols, **{"text-align": "left", "white-space": "normal"})
    return styler


CODE_STYLE = (
    "text-align:left;white-space:pre;overflow-x:auto;max-width:60em;margin:0;font-family:monospace;font-size:0.9em"
)
"""A code cell's ``<pre>``: lines kept as written (``white-space: pre``, never wrapped mid-word),
a long line scrolls (``overflow-x: auto``); the PDF's print rules wrap it between words instead."""

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CELL = re.compile(r"<(td|th)\b([^>]*)>")
_ID = re.compile(r'\bid="([^"]+)"')


def inline_styles(markup: str) -> str:
    """Copy the CSS of a Styler's ``<style>`` block onto its cells as ``style`` attributes.

    JupyterLab drops ``<style>`` elements from the HTML of an untrusted notebook's outputs (its
    sanitizer allows no ``style`` tag), and its own rule for table cells is ``text-align:
    right``, so a table of text read right-aligned there (the run overview); style attributes
    are kept (``text-align``, ``white-space`` and the others used here are on its list). The
    ``<style>`` block stays for every other reader.

    Args:
        markup: A Styler's HTML.

    Returns:
        The same HTML with each ``td``/``th`` carrying its rules (``#T_x th``, ``#T_x td`` and
        its own id's) in a ``style`` attribute.
    """
    block = re.search(r"<style[^>]*>(.*?)</style>", markup, re.S)
    if block is None:
        return markup
    by_tag: dict[str, str] = {"td": "", "th": ""}
    by_id: dict[str, str] = {}
    for selectors, body in _RULE.findall(block.group(1)):
        props = " ".join(line.strip() for line in body.strip().splitlines() if line.strip())
        for selector in (part.strip() for part in selectors.split(",")):
            words = selector.split()
            if len(words) == 2 and words[1] in by_tag:
                by_tag[words[1]] += props + " "
            elif len(words) == 1 and words[0].startswith("#"):
                by_id[words[0][1:]] = by_id.get(words[0][1:], "") + props + " "

    def cell(match: re.Match[str]) -> str:
        tag, attrs = match.group(1), match.group(2)
        ident = _ID.search(attrs)
        style = (by_tag[tag] + (by_id.get(ident.group(1), "") if ident else "")).strip()
        if not style or "style=" in attrs:
            return match.group(0)
        return f'<{tag}{attrs.rstrip()} style="{html.escape(style, quote=True)}">'

    head, tail = markup[: block.end()], markup[block.end() :]
    return head + _CELL.sub(cell, tail)


class InlineStyler(Styler):
    """The Styler :func:`format_table` returns: its HTML also carries the cells' CSS inline
    (:func:`inline_styles`), so the table looks the same in JupyterLab as in a report."""

    def _repr_html_(self) -> str | None:
        out = Styler._repr_html_(self)  # type: ignore[attr-defined]  # pandas' stubs leave it out
        return inline_styles(out) if isinstance(out, str) else out

    def to_html(self, *args: Any, **kwargs: Any) -> Any:
        out = super().to_html(*args, **kwargs)
        return inline_styles(out) if isinstance(out, str) else out


_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|obj|exc|ref):`~?([^`]+)`")
_SECTIONS = re.compile(r"^(Args|Arguments|Returns|Raises|Yields|Attributes|Examples?|Notes?):\s*$", re.M)


def docstring_markdown(doc: str | None) -> str:
    """A docstring as Markdown for a report: dedented (an indented docstring line would be a
    code block), cut before its ``Args:``/``Returns:`` sections, reStructuredText literals
    (double backticks) and roles (``:func:`x` ``) turned into Markdown code spans.

    Args:
        doc: The docstring (``obj.__doc__``).

    Returns:
        Markdown text.
    """
    text = inspect.cleandoc(doc or "")
    match = _SECTIONS.search(text)
    if match:
        text = text[: match.start()]
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    text = re.sub(r"``(.+?)``", lambda m: f"`{m.group(1)}`", text, flags=re.S)
    return text.strip()


def shown_path(path: str | os.PathLike[str], *bases: str | os.PathLike[str]) -> str:
    """A path as a report prints it: never an absolute machine path.

    Relative (POSIX separators) to the first of ``bases`` it lies below, ``"."`` for a base
    itself; a path below none of them is shown by its name alone. Symbolic links are resolved
    on both sides, and a relative ``path`` is taken from the working directory.

    Args:
        path: The path (a folder or file; it need not exist).
        *bases: Folders to show it relative to; default: the record folder
            (:func:`evalcore.reporting.record_dir`: the suite's folder of this notebook), then the
            working directory (the repository root in the suite).

    Returns:
        The text to print (empty for an empty path).
    """
    if not str(path):
        return ""
    if not bases:
        from evalcore.reporting._record import record_dir

        bases = (record_dir(), Path.cwd())
    full = Path(path).resolve()
    for base in bases:
        root = Path(base).resolve()
        if full.is_relative_to(root):
            return full.relative_to(root).as_posix() or "."
    return full.name or "."
