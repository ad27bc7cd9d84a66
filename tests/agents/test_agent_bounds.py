"""Every resource an agent can make the evaluator spend is bounded (issue 37, third round).

One hostile agent per class of attack (``tests/agents/_bounds_agents.py``), each through a real
evaluation or the hosted agent it attacks: values nested 700 deep, 8 MiB error texts, a
registry of 150,000 tools, a flooded and ``fallocate``-d log, terminal commands in error texts,
memory and processes past the agent's limits, a connection to a service of the host. Each ends
with a complete results file (or a one-line error), or has no effect; an honest agent's scores
are unchanged. Run as root the agent gets a cgroup; rerun as ``nobody``
(``test_agent_bounds_unprivileged.py``) it gets the rlimit fallback.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evalcore._io import bounded, excerpt, terminal_safe
from evalcore.agent_eval import AgentEvalConfig, case_records, evaluate, load_results, write_outputs
from evalcore.agent_eval._case_results import CategoryResult, make_test
from evalcore.agent_eval._evaluator import EvaluationResult
from evalcore.agent_eval._output import results_payload
from evalcore.agents import AgentEndpointError, HostedAgent
from evalcore.agents._http import MAX_REGISTRY_CODE_CHARS, MAX_REGISTRY_TOOLS
from evalcore.cli import main

HERE = Path(__file__).resolve().parent
AGENTS = HERE / "_bounds_agents.py"
sys.path.insert(0, str(HERE))
import _bounds_agents as hostile  # noqa: E402

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="namespaces and cgroups are Linux's")
CONTROL = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) != "\n"]


def _config(**kw: Any) -> AgentEvalConfig:
    base: dict[str, Any] = dict(
        seed=5,
        counts={"simple": 4, "medium": 1, "complex": 1, "edge": 2},
        limit=4,
        n_paraphrase_groups=1,
        paraphrase_size=2,
        n_unrelated=2,
        request_timeout_s=20,
        tool_budget_s=10,
    )
    base.update(kw)
    return AgentEvalConfig(**base)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


# ------------------------------------------------------------------------------ the helpers
def test_bounded_caps_depth_strings_items_and_the_whole() -> None:
    deep = hostile.nested(100_000)
    out = bounded({"deep": deep, "text": "x" * 10**6, "many": list(range(5000)), "n": 10**400})
    assert _depth(out) == 32 and "<list nested deeper than 32 levels>" in json.dumps(out)
    digest = hashlib.sha256(("x" * 10**6).encode()).hexdigest()
    assert out["text"].startswith("x" * 2000) and digest in out["text"] and len(out["text"]) < 2200
    assert len(out["many"]) == 1001 and out["many"][-1] == "… 4000 more items" and out["many"][:3] == [0, 1, 2]
    assert out["n"] == 10**400  # long integers are matched exactly: kept
    wide = [["y" * 3000] * 1000] * 1000  # a million strings of 3,000 characters
    assert len(json.dumps(bounded(wide))) < 500_000 + 20_000 * 110
    assert bounded({"a": [1, 2.5, None, True, "s"]}) == {"a": [1, 2.5, None, True, "s"]}
    assert excerpt("short") == "short"


def test_terminal_safe_escapes_every_control_character() -> None:
    shown = terminal_safe(hostile.TERMINAL)
    assert not any(c in shown for c in CONTROL) and "\n" not in shown
    assert shown.startswith("\\x1b[2J") and "\\x07" in shown and "\\r\\nPASSED" in shown and "\\x9b" in shown
    assert terminal_safe("a\nb", keep_newlines=True) == "a\nb" and terminal_safe("\u202eevil") == "\\u202eevil"
    assert terminal_safe("\udcff") == "\\udcff"


# ------------------------------------------------------------------------------ deep values
@pytest.mark.parametrize("agent", [hostile.Deep(700), hostile.DeepTool()], ids=["replies", "tool"])
def test_values_nested_700_deep_end_in_a_complete_results_file(tmp_path, agent) -> None:
    # in its replies (in process: no wire refuses the depth) or from its tool, run by the evaluator
    cats = ["functional", "workflow", "synthesis"]
    result = evaluate(agent, _config(), categories=cats)
    paths = write_outputs(result, tmp_path, visualize=True)
    data = load_results(paths["json"])
    assert list(data["detailed_results"]) == cats and all(data["detailed_results"][c]["tests"] for c in cats)
    assert _depth(data) <= 40 and paths["html"].stat().st_size > 0


def test_every_path_into_the_results_is_bounded(tmp_path) -> None:
    # a category's own values (details, metrics, notes, errors) deep and long, however they got there
    cat = CategoryResult("functional")
    deep = hostile.nested(5000)
    cat.tests.append(make_test("t", 0.0, critical=True, error="e" * 10**6, details={"v": deep}))
    cat.metrics["m"] = deep
    cat.notes.append("n" * 10**6)
    res = EvaluationResult({"functional": cat}, config={"agent_isolation_notes": [deep]})
    data = json.loads(results_payload(res))
    assert _depth(data) <= 40 and len(json.dumps(data)) < 100_000
    assert data["detailed_results"]["functional"]["tests"][0]["error"].endswith("]")


def test_a_hosted_agent_nested_within_the_wire_cap_is_bounded_in_the_results(tmp_path) -> None:
    result = evaluate(f"{AGENTS}:make_deep", _config(), categories=["functional"], options={"depth": 60})
    paths = write_outputs(result, tmp_path, visualize=False)
    assert _depth(load_results(paths["json"])) <= 40


# ------------------------------------------------------------------------------ sizes
def test_the_results_file_is_capped_whatever_the_tests_hold() -> None:
    cat = CategoryResult("functional")
    for i in range(300):  # 300 tests whose details are at their caps (about 40 MB each)
        cat.tests.append(make_test(f"t{i}", 0.5, details={"v": [["z" * 5000] * 1000] * 20}))
    res = EvaluationResult({"functional": cat}, config={})
    payload = results_payload(res, limit=5_000_000)
    assert len(payload) <= 5_000_000
    data = json.loads(payload)
    assert "results_bounded" in data["config"] and len(data["detailed_results"]["functional"]["tests"]) == 300
    assert data["detailed_results"]["functional"]["score"] == 0.5


_RUN = textwrap.dedent(
    """
    import json, sys, time
    from evalcore.agent_eval import AgentEvalConfig, evaluate, write_outputs
    def peak_mb():  # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
    spec, options, categories, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
    config = AgentEvalConfig(seed=5, counts={"simple": 20, "medium": 2, "complex": 1, "edge": 2}, n_unrelated=2,
                             n_paraphrase_groups=1, paraphrase_size=2, request_timeout_s=30, tool_budget_s=10)
    t0 = time.monotonic()
    result = evaluate(spec, config, categories=categories, options=options)
    paths = write_outputs(result, out, visualize=False)
    print(json.dumps({"json": str(paths["json"]), "seconds": time.monotonic() - t0,
                      "maxrss_mb": peak_mb()}))
    """
)


def _evaluate_apart(tmp_path: Path, factory: str, options: dict[str, Any], categories: str) -> dict[str, Any]:
    """Evaluate a hosted agent in an evaluator process of its own; its peak memory and results."""
    out = subprocess.run(
        [sys.executable, "-c", _RUN, f"{AGENTS}:{factory}", json.dumps(options), categories, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@linux_only
def test_twenty_8_mib_error_texts_are_kept_as_excerpts_with_their_hash(tmp_path) -> None:
    run = _evaluate_apart(tmp_path, "make_long_texts", {"mib": 8}, "functional")
    path = Path(run["json"])
    data = json.loads(path.read_text())
    tests = data["detailed_results"]["functional"]["tests"]
    assert len(tests) >= 20
    text = "invalid input: " + "E" * (8 * 2**20)
    digest = hashlib.sha256(text.encode()).hexdigest()
    errors = [t["details"]["error"] for t in tests]
    assert all(isinstance(e, str) and digest in e and len(e) < 2200 for e in errors)
    assert path.stat().st_size < 2_000_000  # was 160 MB
    print(run)
    assert run["maxrss_mb"] < 500, run  # the evaluator's peak memory (was 600 MB)


@linux_only
def test_a_registry_of_150000_tools_is_refused_at_the_cap_and_the_results_are_complete(tmp_path) -> None:
    run = _evaluate_apart(tmp_path, "make_big_registry", {"n": 150_000}, "retrieval,synthesis")
    data = json.loads(Path(run["json"]).read_text())
    assert set(data["detailed_results"]) == {"retrieval", "synthesis"}
    notes = json.dumps([r["notes"] for r in data["detailed_results"].values()])
    assert "150000 tools" in notes and f"MAX_REGISTRY_TOOLS = {MAX_REGISTRY_TOOLS}" in notes
    print(run)
    assert run["maxrss_mb"] < 500, run


@linux_only
def test_a_registrys_code_is_read_up_to_its_cap_in_all() -> None:
    # 60 tools of 100,000 characters each: the evaluator keeps 2,000,000 characters of code
    agent = HostedAgent(f"{AGENTS}:make_big_registry", {"n": 60, "code_chars": 100_000}, timeout_s=60)
    try:
        records = agent.registry.tool_records()
    finally:
        agent.close()
    assert len(records) == 60
    kept = sum(len(r["code"] or "") for r in records)
    assert 1_900_000 < kept <= MAX_REGISTRY_CODE_CHARS
    unread = [r for r in records if r["code"] is None]
    assert len(unread) == 41 and all("characters of code in all" in r["problems"][0] for r in unread)


# ------------------------------------------------------------------------------ time
def test_a_category_ends_at_its_time_cap_however_slowly_the_agent_answers() -> None:
    from evalcore.agent_eval import AgentEvaluator

    agent = hostile.Slow(1.5)
    evaluator = AgentEvaluator(agent, config=_config(limit=8), category_time_cap_s=2.0)
    result = evaluator.run(["functional", "robustness"])
    for name, cat in result.categories.items():
        errors = [t.error or "" for t in cat.tests]
        assert any("time cap of 2 s was reached" in e for e in errors), (name, errors)
        assert any("time cap of 2 s was reached" in n for n in cat.notes), cat.notes
        sent = [t for t in cat.tests if "was not sent" not in json.dumps(t.details)]
        assert len(sent) <= 3, [t.name for t in sent]  # 2 s of 1.5 s requests, the last one cut
    assert result.config["category_time_cap_s"] == 2.0


# ------------------------------------------------------------------------------ the log
@linux_only
def test_the_agents_log_is_capped_on_disk_and_cannot_be_fallocated(tmp_path) -> None:
    agent = HostedAgent(f"{AGENTS}:make_log_flood", {"mib": 16}, timeout_s=60, max_log_bytes=2**20)
    try:
        for _ in range(2):
            how = agent.process_request("flood").result
            assert how.startswith("refused"), how  # a pipe, not a file: no fallocate
            assert agent.log_path.stat().st_size <= 2**20
        assert agent._drain.dropped >= 31 * 2**20 - 2**20
    finally:
        agent.close()
    assert not agent.log_path.exists()


# ------------------------------------------------------------------------------ the terminal
def test_an_agents_start_up_error_reaches_the_terminal_escaped_on_one_line(tmp_path, capsys) -> None:
    code = main(
        ["agent-eval", "--agent", f"{AGENTS}:make_terminal_at_start", "--no-save", "--categories", "functional"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert not any(c in err for c in CONTROL), repr(err)
    assert err.count("\n") == 1 and "\\x1b[2J" in err and "\\r\\nPASSED" in err


def test_an_agents_texts_are_escaped_in_what_is_printed_and_reported(tmp_path, capsys) -> None:
    result = evaluate(f"{AGENTS}:make_terminal", _config(), categories=["functional", "robustness"])
    paths = write_outputs(result, tmp_path, visualize=True)
    html = paths["html"].read_text()
    assert not any(c in html for c in CONTROL if c not in "\t")
    assert "\\x1b[2J" in html
    rows = case_records(result)
    assert rows and all(not any(c in (r["why"] or "") for c in CONTROL) for r in rows)
    # the results JSON keeps the agent's text as sent (JSON escapes it)
    assert (
        json.loads(paths["json"].read_text())["detailed_results"]["functional"]["tests"][0]["details"]["error"]
        == hostile.TERMINAL
    )
    code = main(["agent-eval", "--compare", str(paths["json"]), str(paths["json"]), "--no-save"])
    out = capsys.readouterr()
    assert code == 0 and not any(c in out.out + out.err for c in CONTROL)


# ------------------------------------------------------------------------------ memory, processes, network
def _service() -> tuple[int, threading.Event]:
    """An unauthenticated TCP service of the host on 127.0.0.1 that greets whoever connects."""
    stop = threading.Event()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"secret")
            conn.close()
        srv.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1], stop


@linux_only
def test_the_hosted_agent_is_held_to_its_memory_processes_and_own_network() -> None:
    port, stop = _service()
    agent = HostedAgent(f"{AGENTS}:make_resources", timeout_s=60, memory_mb=256, max_processes=32)
    notes = " ".join(agent.isolation_notes)
    cgroup = bool(agent._cgroup.procs)
    try:
        if os.geteuid() == 0:
            assert cgroup and "memory and process cgroup of its own (256 MB, 32 processes)" in notes, notes
        else:  # an unprivileged evaluator without a delegated cgroup: the documented fallback
            assert cgroup or "rlimits instead" in notes, notes
        if cgroup:
            before = agent.cgroup_memory_mb()
            assert before is not None and 5 < before < 256, before
        n = agent.process_request("processes 200").result
        assert isinstance(n, int) and n < 32, n
        if agent.isolation == "full":
            seen = agent.process_request(f"connect {port}").result
            assert seen.startswith("refused"), seen
            assert "a network namespace of its own" in notes
        try:
            got = agent.process_request("memory 1024").result
        except AgentEndpointError:
            got = "killed"  # the cgroup's OOM killer ended the agent; the evaluator goes on
        assert got in ("MemoryError", "killed"), got
        pids = agent._cgroup.members()
    finally:
        stop.set()
        agent.close()
    time.sleep(1.0)
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")], "a process of the agent outlived it"
    assert not any(os.path.exists(os.path.dirname(p)) for p in agent._cgroup.procs)


@linux_only
def test_an_honest_agents_scores_are_unchanged_by_the_bounds() -> None:
    cats = ["functional", "retrieval", "robustness", "workflow"]
    hosted = evaluate("honest", _config(), categories=cats)
    local = evaluate("honest", _config(), categories=cats, in_process=True)
    assert hosted.category_scores == local.category_scores
    assert min(hosted.category_scores.values()) > 0.7
    assert any("a network namespace of its own" in n for n in hosted.config["agent_isolation_notes"]) or (
        hosted.config["agent_isolation"] == "weak"
    )
