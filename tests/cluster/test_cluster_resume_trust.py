"""A resumed cluster run trusts only its own rows (issue 42): rows carry an HMAC-SHA256 under a
per-run key kept outside the run's folder; an edited, copied or keyless row is scored again, a
``passed`` that is not a JSON boolean never counts, and a link at the ``.partial`` path (or a
sidecar's) is refused with its target untouched."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from _cluster_helpers import corpus_rows, write_samples
from evalcore.cluster import score_samples_file_on_cluster
from evalcore.cluster._partial import PartialWriter, key_path, mac_path, resume_partial
from evalcore.cluster._verdicts import partial_path, settings_path, verdict_settings
from evalcore.errors import EvalcoreError
from evalcore.evaluators._humaneval_files import read_problems, results_path, score_samples_file

pytestmark = pytest.mark.timeout(300)
TIMEOUT = 10.0  # far above any honest sample of the corpus, even on a loaded machine
WRONG = "    return False\n"


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The keys go to a private state folder of the test."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def _mixed_rows() -> list[dict]:
    rows = corpus_rows(6)
    rows.insert(1, {"task_id": rows[0]["task_id"], "completion": WRONG})
    rows.insert(4, {"task_id": rows[0]["task_id"], "completion": WRONG})
    return rows  # 8 rows; rows 1 and 4 fail


def _one_machine(tmp_path: Path, rows: list[dict]) -> tuple[dict[str, float], list[dict]]:
    (tmp_path / "one").mkdir()
    one = write_samples(tmp_path / "one" / "samples.jsonl", rows)
    got = score_samples_file(one, ks=(1,), timeout_s=TIMEOUT)
    return got, [json.loads(x) for x in results_path(one).read_text(encoding="utf-8").splitlines()]


def _interrupted(path: Path, client: object, monkeypatch: pytest.MonkeyPatch, chunks: int) -> Path:
    """A real run stopped (KeyboardInterrupt, as Ctrl-C) once ``chunks`` chunks of 2 are written."""
    real = PartialWriter.write_rows
    written = {"n": 0}

    def write_then_stop(self: PartialWriter, lines: list[str]) -> None:
        if written["n"] >= chunks:
            raise KeyboardInterrupt
        real(self, lines)
        written["n"] += 1

    with monkeypatch.context() as m:
        m.setattr(PartialWriter, "write_rows", write_then_stop)
        with pytest.raises(KeyboardInterrupt):
            score_samples_file_on_cluster(path, cluster=client, ks=(1,), timeout_s=TIMEOUT, chunk_size=2)
    partial = partial_path(results_path(path))
    assert partial.read_bytes().count(b"\n") == 2 * chunks
    assert mac_path(partial).read_bytes().count(b"\n") == 2 * chunks
    return partial


def _result_rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in results_path(path).read_text(encoding="utf-8").splitlines()]


def test_interrupted_run_adopts_its_own_rows(
    tmp_path: Path, local_client: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _mixed_rows()
    expected, expected_rows = _one_machine(tmp_path, rows)
    path = write_samples(tmp_path / "s.jsonl", rows)
    partial = _interrupted(path, local_client, monkeypatch, chunks=3)
    key = key_path(partial)
    assert not key.is_relative_to(tmp_path / "s.jsonl") and key.parent.parent.parent == tmp_path / "state"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    first = partial.read_bytes()
    capsys.readouterr()
    got = score_samples_file_on_cluster(path, cluster=local_client, ks=(1,), timeout_s=TIMEOUT, chunk_size=2)
    err = capsys.readouterr().err
    assert "scoring 2 of 8 samples" in err and "resumed after 6" in err, err
    assert results_path(path).read_bytes().startswith(first)  # adopted as written, not run again
    assert got == expected
    assert [(r["passed"], r["result"]) for r in _result_rows(path)] == [
        (r["passed"], r["result"]) for r in expected_rows
    ]
    assert not partial.exists() and not mac_path(partial).exists() and not settings_path(partial).exists()
    assert not key.exists()


@pytest.mark.parametrize("edit", ["passed false to true", "result text"])
def test_edited_row_is_scored_again(
    tmp_path: Path,
    local_client: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edit: str,
) -> None:
    rows = _mixed_rows()
    expected, expected_rows = _one_machine(tmp_path, rows)
    path = write_samples(tmp_path / "s.jsonl", rows)
    partial = _interrupted(path, local_client, monkeypatch, chunks=3)
    lines = partial.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[1])
    assert row["passed"] is False  # the wrong completion
    if edit == "result text":
        row["result"] = "passed (edited)"
    else:
        row["passed"] = True
    lines[1] = json.dumps(row) + "\n"
    partial.write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    got = score_samples_file_on_cluster(path, cluster=local_client, ks=(1,), timeout_s=TIMEOUT, chunk_size=2)
    err = capsys.readouterr().err
    assert "kept its first 1 rows; row 2 does not carry this run's MAC" in err, err
    assert "scoring 7 of 8 samples" in err
    assert got == expected and got["pass@1"] < 1.0
    assert [(r["passed"], r["result"]) for r in _result_rows(path)] == [
        (r["passed"], r["result"]) for r in expected_rows
    ]


def test_passed_as_a_string_never_counts(
    tmp_path: Path, local_client: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row with ``"passed": "false"`` (truthy text) is not adopted even with a valid MAC."""
    rows = [{"task_id": "HumanEval/0", "completion": WRONG}] + corpus_rows(1)
    expected, _ = _one_machine(tmp_path, rows)
    path = write_samples(tmp_path / "s.jsonl", rows)
    partial = partial_path(results_path(path))
    settings = verdict_settings(TIMEOUT, read_problems(None), None)
    _, writer = resume_partial(partial, path, settings, {})
    with writer:
        writer.write_rows([json.dumps({**rows[0], "passed": "false", "result": "failed: x"}) + "\n"])
    capsys.readouterr()
    got = score_samples_file_on_cluster(path, cluster=local_client, ks=(1,), timeout_s=TIMEOUT)
    err = capsys.readouterr().err
    assert "kept its first 0 rows; row 1 has no JSON boolean 'passed'" in err, err
    assert got == expected == {"pass@1": 0.5}
    assert [r["passed"] for r in _result_rows(path)] == [False, True]


