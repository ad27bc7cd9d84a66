"""Progress bars where the researcher looks: a terminal or a notebook open in JupyterLab.

One rule for every long loop of evalcore (a benchmark run, the agent evaluation, the threshold
sweep, routing): ``progress=None`` (the default) shows a bar

- on a terminal (stderr is a TTY): tqdm's text bar with the count, the rate and the time left;
- in a notebook open in JupyterLab (a kernel a Jupyter server started for a notebook session,
  which sets ``JPY_SESSION_NAME``, with ipywidgets installed): tqdm's live widget bar;

and nothing elsewhere: a papermill or nbclient run (no one watches; a widget would be a dead
"HBox(...)" in the executed notebook and the report), a log file, CI. ``True`` forces the bar,
``False`` hides it. ``EVALCORE_PROGRESS=0`` (or ``1``) decides for ``None`` everywhere: the
notebook suite sets it to ``0`` in its kernels, so no bar reaches a report.

tqdm.auto picks the widget bar inside a kernel and the text bar elsewhere; tqdm's own
``disable=None`` would switch itself off in a notebook (a kernel's stderr is not a TTY), which is
why the decision is taken here and passed to tqdm as a plain bool.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TextIO

PROGRESS_ENV = "EVALCORE_PROGRESS"
"""``0``/``off`` or ``1``/``on``: whether ``progress=None`` shows bars (unset: decided per place)."""

_OFF = {"0", "off", "false", "no"}
_ON = {"1", "on", "true", "yes"}


def in_live_notebook() -> bool:
    """True inside a kernel that a Jupyter server started for an open notebook (JupyterLab,
    Notebook 7: ``JPY_SESSION_NAME`` is set) when ipywidgets can draw the bar."""
    if not os.environ.get("JPY_SESSION_NAME") or "ipykernel" not in sys.modules:
        return False
    try:
        return importlib.util.find_spec("ipywidgets") is not None
    except (ImportError, ValueError):
        return False


def progress_enabled(progress: bool | None = None, stream: TextIO | None = None) -> bool:
    """Whether to show a progress bar.

    Args:
        progress: ``True``/``False`` decide; ``None`` follows ``EVALCORE_PROGRESS`` when set, else
            shows a bar on a terminal or in a notebook open in JupyterLab (see the module docstring).
        stream: The stream a text bar would go to (default ``sys.stderr``).

    Returns:
        True to show the bar.
    """
    if progress is not None:
        return bool(progress)
    env = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if env in _OFF:
        return False
    if env in _ON:
        return True
    if in_live_notebook():
        return True
    out = sys.stderr if stream is None else stream
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: float | None = None,
    desc: str = "",
    unit: str = "it",
    progress: bool | None = None,
    tick_s: float | None = None,
    **kwargs: Any,
) -> Any:
    """A tqdm.auto bar (a widget in JupyterLab, text on a terminal) or a disabled one.

    Args:
        iterable: What to iterate over (``None``: call ``update`` yourself).
        total: Units in all (default ``len(iterable)``).
        desc: What is being done (the bar's label).
        unit: Name of one unit (``"threshold"``, ``"case"``); tqdm shows its rate per second.
        progress: See :func:`progress_enabled`.
        tick_s: Redraw the bar every this many seconds while it is open, so its elapsed time moves
            while one long unit runs (an agent-evaluation category takes 10-50 s); None: only on
            updates, as tqdm does.
        **kwargs: More tqdm arguments.

    Returns:
        The ``tqdm`` object (iterate it, or ``update``/``set_postfix_str``/``close`` it).
    """
    if not progress_enabled(progress):
        return _NullBar(iterable, total)  # nothing shown: tqdm (and its imports) not loaded
    from tqdm.auto import tqdm

    # the time left from the average rate of the whole run (tqdm's default follows the last few
    # steps, which jumps when steps differ: an agent start, then quick requests)
    kwargs.setdefault("smoothing", 0.0)
    bar = tqdm(iterable, total=total, desc=desc, unit=unit, **kwargs)
    if tick_s and not bar.disable:
        threading.Thread(target=_tick, args=(bar, float(tick_s)), name="evalcore-progress-tick", daemon=True).start()
    return bar


class _NullBar:
    """What :func:`progress_bar` returns when no bar is shown: tqdm's calls, counting and nothing else."""

    disable = True

    def __init__(self, iterable: Iterable[Any] | None, total: float | None) -> None:
        self.iterable = iterable
        self.total = total
        self.n: float = 0

    def __iter__(self) -> Any:
        for item in self.iterable or ():
            yield item
            self.n += 1

    def __enter__(self) -> _NullBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        return None

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        return None

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        return None

    def refresh(self, *args: Any, **kwargs: Any) -> None:
        return None

    def close(self) -> None:
        return None


def _tick(bar: Any, every_s: float) -> None:
    """Redraw ``bar`` every ``every_s`` seconds until it is closed (tqdm's ``close`` disables it)."""
    while True:
        time.sleep(every_s)
        if bar.disable:
            return
        try:
            bar.refresh()
        except Exception:  # noqa: BLE001 - a closed or broken display ends the ticking, never the work
            return
