"""The check candidates' copy of their view in tmpfs (issue 29, the page-cache channel):
built once per installation, atomically, under a lock, read-only, reused, rebuilt when the
fingerprint changes, and turned off by ``EVALCORE_SANDBOX_VIEW=0``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from evalcore.sandbox import view


@pytest.fixture
def small_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "tool").write_text("#!/bin/sh\n")
    os.chmod(src / "tool", 0o755)
    os.symlink("pkg/mod.py", src / "link.py")
    files = [str(src / "pkg" / "mod.py"), str(src / "tool"), str(src / "link.py")]
    monkeypatch.setattr(view, "_sources", lambda: (list(files), "9.9"))
    monkeypatch.setattr(view, "_shared_libraries", lambda objects: [])
    return files


def test_the_copy_is_built_once_read_only_and_reused(tmp_path: Path, small_sources: list[str]) -> None:
    base = str(tmp_path / "views")
    first = view.ensure_view(base)
    assert first["built"] is True and first["files"] == 3
    copy = first["path"]
    assert os.path.basename(copy).startswith(f"evalcore-view-{os.geteuid()}-")
    assert Path(copy + small_sources[0]).read_text() == "x = 1\n"
    assert os.readlink(copy + small_sources[2]) == "pkg/mod.py"  # a link stays a link
    assert os.stat(copy + small_sources[0]).st_mode & 0o777 == 0o444
    assert os.stat(copy + small_sources[1]).st_mode & 0o777 == 0o555
    assert os.stat(copy).st_mode & 0o222 == 0
    again = view.ensure_view(base)
    assert again == {"path": copy, "built": False, "seconds": again["seconds"]}
    assert [n for n in os.listdir(base) if ".tmp-" in n] == []  # nothing half-built left


def test_a_changed_file_gets_a_new_copy(tmp_path: Path, small_sources: list[str]) -> None:
    base = str(tmp_path / "views")
    old = view.ensure_view(base)["path"]
    Path(small_sources[0]).write_text("x = 22\n")
    new = view.ensure_view(base)
    assert new["built"] is True and new["path"] != old
    assert Path(new["path"] + small_sources[0]).read_text() == "x = 22\n"


def test_two_pools_starting_at_once_build_it_once(
    tmp_path: Path, small_sources: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = []
    copy_into = view._copy_into

    def counting(copy: str, files: list[str]) -> int:
        builds.append(copy)
        return copy_into(copy, files)

    monkeypatch.setattr(view, "_copy_into", counting)
    base = str(tmp_path / "views")
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(view.ensure_view(base))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1
    assert len({r["path"] for r in results}) == 1


def test_a_copy_others_may_write_is_not_used(tmp_path: Path, small_sources: list[str]) -> None:
    base = str(tmp_path / "views")
    copy = view.ensure_view(base)["path"]
    os.chmod(copy, 0o777)
    assert view._usable(copy) is False
    rebuilt = view.ensure_view(base)
    assert rebuilt["built"] is True and rebuilt["path"] == copy and view._usable(copy)


@pytest.mark.parametrize("value", ["0", "off", ""])
def test_the_environment_turns_it_off_or_points_elsewhere(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(view.VIEW_ENV, value)
    assert view.view_base() is None
    assert view.ensure_view()["path"] is None
    monkeypatch.setenv(view.VIEW_ENV, str(tmp_path))
    assert view.view_base() == str(tmp_path)
    monkeypatch.delenv(view.VIEW_ENV)
    assert view.view_base() == "/dev/shm"


def test_the_real_view_holds_the_interpreter_stdlib_numpy_and_their_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import sysconfig

    monkeypatch.setenv(view.SITE_ENV, "0")  # numpy is copied where site-packages are not bound (issue 36)

    files = view.view_files()
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    assert os.path.realpath(sys.executable) in files
    assert os.path.join(stdlib, "json", "__init__.py") in files
    assert not any(f.startswith(os.path.join(stdlib, "test") + "/") for f in files)
    assert not any(f.startswith(os.path.join(stdlib, "tkinter") + "/") for f in files)
    assert any(os.path.basename(f).startswith("libc.so") for f in files)
    try:
        import numpy
    except ImportError:
        return
    assert os.path.realpath(numpy.__file__) in files
    site = os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))
    assert not [
        f for f in files if f.startswith(site + "/") and not f.startswith((site + "/numpy/", site + "/numpy.libs/"))
    ]


def test_bytecode_written_later_does_not_make_a_new_copy(tmp_path: Path, small_sources: list[str]) -> None:
    cache = Path(small_sources[0]).parent / "__pycache__"
    cache.mkdir()
    pyc = cache / "mod.cpython-311.pyc"
    pyc.write_bytes(b"old")
    small_sources.append(str(pyc))
    base = str(tmp_path / "views")
    first = view.ensure_view(base)["path"]
    pyc.write_bytes(b"newer and longer")
    again = view.ensure_view(base)
    assert again["built"] is False and again["path"] == first


def test_without_ldd_there_is_no_copy_and_the_reason_says_why(
    tmp_path: Path, small_sources: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    got = view.ensure_view(str(tmp_path / "views"))
    assert got["path"] is None and "ldd not found" in got["reason"]
    assert not (tmp_path / "views").exists()


_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1] + ".inuse", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(60)
"""


def test_copies_no_process_holds_are_removed_when_a_new_one_is_built(tmp_path: Path, small_sources: list[str]) -> None:
    """A changed installation gets a new copy; the old ones (180 MB each in /dev/shm) go unless held."""
    import subprocess
    import sys

    base = tmp_path / "views"
    base.mkdir()
    prefix = f"evalcore-view-{os.geteuid()}-"
    stale, held, building = base / f"{prefix}aaaa", base / f"{prefix}bbbb", base / f"{prefix}cccc.tmp-{os.getpid()}"
    for d in (stale, held, building):
        (d / "usr" / "lib").mkdir(parents=True)
        (d / "usr" / "lib" / "f.py").write_text("x\n")
        (d / ".complete").write_text("1 files\n")
        os.chmod(d / "usr" / "lib", 0o555)
        os.chmod(d / "usr", 0o555)
        os.chmod(d, 0o555)
    other_user = base / "evalcore-view-4242-dddd"
    other_user.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(held)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        got = view.ensure_view(str(base))
        assert got["built"] is True
        assert not stale.exists() and not Path(str(stale) + ".inuse").exists()  # no one held it
        assert held.exists() and (held / "usr" / "lib" / "f.py").read_text() == "x\n"  # a pool holds it
        assert building.exists()  # its builder (this process) is alive
        assert other_user.exists()  # another user's copies are theirs
        assert Path(got["path"]).exists()
    finally:
        holder.kill()
        holder.wait()
    os.chmod(building, 0o755)


def test_a_copy_in_use_by_this_process_is_kept_when_the_installation_changes(
    tmp_path: Path, small_sources: list[str]
) -> None:
    base = str(tmp_path / "views")
    old = view.ensure_view(base)["path"]
    Path(small_sources[0]).write_text("x = 3\n")
    new = view.ensure_view(base)["path"]
    assert new != old and os.path.isdir(old) and os.path.isdir(new)  # this process's pool may still use old
