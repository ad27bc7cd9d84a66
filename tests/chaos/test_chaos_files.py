"""Chaos: damaged, locked and hostile files met through the real CLI.

The response cache damaged or locked by another process, a results.json that is not text, data
files with invalid UTF-8, CSV rows after multi-line quoted fields and blank lines, ids that look
like numbers, YAML built to blow up (alias bombs, deep nesting, huge values). Each case ends with
exit 2 and one line on stderr naming the file (and the line and field where there is one), no
traceback, nothing half-written, and, where a run was cut short, a rerun that asks the endpoint
only for what is missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _chaos import BENCH_YAML, ChaosServer, cli, one_line, records, write_bench

from evalcore.models import ResponseCache

N = 5  # items of the benchmark


def _run(srv: ChaosServer, root: Path, run_id: str = "r", *extra: str, env: dict[str, str] | None = None):
    spec = f"openai-compatible:fake@{srv.url}"
    args = ("run", str(root / "caps.yaml"), "--model", spec, "--run-dir", str(root / "runs"), "--no-progress")
    return cli(*args, "--run-id", run_id, *extra, cwd=root, env=env)


@pytest.mark.slow
def test_a_damaged_cache_is_one_line_naming_the_runs_that_share_it_and_asks_nothing(chaos_server, tmp_path):
    srv = chaos_server
    write_bench(tmp_path, N)
    assert _run(srv, tmp_path, "a").returncode == 0
    cache = tmp_path / "runs" / ".cache" / "responses.sqlite"
    for extra in cache.parent.glob("responses.sqlite-*"):  # the WAL would repair the damage
        extra.unlink()
    cache.write_bytes(b"this is not a database" * 200)
    asked = srv.counts["requests"]
    done = _run(srv, tmp_path, "b")
    assert done.returncode == 2
    one_line(done.stderr, f"evalcore: error: {cache}: the response cache is damaged", "--no-cache", ": a)")
    assert srv.counts["requests"] == asked and not (tmp_path / "runs" / "b").exists()  # nothing asked, nothing made
    fine = _run(srv, tmp_path, "b", "--no-cache")
    assert fine.returncode == 0 and len(records(tmp_path / "runs" / "b")) == N


@pytest.mark.slow
def test_a_locked_cache_names_its_holder_keeps_every_answer_and_the_rerun_asks_the_rest(chaos_server, tmp_path):
    srv = chaos_server
    write_bench(tmp_path, N)
    cache = tmp_path / "runs" / ".cache" / "responses.sqlite"
    ResponseCache(cache).close()  # the cache exists, empty
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         f"db = sqlite3.connect({str(cache)!r}, isolation_level=None)\n"
         "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        asked = dict(srv.asked)
        done = _run(srv, tmp_path, "r", "--concurrency", "1", env={"EVALCORE_CACHE_LOCK_TIMEOUT": "0.5"})
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2
    line = one_line(done.stderr, f"evalcore: error: {cache}: the response cache is locked", f"held by {holder.pid} (")
    assert "damaged" not in line and "delete" not in line  # the other runs' answers are not thrown away
    run = tmp_path / "runs" / "r"
    kept = records(run)
    new = {p for p, n in srv.asked.items() if n > asked.get(p, 0)}
    assert len(kept) == len(new) == 1  # the answer paid for is kept, though its cache write failed
    assert {r["request"]["messages"][-1]["content"] for r in kept} == new  # and nothing more was asked
    asked = dict(srv.asked)
    again = _run(srv, tmp_path)
    assert again.returncode == 0, again.stderr
    delta = {p: n - asked.get(p, 0) for p, n in srv.asked.items() if n > asked.get(p, 0)}
    assert len(delta) == N - 1 and set(delta.values()) == {1} and not new & set(delta)  # only what is missing
    assert len(records(run)) == N


@pytest.mark.slow
def test_a_results_json_that_is_not_text_is_named_by_readers_and_rewritten_by_a_rerun(chaos_server, tmp_path):
    srv = chaos_server
    write_bench(tmp_path, N)
    run = tmp_path / "runs" / "r"
    assert _run(srv, tmp_path).returncode == 0
    results = run / "results.json"
    for command in (("rescore", str(run)), ("compare", str(run), str(run)), ("browse", str(run))):
        results.write_bytes(b"\xff\xfe\x00{ torn")
        done = cli(*command, cwd=tmp_path)
        assert done.returncode == 2, command
        one_line(done.stderr, f"evalcore: error: {results}, line 1: not UTF-8 text")
    asked = srv.counts["requests"]
    again = _run(srv, tmp_path)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert srv.counts["requests"] == asked  # every answer was on record: nothing asked
    assert json.loads(results.read_text())["n_samples"] == N


def _answers(root: Path) -> tuple[list[str], Path]:
    path = root / "answers.jsonl"
    path.write_bytes(b'{"response": "#### 1", "answer": "1"}\n\n{"response": "caf\xe9 #### 2", "answer": "2"}\n')
    return ["score", "gsm8k", str(path)], path


def _bench_data(root: Path) -> tuple[list[str], Path]:
    data = b'{"id": "1", "country": "C1", "capital": "K1"}\n\n{"id": "2", "country": "Caf\xe9", "capital": "K2"}\n'
    write_bench(root, data=data)
    spec = "openai-compatible:fake@http://127.0.0.1:9/v1"  # never reached: the file is refused first
    return ["run", str(root / "caps.yaml"), "--model", spec, "--run-dir", str(root / "runs")], root / "caps.jsonl"


@pytest.mark.parametrize("case", [_answers, _bench_data], ids=["score-answers", "run-benchmark-data"])
def test_invalid_utf8_in_jsonl_names_its_line(tmp_path, case):
    args, path = case(tmp_path)
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    one_line(done.stderr, f"evalcore: error: {path}, line 3: not UTF-8 text (byte 0xe9")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "answers_results.jsonl").exists()


# a row on lines 2-3 (a quoted field with a newline), two blank lines, then the bad row on line 6
BENCH_CSV = b'id,country,capital\n1,"France\nthe republic",K1\n\n\n2,"Peru\nthe republic",\n3,C3,K3\n'
OUTCOMES_CSV = b'item_id,arm,quality,cost,latency,query\n1,a,1,0.1,1,"two\nlines"\n1,b,0,0.2,1,q\n\n2,a,x,0.1,1,q\n'


@pytest.mark.parametrize(
    ("command", "said"),
    [("run", "caps.csv, line 6, field 'capital': missing or empty"), ("route", "o.csv, line 6, field 'quality'")],
)
def test_a_csv_row_is_named_by_its_physical_line(tmp_path, command, said):
    if command == "run":
        write_bench(tmp_path, data=BENCH_CSV, suffix="csv")
        spec = "openai-compatible:fake@http://127.0.0.1:9/v1"
        args = ["run", str(tmp_path / "caps.yaml"), "--model", spec, "--run-dir", str(tmp_path / "out")]
    else:
        (tmp_path / "o.csv").write_bytes(OUTCOMES_CSV)
        args = ["route", "--outcomes", str(tmp_path / "o.csv"), "--output", str(tmp_path / "out")]
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    one_line(done.stderr, f"evalcore: error: {tmp_path}/{said}")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_ids_are_text_so_7_and_007_are_two_items(chaos_server, tmp_path, suffix):
    if suffix == "csv":
        data = b"id,country,capital\n7,C7,K7\n007,C007,K007\n"
    else:  # a number and a string: the id is the text either way
        data = b'{"id": 7, "country": "C7", "capital": "K7"}\n{"id": "007", "country": "C007", "capital": "K007"}\n'
    write_bench(tmp_path, data=data, suffix=suffix)
    done = _run(chaos_server, tmp_path)
    assert done.returncode == 0, done.stderr
    kept = records(tmp_path / "runs" / "r")
    assert sorted(r["item_id"] for r in kept) == ["caps/007", "caps/7"]
    assert sorted(chaos_server.asked) == ["Capital of C007?", "Capital of C7?"]
    assert all(r["scores"]["score"] == 1.0 for r in kept)  # each scored against its own reference


_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)  # 10**9 values once expanded, in 9 short lines


def _yaml_case(root: Path, kind: str) -> tuple[list[str], Path]:
    """Write the hostile YAML of ``kind``; returns the command's arguments and the file named."""
    write_bench(root, 3)
    bench = root / "caps.yaml"
    spec = "openai-compatible:fake@http://127.0.0.1:9/v1"
    args = ["run", str(bench), "--model", spec, "--run-dir", str(root / "runs")]
    head = BENCH_YAML.format(data="caps.jsonl")
    if kind == "alias-bomb-description":
        bench.write_text(_BOMB + "description: *a8\n" + head)
    elif kind == "alias-bomb-pricing":
        (root / "pricing.yaml").write_text(_BOMB + "models: *a8\n")
        return [*args, "--pricing", str(root / "pricing.yaml")], root / "pricing.yaml"
    elif kind == "deep-nesting":
        bench.write_text("description: " + "[" * 5000 + "]" * 5000 + "\n" + head)
    elif kind == "12-MB-value":
        bench.write_text("description: '" + "x" * 12_000_000 + "'\n" + head)
    else:  # a 100 MB value
        with open(bench, "w") as fh:
            fh.write("description: '")
            for _ in range(100):
                fh.write("x" * 1_000_000)
            fh.write("'\n" + head)
    return args, bench


YAML_CASES = {
    "alias-bomb-description": "line 6: YAML aliases expand to over",
    "alias-bomb-pricing": "line 6: YAML aliases expand to over",
    "deep-nesting": "line 1: malformed YAML: exceeded maximum nesting depth",
    "12-MB-value": "line 1: a YAML value of 12,000,000 characters, over the limit",
    "100-MB-value": "field 'dataset': a YAML file of 100,000,",
}


@pytest.mark.parametrize("kind", list(YAML_CASES))
def test_hostile_yaml_is_refused_with_one_line_within_bounds(tmp_path, kind):
    args, named = _yaml_case(tmp_path, kind)
    done = cli(*args, cwd=tmp_path, timeout=60)  # bounded: no gigabytes built, no minutes spent
    assert done.returncode == 2
    one_line(done.stderr, f"evalcore: error: {named}", YAML_CASES[kind])
    assert not (tmp_path / "runs").exists()
