"""Scratch directories of the samples: the working directory, fresh tmpfs mounts, and removal.

Runs in the worker (see :mod:`.worker`); imports only what the worker has loaded already.
"""

from __future__ import annotations

import os
import stat as _stat
import sys

from .linux import MS_NOATIME as _MS_NOATIME
from .linux import MS_NODEV as _MS_NODEV
from .linux import MS_NOEXEC as _MS_NOEXEC
from .linux import MS_NOSUID as _MS_NOSUID

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .linux import Libc

_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
_WORKDIR = "/tmp/sandbox"
# Each scratch tmpfs holds at most 64 MiB of content and SCRATCH_INODES files, directories and
# links (issue 42: without nr_inodes a tmpfs allows half the RAM's pages in inodes, and 2.35
# million empty files cost the host 2.9 GiB of kernel memory, about 1.3 KiB each, which no
# size= counts; 16,384 inodes are about 21 MiB of kernel memory a mount, 63 MiB for the three).
SCRATCH_INODES = 16384
_SCRATCH_TMPFS = {d: f"size=64m,nr_inodes={SCRATCH_INODES},mode=1777" for d in ("/tmp", "/var/tmp", "/dev/shm")}


class Scratch:
    """The worker's scratch directories (a mixin of :class:`.worker._Worker`, which sets
    ``namespaces``, ``is_root``, ``uid``, ``libc``, ``_workdir_ready``, ``_fresh_tmpfs`` and
    ``_scratch_marks``)."""

    namespaces: bool
    is_root: bool
    uid: int
    libc: Libc | None
    _workdir_ready: bool
    _fresh_tmpfs: set[str]
    _scratch_marks: dict[str, tuple[Any, ...]]

    # Per scratch directory that is no tmpfs of ours: the directories below it that hold a mount
    # point (made by the worker to reach a path kept visible or hidden), when last marked.
    _scratch_holders: dict[str, tuple[str, ...]] | None = None
    scratch_broken = False  # a sample moved a directory of the worker's: the worker must go

    def _workdir(self) -> tuple[str, str | None]:
        """The sample's working directory, and the temporary one to remove after it (fallback)."""
        if self.namespaces:
            if not self._workdir_ready:
                os.mkdir(_WORKDIR, 0o700)
                if self.is_root:
                    os.chown(_WORKDIR, self.uid, self.uid)
                self._workdir_ready = True
                self._mark_scratch()
            return _WORKDIR, None
        import tempfile

        tmpdir = tempfile.mkdtemp(prefix="evalcore-sandbox-")
        if self.is_root:
            os.chown(tmpdir, self.uid, self.uid)
        return tmpdir, tmpdir

    def _mark_scratch(self) -> None:
        """Remember the scratch directories (and the working directory) as clean.

        For a scratch directory that is no tmpfs of ours, the directories below it that hold a
        mount point are marked too (with them, the one place a sample may write).
        """
        marks = {}
        for d in self._fresh_tmpfs:
            marks[d] = _stat_mark(d)
        holders: dict[str, tuple[str, ...]] = {}
        for d in _SCRATCH_DIRS:
            if d in self._fresh_tmpfs or not os.path.isdir(d) or os.path.islink(d):
                continue
            holders[d] = _holders(d, _mount_points_below(d))
            for path in (d, *holders[d]):
                marks[path] = _stat_mark(path)
        if self._workdir_ready:
            marks[_WORKDIR] = _stat_mark(_WORKDIR)
        self._scratch_marks = marks
        self._scratch_holders = holders

    def _unchanged(self, d: str) -> bool:
        """Whether a scratch directory is as it was when last marked clean (one ``lstat`` per
        directory that a sample could have written to)."""
        marks = self._scratch_marks
        if d in self._fresh_tmpfs:
            paths: tuple[str, ...] = (d,)
        else:
            held = (self._scratch_holders or {}).get(d)
            if held is None:
                return False
            paths = (d, *held)
        if d == "/tmp" and self._workdir_ready:
            paths += (_WORKDIR,)
        return all(_stat_mark(p) == marks.get(p) for p in paths)

    def _wipe_scratch(self) -> None:
        """Give the next sample scratch directories as fresh as the first one had.

        A scratch tmpfs that the sample left exactly as it found it (same inode, size, mode,
        owner, link count, modification and change times, read with one ``stat``; the mounts
        are ``noatime``) is kept; any other is replaced by a new, empty tmpfs, so nothing a
        sample wrote there (files, timestamps, modes, extended attributes, trees of any depth)
        reaches the next one. Directories that are not a tmpfs of ours are kept the same way
        when neither they, nor the directories in them that hold a mount point, nor the working
        directory changed; else they are emptied (around the mount points) and their modes
        restored.
        """
        renewed = False
        for d in _SCRATCH_DIRS:
            if self._unchanged(d):
                continue
            if d in self._fresh_tmpfs:
                if self._renew_tmpfs(d):
                    renewed = True
                    if d == "/tmp":
                        self._workdir_ready = False
                    continue
            try:
                names = os.listdir(d)
            except OSError:
                continue
            if d == "/tmp":
                self._workdir_ready = False
            # A sample that owns them (root of a user namespace) may have changed their modes.
            for path in (d, *(self._scratch_holders or {}).get(d, ())):
                mark = self._scratch_marks.get(path)
                try:
                    if mark and _stat.S_ISDIR(os.lstat(path).st_mode):  # the sample is gone: no race
                        os.chmod(path, _stat.S_IMODE(mark[2]))
                except OSError:
                    pass
            # What the worker mounted here (paths it keeps visible, or hides, below a scratch
            # directory it could not replace) is never emptied: only what samples wrote, also
            # inside the directories that hold those mount points.
            _empty_around(d, names, _mount_points_below(d))
            if any(not os.path.isdir(h) for h in (self._scratch_holders or {}).get(d, ())):
                # One was renamed (it took its mount point along): later samples would not find
                # the kept path there. This worker stops after its reply; the pool starts anew.
                self.scratch_broken = True
            renewed = True
        if renewed:
            self._mark_scratch()

    def _renew_tmpfs(self, d: str) -> bool:
        """Replace a scratch tmpfs by a new empty one (False if that is refused)."""
        libc = self.libc
        if libc is None:
            return False
        if libc.lib.umount2(d.encode(), 2) != 0:  # MNT_DETACH
            return False
        try:
            libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOATIME, _SCRATCH_TMPFS[d])
            os.chmod(d, 0o1777)
        except OSError:
            return False
        return True


