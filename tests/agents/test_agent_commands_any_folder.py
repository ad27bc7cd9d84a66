"""The agent commands work from any folder, wherever the project lives and however it is
installed (issue 31, item 1).

A project cloned under the temporary folder and installed editable failed outside its root:
``ModuleNotFoundError: No module named 'evalcore.agents._adapters'`` — the hosted agent's view
gets a private ``/tmp`` and keeps only its working folder and ``sys.path``, and an editable
install finds the package through an import hook, on neither. Here the package is copied under
the temporary folder and installed into a fresh virtual environment — editable (setuptools'
PEP 660 wheel, as ``pip install -e`` makes it) and regular (the ordinary wheel) — and
``agent-eval`` and ``sweep`` run from another folder with a hosted agent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import evalcore

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="hosted agents are isolated on Linux"),
    pytest.mark.slow,  # a fresh virtual environment and an install of the project per case
]

ROOT = Path(evalcore.__file__).resolve().parent.parent
CLI = "import sys; from evalcore.cli import main; sys.exit(main(sys.argv[1:]))"


def _copy_project(dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copytree(ROOT / "evalcore", dest / "evalcore", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, dest / name)
    return dest


def _install(project: Path, venv: Path, editable: bool) -> Path:
    """Build the project's wheel (editable or regular) and unpack it into a fresh virtual
    environment (what pip does, less the record); the test environment's site-packages lends
    the dependencies. Returns the environment's python."""
    dist = project.parent / "dist"
    hook = "build_editable" if editable else "build_wheel"
    out = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta as b; print(b.{hook}({str(dist)!r}))"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = dist / out.stdout.strip().splitlines()[-1]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["EVALCORE_AGENT_SEED"] = "20261128"
    env["MPLBACKEND"] = "Agg"
    env["HOME"] = str(tmp)
    return env


@pytest.mark.parametrize("editable", [True, False], ids=["editable", "regular"])
def test_agent_commands_run_from_any_folder_with_the_project_under_tmp(tmp_path: Path, editable: bool) -> None:
    assert str(tmp_path).startswith("/tmp/")  # where a first try clones the project
    project = _copy_project(tmp_path / "clone" / "evalcore-project")
    python = _install(project, tmp_path / "venv", editable)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(tmp_path)
    where = subprocess.run(
        [str(python), "-c", "import evalcore; print(evalcore.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    location = Path(where.stdout.strip())
    if editable:  # the copy under /tmp, reached through the editable hook, not sys.path
        assert location == project / "evalcore" / "__init__.py", where
    else:
        assert str(location).startswith(str(tmp_path / "venv")), where

    run = subprocess.run(
        [
            str(python),
            "-c",
            CLI,
            "agent-eval",
            "--agent",
            "oracle",
            "--categories",
            "functional",
            "--counts",
            "simple=3,medium=0,complex=0,edge=0",
            "--output-dir",
            "out",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-3000:])
    assert "ModuleNotFoundError" not in run.stderr
    results = list((elsewhere / "out").glob("evaluation_*.json"))
    assert len(results) == 1
    data = json.loads(results[0].read_text())
    assert data["config"]["agent_process"] == "hosted" and data["detailed_results"]["functional"]["score"] == 1.0

    agent = tmp_path / "agents" / "fixed_threshold_agent.py"
    agent.parent.mkdir()
    agent.write_text(
        "from evalcore.agents.reference import make_agent\n\n"
        "def make(threshold):\n    return make_agent(model=None, threshold=threshold)\n"
    )
    sweep = subprocess.run(
        [
            str(python),
            "-c",
            CLI,
            "sweep",
            "--agent",
            f"{agent}:make",
            "--thresholds",
            "0.5,0.7",
            "--counts",
            "simple=2,medium=0,complex=0,edge=0",
            "--unrelated",
            "2",
            "--output",
            "sweep_out",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sweep.returncode == 0, (sweep.stdout[-2000:], sweep.stderr[-3000:])
    assert "ModuleNotFoundError" not in sweep.stderr
    assert any((elsewhere / "sweep_out").iterdir())


CLOSING = """
from evalcore.agents._protocol import AgentResponse


class A:
    registry = None

    def __init__(self, out):
        self.out = out

    def reset(self):
        pass

    def process_request(self, q):
        return AgentResponse(success=True, result=1)

    def close(self):
        open(self.out + "/closed.txt", "w").write("bye")


def make(out):
    return A(out)
"""


def test_a_hosted_agent_started_from_tmp_itself_finds_its_factory_and_is_closed(tmp_path: Path) -> None:
    # with /tmp as the working folder the whole of /tmp was "kept" and so nothing under it: the
    # agent's factory file was not found in its view; and closing the agent (SIGTERM from
    # evalcore's init) still runs the agent's own close()
    factory = tmp_path / "closing_agent.py"
    factory.write_text(CLOSING)
    out = tmp_path / "out"
    out.mkdir()
    code = (
        "import json; from evalcore.agents import HostedAgent\n"
        f"a = HostedAgent({str(factory) + ':make'!r}, {{'out': {str(out)!r}}}, writable=[{str(out)!r}])\n"
        "print(json.dumps([a.isolation, a.process_request('q').result])); a.close()\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd="/tmp", capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    isolation, result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result == 1
    assert (out / "closed.txt").read_text() == "bye"
