"""JupyterLab in a real browser (issue 39): the venv's ``jupyter lab`` on 127.0.0.1 (a free port,
a token, ``--no-browser``, a temporary root holding a copy of ``notebooks/benchmark.ipynb``),
driven by Debian's Chromium through Playwright (``executable_path``: no browser is downloaded).
The notebook runs every cell in the "Python 3 (evalcore)" kernel, and the page must show its
figures, its results tables and a progress bar (an ipywidgets bar from tqdm.auto) that finished.

The model is a replay of a run recorded here with an in-memory model, so no model is loaded and
the notebook is the real one, unchanged but for its parameters cell. Each step has its own time
limit and says which step failed (the machine may be loaded). Marked ``notebooks``: ``make test``
runs it, ``make unit`` does not; skipped with one line only where Chromium or Playwright is
missing (``make system-deps`` installs Chromium; ``pip install -e '.[all]'`` brings Playwright).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat
import pytest

from evalcore.models import Completion, GenerationParams, Usage

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("EVALCORE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LIMIT = 8  # MMLU items: per-subject table and figure, latency figure, sample table

# per-step limits (seconds); generous: 2 cores shared by many processes
SERVER_START_S = 180
PAGE_OPEN_S = 180
KERNEL_READY_S = 180
RUN_ALL_S = 420


class _LetterModel:
    """Answers every MMLU question with one letter (so some answers are right, some wrong)."""

    name = "letters:test"
    endpoint = "memory"

    def complete(self, messages: Sequence[dict[str, str]], params: GenerationParams) -> Completion:
        letter = "ABCD"[sum(map(ord, messages[-1]["content"])) % 4]
        text = f"The answer is ({letter})."
        return Completion(text=text, usage=Usage(40, 5), cost_usd=0.0, latency_s=0.05, model=self.name)

    async def acomplete(self, messages: Sequence[dict[str, str]], params: GenerationParams) -> Completion:
        return self.complete(messages, params)


def _requirements() -> Any:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (make system-deps installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[all]')")
    jupyter = Path(sys.executable).parent / "jupyter-lab"
    if not jupyter.exists():
        pytest.fail("jupyter-lab is not installed in the venv (pip install -e '.[all]')")
    spec = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    if not spec.is_file() or json.loads(spec.read_text())["display_name"] != "Python 3 (evalcore)":
        pytest.fail(f"the venv has no 'Python 3 (evalcore)' kernel ({spec}); make install adds it")
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        pytest.fail("ipywidgets is not installed: JupyterLab cannot draw a progress bar (pip install -e '.[all]')")
    return sync_playwright


def _notebook_copy(root: Path) -> Path:
    """``notebooks/benchmark.ipynb`` under ``root`` with its parameters set for a replayed MMLU run."""
    from evalcore.runs import run_benchmark

    recorded = run_benchmark(
        "mmlu", _LetterModel(), limit=LIMIT, run_dir=root / "recorded", run_id="letters", progress=False, concurrency=1
    )
    nb = nbformat.read(ROOT / "notebooks" / "benchmark.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values = {
        "dataset": '"mmlu"',
        "model": json.dumps(f"replay:{recorded}"),
        "limit": str(LIMIT),
        "concurrency": "1",
        "run_dir": json.dumps(str(root / "runs")),
        "run_id": '"in-the-browser"',
        "progress": "True",
    }
    lines = []
    for line in cell.source.splitlines():
        name = line.split(":", 1)[0].strip()
        if name in values and ":" in line and "=" in line:
            annotation = line.split("=", 1)[0]
            comment = line.split("#", 1)[1] if "#" in line else ""
            line = f"{annotation}= {values.pop(name)}  #{comment}"
        lines.append(line)
    assert not values, f"benchmark.ipynb has no parameters {sorted(values)}"
    cell.source = "\n".join(lines)
    path = root / "notebooks" / "benchmark.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, limit_s: float, check: Any, interval_s: float = 0.5) -> Any:
    """Poll ``check()`` until it returns something truthy; fail naming the step after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval_s)
    pytest.fail(f"step '{what}' did not finish within {limit_s:g} s (last state: {last!r})")


