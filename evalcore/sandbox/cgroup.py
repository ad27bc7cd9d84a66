"""The samples' memory cgroup, made by the worker (a mixin of :class:`.worker._Worker`).

One sample runs at a time per worker, so the cgroup below the worker's own is the sample's:
its limit is the sample's ``memory_mb`` plus a headroom, with no swap; the zygotes join it when
forked, so every sample is born in it. Runs in the worker: imports only ``os``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def cgroup_bases(controllers: Sequence[str] = ("memory",)) -> list[tuple[str, str]]:
    """``(kind, directory)`` of this process's own cgroups, as directories of the host: each v1
    hierarchy mounted with one of ``controllers`` (kind: that controller), in the order of
    ``/proc/self/cgroup``, then the v2 unified hierarchy (kind ``"v2"``). Shared by the
    sandbox's memory cgroup and the agent host's memory and pids cgroups.

    Raises:
        OSError: ``/proc/self/cgroup`` or ``/proc/self/mountinfo`` cannot be read.
    """
    with open("/proc/self/cgroup") as fh:
        lines = fh.read().splitlines()
    mounts = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(fields) > 4 and len(rfields) > 2:
                mounts.append((fields[3], fields[4], rfields[0], rfields[2].split(",")))
    v1: list[tuple[str, str]] = []
    v2: list[tuple[str, str]] = []
    for line in lines:
        hid, _, rest = line.partition(":")
        ctrls, _, path = rest.partition(":")
        for root, point, fstype, opts in mounts:
            if not (path == root or path.startswith(root.rstrip("/") + "/")):
                continue
            base = point + (path[len(root.rstrip("/")) :] if root != "/" else path)
            if fstype == "cgroup":
                v1 += [(kind, base) for kind in controllers if kind in ctrls.split(",") and kind in opts]
            elif fstype == "cgroup2" and hid == "0" and ctrls == "":
                v2.append(("v2", base))
    return v1 + v2


class MemoryCgroup:
    """The worker's memory cgroup (a mixin of :class:`.worker._Worker`, which sets ``notes``)."""

    notes: list[str]
    _cg_v1 = False  # the v1 memory hierarchy (memory and memory+swap limit files)
    memory_cgroup = ""  # the samples' memory cgroup (a directory of the host), or "" without one
    _cg_files: tuple[int, ...] = ()  # (cgroup.procs, limit files...) as open descriptors
    _cg_limit = 0  # the bytes the limit files hold now

    def _setup_memory_cgroup(self) -> None:
        """Make a memory cgroup below this process's own (v1 ``memory`` hierarchy, or v2 where
        the parent delegates the memory controller), limited to a sample's memory and no swap.

        The zygotes join it when forked (:meth:`_join_memory_cgroup`), so every sample is born
        in it (no migration per sample); one sample runs at a time, so it is the sample's own.
        Its descriptors stay open: after :meth:`_enter_namespaces` the host's ``/sys`` is out
        of sight. Where anything is refused this does nothing, and a note says so.
        """
        if os.environ.get("EVALCORE_SANDBOX_CGROUP", "1") == "0":
            self.notes.append("memory cgroup not requested")
            return
        try:
            candidates = [(kind != "v2", base) for kind, base in cgroup_bases(("memory",))]  # v1's first
        except OSError as exc:
            self.notes.append(f"no memory cgroup: {exc}")
            return
        for v1, base in candidates:
            d = f"{base.rstrip('/')}/evalcore-sandbox-{os.getpid()}"
            try:
                _remove_stale_cgroups(base)
                os.mkdir(d, 0o755)
            except OSError:
                continue
            names = (
                ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes") if v1 else ("memory.max", "memory.swap.max")
            )
            try:
                procs = os.open(f"{d}/cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
                limits = [os.open(f"{d}/{n}", os.O_WRONLY | os.O_CLOEXEC) for n in names if os.path.exists(f"{d}/{n}")]
                if not limits or not os.path.exists(f"{d}/{names[0]}"):
                    raise OSError("the memory controller is not available there")
            except OSError as exc:
                self.notes.append(f"no memory cgroup in {base}: {exc}")
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                continue
            self._cg_files = (procs, *limits)
            self._cg_v1 = v1
            self.memory_cgroup = d
            self._cg_limit = 1 << 62  # unlimited until the first write
            try:
                self._set_memory_limit(512)
                _probe_join(procs)  # a process can be moved in (else a zygote could not)
            except OSError as exc:
                self.notes.append(f"no memory cgroup in {base}: {exc}")
                self.memory_cgroup = ""
                for fd in self._cg_files:
                    os.close(fd)
                self._cg_files = ()
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                continue
            return
        if not candidates:
            self.notes.append("no memory cgroup hierarchy")
        elif not self.memory_cgroup:
            self.notes.append("memory cgroup refused: memory files refused to samples instead")

    def _join_memory_cgroup(self, pid: int) -> None:
        """Move a zygote into the samples' memory cgroup (its samples are born there)."""
        if self.memory_cgroup:
            try:
                os.write(self._cg_files[0], str(pid).encode())
            except OSError as exc:
                # A zygote outside the cgroup would fork samples nothing counts: stop.
                raise OSError(exc.errno, f"could not move a zygote into {self.memory_cgroup}: {exc}") from exc

    def _set_memory_limit(self, memory_mb: int) -> None:
        """The memory cgroup's limit for the next sample: its ``memory_mb`` plus
        :data:`_CGROUP_HEADROOM` (the zygote's pages its sample copies, page tables), and no
        swap. Written only when it changes."""
        if not self.memory_cgroup:
            return
        limit = int(memory_mb) * 1024 * 1024 + _CGROUP_HEADROOM
        if limit == self._cg_limit:
            return
        data = str(limit).encode()
        procs, *files = self._cg_files
        if self._cg_v1:
            # memory <= memory+swap at every step: raise the second first, lower it last.
            order = files[::-1] if limit > self._cg_limit else files
            for fd in order:
                os.pwrite(fd, data, 0)
        else:
            os.pwrite(files[0], data, 0)
            if len(files) > 1:
                os.pwrite(files[1], b"0", 0)
        self._cg_limit = limit


# What the memory cgroup allows beyond a sample's memory_mb: the zygote's pages the sample
# copies on write, page tables and kernel memory (the address-space limit still applies).
_CGROUP_HEADROOM = 64 * 1024 * 1024


def _probe_join(procs_fd: int) -> None:
    """Move a short-lived child into the cgroup whose ``cgroup.procs`` is open here; raises
    OSError when that is refused (a delegated cgroup whose parent this user may not leave)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.read(r, 1)
        finally:
            os._exit(0)
    os.close(r)
    try:
        os.write(procs_fd, str(pid).encode())
    finally:
        os.close(w)
        os.waitpid(pid, 0)


def _remove_stale_cgroups(base: str) -> None:
    """Remove the empty sample cgroups of workers that are gone (a worker killed before the
    pool could remove its own)."""
    try:
        names = [n for n in os.listdir(base) if n.startswith("evalcore-sandbox-")]
    except OSError:
        return
    for name in names:
        pid = name.rpartition("-")[2]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                os.rmdir(f"{base}/{name}")
            except OSError:
                pass


def _remove_cgroup(path: str) -> None:
    """Remove a worker's memory cgroup once its zygotes are gone (they die with the worker;
    the last ones may take a moment to be reaped). The parent's side (:mod:`.pool`)."""
    import time

    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)
