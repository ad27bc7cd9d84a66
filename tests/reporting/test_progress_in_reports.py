"""Nothing of a progress bar reaches a report, and the kernel's TCP warning is gone (issue 39).

The notebook suite's kernels run with ``EVALCORE_PROGRESS=0`` (evalcore's bars: off) and over
Unix sockets (``KernelManager.transport = "ipc"``: no "Kernel is running over TCP without
encryption" line at every start); a tqdm bar a cell draws itself still goes to ``stderr.log``,
never into the executed notebook as a widget.
"""

from __future__ import annotations

import json
import os

import pytest

from evalcore._progress import PROGRESS_ENV
from evalcore.reporting import run_notebooks
from evalcore.reporting._notebook_kernel import _ipc_config, _kernel_env

BODY = """
import os, json
from ipykernel import get_connection_info
from evalcore._progress import progress_bar, progress_enabled
print("progress:", os.environ.get("EVALCORE_PROGRESS"), progress_enabled(None))
print("transport:", json.loads(get_connection_info())["transport"])
total = sum(1 for _ in progress_bar(range(5), desc="counted", unit="step"))
print("total:", total)
"""


def test_the_suites_kernels_run_without_bars_and_over_unix_sockets(tmp_path, nb_factory, monkeypatch) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(tmp_path / "nbs" / "bars.ipynb", "x: int = 1  # unused", BODY)
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "suite.yaml").write_text("runs:\n  - {name: bars, notebook: nbs/bars.ipynb}\n")
    monkeypatch.setenv("JPY_SESSION_NAME", "inherited-from-a-lab-terminal")  # must not turn bars on
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    said: list[str] = []
    result = run_notebooks(tmp_path / "params" / "suite.yaml", output=tmp_path / "out", echo=said.append, pdf=False)
    run = result.results[0]
    assert run.status == "ok", run.error
    run_dir = result.suite_dir / "bars"
    nb = json.loads((run_dir / "bars.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    printed = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert "progress: 0 False" in printed
    assert "transport: ipc" in printed
    assert "total: 5" in printed
    kinds = {key for o in outputs for key in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" not in kinds
    assert "counted" not in json.dumps(outputs)  # no bar, not even its text
    logs = "".join((run_dir / name).read_text() for name in ("kernel.log", "stderr.log") if (run_dir / name).exists())
    assert "without encryption" not in logs + "\n".join(said)
    assert os.environ.get(PROGRESS_ENV) is None  # the runner's own environment is left as it was


def test_kernel_env_turns_bars_off_and_restores(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(PROGRESS_ENV, "1")
    with _kernel_env(tmp_path, tmp_path):
        assert os.environ[PROGRESS_ENV] == "0"
    assert os.environ[PROGRESS_ENV] == "1"
    assert _ipc_config(tmp_path).KernelManager.transport == "ipc"


pytestmark = pytest.mark.notebooks


def test_each_kernel_gets_its_own_socket_folder():
    """Two kernels started at once in one working folder (the cluster path) must not share the
    default ``kernel-ipc-N`` sockets: each gets a private folder, removed afterwards."""
    import stat

    from evalcore.reporting._notebook_kernel import _ipc_config, _ipc_folder

    with _ipc_folder() as a, _ipc_folder() as b:
        ips = {_ipc_config(a).KernelManager.ip, _ipc_config(b).KernelManager.ip}
        assert len(ips) == 2 and all(len(ip) < 90 for ip in ips)
        assert stat.S_IMODE(a.stat().st_mode) == 0o700 and _ipc_config(a).KernelManager.transport == "ipc"
    assert not a.exists() and not b.exists()
