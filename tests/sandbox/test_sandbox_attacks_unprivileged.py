"""The sandbox's channel, allow-list, exit-path and memory-limit tests rerun as an unprivileged user.

As in ``test_sandbox_unprivileged.py`` (both use ``tests/_as_nobody.py``): run as root with
``pytest -m integration``, the new test files rerun under ``runuser -u nobody`` in a private
mount namespace, where the sandbox isolates through a user namespace (and, for the weak
fallback's cases, without one). The answer key that the allow-list test plants is made here,
as root, in a folder ``nobody`` can read but not write, and named to the rerun.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from _as_nobody import rerun_as_nobody

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
FILES = (
    "tests/sandbox/test_sandbox_channels.py",
    "tests/sandbox/test_sandbox_fs_allowlist.py",
    "tests/sandbox/test_sandbox_exit_paths.py",
    "tests/sandbox/test_sandbox_memory_limits.py",
)


def _module(name: str):  # noqa: ANN202 - a test module beside this one
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_channel_allowlist_exit_and_memory_attacks_fail_as_nobody() -> None:
    import shutil

    planted = _module("test_sandbox_fs_allowlist").plant_answer_key()
    try:
        out = rerun_as_nobody(FILES, env={"EVALCORE_TEST_PLANTED": str(planted)}, tail=6000)
        # As nobody the attacks must meet the same sandbox, not a skip: only the tmpfs case
        # (no memory cgroup for an unprivileged user) may be skipped.
        skipped = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
        assert all("memory cgroup" in line for line in skipped), out.stdout[-6000:]
    finally:
        shutil.rmtree(planted, ignore_errors=True)
