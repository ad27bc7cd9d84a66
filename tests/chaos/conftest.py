"""Fixtures of the chaos tests; their tools are in ``_chaos.py`` (this folder is put on the path)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chaos import ChaosServer, capital_of  # noqa: E402


@pytest.fixture
def chaos_server() -> Iterator[ChaosServer]:
    """A :class:`ChaosServer` answering ``capital_of``, started for the test and stopped after it."""
    with ChaosServer(responder=capital_of) as srv:
        yield srv


@pytest.fixture
def disk(tmp_path):
    """A 4 MiB tmpfs at ``tmp_path/disk``; ``fill(leave)`` fills it to ``leave`` free bytes."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()[:120]}")

    class Disk:
        path = mount

        def fill(self, leave: int = 0) -> None:
            st = os.statvfs(mount)
            free = st.f_bavail * st.f_frsize
            filler = mount / ".filler"
            with open(filler, "ab") as fh:
                fh.write(b"\0" * max(0, free - leave))
            while os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize > leave:
                with open(filler, "ab") as fh:
                    try:
                        fh.write(b"\0" * 4096)
                    except OSError:
                        break

        def free(self) -> None:
            (mount / ".filler").unlink(missing_ok=True)

    try:
        yield Disk()
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
