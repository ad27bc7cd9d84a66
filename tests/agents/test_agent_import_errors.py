"""An agent that cannot be imported is one clean line (issue 39): the spec, the module's file
(and line, when its code failed) and what failed, said once; ``agent-eval`` exits 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.agents import load_agent
from evalcore.errors import EvalcoreError


def _agent_eval(tmp_path: Path, spec: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVALCORE_AGENT_SEED": "1", "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("evalcore")),
            "agent-eval",
            "--agent",
            spec,
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def modules(tmp_path: Path) -> Path:
    (tmp_path / "h7_no_factory.py").write_text("VALUE = 1\n")
    (tmp_path / "h7_raises.py").write_text("import os\n\nraise RuntimeError('no config found')\n")
    return tmp_path


@pytest.mark.parametrize(
    "spec, expected",
    [
        (
            "h7_no_such_module:make",
            "field 'agent': agent 'h7_no_such_module:make': cannot import module 'h7_no_such_module': "
            "No module named 'h7_no_such_module'",
        ),
        (
            "h7_no_factory:make",
            "{dir}/h7_no_factory.py, field 'agent': agent 'h7_no_factory:make': "
            "module 'h7_no_factory' has no callable 'make'",
        ),
        (
            "h7_raises:make",
            "{dir}/h7_raises.py, line 3, field 'agent': agent 'h7_raises:make': "
            "importing module 'h7_raises' raised RuntimeError: no config found",
        ),
    ],
)
def test_an_agent_that_cannot_be_imported_is_one_line(modules: Path, spec: str, expected: str) -> None:
    proc = _agent_eval(modules, spec)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["evalcore: error: " + expected.format(dir=modules)], proc.stderr
    assert proc.stderr.count("field 'agent'") == 1 and proc.stderr.count(spec) == 1
    assert not (modules / "out").exists() or not any((modules / "out").iterdir())


def test_hosted_and_in_process_agents_raise_the_same_error(modules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(modules))
    monkeypatch.chdir(modules)
    for spec in ("h7_raises:make", "h7_no_factory:make"):
        with pytest.raises(EvalcoreError) as hosted:
            load_agent(spec)
        with pytest.raises(EvalcoreError) as in_process:
            load_agent(spec, in_process=True)
        assert str(hosted.value) == str(in_process.value)
        assert (hosted.value.path, hosted.value.line, hosted.value.field) == (
            in_process.value.path,
            in_process.value.line,
            "agent",
        )
