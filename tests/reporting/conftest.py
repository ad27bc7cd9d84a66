"""Helpers for the reporting tests: small notebooks built with nbformat."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

CHROMIUM = os.environ.get("EVALCORE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def make_notebook(path: Path, parameters: str, *bodies: str) -> Path:
    """Write a notebook with a tagged parameters cell followed by code cells."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"), cell]
    nb.cells += [nbformat.v4.new_code_cell(body) for body in bodies]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def nb_factory():
    return make_notebook


# --- headless Chromium over the DevTools protocol ------------------------------------------


class _DevTools:
    """A DevTools-protocol session with headless Chromium over ``--remote-debugging-pipe``
    (messages are JSON separated by NUL bytes on fds 3 and 4)."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_chrome, 65536)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._inbox.put(json.loads(raw))

    def _wait(self, match: Callable[[dict[str, Any]], bool], timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            msg = self._inbox.get(timeout=left)
            if match(msg):
                return msg
            if "method" in msg:
                self.events.append(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        reply = self._wait(lambda m, n=self._next: m.get("id") == n)
        assert "error" not in reply, reply
        return reply["result"]

    def open(self, url: str) -> None:
        self.call("Page.navigate", {"url": url}, session=True)
        self._wait(lambda m: m.get("method") == "Page.loadEventFired")

    def js(self, expression: str) -> Any:
        res = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=True
        )
        assert "exceptionDetails" not in res, res["exceptionDetails"]
        return res["result"].get("value")

    def type(self, text: str) -> None:
        self.call("Input.insertText", {"text": text}, session=True)

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, error log entries so far."""
        try:
            while True:
                msg = self._inbox.get_nowait()
                if "method" in msg:
                    self.events.append(msg)
        except queue.Empty:
            pass
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(p.get("exceptionDetails"))[:500])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(json.dumps(p.get("args"))[:500])
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(p["entry"].get("text", "")[:500])
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:  # noqa: BLE001 (it may be gone already)
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        os.close(self._to_chrome)


@pytest.fixture
def chromium(tmp_path: Path):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium; make test installs it)")
    tools = _DevTools(tmp_path / "profile")
    try:
        yield tools
    finally:
        tools.close()
