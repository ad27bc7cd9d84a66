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
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        in_r, in_w = os.pipe()
        child_ends = (out_w, err_w, res_w, in_r)
        # What fits in the pipe is written now: the sample then never waits for this process.
        pending: dict[int, memoryview] = {}
        if len(payload) <= _PIPE_CAPACITY:
            os.write(in_w, payload)
            os.close(in_w)
        else:
            pending[in_w] = memoryview(payload)
            os.set_blocking(in_w, False)
        zygote = self._zygotes["script"]
        self._set_memory_limit(int(job.get("memory_mb", 512)))  # type: ignore[attr-defined]
        start = time.monotonic()
        try:
            sample_pid = self._fork(zygote, child_ends)
        except OSError:
            for fd in (out_r, err_r, res_r, *pending):
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise
        exit_fd = -1
        bufs = {out_r: bytearray(), err_r: bytearray(), res_r: bytearray()}
        dropped = {out_r: 0, err_r: 0, res_r: 0}
        timed_out = False
        try:
            # Without a PID namespace a daemonized child may hold the pipes open after the sample
            # ended: its pidfd says when the sample itself exits.
            if not self.namespaces:
                try:
                    exit_fd = os.pidfd_open(sample_pid)
                except (OSError, AttributeError):
                    exit_fd = -1
            # The result pipe is read once both streams have closed (normally: the sample exited),
            # or from _RESULT_HOLD_S on: the harness's first write to it then does not wake this
            # process in the middle of every sample.
            open_fds = {out_r, err_r}
            held = True
            if exit_fd >= 0:
                open_fds.add(exit_fd)
            killed_at: float | None = None
            deadline = start + timeout
            exited = False
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
                    readable, writable, _ = select.select(list(open_fds), list(pending), [], max(wait, 0.0))
                except InterruptedError:
                    continue
                for fd in writable:
                    view = pending[fd]
                    try:
                        n = os.write(fd, view[:65536])
                        view = pending[fd] = view[n:]
                    except (BlockingIOError, BrokenPipeError):
                        view = view[:0]
                    if not view:
                        os.close(fd)
                        del pending[fd]
                for fd in readable:
                    if fd == exit_fd:
                        open_fds.discard(fd)
                        exited = True
                        continue
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        open_fds.discard(fd)
                        continue
                    # Every channel is capped (the result pipe too: a flood must not grow the worker).
                    if fd == res_r:
                        buf = bufs[fd]
                        buf += chunk[-_RESULT_CAP:]
                        if len(buf) > _RESULT_CAP:
                            del buf[: len(buf) - _RESULT_CAP]
                        continue
                    room = max(0, max_out - len(bufs[fd]))
                    bufs[fd] += chunk[:room]
                    dropped[fd] += len(chunk) - min(room, len(chunk))
                if exited and killed_at is None:
                    # The sample ended: what it left running dies now; drain for 0.2 s.
                    self._kill(zygote)
                    killed_at = time.monotonic() - 1.8
            if held:  # the drain ended first (streams held open in the fallback): what is there now
                os.set_blocking(res_r, False)
                try:
                    for _ in range(1024):
                        chunk = os.read(res_r, 65536)
                        if not chunk:
                            break
                        bufs[res_r] += chunk[-_RESULT_CAP:]
                        if len(bufs[res_r]) > _RESULT_CAP:
                            del bufs[res_r][: len(bufs[res_r]) - _RESULT_CAP]
                except BlockingIOError:
                    pass
            for fd in pending:
                os.close(fd)
            if exit_fd >= 0:
                os.close(exit_fd)
        except BaseException:
            # Whatever went wrong here, the sample dies and its scratch is wiped before this
            # worker runs anything else.
            try:
                self._zygote_call(zygote, b"W")
            finally:
                for fd in (*bufs, *pending, *([exit_fd] if exit_fd >= 0 else [])):
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
            raise
        # The zygote kills what is left of the sample (whose PID it alone can name) and reaps it.
        reaped, status = self._zygote_call(zygote, b"W")
        if not self.namespaces and self.is_root:
            self._kill_uid()
        if reaped < 0:  # the fork failed (status is its errno)
            for fd in bufs:
                os.close(fd)
            if tmpdir is not None:
                _rmtree(tmpdir)
            raise OSError(status, f"fork: {os.strerror(status)}")
        returncode: int | None = os.waitstatus_to_exitcode(status) if status != -1 else None
        duration = time.monotonic() - start
        for fd in bufs:
            os.close(fd)
        if tmpdir is not None:
            _rmtree(tmpdir)
        if self.namespaces:
            self._wipe_scratch()
        return self._reply(bufs, dropped, (out_r, err_r, res_r), timed_out, returncode, duration, nonces)

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
