"""``script`` samples on the worker's side: feeding the program, reading its streams, the verdict.

A script sample runs a whole program (``run_python``); the harness in the sample
(:mod:`.candidate`) writes a pass line carrying this sample's nonce when the program ran to
the end. Imports only what the worker has loaded already.
"""

from __future__ import annotations

import os
import select
import time

from .framing import DEFAULT_MAX_OUTPUT
from .sample import OUTPUT_FILE_CAP
from .scratch import _rmtree

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_RESULT_HOLD_S = 0.05
_RESULT_CAP = 1 << 16  # bytes kept of a script sample's result pipe: the last ones (its proof comes last)
_PIPE_CAPACITY = 65536  # Linux's default: a write of at most this much to a fresh pipe never blocks


class _Streams:
    """A script sample's pipes on this side: what its streams carried (each capped), the payload
    still to write (``pending``) and the pidfd that says when it exits (``exit_fd``, -1: none)."""

    def __init__(self, fds: tuple[int, int, int], pending: dict[int, memoryview], max_out: int) -> None:
        self.out_r, self.err_r, self.res_r = fds
        self.pending = pending
        self.max_out = max_out
        self.bufs = {fd: bytearray() for fd in fds}
        self.dropped = dict.fromkeys(fds, 0)
        self.exit_fd = -1

    @classmethod
    def open(cls, payload: bytes, max_out: int) -> tuple[_Streams, tuple[int, int, int, int]]:
        """The pipes (and the sample's ends of them); what fits in the pipe is written now: the
        sample then never waits for this process."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        in_r, in_w = os.pipe()
        pending: dict[int, memoryview] = {}
        if len(payload) <= _PIPE_CAPACITY:
            os.write(in_w, payload)
            os.close(in_w)
        else:
            pending[in_w] = memoryview(payload)
            os.set_blocking(in_w, False)
        return cls((out_r, err_r, res_r), pending, max_out), (out_w, err_w, res_w, in_r)

    def write(self, writable: list[int]) -> None:
        """The next part of the payload to each writable pipe; one done (or broken) is closed."""
        for fd in writable:
            view = self.pending[fd]
            try:
                n = os.write(fd, view[:65536])
                view = self.pending[fd] = view[n:]
            except (BlockingIOError, BrokenPipeError):
                view = view[:0]
            if not view:
                os.close(fd)
                del self.pending[fd]

    def read_ready(self, readable: list[int], open_fds: set[int]) -> bool:
        """Reads each ready pipe, dropping one at its end from ``open_fds``; True if the pidfd
        (the sample exited) was among them."""
        exited = False
        for fd in readable:
            if fd == self.exit_fd:
                open_fds.discard(fd)
                exited = True
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            # Every channel is capped (the result pipe too: a flood must not grow the worker).
            if fd == self.res_r:
                self._keep_result(chunk)
                continue
            room = max(0, self.max_out - len(self.bufs[fd]))
            self.bufs[fd] += chunk[:room]
            self.dropped[fd] += len(chunk) - min(room, len(chunk))
        return exited

    def _keep_result(self, chunk: bytes) -> None:
        buf = self.bufs[self.res_r]
        buf += chunk[-_RESULT_CAP:]
        if len(buf) > _RESULT_CAP:
            del buf[: len(buf) - _RESULT_CAP]

    def drain_result(self) -> None:
        """What the result pipe holds now, without waiting."""
        os.set_blocking(self.res_r, False)
        try:
            for _ in range(1024):
                chunk = os.read(self.res_r, 65536)
                if not chunk:
                    break
                self._keep_result(chunk)
        except BlockingIOError:
            pass


class ScriptSamples:
    """Running ``script`` samples (a mixin of :class:`.worker._Worker`, which sets the attributes
    below; the methods are the other mixins')."""

    namespaces: bool
    is_root: bool
    _zygotes: dict[str, tuple[Any, int]]

    if TYPE_CHECKING:

        def _workdir(self) -> tuple[str, str | None]: ...
        def _payload(self, job: dict[str, Any], workdir: str, stdin_data: bytes, nonces: bytes) -> bytes: ...
        def _zygote_call(self, zygote: tuple[Any, int], data: bytes, fds: Sequence[int] = ()) -> tuple[Any, ...]: ...
        def _fork(self, zygote: tuple[Any, int], child_ends: tuple[int, ...]) -> int: ...
        def _kill(self, zygote: tuple[Any, int]) -> None: ...
        def _kill_uid(self) -> None: ...
        def _wipe_scratch(self) -> None: ...

    def run_script(self, job: dict[str, Any]) -> dict[str, Any]:
        """A ``script`` sample: the program runs alone; the harness's proof line is its verdict."""
        timeout = float(job.get("timeout_s", 10.0))
        max_out = int(job.get("max_output", DEFAULT_MAX_OUTPUT))
        stdin_data = (job.get("stdin") or "").encode()
        workdir, tmpdir = self._workdir()
        nonces = os.urandom(32).hex().encode()  # this sample's two, see _sample_main and _reply
        payload = self._payload(job, workdir, stdin_data, nonces)
        streams, child_ends = _Streams.open(payload, max_out)
        zygote = self._zygotes["script"]
        self._set_memory_limit(int(job.get("memory_mb", 512)))  # type: ignore[attr-defined]
        start = time.monotonic()
        try:
            sample_pid = self._fork(zygote, child_ends)
        except OSError:
            for fd in (*streams.bufs, *streams.pending):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise
        try:
            timed_out = self._script_wait(zygote, streams, sample_pid, start, timeout)
        except BaseException:
            self._script_abort(zygote, streams, tmpdir)
            raise
        return self._script_end(zygote, streams, tmpdir, (timed_out, start, nonces))

    def _script_wait(
        self, zygote: tuple[Any, int], streams: _Streams, sample_pid: int, start: float, timeout: float
    ) -> bool:
        """Feeds the sample its payload and reads its streams until they close (or, past its
        deadline or once its pidfd says it exited, until a last drain ends); True if it timed out."""
        # Without a PID namespace a daemonized child may hold the pipes open after the sample
        # ended: its pidfd says when the sample itself exits.
        if not self.namespaces:
            try:
                streams.exit_fd = os.pidfd_open(sample_pid)
            except (OSError, AttributeError):
                streams.exit_fd = -1
        out_r, err_r, res_r, exit_fd = streams.out_r, streams.err_r, streams.res_r, streams.exit_fd
        # The result pipe is read once both streams have closed (normally: the sample exited),
        # or from _RESULT_HOLD_S on: the harness's first write to it then does not wake this
        # process in the middle of every sample.
        open_fds = {out_r, err_r}
        held = True
        if exit_fd >= 0:
            open_fds.add(exit_fd)
        killed_at: float | None = None
        deadline = start + timeout
        timed_out = False
        while True:
            now = time.monotonic()
            if held and ((out_r not in open_fds and err_r not in open_fds) or now - start >= _RESULT_HOLD_S):
                open_fds.add(res_r)
                held = False
            if not open_fds - {exit_fd}:
                break
            if killed_at is None and now >= deadline:
                timed_out = True
                self._kill(zygote)
                killed_at = now
            if killed_at is not None and now - killed_at > 2.0:
                break
            wait = (deadline - now) if killed_at is None else 0.1
            if held:
                wait = min(wait, start + _RESULT_HOLD_S - now)
            try:
                readable, writable, _ = select.select(list(open_fds), list(streams.pending), [], max(wait, 0.0))
            except InterruptedError:
                continue
            streams.write(writable)
            if streams.read_ready(readable, open_fds) and killed_at is None:
                # The sample ended: what it left running dies now; drain for 0.2 s.
                self._kill(zygote)
                killed_at = time.monotonic() - 1.8
        if held:  # the drain ended first (streams held open in the fallback): what is there now
            streams.drain_result()
        for fd in streams.pending:
            os.close(fd)
        if exit_fd >= 0:
            os.close(exit_fd)
        return timed_out

    def _script_abort(self, zygote: tuple[Any, int], streams: _Streams, tmpdir: str | None) -> None:
        """Whatever went wrong while the sample ran, the sample dies and its scratch is wiped
        before this worker runs anything else."""
        try:
            self._zygote_call(zygote, b"W")
        finally:
            exit_fds = [streams.exit_fd] if streams.exit_fd >= 0 else []
            for fd in (*streams.bufs, *streams.pending, *exit_fds):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if not self.namespaces and self.is_root:
                self._kill_uid()
            if tmpdir is not None:
                _rmtree(tmpdir)
            if self.namespaces:
                self._wipe_scratch()

    def _script_end(
        self, zygote: tuple[Any, int], streams: _Streams, tmpdir: str | None, run: tuple[bool, float, bytes]
    ) -> dict[str, Any]:
        """The sample's reply once it ran; ``run`` is (timed out, its start, its nonces)."""
        timed_out, start, nonces = run
        # The zygote kills what is left of the sample (whose PID it alone can name) and reaps it.
        reaped, status = self._zygote_call(zygote, b"W")
        if not self.namespaces and self.is_root:
            self._kill_uid()
        if reaped < 0:  # the fork failed (status is its errno)
            for fd in streams.bufs:
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise OSError(status, f"fork: {os.strerror(status)}")
        returncode: int | None = os.waitstatus_to_exitcode(status) if status != -1 else None
        duration = time.monotonic() - start
        for fd in streams.bufs:
            os.close(fd)
        if tmpdir is not None:
            _rmtree(tmpdir)
        if self.namespaces:
            self._wipe_scratch()
        fds = (streams.out_r, streams.err_r, streams.res_r)
        return self._reply(streams.bufs, streams.dropped, fds, timed_out, returncode, duration, nonces)

    def _reply(
        self,
        bufs: dict[int, Any],
        dropped: dict[int, int],
        fds: tuple[int, int, int],
        timed_out: bool,
        returncode: int | None,
        duration: float,
        nonces: bytes,
    ) -> dict[str, Any]:
        out_r, err_r, res_r = fds
        completed, reasons = False, []
        # Only lines carrying this sample's nonces count: the first proves success, the second
        # tags the harness's failure reasons.
        pass_line = b"PASS " + nonces[:32]
        fail_tag = b"FAIL " + nonces[32:] + b" "
        for line in bytes(bufs[res_r]).split(b"\n"):
            if line == pass_line:
                completed = True
            elif line.startswith(fail_tag):
                reasons.append(line[len(fail_tag) :].decode("utf-8", "replace"))
        completed = completed and not timed_out
        reason = None
        if not completed:
            if timed_out:
                reason = "timed out"
            elif reasons:
                reason = reasons[-1]
            elif returncode is not None and returncode < 0:
                import signal  # its enum module is not loaded before the zygotes are forked

                reason = (
                    f"killed by signal {signal.Signals(-returncode).name}"
                    if -returncode in signal.valid_signals()
                    else f"killed by signal {-returncode}"
                )
            else:
                reason = f"program ended before completing (exit status {returncode})"
        return {
            "completed": completed,
            "timed_out": timed_out,
            "returncode": returncode,
            "stdout": _decode(bufs[out_r], dropped[out_r]),
            "stderr": _decode(bufs[err_r], dropped[err_r]),
            "duration_s": duration,
            "reason": reason,
        }


def _read_output(fd: int, limit: int) -> str:
    """The first ``limit`` bytes of a captured output file, decoded, with a truncation note.

    The file holds at most :data:`OUTPUT_FILE_CAP` bytes (the sample dropped the rest): one
    that full says "at least"."""
    size = os.fstat(fd).st_size
    data = os.pread(fd, min(size, limit), 0) if size else b""
    return _decode(bytearray(data), max(0, size - len(data)), size >= OUTPUT_FILE_CAP)


def _decode(buf: bytearray, dropped: int, at_least: bool = False) -> str:
    text = bytes(buf).decode("utf-8", "replace")
    if dropped:
        text += f"\n[... output truncated: {'at least ' if at_least else ''}{dropped} more bytes]"
    return text
