"""Durations kept between processes: a fresh process hands the longest tests out first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.sandbox import SandboxPool
from evalcore.sandbox.pool import DURATIONS_ENV, _cost_key, durations_file

PROMPT = "def add(a, b):\n    '''a + b'''\n"
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
BUSY = "    import time\n    time.sleep(0.3)\n    return a + b\n"


def _job(body: str = "    return a + b\n", test: str = TEST) -> dict:
    return {
        "mode": "check",
        "source": PROMPT + body,
        "prompt": PROMPT,
        "test": test,
        "entry_point": "add",
        "timeout_s": 5.0,
        "memory_mb": 256,
    }


def test_the_key_is_the_same_in_every_process() -> None:
    job = _job(test=TEST + "# é \ud800\n")  # non-ASCII and a lone surrogate too
    code = (
        "import json, sys; from evalcore.sandbox.pool import _cost_key; print(_cost_key(json.loads(sys.stdin.read())))"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", code], input=json.dumps(job), capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    assert keys == {_cost_key(job)}
    assert _cost_key(job) != _cost_key(_job())
    assert _cost_key(job).startswith("c") and _cost_key({"mode": "script", "source": "x"}).startswith("s")


def test_where_the_file_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DURATIONS_ENV, str(tmp_path / "d.json"))
    assert durations_file() == str(tmp_path / "d.json")
    monkeypatch.setenv(DURATIONS_ENV, "")
    assert durations_file() is None
    monkeypatch.delenv(DURATIONS_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert durations_file() == str(tmp_path / "evalcore" / "sandbox-durations.json")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not a place to write: fall back to HOME
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert durations_file() == str(tmp_path / "home" / ".cache" / "evalcore" / "sandbox-durations.json")


def test_a_fresh_pool_schedules_by_what_an_earlier_one_measured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "cache" / "durations.json"
    monkeypatch.setenv(DURATIONS_ENV, str(path))
    slow, fast = _job(BUSY, test=TEST + "# slow task\n"), _job()
    first = SandboxPool(1)
    try:
        first.map([fast, slow, {"mode": "script", "source": "print(1)", "timeout_s": 5.0}])
    finally:
        first.close()
    saved = json.loads(path.read_text())
    assert saved["format"] == "evalcore-sandbox-durations"
    rows = saved["durations"]
    assert set(rows) == {_cost_key(slow), _cost_key(fast)}  # check jobs only, no script
    assert rows[_cost_key(slow)] >= 0.3 > rows[_cost_key(fast)]
    assert "return a + b" not in path.read_text() and "check" not in path.read_text()  # checksums only

    second = SandboxPool(1)
    try:
        assert second._schedule([fast, slow]) == [0, 1]  # nothing read before its first batch
        other = _job(test=TEST + "# another task\n")
        second.map([other])
        assert second._durations[_cost_key(slow)] == pytest.approx(rows[_cost_key(slow)], abs=1e-6)
        assert second._schedule([fast, slow]) == [1, 0]
    finally:
        second.close()
    assert _cost_key(other) in json.loads(path.read_text())["durations"]  # a new test: saved again


def test_only_a_new_test_or_a_real_change_is_worth_saving() -> None:
    pool = SandboxPool.__new__(SandboxPool)  # the bookkeeping only: no workers
    pool._durations = {}
    check, script = _job(), {"mode": "script", "source": "print(1)"}

    def learn(job: dict, seconds: float) -> bool:
        return pool._learn([job], [{"duration_s": seconds}])

    assert learn(check, 0.002) is True  # new
    assert learn(check, 0.009) is False  # 4.5x, but under 10 ms apart
    assert learn(check, 0.015) is False  # 6 ms apart, within 2x
    assert learn(check, 0.2) is True  # far off
    assert learn(check, 0.25) is False  # within 2x
    assert learn(script, 1.0) is False  # script jobs are never saved
    assert pool._learn([check], [None]) is False and pool._learn([check], [{"error": "x"}]) is False
    assert pool._durations == {_cost_key(check): 0.25, _cost_key(script): 1.0}


def test_a_run_that_learns_nothing_worth_saving_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    monkeypatch.setenv(DURATIONS_ENV, str(path))
    pool = SandboxPool(1)
    try:
        pool.map([_job()])
        assert path.exists()
        path.unlink()
        monkeypatch.setattr(pool, "_learn", lambda *a, **k: False)
        pool.map([_job()])
        assert not path.exists()
    finally:
        pool.close()


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        '{"format": "other", "durations": {"c1": 1}}',
        '{"format": "evalcore-sandbox-durations", "durations": {"c1": "x", "c2": -1, "c3": NaN, "s4": 1}}',
    ],
)
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str
) -> None:
    path = tmp_path / "durations.json"
    path.write_text(content)
    monkeypatch.setenv(DURATIONS_ENV, str(path))
    pool = SandboxPool(1)
    try:
        (reply,) = pool.map([_job()])
        assert reply["completed"] is True
        assert set(pool._durations) == {_cost_key(_job())}  # nothing of the file was taken
    finally:
        pool.close()
    assert set(json.loads(path.read_text())["durations"]) == {_cost_key(_job())}


def test_an_oversized_file_is_not_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from evalcore.sandbox.pool import _load_durations

    path = tmp_path / "durations.json"
    rows = {f"c{i:024x}": 0.001 for i in range(200_000)}
    path.write_text(json.dumps({"format": "evalcore-sandbox-durations", "version": 1, "durations": rows}))
    assert path.stat().st_size > 4 * 1024 * 1024
    assert _load_durations(str(path)) == {}
    path.write_text(json.dumps({"format": "evalcore-sandbox-durations", "version": 1, "durations": {"cab": 0.5}}))
    assert _load_durations(str(path)) == {"cab": 0.5}


def test_an_unwritable_place_costs_nothing_but_the_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(DURATIONS_ENV, str(blocker / "durations.json"))  # its folder is a file
    pool = SandboxPool(1)
    try:
        (reply,) = pool.map([_job()])
        assert reply["completed"] is True
    finally:
        pool.close()
    assert blocker.read_text() == "" and list(tmp_path.iterdir()) == [blocker]
