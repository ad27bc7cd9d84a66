"""SIGTERM does what Ctrl-C does at that moment (evalcore.cli._SigtermAsInterrupt).

Inside a run, Ctrl-C is asyncio.Runner's SIGINT handler: it cancels the run's task, whose
records are then written whole and whose HTTP sessions are closed, and raises KeyboardInterrupt
once the task has ended. A SIGTERM that raised KeyboardInterrupt itself would land inside
whichever task step was running: the task ends with an exception nobody retrieves, and stderr
gets "Task exception was never retrieved" and "Unclosed connector" beside the two lines an
interrupted run prints (seen in CI, about one run in twenty on a loaded machine).
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from evalcore.cli import _SigtermAsInterrupt


def test_sigterm_inside_an_asyncio_run_cancels_its_task_like_ctrl_c():
    seen: list[str] = []

    async def work() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, inside this task's step
            for _ in range(500):
                await asyncio.sleep(0.01)
            seen.append("not stopped")
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        except KeyboardInterrupt:
            seen.append("KeyboardInterrupt inside the task")
            raise

    with _SigtermAsInterrupt() as term, pytest.raises(KeyboardInterrupt), asyncio.Runner() as runner:
        runner.run(work())
    assert seen == ["cancelled"]
    assert term.received and term.status(130) == 143
    assert signal.getsignal(signal.SIGTERM) is not term._handle  # the previous handler is back


def test_sigterm_outside_an_asyncio_run_raises_keyboard_interrupt():
    with _SigtermAsInterrupt() as term, pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs at the next bytecode boundary
            pass
    assert term.received and term.status(0) == 0
