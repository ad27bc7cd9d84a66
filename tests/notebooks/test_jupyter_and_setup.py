"""`make demo` sets up JupyterLab and says what it does (issue 31 items 4 and 9): the set-up
steps are announced and timed, the llama-cpp-python compile is announced with its duration,
JupyterLab is among the extras make installs, the venv holds the project's kernel spec, and a
notebook executes in that kernel."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _make(*args: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-s", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_setup_announces_each_step_before_it_runs() -> None:
    plan = _make("-n", "-B", ".venv/.evalcore-installed")
    lines = plan.splitlines()

    def first(text: str) -> int:
        return next(i for i, line in enumerate(lines) if text in line)

    # every long step is named before its command; the compile says how long it takes
    assert first("==> setting up .venv") < first('step "virtual environment')
    assert first("building llama-cpp-python from source (about 7 min on 2 cores") < first("install -q -e '.[all]'")
    assert first('step "torch 2.13.0') <= first("install -q torch==2.13.0")
    assert "set-up done in" in plan


def test_each_step_prints_its_time() -> None:
    out = _make("-B", "--eval", 'probe: ; @$(STEP_FN); step "a step" sleep 1', "probe")
    lines = out.splitlines()
    assert lines[0] == "==> a step" and len(lines) == 2
    # whole seconds from two clock readings: a 1 s step reads 1 s, or more on a loaded machine
    found = re.fullmatch(r"    done in (\d+) s", lines[1])
    assert found is not None and int(found.group(1)) >= 1, lines
    failing = subprocess.run(
        ["make", "-s", "-B", "--eval", 'probe: ; @$(STEP_FN); step "broken" false', "probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failing.returncode != 0 and "done in" not in failing.stdout  # a failed step is not reported done


def test_make_installs_jupyterlab() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("jupyterlab") for dep in extras["jupyter"])
    all_extras = extras["all"][0].split("[", 1)[1].rstrip("]").split(",")
    assert "jupyter" in all_extras
    assert "install -q -e '.[all]'" in _make("-n", "-B", ".venv/.evalcore-installed")
    demo = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("demo:"))
    assert "$(STAMP)" in demo.split()  # make demo installs `all` first


def _kernel_spec() -> dict:
    spec = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    if not spec.is_file():
        pytest.skip(f"no kernel spec in {sys.prefix} (not installed by make)")
    return json.loads(spec.read_text())


def test_the_venv_has_the_projects_kernel() -> None:
    spec = _kernel_spec()
    assert spec["display_name"] == "Python 3 (evalcore)"
    assert Path(spec["argv"][0]).resolve() == Path(sys.executable).resolve()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert json.loads(path.read_text())["metadata"]["kernelspec"]["name"] == "python3", path.name


@pytest.mark.notebooks
def test_a_notebook_executes_in_the_projects_kernel(tmp_path: Path) -> None:
    _kernel_spec()
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    ksm = KernelSpecManager()
    assert ksm.get_kernel_spec("python3").display_name == "Python 3 (evalcore)"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys, evalcore\nprint(sys.executable)\nprint(evalcore.__file__)")]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (evalcore)", "language": "python"}
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = nb.cells[0].outputs[0]["text"].splitlines()
    assert Path(printed[0]).resolve() == Path(sys.executable).resolve()
    assert Path(printed[1]).resolve().is_relative_to(ROOT)


@pytest.mark.notebooks
def test_jupyter_lab_serves_the_notebooks_with_the_projects_kernel(tmp_path: Path) -> None:
    _kernel_spec()
    jupyter = Path(sys.executable).parent / "jupyter-lab"
    if not jupyter.exists():
        pytest.fail("jupyter-lab is not installed in the venv: `make demo` must install JupyterLab")
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import os

    root_user = ["--allow-root"] if os.geteuid() == 0 else []  # as `make demo` tells root to
    proc = subprocess.Popen(
        [
            str(jupyter),
            "--no-browser",
            f"--port={port}",
            "--IdentityProvider.token=t",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.root_dir={ROOT}",
            *root_user,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)},
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/kernelspecs?token=t", timeout=5) as r:
                    specs = json.loads(r.read())
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("jupyter lab did not start")
                time.sleep(0.5)
        assert specs["default"] == "python3"
        assert specs["kernelspecs"]["python3"]["spec"]["display_name"] == "Python 3 (evalcore)"
        with urllib.request.urlopen(f"{base}/api/contents/notebooks?token=t", timeout=10) as r:
            names = {c["name"] for c in json.loads(r.read())["content"]}
        assert {"benchmark.ipynb", "compare.ipynb"} <= names
        with urllib.request.urlopen(f"{base}/lab?token=t", timeout=10) as r:
            assert r.status == 200 and b"JupyterLab" in r.read()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
