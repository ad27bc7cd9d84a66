"""The model layer: latency measured without queueing, damaged cache entries."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from _latency_clock import FakeClock as _FakeClock
from _latency_clock import WatchedLock as _WatchedLock
from _latency_clock import use_clock as _use_clock
from evalcore.errors import EvalcoreError
from evalcore.models import Completion, FakeChatServer, GenerationParams, ResponseCache, Usage, from_spec

MSG = [{"role": "user", "content": "hello"}]


def test_openai_latency_leaves_out_the_wait_for_a_client_slot(monkeypatch) -> None:
    # the client lets one call in flight; three asked at once queue for it. The clock moves
    # only while the server answers (0.2 s a call), so each call's own time is exactly 0.2 s;
    # the old client counted the queue too (0.2, 0.4, 0.6 s).
    from evalcore.models import _openai

    clock = _FakeClock()
    _use_clock(monkeypatch, _openai, clock)

    def responder(messages) -> str:
        clock.advance(0.2)
        return "ok"

    with FakeChatServer(responder=responder) as srv:
        model = from_spec(f"openai-compatible:fake@{srv.url}", concurrency=1)

        async def three() -> list[Completion]:
            return await asyncio.gather(
                *(model.acomplete([{"role": "user", "content": f"q{i}"}], GenerationParams()) for i in range(3))
            )

        comps = asyncio.run(three())
        assert srv.max_in_flight == 1 and srv.counts["ok"] == 3
    assert all(c.ok for c in comps)
    lat = [c.latency_s for c in comps]
    assert lat == pytest.approx([0.2] * 3, abs=1e-9), lat
    # one call at a time: the latencies add up to the time that passed
    assert sum(lat) == pytest.approx(clock.now, abs=1e-9)


def test_local_latency_leaves_out_the_wait_for_the_model_lock(monkeypatch, tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    from evalcore.models import _local

    clock = _FakeClock()
    _use_clock(monkeypatch, _local, clock)
    lock = _WatchedLock()
    monkeypatch.setattr(_local, "_llama_lock", lock)
    served: list[int] = []

    class FakeLlama:
        def create_chat_completion(self, **kwargs):
            if not served:  # the first call runs while the other two wait for the lock
                lock.wait_for_askers(3)
            served.append(threading.get_ident())
            clock.advance(0.15)
            return {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}

    monkeypatch.setattr(_local, "_load_llama", lambda *a, **k: FakeLlama())
    monkeypatch.setattr(_local, "_fresh_context", lambda llm: None)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    model = _local.LocalModel(gguf)
    out: list[Completion] = []

    def call() -> None:
        out.append(model.complete(MSG, GenerationParams(max_tokens=4)))

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [c.text for c in out] == ["ok"] * 3 and len(served) == 3
    lat = [c.latency_s for c in out]
    assert lat == pytest.approx([0.15] * 3, abs=1e-9), lat  # old: 0.15, 0.30, 0.45


def _cache_with_entry(tmp_path, text: str) -> ResponseCache:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "m", Completion(text="right answer", usage=Usage(3, 2), latency_s=0.5))
    db = sqlite3.connect(tmp_path / "c.sqlite")
    db.execute("UPDATE responses SET completion = ?", (text,))
    db.commit()
    db.close()
    return cache


@pytest.mark.parametrize(
    "damaged", ['{"text": "right ans', '{"text": 5}', "[1, 2]", '{"text": "x", "usage": {"prompt_tokens": "many"}}']
)
def test_a_damaged_cache_entry_is_a_miss_never_a_crash_or_garbage(tmp_path, damaged) -> None:
    cache = _cache_with_entry(tmp_path, damaged)
    with pytest.warns(UserWarning, match="could not be read"):
        assert cache.get("k") is None
    assert (cache.hits, cache.misses, cache.unreadable) == (0, 1, 1)
    # the fresh answer replaces the damaged entry
    cache.put("k", "m", Completion(text="fresh", usage=Usage(1, 1)))
    got = cache.get("k")
    assert got is not None and got.text == "fresh" and cache.hits == 1
    cache.close()


def test_a_truncated_cache_file_is_refused_with_its_name_and_the_way_out(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        for i in range(500):
            cache.put(f"k{i}", "m", Completion(text="x" * 200))
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(EvalcoreError, match="--no-cache") as info:
        ResponseCache(path)
    assert str(path) in str(info.value)


def test_only_greedy_or_seeded_requests_are_cacheable() -> None:
    from evalcore.models import cacheable

    assert cacheable(GenerationParams(temperature=0.0, seed=None))
    assert cacheable(GenerationParams(temperature=0.7, seed=3))
    assert not cacheable(GenerationParams(temperature=0.7, seed=None))


def test_a_locked_cache_names_its_holder_and_waits_only_as_long_as_asked(tmp_path, monkeypatch) -> None:
    import subprocess
    import sys
    import time

    path = tmp_path / ".cache" / "responses.sqlite"
    ResponseCache(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("EVALCORE_CACHE_LOCK_TIMEOUT", "0.3")
        start = time.monotonic()
        with pytest.raises(EvalcoreError) as info:
            cache = ResponseCache(path)
            cache.put("k", "m", Completion(text="x"))
        assert time.monotonic() - start < 30  # bounded by the setting, not SQLite's old 30 s per write
        msg = str(info.value)
        assert "locked" in msg and f"held by {holder.pid} (" in msg and "EVALCORE_CACHE_LOCK_TIMEOUT" in msg
        assert "damaged" not in msg and "delete" not in msg
    finally:
        holder.kill()
        holder.wait()


def test_cache_errors_are_told_apart_and_only_a_damaged_one_advises_deleting(tmp_path) -> None:
    from evalcore.models._cache import cache_error

    base = tmp_path / "runs"
    for run in ("run-a", "run-b"):
        (base / run).mkdir(parents=True)
        (base / run / "config.json").write_text("{}")
    path = base / ".cache" / "responses.sqlite"

    def err(name: str, text: str) -> str:
        exc = sqlite3.OperationalError(text)
        exc.sqlite_errorname = name  # type: ignore[attr-defined]
        return str(cache_error(path, exc))

    full = err("SQLITE_FULL", "database or disk is full")
    assert full == f"no space left on device: {path} (the response cache could not be written)"  # path once
    damaged = err("SQLITE_CORRUPT", "database disk image is malformed")
    assert "damaged" in damaged and "delete the file" in damaged and "run-a, run-b" in damaged
    other = err("SQLITE_IOERR_WRITE", "disk I/O error")
    assert "input/output error" in other and "delete" not in other
    assert str(cache_error(path, OSError(28, "No space left on device"))) == (
        f"no space left on device: {path} (the response cache could not be written)"
    )
    assert cache_error(path, OSError(28, "No space left on device")).path == str(path)


def test_the_lock_timeout_setting_is_checked(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EVALCORE_CACHE_LOCK_TIMEOUT", "-1")
    with pytest.raises(EvalcoreError, match="EVALCORE_CACHE_LOCK_TIMEOUT"):
        ResponseCache(tmp_path / "c.sqlite")