def _scrub_environment(workdir: str) -> None:
    os.environ.clear()
    os.environ.update(
        {"PATH": _SAFE_PATH, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    )
    if "tempfile" in sys.modules:
        tempfile: Any = sys.modules["tempfile"]
        tempfile.tempdir = None


def _mount_points_below(directory: str) -> set[str]:
    """Mount points strictly below ``directory`` in this mount namespace (``/proc/self/mountinfo``)."""
    prefix = directory.rstrip("/") + "/"
    found: set[str] = set()
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            for line in fh:
                fields = line.split(b" ", 5)
                if len(fields) > 4:
                    raw = fields[4]
                    if b"\\" in raw:  # the kernel writes a space, tab, newline or backslash as \ooo
                        import re

                        raw = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), raw)
                    point = raw.decode("utf-8", "surrogateescape")
                    if point.startswith(prefix):
                        found.add(point)
    except OSError:
        pass
    return found


def _holders(directory: str, mounted: set[str]) -> tuple[str, ...]:
    """The directories strictly between ``directory`` and the mount points below it."""
    found: set[str] = set()
    prefix = directory.rstrip("/") + "/"
    for point in mounted:
        parent = os.path.dirname(point)
        while parent.startswith(prefix) and parent not in found:
            found.add(parent)
            parent = os.path.dirname(parent)
    return tuple(sorted(found - mounted))


def _empty_around(directory: str, names: list[str], mounted: set[str]) -> None:
    """Remove the entries of ``directory`` except mount points; a directory that holds a mount
    point is emptied the same way (it was made by the worker, so the recursion is as deep as the
    worker's own paths, whatever a sample created)."""
    for name in names:
        path = f"{directory}/{name}"
        if path in mounted:
            continue
        try:
            is_dir = _stat.S_ISDIR(os.lstat(path).st_mode)
            if any(m.startswith(path + "/") for m in mounted):
                if is_dir:
                    _empty_around(path, os.listdir(path), mounted)
                continue
            if is_dir:
                _rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            pass


def _stat_mark(path: str) -> tuple[Any, ...]:
    """What tells a scratch directory unchanged: one ``lstat`` (None if it is gone)."""
    try:
        st = os.lstat(path)
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mode, st.st_uid, st.st_nlink, st.st_mtime_ns, st.st_ctime_ns)


def _rmtree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``, importing shutil on first need.

    shutil loads zlib, bz2 and lzma: imported at start-up, their libraries would be mapped
    into every forked sample, and copied and torn down with it, for nothing.
    """
    import shutil

    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # a tree deeper than the recursion limit
        pass
    if os.path.lexists(path):
        _rmtree_deep(path)


def _rmtree_deep(path: str) -> None:
    """Remove a directory tree of any depth, holding one descriptor at a time (no recursion,
    no path longer than one name)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    names: list[str] = []
    steps = 0
    try:
        while steps < 10_000_000:
            steps += 1
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            sub = entry.name
                            break
                        os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        pass
            if sub is not None:
                try:
                    child = os.open(sub, flags, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                break
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


_O_OUTPUT = os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC


def _private_tmpfs(libc: Libc) -> int:
    """A tmpfs that only this worker reaches (mounted, opened, then detached): a descriptor of
    its root, where the candidates' output files are made (``O_TMPFILE``).

    Not memory files: their inode numbers come from one counter of the kernel's internal
    tmpfs, which a sample moves with every shared anonymous mapping (``mmap(-1, n)``, a
    ``MAP_SHARED`` map of ``/dev/zero``) and the next sample read as the inode number of its
    ``stdout``. This tmpfs numbers only the worker's own files, two per sample.
    """
    path = "/.evalcore-output"
    os.mkdir(path, 0o700)
    libc.mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=256m,mode=0700")
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if libc.lib.umount2(path.encode(), 2) != 0:  # MNT_DETACH: no path leads there any more
        err = libc._ctypes.get_errno()
        os.close(fd)
        raise OSError(err, f"umount {path}: {os.strerror(err)}")
    os.rmdir(path)
    return fd