_STATE_JS = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return {ready: false};
  const session = panel.sessionContext.session;
  const kernel = session && session.kernel;
  const cells = panel.content.widgets.map(c => c.model);
  const code = cells.filter(m => m.type === 'code');
  const errors = [];
  for (const m of code) {
    for (const o of m.outputs.toJSON()) {
      if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
    }
  }
  return {
    ready: true,
    kernel: kernel ? kernel.status : null,
    kernelDisplayName: panel.sessionContext.kernelDisplayName,
    pending: panel.sessionContext.pendingInput,
    code: code.length,
    executed: code.filter(m => m.executionCount !== null).length,
    errors,
  };
}"""


def test_jupyterlab_runs_the_benchmark_notebook_in_chromium(tmp_path: Path) -> None:
    sync_playwright = _requirements()
    root = tmp_path / "lab"
    notebook = _notebook_copy(root)
    port, token = _free_port(), secrets.token_hex(16)
    root_user = ["--allow-root"] if os.geteuid() == 0 else []
    log = (tmp_path / "jupyter.log").open("wb")
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
    }
    env.pop("EVALCORE_PROGRESS", None)  # the kernel decides, as for a researcher
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "jupyter-lab"),
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *root_user,
        ],
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def server_up() -> bool:
            if server.poll() is not None:
                tail = (tmp_path / "jupyter.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"step 'start jupyter lab': it exited with {server.returncode}: {tail}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as r:
                    return r.status == 200
            except OSError:
                return False

        _wait("start jupyter lab", SERVER_START_S, server_up)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(PAGE_OPEN_S * 1000)
                rel = notebook.relative_to(root).as_posix()
                page.goto(f"{base}/lab/tree/{rel}?token={token}", timeout=PAGE_OPEN_S * 1000)
                try:
                    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_OPEN_S * 1000)
                except Exception:  # noqa: BLE001 - the step's message says what did not happen
                    pytest.fail(f"step 'open {rel} in JupyterLab' did not show the notebook within {PAGE_OPEN_S} s")

                state = _wait(
                    "kernel 'Python 3 (evalcore)' idle",
                    KERNEL_READY_S,
                    lambda: (lambda s: s if s.get("kernel") == "idle" else None)(page.evaluate(_STATE_JS)),
                    interval_s=1.0,
                )
                assert state["kernelDisplayName"] == "Python 3 (evalcore)"
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

                def all_ran() -> Any:
                    s = page.evaluate(_STATE_JS)
                    if s.get("errors"):
                        pytest.fail(f"a cell failed in the browser: {s['errors'][0]}")
                    done = s.get("executed") == s.get("code") and s.get("kernel") == "idle"
                    return s if done else None

                state = _wait("run all cells", RUN_ALL_S, all_ran, interval_s=1.0)
                assert state["code"] > 5

                # figures: the per-subject bars and the latency/tokens/cost histograms, as images
                images = page.locator(".jp-OutputArea-output img")
                _wait("figures rendered", 60, lambda: images.count() >= 2)
                for i in range(images.count()):
                    size = images.nth(i).evaluate("img => [img.naturalWidth, img.naturalHeight]")
                    assert size[0] > 100 and size[1] > 100, size
                # the results tables: the accuracy table (mean with its interval) among them
                tables = page.locator(".jp-OutputArea-output table")
                assert tables.count() >= 4
                headers = [" ".join(tables.nth(i).locator("th").all_text_contents()) for i in range(tables.count())]
                accuracy = next(
                    (i for i, h in enumerate(headers) if h.split()[:4] == ["mode", "n", "correct", "mean"]), None
                )
                assert accuracy is not None and "ci low ci high" in headers[accuracy], headers
                row = tables.nth(accuracy).locator("tbody tr").first.locator("td").all_text_contents()
                assert row[1].strip() == str(LIMIT), row  # n: every replayed item scored
                assert any(h.startswith("subject n accuracy") for h in headers), headers
                # the run overview (text) reads left-aligned, as in the report (issue 39)
                overview = next(i for i, h in enumerate(headers) if h.split() == ["field", "value"])
                aligns = (
                    tables.nth(overview)
                    .locator("td")
                    .evaluate_all("cells => cells.map(td => getComputedStyle(td).textAlign)")
                )
                assert aligns and set(aligns) == {"left"}, aligns
                text = page.locator(".jp-Notebook").text_content() or ""
                assert "per-subject" in text.lower() or "subject" in text.lower()
                # the progress bar: an ipywidgets bar drawn by tqdm.auto that reached its end
                bars = page.locator(".jp-OutputArea-output .widget-hprogress")
                _wait("progress bar rendered", 60, lambda: bars.count() >= 1)
                box = bars.first.locator("xpath=..")
                label = box.text_content() or ""
                assert f"{LIMIT}/{LIMIT}" in label, label
                assert "sample" in label, label
                done = bars.first.evaluate(
                    "el => { const bar = el.querySelector('.progress-bar');"
                    " return bar ? [bar.className, bar.style.width || bar.style.height] : null; }"
                )
                assert done is not None and "progress-bar-success" in done[0], done
                outputs = " ".join(page.locator(".jp-OutputArea-output").all_text_contents())
                assert "IProgress not found" not in outputs and "TqdmWarning" not in outputs
            finally:
                browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()
