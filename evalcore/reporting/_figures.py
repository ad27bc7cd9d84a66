"""Saving figures as PNG next to a notebook's records."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evalcore._io import atomic_path
from evalcore.errors import EvalcoreError
from evalcore.reporting._record import record_dir

__all__ = ["figures_dir", "no_figure", "save_figure"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def figures_dir() -> Path:
    """Return the folder figures are saved to: ``<record dir>/figures``."""
    return record_dir() / "figures"


def save_figure(fig: Any, name: str, *, dpi: int = 150) -> Path:
    """Save a matplotlib figure as ``<record dir>/figures/<name>.png``.

    The record directory is :func:`evalcore.reporting.record_dir`: ``$EVALCORE_RECORD_DIR``
    (set by the suite runner), beside papermill's output notebook, or, for a notebook run in
    place in a repository, ``reports/interactive/<notebook-stem>/``. The file is written to a
    temporary name and then renamed, so a reader never sees half a PNG. The figure stays open,
    so it still shows in the notebook.

    Args:
        fig: A ``matplotlib.figure.Figure`` (or anything with a ``savefig`` method, such as
            a seaborn ``FacetGrid``).
        name: File name without extension; characters other than letters, digits, ``.``,
            ``_`` and ``-`` become ``_``.
        dpi: Resolution of the PNG.

    Returns:
        The path of the PNG.

    Raises:
        EvalcoreError: ``fig`` cannot be saved or ``name`` is empty.
    """
    if not hasattr(fig, "savefig"):
        raise EvalcoreError(f"cannot save a {type(fig).__name__} as a figure", field="fig")
    stem = _SAFE.sub("_", str(name)).strip("._")
    if not stem:
        raise EvalcoreError("figure name must contain a letter or digit", field="name")
    if stem.lower().endswith(".png"):
        stem = stem[:-4]
    target = figures_dir() / f"{stem}.png"
    with atomic_path(target, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    return target


def no_figure(reason: str) -> Any:
    """The sentence a report shows instead of an empty figure.

    A chart with nothing to draw (the cost histogram of a local model that costs nothing,
    a synthesis chart without synthesized tools) is replaced by one line saying why, so no
    blank axes reach the HTML or PDF.

    Args:
        reason: Why there is no figure, e.g. ``"every call cost $0 (local model)"``.

    Returns:
        An ``IPython.display.Markdown`` object (display it), or the text when IPython is
        not installed.
    """
    from evalcore.reporting._tables import markdown_escape

    # the reason may name a router, a category or a run: text in the Markdown, never markup
    # (backslash escapes: HTML entities would be escaped again by the report exporter)
    text = f"*No figure: {markdown_escape(str(reason).strip().rstrip('.'))}.*"
    try:
        from IPython.display import Markdown
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        return text
    return Markdown(text)
