"""One headless Chromium that prints many HTML pages to PDF (the notebook suite's exports).

``chromium --print-to-pdf`` starts a browser for every page: about 0.8 s of the 1 s a report's
PDF takes on a 2-core machine. A suite prints 17 of them, so :func:`shared_printer` keeps one
Chromium for its whole run and drives it over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file descriptors 3 and 4;
no port is opened). Each page is printed in a tab of its own, in a browser context of its own
(like a fresh profile: nothing one page stores is seen by the next; 0.2 s of the 0.5 s a page
takes), opened at the same window size and with the same print settings as the command line's
print (``printBackground``, the page's CSS ``@page`` size, no header or footer), so the PDF is the
same, page for page (``tests/reporting/test_reporting_pdf_shared.py`` compares the rendered pages).

Faults: a page that does not finish in time ends the browser (the next page starts a fresh one)
and is reported like the command line's timeout; a browser that cannot start or dies between
pages is given up for the rest of the run, and :func:`~evalcore.reporting.html_to_pdf` prints
with a browser per page again (:attr:`ChromiumPrinter.broken`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["ChromiumPrinter", "PrintFailed", "PrintTimedOut", "PrinterBroken", "active_printer", "shared_printer"]

# the switches of a headless browser that prints (also html_to_pdf's one-process print)
BROWSER_SWITCHES = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
PRINT_PARAMS = {"printBackground": True, "preferCSSPageSize": True, "displayHeaderFooter": False}
START_TIMEOUT_S = 30.0
_CLOSED = object()  # what the reader thread queues when Chromium closed its end of the pipe


class PrinterBroken(Exception):
    """The shared browser cannot be used (it did not start, or it died): print another way."""


class PrintFailed(Exception):
    """This page could not be printed (a navigation error, a print error, the time ran out)."""


class PrintTimedOut(PrintFailed):
    """The page did not load and print within its time (the browser is ended)."""


class ChromiumPrinter:
    """A headless Chromium, started at the first :meth:`print_pdf`, that prints page after page.

    Args:
        binary: The Chromium binary.
        window: The window's width and height in CSS pixels (the print script lays the page out
            at this width, as ``--window-size`` does for the one-process print).
    """

    def __init__(self, binary: str, window: tuple[int, int]) -> None:
        self.binary = binary
        self.window = window
        self.broken = False  # set when the browser failed outside a page: print another way
        self.started = 0  # browsers started (a timed-out page ends one)
        self._proc: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._to_chrome = -1
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._next = 0
        self._lock = threading.Lock()

    # -- the browser -----------------------------------------------------------------------
    def _start(self) -> None:
        self._profile = tempfile.mkdtemp(prefix="evalcore-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the pipe's two ends where Chromium looks for them
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        try:
            self._proc = subprocess.Popen(
                [self.binary, *BROWSER_SWITCHES, f"--user-data-dir={self._profile}", "--remote-debugging-pipe"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=wire,
                pass_fds=(3, 4),
                start_new_session=True,  # its renderers and helpers are ended with it
            )
        except OSError as exc:
            for fd in (to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w):
                os.close(fd)
            raise PrinterBroken(f"Chromium did not start: {exc}") from exc
        finally:
            if self._proc is not None:
                os.close(to_chrome_r)
                os.close(from_chrome_w)
        self.started += 1
        self._to_chrome = to_chrome_w
        self._inbox = queue.Queue()
        threading.Thread(target=self._read, args=(from_chrome_r, self._inbox), daemon=True).start()
        try:
            self._call("Browser.getVersion", deadline=time.monotonic() + START_TIMEOUT_S)
        except PrintFailed as exc:
            self._stop()
            raise PrinterBroken(f"Chromium did not answer: {exc}") from exc

    @staticmethod
    def _read(fd: int, inbox: queue.Queue[Any]) -> None:
        buf = bytearray()
        try:
            while chunk := os.read(fd, 1 << 20):
                buf += chunk
                while (end := buf.find(b"\0")) >= 0:
                    inbox.put(json.loads(bytes(buf[:end])))
                    del buf[: end + 1]
        except (OSError, ValueError):
            pass
        finally:
            os.close(fd)
            inbox.put(_CLOSED)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if self._to_chrome >= 0:
            with contextlib.suppress(OSError):
                os.close(self._to_chrome)  # Chromium closes itself when its pipe closes
            self._to_chrome = -1
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, 9)
                proc.wait()
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def close(self) -> None:
        """End the browser (a later :meth:`print_pdf` starts another)."""
        with self._lock:
            self._stop()

    # -- the protocol ------------------------------------------------------------------------
    def _wait(self, match: Callable[[dict[str, Any]], bool], deadline: float) -> dict[str, Any]:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PrintTimedOut("timed out")
            try:
                msg = self._inbox.get(timeout=left)
            except queue.Empty:
                raise PrintTimedOut("timed out") from None
            if msg is _CLOSED:
                self._inbox.put(_CLOSED)
                raise PrinterBroken("Chromium exited")
            if match(msg):
                return msg

    def _call(self, method: str, params: dict[str, Any] | None = None, *, deadline: float, session: str = "") -> Any:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        except OSError as exc:
            raise PrinterBroken(f"Chromium's pipe closed: {exc}") from exc
        wanted = self._next
        reply = self._wait(lambda m: m.get("id") == wanted, deadline)
        if "error" in reply:
            raise PrintFailed(str(reply["error"].get("message") or reply["error"]))
        return reply.get("result") or {}

    # -- printing ------------------------------------------------------------------------------
    def print_pdf(self, url: str, timeout_s: float) -> bytes:
        """The PDF of the page at ``url``, printed in a tab and browser context of its own.

        Raises:
            PrintFailed: The page could not be printed (the browser is ended on a timeout).
            PrinterBroken: The browser cannot be used: print another way (``broken`` is set).
        """
        with self._lock:
            try:
                if self._proc is None or self._proc.poll() is not None:
                    self._stop()
                    self._start()
                return self._print(url, time.monotonic() + timeout_s)
            except PrinterBroken:
                self.broken = True
                self._stop()
                raise
            except PrintTimedOut:
                self._stop()  # a page still loading or printing: the next one gets a fresh browser
                raise

    def _print(self, url: str, deadline: float) -> bytes:
        # a browser context of its own (like a fresh profile): no storage or cache of one page
        # is seen by the next
        context = self._call("Target.createBrowserContext", deadline=deadline)["browserContextId"]
        done = False
        try:
            target = self._call(
                "Target.createTarget", {"url": "about:blank", "browserContextId": context}, deadline=deadline
            )["targetId"]
            session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True}, deadline=deadline)[
                "sessionId"
            ]
            self._call("Page.enable", deadline=deadline, session=session)
            width, height = self.window
            metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
            self._call("Emulation.setDeviceMetricsOverride", metrics, deadline=deadline, session=session)
            nav = self._call("Page.navigate", {"url": url}, deadline=deadline, session=session)
            if nav.get("errorText"):
                raise PrintFailed(f"could not open the page: {nav['errorText']}")
            self._wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session, deadline)
            data = self._call("Page.printToPDF", PRINT_PARAMS, deadline=deadline, session=session)["data"]
            done = True
        finally:
            if done or time.monotonic() < deadline:  # not after a timeout: the browser is ended then
                with contextlib.suppress(PrintFailed, PrinterBroken):
                    self._call(
                        "Target.disposeBrowserContext", {"browserContextId": context}, deadline=time.monotonic() + 5
                    )
        return base64.b64decode(data)


_active: ChromiumPrinter | None = None
_active_lock = threading.Lock()


def active_printer(binary: str) -> ChromiumPrinter | None:
    """The printer of the enclosing :func:`shared_printer` for ``binary`` (None outside one,
    for another binary, or once it broke)."""
    printer = _active
    if printer is None or printer.broken or printer.binary != binary:
        return None
    return printer


@contextlib.contextmanager
def shared_printer(binary: str | None, window: tuple[int, int], enabled: bool = True) -> Iterator[None]:
    """Within the block, :func:`~evalcore.reporting.html_to_pdf` prints with one Chromium (started
    at the first page, ended at the end of the block); nested blocks share the outer one's."""
    global _active
    if not enabled or binary is None:
        yield
        return
    with _active_lock:
        outer = _active is not None
        printer = _active if _active is not None else ChromiumPrinter(binary, window)
        _active = printer
    try:
        yield
    finally:
        if not outer:
            with _active_lock:
                _active = None
            printer.close()
