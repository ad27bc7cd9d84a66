"""Every OpenMP computation of the embedded models runs on one thread of the process.

Calls from several threads (an event loop's pool in Jupyter, an agent's request threads, torch's
MiniLM beside llama.cpp) used to give each caller a libgomp team of its own; once the teams'
threads outnumbered the CPUs libgomp stopped letting them spin, and two llama threads generated
~2.5x slower (evalcore/models/_compute_thread.py).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evalcore.models import GenerationParams, _compute_thread, _local
from evalcore.models._compute_thread import on_compute_thread


def test_calls_from_any_thread_run_on_one_named_thread() -> None:
    barrier = threading.Barrier(4)

    def ask(_: int) -> tuple[str, str]:
        barrier.wait(timeout=30)  # four distinct caller threads at once
        return threading.current_thread().name, on_compute_thread(lambda: threading.current_thread().name)

    with ThreadPoolExecutor(4) as pool:
        pairs = list(pool.map(ask, range(4)))
    callers = {c for c, _ in pairs}
    ran_on = {r for _, r in pairs}
    assert len(callers) == 4
    assert ran_on == {"evalcore-compute"}


def test_errors_reach_the_caller_and_a_nested_call_runs_inline() -> None:
    def fail() -> None:
        raise ValueError("bad input 7")

    with pytest.raises(ValueError, match="bad input 7"):
        on_compute_thread(fail)

    def outer() -> tuple[str, str]:
        here = threading.current_thread().name
        return here, on_compute_thread(lambda: threading.current_thread().name)  # no deadlock

    assert on_compute_thread(outer) == ("evalcore-compute", "evalcore-compute")
    assert on_compute_thread(lambda a, b: a * b, 6, 7) == 42


def test_a_forked_child_starts_its_own_thread() -> None:
    on_compute_thread(lambda: None)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread does not exist here
        try:
            name = on_compute_thread(lambda: threading.current_thread().name)
            os.write(write, name.encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 100) == b"evalcore-compute"
    os.close(read)
    assert _compute_thread._thread is not None and _compute_thread._thread.is_alive()


def _os_threads() -> set[int]:
    return {int(t) for t in os.listdir("/proc/self/task")}


@pytest.mark.integration
def test_the_embedded_model_called_from_many_threads_keeps_one_openmp_team(monkeypatch) -> None:
    """Four caller threads that stay alive: one libgomp worker in all, not one per caller."""
    pytest.importorskip("llama_cpp")
    if not Path("/proc/self/task").is_dir():
        pytest.skip("no /proc here")
    try:
        _local.smollm2_gguf_path()
    except Exception:
        pytest.skip("no embedded model installed")
    model = _local.LocalModel(n_threads=2)
    params = GenerationParams(temperature=0.0, max_tokens=4, seed=1)
    messages = [{"role": "user", "content": "Say hi."}]
    model.complete(messages, params)  # loaded, the compute thread and its team started
    before = _os_threads()
    barrier = threading.Barrier(4)
    release = threading.Event()
    python_ids: set[int] = set()
    answered: list[str] = []

    def ask(_: int) -> None:
        barrier.wait(timeout=60)  # four distinct caller threads, alive at once
        python_ids.add(threading.get_native_id())
        answered.append(model.complete(messages, params).text)
        release.wait(timeout=120)  # stay alive while the threads are counted

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(ask, i) for i in range(4)]
        for _ in range(2400):  # 120 s
            if len(answered) == 4:
                break
            threading.Event().wait(0.05)
        extra = _os_threads() - before - python_ids
        release.set()
        for f in futures:
            f.result(timeout=120)
    assert len(answered) == 4 and len(set(answered)) == 1 and answered[0]
    # before: each caller got a libgomp team of its own (one worker thread each here)
    assert extra == set(), f"threads started by the calls beyond their callers: {sorted(extra)}"
