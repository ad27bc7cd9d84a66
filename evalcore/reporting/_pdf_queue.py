"""PDF exports of a notebook suite printed by Chromium while the next notebook runs.

Printing a report to PDF starts a headless Chromium (about 1 s of the 2-core VM per notebook,
17 times in ``make demo``); the next notebook's kernel start and its model or agent work do not
need the PDF, so the print runs on one background thread and the suite goes on. The main thread
alone writes results: :meth:`PdfQueue.harvest` applies the finished prints to their
:class:`EntryResult` (``pdf``, or the reason in ``messages``) before an index is written, and
:meth:`PdfQueue.drain` waits for every print before the last index, the headline table and the
``latest`` link (also when the suite is interrupted: a PDF is never listed before it is whole,
:func:`evalcore.reporting.html_to_pdf` writes through a temporary file).
"""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

from evalcore.errors import EvalcoreError
from evalcore.reporting._export import CHROMIUM_HINT, find_chromium, html_to_pdf
from evalcore.reporting._notebook_index import _rel
from evalcore.reporting._suite_folder import EntryResult


class PdfQueue:
    """Prints HTML exports to PDF one at a time on a background thread.

    Args:
        suite_dir: The suite folder (``EntryResult.pdf`` is relative to it).
    """

    def __init__(self, suite_dir: Path) -> None:
        self._suite_dir = suite_dir
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pending: list[tuple[EntryResult, concurrent.futures.Future[Path]]] = []

    def submit(self, result: EntryResult, html: Path) -> None:
        """Print ``html`` to the PDF beside it; ``result`` learns of it at the next harvest."""
        binary = find_chromium()
        if binary is None:
            return  # the suite said so once at its start (CHROMIUM_HINT)
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="evalcore-pdf")
        self._pending.append((result, self._pool.submit(html_to_pdf, html, html.with_suffix(".pdf"), chromium=binary)))

    def harvest(self) -> None:
        """Apply the finished prints to their results (on the thread that writes the index)."""
        still: list[tuple[EntryResult, concurrent.futures.Future[Path]]] = []
        for result, future in self._pending:
            if not future.done():
                still.append((result, future))
                continue
            try:
                result.pdf = _rel(future.result(), self._suite_dir)
            except EvalcoreError as exc:
                if str(exc) != CHROMIUM_HINT:
                    result.messages.append(f"PDF not made: {exc}")
            except Exception as exc:  # noqa: BLE001 - an OSError of the print: reported, the suite goes on
                result.messages.append(f"PDF not made: {type(exc).__name__}: {exc}")
        self._pending = still

    def drain(self) -> None:
        """Wait for every print (each bounded by Chromium's timeout), then harvest."""
        concurrent.futures.wait([future for _, future in self._pending])
        self.harvest()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    @property
    def pending(self) -> int:
        """Prints not yet harvested."""
        return len(self._pending)
