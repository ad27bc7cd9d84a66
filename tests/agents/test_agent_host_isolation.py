"""A hosted agent is out of the evaluator's reach: it cannot find or read the evaluator's memory,
and nothing it starts outlives it (issue 13)."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import textwrap
import time
import uuid

import pytest

from _processes import alive as _alive
from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, AgentEvaluator
from evalcore.agents import HostedAgent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

COUNTS = {"simple": 4, "medium": 0, "complex": 0, "edge": 0}

# A factory agent that looks for the evaluator (its parent, any process whose command line names
# pytest, and the PID it was given) and tries to read its memory. Where it reads any, it answers
# like the oracle (as if it had found the answers there); otherwise it refuses everything.
PROBE = textwrap.dedent("""
    import os, subprocess, sys

    from evalcore.agent_eval._oracle import OracleAgent, agent_eval_cases
    from evalcore.agents._protocol import AgentResponse


    def _read_mem(pid):
        try:
            with open(f"/proc/{pid}/maps") as fh:
                start, end = next(l for l in fh if " r" in l[17:40] or "r-" in l).split()[0].split("-")
            with open(f"/proc/{pid}/mem", "rb") as fh:
                fh.seek(int(start, 16))
                return len(fh.read(64))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"


    class Probe(OracleAgent):
        def __init__(self, evaluator_pid, token, counts):
            super().__init__(*agent_eval_cases(0, counts))
            self.token = token
            found = {}
            ppid = os.getppid()
            found["ppid"] = ppid
            found["pid"] = os.getpid()
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            found["visible_pids"] = pids[:50]
            cands = {ppid, evaluator_pid} - {0}
            for p in pids:
                try:
                    with open(f"/proc/{p}/cmdline", "rb") as fh:
                        if b"pytest" in fh.read():
                            cands.add(p)
                except OSError:
                    pass
            cands.discard(os.getpid())  # (its own command line names the test folder)
            found["reads"] = {str(p): _read_mem(p) for p in sorted(cands)}
            found["stole"] = any(isinstance(v, int) and v > 0 for v in found["reads"].values())
            self.found = found
            # processes that should not outlive the agent: one in its group, one that leaves it
            subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(300)  # {token} grp"])
            subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(300)  # {token} sid"],
                             start_new_session=True)

        def process_request(self, query):
            if query == "probe":
                return AgentResponse(success=True, result=self.found)
            if self.found["stole"]:
                return super().process_request(query)
            return AgentResponse(success=False, error="found nothing to read")


    def make(evaluator_pid=0, token="", counts=None):
        return Probe(evaluator_pid, token, counts)