def test_missing_key_scores_everything_again(
    tmp_path: Path,
    local_client: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    state_home: Path,
) -> None:
    rows = _mixed_rows()
    expected, expected_rows = _one_machine(tmp_path, rows)
    path = write_samples(tmp_path / "s.jsonl", rows)
    partial = _interrupted(path, local_client, monkeypatch, chunks=2)
    key_path(partial).unlink()  # the state folder cleaned, or a .partial an earlier evalcore wrote
    capsys.readouterr()
    got = score_samples_file_on_cluster(path, cluster=local_client, ks=(1,), timeout_s=TIMEOUT, chunk_size=2)
    err = capsys.readouterr().err
    assert f"{partial}: no key to check its 4 rows" in err and "all are scored again" in err, err
    assert "scoring 8 of 8 samples" in err and "resumed after" not in err
    assert got == expected
    assert [(r["passed"], r["result"]) for r in _result_rows(path)] == [
        (r["passed"], r["result"]) for r in expected_rows
    ]
    assert not key_path(partial).exists()


@pytest.mark.parametrize("where", ["partial", "mac", "settings", "dangling"])
def test_link_at_the_partial_path_is_refused(tmp_path: Path, where: str) -> None:
    """Refused before any cluster starts; the link's target is neither emptied nor written."""
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    partial = partial_path(results_path(path))
    victim = tmp_path / "elsewhere" / "precious.txt"
    victim.parent.mkdir()
    if where != "dangling":
        victim.write_text("keep me\n")
    link = {"mac": mac_path(partial), "settings": settings_path(partial)}.get(where, partial)
    link.symlink_to(victim)
    with pytest.raises(EvalcoreError, match="is a symbolic link: refused") as info:
        score_samples_file_on_cluster(path, cluster="local:1", ks=(1,), timeout_s=TIMEOUT)
    assert str(link) in str(info.value)
    if where == "dangling":
        assert not victim.exists()
    else:
        assert victim.read_text() == "keep me\n"
    assert link.is_symlink() and not results_path(path).exists()
    if where != "settings":  # the writer itself never follows one (O_NOFOLLOW), whatever changed after the check
        with pytest.raises(EvalcoreError, match="is a symbolic link"):
            PartialWriter(partial, b"k" * 32, b"c", 0).close()
        assert link.is_symlink() and not victim.exists() if where == "dangling" else victim.read_text() == "keep me\n"


def test_link_refused_on_the_command_line_in_one_line(tmp_path: Path) -> None:
    path = write_samples(tmp_path / "s.jsonl", corpus_rows(2))
    partial = partial_path(results_path(path))
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    partial.symlink_to(victim)
    done = subprocess.run(
        [sys.executable, "-m", "evalcore.cli", "score", "humaneval", str(path), "--k", "1", "--cluster", "local:1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"evalcore: error: {partial}: is a symbolic link"), lines
    assert victim.read_text() == "keep me\n" and partial.is_symlink()
