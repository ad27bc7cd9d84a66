"""`evalcore score humaneval`: lone surrogates in samples, and what the CLI says about isolation."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evalcore.cli import main

PROBLEMS = [
    {
        "task_id": "T/0",
        "prompt": 'def add(a, b):\n    """Add."""\n',
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        "entry_point": "add",
    },
]

FALLBACK = {
    "namespaces": False,
    "network": "not isolated",
    "filesystem": "temporary working directory only; the rest of the file system is reachable",
    "user": "same user as evalcore (uid 1000)",
}
ISOLATED = {
    "namespaces": True,
    "network": "new network namespace, loopback down: no network",
    "filesystem": "read-only view of the host",
    "user": "unprivileged uid 100000",
}


@pytest.fixture
def problems_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for p in PROBLEMS:
            fh.write(json.dumps(p) + "\n")
    return path


def _samples(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # ASCII: "\ud800" stays an escape
    return path


def test_lone_surrogates_are_scored_and_the_results_file_is_written(
    tmp_path: Path, problems_file: Path, capsys
) -> None:
    rows = [
        {"task_id": "T/0", "completion": "    return a + b  # \ud800\n"},  # not UTF-8: cannot compile
        {"task_id": "T/0", "completion": "    return '\udfff'\n"},
        {"task_id": "T/0", "completion": "    return a + b\n", "note": "\ud800 in another field"},
        {"task_id": "T/0", "completion": "    return a + b\n"},
    ]
    samples = _samples(tmp_path / "s.jsonl", rows)
    status = main(["score", "humaneval", str(samples), "--k", "1", "--problems", str(problems_file), "--timeout", "5"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert json.loads(captured.out) == {"pass@1": 0.5}
    raw = (tmp_path / "s_results.jsonl").read_bytes()
    raw.decode("utf-8")  # valid UTF-8 throughout
    out = [json.loads(line) for line in raw.decode().splitlines()]
    assert [r["completion"] for r in out] == [r["completion"] for r in rows]  # exact round trip
    assert out[2]["note"] == "\ud800 in another field"
    assert [r["passed"] for r in out] == [False, False, True, True]
    assert out[0]["result"].startswith("failed")


def _run(samples: Path, problems_file: Path, *extra: str) -> int:
    return main(
        ["score", "humaneval", str(samples), "--k", "1", "--problems", str(problems_file), "--timeout", "5", *extra]
    )


def test_warns_on_stderr_when_the_sandbox_has_no_isolation(
    tmp_path: Path, problems_file: Path, capsys, monkeypatch
) -> None:
    import evalcore.evaluators._cli as score_cli

    monkeypatch.setattr(score_cli, "sandbox_isolation", lambda workers=None: dict(FALLBACK))
    samples = _samples(tmp_path / "w.jsonl", [{"task_id": "T/0", "completion": "    return a + b\n"}])
    assert _run(samples, problems_file) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"pass@1": 1.0}  # stdout stays clean JSON
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("evalcore: warning: code samples ran without full OS isolation")
    assert "network: not isolated" in lines[0] and "--require-isolation" in lines[0]
    assert (tmp_path / "w_results.jsonl").exists()


def test_require_isolation_refuses_to_run_without_it(tmp_path: Path, problems_file: Path, capsys, monkeypatch) -> None:
    import evalcore.evaluators._cli as score_cli
    import evalcore.evaluators._humaneval_files as files

    monkeypatch.setattr(score_cli, "sandbox_isolation", lambda workers=None: dict(FALLBACK))

    def must_not_run(*args, **kwargs):
        raise AssertionError("scored without isolation")

    monkeypatch.setattr(files, "score_samples_file", must_not_run)
    samples = _samples(tmp_path / "r.jsonl", [{"task_id": "T/0", "completion": "    return a + b\n"}])
    assert _run(samples, problems_file, "--require-isolation") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("evalcore: error: field '--require-isolation': the sandbox cannot fully isolate")
    assert "no sample was run" in lines[0] and "network: not isolated" in lines[0]
    assert not (tmp_path / "r_results.jsonl").exists()


def test_isolated_runs_say_nothing_and_may_require_isolation(
    tmp_path: Path, problems_file: Path, capsys, monkeypatch
) -> None:
    import evalcore.evaluators._cli as score_cli

    monkeypatch.setattr(score_cli, "sandbox_isolation", lambda workers=None: dict(ISOLATED))
    samples = _samples(tmp_path / "i.jsonl", [{"task_id": "T/0", "completion": "    return a + b\n"}])
    assert _run(samples, problems_file, "--require-isolation") == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out) == {"pass@1": 1.0}


def test_the_warning_follows_the_real_pool(tmp_path: Path, problems_file: Path, capsys) -> None:
    from evalcore.evaluators._cli import is_isolated, sandbox_isolation

    samples = _samples(tmp_path / "p.jsonl", [{"task_id": "T/0", "completion": "    return a + b\n"}])
    assert _run(samples, problems_file) == 0
    warned = "without full OS isolation" in capsys.readouterr().err
    info = sandbox_isolation()
    assert warned == (not is_isolated(info)), info
    assert is_isolated({"namespaces": True}) and not is_isolated({"namespaces": False})
    assert not is_isolated({"namespaces": True, "level": "weak"})  # a report's level decides
    assert is_isolated({"namespaces": True, "level": "full"})
