"""The embedded model's thread count follows the idle CPUs, and no result depends on it."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from evalcore.models import GenerationParams, _batching, _local, _threads
from evalcore.models._threads import Reading, ThreadChooser, threads_between

# ---- the choice (pure arithmetic on two readings) ------------------------------------------------

START = Reading(busy=100.0, total=400.0, own=10.0)


def _after(wall_s: float, others_cpus: float, own_cpus: float, n_machine: int = 2) -> Reading:
    """A reading ``wall_s`` later, others and this process keeping that many CPUs busy."""
    return Reading(
        busy=START.busy + (others_cpus + own_cpus) * wall_s,
        total=START.total + n_machine * wall_s,
        own=START.own + own_cpus * wall_s,
    )


@pytest.mark.parametrize(
    ("others", "own", "n_allowed", "expected"),
    [
        (0.0, 0.0, 2, 2),  # quiet machine: both cores
        (0.0, 2.0, 2, 2),  # only this process busy (its own two threads): still both
        (0.1, 1.0, 2, 2),  # a little background noise
        (0.7, 1.0, 2, 1),  # another process on most of a core
        (1.0, 1.0, 2, 1),
        (2.0, 0.0, 2, 1),  # both cores taken by others: never fewer than one
        (0.0, 0.0, 1, 1),  # this process may run on one CPU only
    ],
)
def test_threads_fit_the_cpus_others_leave_idle(others, own, n_allowed, expected) -> None:
    assert threads_between(START, _after(2.0, others, own), 2, n_allowed) == expected


def test_many_idle_cpus_are_capped_and_a_short_window_keeps_the_choice() -> None:
    assert threads_between(START, _after(1.0, 0.0, 0.0, n_machine=64), 64, 64) == _threads.MAX_THREADS
    assert threads_between(START, _after(0.01, 2.0, 0.0), 2, 2) is None


def test_chooser_reads_the_machine_between_calls(monkeypatch) -> None:
    readings = iter([START, _after(1.0, 0.0, 1.0), _after(2.0, 1.6, 1.0), _after(2.01, 1.6, 1.0)])
    monkeypatch.setattr(_threads, "read_cpu", lambda: next(readings))
    chooser = ThreadChooser()
    chooser._n_machine = chooser._n_allowed = 2
    assert chooser.first() == 1  # the model loads with one thread
    assert chooser.update() == 2  # quiet while it loaded
    assert chooser.update() == 1  # another process took most of a core since
    assert chooser.update() == 1  # 10 ms later: too short to judge, the choice stays


def test_a_fixed_count_is_kept(monkeypatch) -> None:
    monkeypatch.setenv(_threads.THREADS_ENV, "3")
    assert _threads.fixed_threads() == 3
    monkeypatch.setenv(_threads.THREADS_ENV, "auto")
    assert _threads.fixed_threads() is None
    chooser = ThreadChooser(fixed=2)
    assert chooser.first() == 2 and chooser.update() == 2


def test_the_real_proc_stat_is_read() -> None:
    reading = _threads.read_cpu()
    if reading is None:
        pytest.skip("no /proc/stat here")
    assert 0 <= reading.busy <= reading.total and reading.own >= 0


# ---- the same results with 1 and 2 threads (real weights, real llama.cpp) -----------------------

llama_cpp = pytest.importorskip("llama_cpp")

PROMPTS = [
    [{"role": "user", "content": "Tom has 12 marbles, loses 5 and finds 9. How many? Think step by step."}],
    [{"role": "user", "content": "Write a Python function is_even(n)."}],
]
FEW_SHOT = "".join(f"Q: {i} pens at {i + 2} dollars each?\nA: {i * (i + 2)}\n\n" for i in range(3, 40))
QUESTION = [{"role": "user", "content": "Which planet is red? A. Venus B. Mars C. Earth D. Moon"}]


def _answers(model: _local.LocalModel) -> list[object]:
    out: list[object] = []
    for temperature in (0.0, 0.8):
        params = GenerationParams(temperature=temperature, max_tokens=40, seed=5)
        out += [model.complete(m, params).text for m in PROMPTS]
    long_prompt = [{"role": "user", "content": FEW_SHOT + "Q: 7 pens at 4 dollars each?"}]
    out.append(model.complete(long_prompt, GenerationParams(temperature=0.8, max_tokens=8, seed=5)).text)
    out.append(model.letter_logprobs(QUESTION))
    llm = model._llama()
    with _local._llama_lock:
        _local._fresh_context(llm)
        llm.eval(llm.tokenize(FEW_SHOT.encode(), add_bos=True))
        raw = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx), shape=(llm.n_vocab(),))
        out.append(hashlib.sha256(raw.tobytes()).hexdigest())  # bit for bit
        _local._fresh_context(llm)
    return out


@pytest.mark.integration
@pytest.mark.slow
def test_results_are_the_same_for_any_thread_count(monkeypatch) -> None:
    try:
        _local.smollm2_gguf_path()
    except Exception:
        pytest.skip("no embedded model installed")
    one = _answers(_local.LocalModel(n_threads=1))
    two = _answers(_local.LocalModel(n_threads=2))
    assert one == two
    assert len({one[0], one[1], one[2], one[3]}) == 4  # distinct answers: the test can tell them apart
    # the automatic choice switching between steps and calls: 2, 1, 2, ... threads
    auto = _local.LocalModel()
    llm = auto._llama()
    counts = itertools.cycle([2, 1])
    monkeypatch.setattr(_local._choosers[llm], "update", lambda: next(counts))
    monkeypatch.setattr(_batching, "THREADS_EVERY_S", 0.0)  # the batch engine: chosen again every step
    seen: list[int] = []
    real_set = llama_cpp.llama_set_n_threads

    def set_threads(ctx: object, threads: int, threads_batch: int) -> None:
        seen.append(threads)
        real_set(ctx, threads, threads_batch)

    monkeypatch.setattr(llama_cpp, "llama_set_n_threads", set_threads)
    assert _answers(auto) == one
    assert set(seen) == {1, 2}  # chosen again before each call (and each step of the batch engine)