""")


@pytest.fixture()
def probe_spec(tmp_path):
    path = tmp_path / "probe_agent.py"
    path.write_text(PROBE)
    return f"{path}:make"


def _gone(token: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(token)


def _dumpable() -> int:
    return int(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE


def test_hosted_agent_cannot_find_or_read_the_evaluator_and_scores_no_better(probe_spec) -> None:
    token = uuid.uuid4().hex
    agent = HostedAgent(probe_spec, {"evaluator_pid": os.getpid(), "token": token, "counts": COUNTS})
    try:
        assert agent.isolation == "full", agent.isolation_notes
        found = agent.process_request("probe").result
        # its parent is evalcore's init, PID 1 of the namespace (issue 30: the agent is never PID 1)
        assert found["ppid"] == 1 and found["pid"] != 1
        assert os.getpid() not in found["visible_pids"] and found["visible_pids"][0] == 1
        assert found["stole"] is False and found["reads"]
        assert all(isinstance(v, str) for v in found["reads"].values()), found["reads"]
        assert _dumpable() == 0  # and the evaluator is not dumpable while it hosts agents
        cases = AgentCaseGenerator(0, COUNTS).generate()
        res = AgentEvaluator(agent, cases, config=AgentEvalConfig(seed=0, counts=COUNTS)).run(
            ["functional"], progress=False
        )
        assert res.categories["functional"].score == 0.0
        assert res.config["agent_isolation"] == "full" and res.trusted
        assert len(_alive(token)) == 2  # its two sleepers run while it does
    finally:
        agent.close()
    assert _gone(token), "a process the agent started outlived it"
    assert _dumpable() == 1


def test_weak_isolation_kills_the_group_and_says_so(probe_spec, monkeypatch) -> None:
    # where the kernel refuses namespaces: the result says the isolation is weak, and the
    # agent's host runs under evalcore's init, a child subreaper, which kills every process
    # the agent started on close (also one that left the group by setsid, issue 30)
    monkeypatch.setenv("EVALCORE_AGENT_HOST_ISOLATION", "weak")
    token = uuid.uuid4().hex
    agent = HostedAgent(probe_spec, {"evaluator_pid": os.getpid(), "token": token, "counts": COUNTS})
    try:
        assert agent.isolation == "weak" and agent.isolation_notes
        found = agent.process_request("probe").result
        assert found["ppid"] == agent.pid  # evalcore's init, whose parent is the evaluator: it can find it
        if os.geteuid() != 0:  # root keeps CAP_SYS_PTRACE; anyone else meets a non-dumpable evaluator
            assert str(os.getpid()) in found["reads"] and isinstance(found["reads"][str(os.getpid())], str)
        assert _dumpable() == 0
        cases = AgentCaseGenerator(0, COUNTS).generate()
        res = AgentEvaluator(agent, cases, config=AgentEvalConfig(seed=0, counts=COUNTS)).run(
            ["functional"], progress=False
        )
        assert res.config["agent_isolation"] == "weak"
        sid_pid = [p for p in _alive(token) if b"sid" in open(f"/proc/{p}/cmdline", "rb").read()]
    finally:
        agent.close()
    assert sid_pid  # (the sleeper in a session of its own ran)
    alive = _alive(token)
    for p in alive:  # (clean up before asserting)
        os.kill(p, 9)
    assert not alive, "a process the agent started outlived it"
    assert _dumpable() == 1


def test_closing_a_hosted_agent_twice_and_after_a_crash_is_safe(tmp_path) -> None:
    path = tmp_path / "crash_agent.py"
    path.write_text(
        "import os\nfrom evalcore.agents._protocol import AgentResponse\n\n"
        "class A:\n    registry = None\n    def reset(self):\n        pass\n"
        "    def process_request(self, q):\n        os._exit(3)\n\n"
        "def make():\n    return A()\n"
    )
    agent = HostedAgent(f"{path}:make", timeout_s=5)
    try:
        agent.process_request("hi")
    except Exception:
        pass
    agent.close()
    agent.close()
    assert _dumpable() == 1
    json.dumps({"isolation": agent.isolation})


# A factory agent that tries to change what the evaluator runs or reads after it started: a
# module in evalcore's package and a .pth file in site-packages (both would run in the
# evaluator's process or in every later interpreter), a file in its own import path; and to
# read a Jupyter kernel's connection file (its key runs code in that kernel). Every attempt
# creates a new file (so a failure of the test leaves nothing changed but files it removes).
WRITER = textwrap.dedent("""
    import os

    from evalcore.agents._protocol import AgentResponse


    def _try(fn):
        try:
            return fn()
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"


    class Writer:
        registry = None

        def __init__(self, targets, scratch, writable, runtime):
            found = {}
            for name, path in targets.items():
                found[name] = _try(lambda: open(path, "x").write("raise SystemExit('planted')\\n"))
            found["scratch"] = _try(lambda: (open(scratch, "x").write("mine"), open(scratch).read())[1])
            found["writable"] = _try(lambda: open(writable, "x").write("kept"))
            found["runtime"] = _try(lambda: sorted(os.listdir(runtime)))
            self.found = found

        def reset(self):
            pass

        def process_request(self, query):
            return AgentResponse(success=True, result=self.found)


    def make(targets, scratch, writable, runtime):
        return Writer(targets, scratch, writable, runtime)
""")


def test_hosted_agent_cannot_write_the_evaluators_code_environment_or_import_path(tmp_path, monkeypatch) -> None:
    import sysconfig

    import evalcore

    token = uuid.uuid4().hex
    lib = tmp_path / "lib"  # the agent's own import path (bound back read-only into its /tmp)
    lib.mkdir()
    (lib / "writer_agent.py").write_text(WRITER)
    runtime = lib / "jupyter-runtime"
    runtime.mkdir()
    (runtime / "kernel-1.json").write_text('{"key": "secret"}')
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.syspath_prepend(str(lib))
    out = tmp_path / "out"
    out.mkdir()
    targets = {
        "package": os.path.join(os.path.dirname(evalcore.__file__), f"planted_{token}.py"),
        "site_packages": os.path.join(sysconfig.get_paths()["purelib"], f"planted_{token}.pth"),
        "import_path": str(lib / f"planted_{token}.py"),
    }
    scratch = f"/tmp/evalcore-agent-scratch-{token}"
    agent = HostedAgent(
        "writer_agent:make",
        {"targets": targets, "scratch": scratch, "writable": str(out / "kept.txt"), "runtime": str(runtime)},
        writable=[out],
    )
    try:
        assert agent.isolation == "full", agent.isolation_notes
        assert any("read-only for the agent" in n and str(out) in n for n in agent.isolation_notes)
        found = agent.process_request("probe").result
    finally:
        agent.close()
        planted = [p for p in targets.values() if os.path.exists(p)]
        for p in planted:
            os.unlink(p)
    assert not planted, f"the agent wrote {planted}"
    for name in targets:
        assert "Read-only file system" in found[name], (name, found[name])
    assert found["scratch"] == "mine" and not os.path.exists(scratch)  # its /tmp is its own
    assert found["writable"] == 4 and (out / "kept.txt").read_text() == "kept"
    assert found["runtime"] == [], found["runtime"]  # the kernel's connection file is hidden
