"""Every value an agent sends is data, never a crash (issue 30, item 1).

An agent that sees it is failing could erase its evaluation with a few bytes of valid JSON: an
integer of a few hundred digits (``float()`` overflowed in value matching and binding
inference), registered tool code nested thousands of levels deep (``ast.parse`` raised
``RecursionError``), a reply or tool listing nested 100,000 levels deep, a lone surrogate in an
error text (the HTML report failed to encode it, exit 1). Here agents written for the purpose —
an HTTP endpoint answering hostile and random JSON at every point where the evaluator reads the
agent, and a hosted Python agent returning hostile values — go through whole evaluations: each
must finish, write its results and report, and exit 0.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from evalcore.agent_eval import AgentEvalConfig, evaluate, write_outputs
from evalcore.agents import AgentEndpointError, HttpAgent
from evalcore.agents._http import MAX_REPLY_DEPTH, parse_reply, readable_code
from evalcore.errors import EvalcoreError

COUNTS = {"simple": 2, "medium": 1, "complex": 1, "edge": 2}
BIG = int("7" * 400)  # beyond the float range
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_CODE = "def t(x):\n    return " + "-" * 5000 + "x\n"


def _config(**kw: Any) -> AgentEvalConfig:
    return AgentEvalConfig(
        counts=COUNTS,
        limit=2,
        n_paraphrase_groups=1,
        paraphrase_size=2,
        n_unrelated=2,
        timing_repetitions=1,
        learning_repeats=2,
        pattern_repeats=1,
        memory_requests=2,
        load_requests=4,
        workers=2,
        learning_kinds=2,
        request_timeout_s=5,
        tool_budget_s=20,
        **kw,
    )


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value with the awkward parts an adversary reaches for."""
    kind = rng.randrange(12 if depth < 6 else 8)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([BIG, -BIG, 0, -1, 2**63, 2**64 + 1, int("9" * 320)])
    if kind == 2:
        return rng.choice([0.0, -0.0, 1e308, -1e308, 5e-324, 1.5])
    if kind == 3:
        return rng.choice(["\udcff", "\ud800x", "a\x00b", "ok", "é" * 50, "\u202e" + "txt", "x" * 5000, ""])
    if kind == 4:
        return rng.choice(["120", "3,628,800", "1e400", "-" + "9" * 300, "NaN", "true"])
    if kind == 5:
        return {"__class__": "x", "success": rng.choice([True, "true", 1, None])}
    if kind == 6:
        return [BIG] * rng.randrange(3)
    if kind == 7:
        return rng.choice([[], {}, [[]], {"": {}}])
    if kind in (8, 9):
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        rng.choice(["tool", "args", "result", "error", "x", "\udcff", "depends_on", "name", "code"]): _random_json(
            rng, depth + 1
        )
        for _ in range(rng.randrange(4))
    }


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # (ensure_ascii: a lone surrogate travels as \\udcff)


def _response_body(rng: random.Random) -> bytes:
    """A reply to a request: a hostile one of the known kinds, or a random one."""
    step = {"tool": "t", "args": {"x": BIG, "y": _random_json(rng)}, "result": BIG, "depends_on": [0]}
    choices: list[Callable[[], bytes]] = [
        lambda: _dumps({"success": True, "result": BIG, "tool_used": "t", "steps": [step]}),
        lambda: _dumps({"success": True, "result": [BIG, -BIG], "steps": [step, {**step, "args": {"x": 1e308}}]}),
        lambda: b'{"success": true, "result": ' + DEEP.encode() + b"}",
        lambda: _dumps({"success": False, "error": "invalid input \udcff\ud800 here"}),
        lambda: b'{"success": true, "result": NaN}',
        lambda: b'{"success": true, "result": 1e999}',
        lambda: b'{"success": true, "result": ' + b"9" * 5000 + b"}",
        lambda: b'{"success": true, "response": "\xff\xfe broken utf-8"}',
        lambda: _dumps({"success": True, "result": _random_json(rng), "steps": [_random_json(rng)]}),
        lambda: _dumps(
            {
                "success": rng.choice([True, False]),
                "result": _random_json(rng),
                "tool_used": _random_json(rng),
                "error": _random_json(rng),
                "needs_clarification": rng.choice([True, False]),
            }
        ),
        lambda: _dumps(_random_json(rng)),
    ]
    return rng.choice(choices)()


def _tools_body(rng: random.Random) -> bytes:
    choices: list[Callable[[], bytes]] = [
        lambda: b'{"tools": ' + DEEP.encode() + b"}",
        lambda: _dumps({"tools": [{"name": "t", "code": DEEP_CODE, "tests": DEEP_CODE}]}),
        lambda: _dumps({"tools": [{"name": "t", "code": "def t(x):\n    return x * " + str(BIG) + "\n"}]}),
        lambda: _dumps({"tools": [{"name": "\udcff", "code": "def t(:\n"}, {"name": BIG}]}),
        lambda: _dumps({"tools": [{"name": "t", "code": "x = (" * 150 + "1" + ")" * 150}]}),
        lambda: _dumps({"tools": _random_json(rng)}),
        lambda: _dumps(_random_json(rng)),
    ]
    return rng.choice(choices)()


def _search_body(rng: random.Random) -> bytes:
    choices: list[Callable[[], bytes]] = [
        lambda: _dumps({"matches": [{"name": "t", "score": BIG}]}),
        lambda: _dumps({"matches": [{"name": "\udcff", "score": 1e308}, {"name": "t", "score": "NaN"}]}),
        lambda: b'{"matches": ' + DEEP.encode() + b"}",
        lambda: _dumps({"matches": _random_json(rng)}),
        lambda: _dumps(_random_json(rng)),
    ]
    return rng.choice(choices)()


class _Hostile(BaseHTTPRequestHandler):
    """An agent endpoint answering hostile or random JSON wherever the evaluator reads it. It
    passes the CLI's check (a plain tool list, a working reset), so the evaluation runs."""

    protocol_version = "HTTP/1.0"
    rng = random.Random(0)
    fixed: bytes | None = None  # when set: the one reply to every request and registry read
    hostile_reset = False  # when set: resets answer 500s and deep bodies too (the CLI's check would refuse them)
    lock = threading.Lock()
    seen: dict[str, int] = {}

    def log_message(self, *a: Any) -> None:
        return

    def _reply(self, body: bytes, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _count(self, what: str) -> None:
        with self.lock:
            self.seen[what] = self.seen.get(what, 0) + 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = urlparse(self.path).path
        if path.endswith("/reset"):
            self._count("reset")
            with self.lock:
                pick = self.rng.randrange(4) if self.hostile_reset else 0
            if pick == 1:
                self._reply(_dumps({"error": "reset failed \udcff"}), status=500)
            elif pick == 2:
                self._reply(DEEP.encode())
            else:
                self._reply(b"{}")
            return
        self._count("query")
        with self.lock:
            body = self.fixed if self.fixed is not None else _response_body(self.rng)
        self._reply(body)

    def do_GET(self) -> None:
        parsed = urlparse(self.path)
        qs = parse_qs(parsed.query)
        with self.lock:
            if self.fixed is not None:
                body = self.fixed
            elif parsed.path.endswith("/tools") and not qs.get("code"):
                body = b'{"tools": []}'  # (the CLI's check before and after the run)
            elif parsed.path.endswith("/tools"):
                self.seen["tools"] = self.seen.get("tools", 0) + 1
                body = _tools_body(self.rng)
            elif parsed.path.endswith("/search"):
                self.seen["search"] = self.seen.get("search", 0) + 1
                body = _search_body(self.rng)
            else:
                self.seen["describe"] = self.seen.get("describe", 0) + 1
                body = _dumps({"name": "t", "code": DEEP_CODE, "tests": "\udcff"})
        self._reply(body)


@pytest.fixture()
def hostile() -> Iterator[tuple[type[_Hostile], str]]:
    handler = type("H", (_Hostile,), {"rng": random.Random(0), "seen": {}, "lock": threading.Lock()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_address[1]}/agent"
    server.shutdown()
    server.server_close()


# ------------------------------------------------------------------------------ the known crashes
def test_a_reply_100000_levels_deep_is_refused_as_data() -> None:
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_REPLY_DEPTH} levels"):
        parse_reply(DEEP)
    with pytest.raises(ValueError, match="nested deeper"):
        parse_reply("[" * (MAX_REPLY_DEPTH + 1) + "]" * (MAX_REPLY_DEPTH + 1))
    assert parse_reply("[" * MAX_REPLY_DEPTH + "]" * MAX_REPLY_DEPTH) is not None
    with pytest.raises(ValueError, match="NaN is not a JSON value"):
        parse_reply('{"result": NaN}')
    assert parse_reply(b'{"r": ' + str(BIG).encode() + b"}") == {"r": BIG}


def test_code_python_cannot_parse_is_a_tool_without_code_with_the_reason() -> None:
    code, why = readable_code(DEEP_CODE)
    assert code is None and "cannot parse" in why
    code, why = readable_code("def t(x):\n    return " + "[" * 150 + "x" + "]" * 150 + "\n")
    assert code is None and "deeper than 100 levels" in why  # parsed, but too deep for the checks' walks
    code, why = readable_code("def t(x):\n    return " + "[" * 250 + "x" + "]" * 250 + "\n")
    assert code is not None and why is None  # a plain syntax error (too many parentheses) is the checks' to find
    code, why = readable_code("def t(x):\n    return x + 1\n")
    assert code == "def t(x):\n    return x + 1\n" and why is None
    assert readable_code(BIG) == (None, "not a string (int)")


def test_binding_inference_and_matching_take_integers_beyond_the_float_range() -> None:
    from evalcore.agent_eval._matching import values_match
    from evalcore.agent_eval._measure import infer_binding

    # (float(10**400) raised OverflowError in the evaluator)
    assert infer_binding({"n": BIG}, "factorial", {"n": 5}) is None
    assert infer_binding({"n": BIG}, "factorial", {"n": BIG}) == {"n": ("slot", "n")}
    assert infer_binding({"n": 5.0}, "factorial", {"n": 5}) == {"n": ("slot", "n")}
    assert not values_match(BIG, 120) and values_match(BIG, BIG) and not values_match(BIG, 1.5)


def test_a_lone_surrogate_in_an_error_text_is_shown_in_the_report(tmp_path: Path) -> None:
    from evalcore.agent_eval import AgentCase, AgentEvaluator
    from evalcore.agents import AgentResponse

    class Surrogate:
        registry = None

        def reset(self) -> None:
            pass

        def process_request(self, query: str) -> AgentResponse:
            return AgentResponse(success=False, error="bad input \udcff here")

    case = AgentCase(
        id="c1", query="factorial of 5", complexity="simple", kind="factorial", categories=["functional"], expected=120
    )
    result = AgentEvaluator(Surrogate(), [case], config=AgentEvalConfig(seed=0)).run(["functional"], progress=False)
    paths = write_outputs(result, tmp_path, visualize=True)
    html = paths["html"].read_text(encoding="utf-8")
    assert "bad input \\udcff here" in html
    saved = json.loads(paths["json"].read_text())
    assert saved["detailed_results"]["functional"]["tests"][0]["details"]["error"] == "bad input \udcff here"
    # the rows the notebooks show can be saved as UTF-8 (a notebook holding the raw surrogate could not)
    from evalcore.agent_eval import case_records

    rows = case_records(result)
    assert "bad input \\udcff here" in rows[0]["why"]
    json.dumps(rows, ensure_ascii=False).encode("utf-8")


def test_http_agent_refuses_each_hostile_reply_as_that_requests_failure(hostile) -> None:
    handler, url = hostile
    agent = HttpAgent(url, timeout_s=5)
    bodies = {
        "deep": b'{"success": true, "result": ' + DEEP.encode() + b"}",
        "nan": b'{"success": true, "result": NaN}',
        "digits": b'{"success": true, "result": ' + b"9" * 5000 + b"}",
        "utf8": b'{"success": true, "response": "\xff"}',
    }
    for name, body in bodies.items():
        handler.fixed = body
        with pytest.raises(AgentEndpointError, match="non-JSON") as info:
            agent.process_request("q")
        assert len(str(info.value)) < 400, (name, str(info.value)[:400])
    agent.close()


# ------------------------------------------------------------------------------ whole evaluations
@pytest.mark.parametrize("seed", [1, 2])
def test_evaluation_of_a_hostile_http_agent_finishes_and_writes_everything(hostile, tmp_path, seed) -> None:
    handler, url = hostile
    handler.rng = random.Random(seed)
    handler.hostile_reset = True
    result = evaluate(url, _config(), progress=False)
    assert set(result.categories) == {
        "functional",
        "synthesis",
        "retrieval",
        "learning",
        "workflow",
        "performance",
        "robustness",
    }
    assert all(cat.tests for cat in result.categories.values())
    assert handler.seen.get("query", 0) >= 10 and handler.seen.get("tools", 0) > 0 and handler.seen.get("search", 0) > 0
    assert result.overall < 0.5 and not result.passed
    paths = write_outputs(result, tmp_path, visualize=True)
    data = json.loads(paths["json"].read_text())
    assert set(data["detailed_results"]) == set(result.categories)
    assert "<h1>Agent evaluation" in paths["html"].read_text(encoding="utf-8")
    # whatever was refused says why
    errors = [t.error for cat in result.categories.values() for t in cat.tests if t.score == 0]
    # (a score of 0 without an error is a plain miss, e.g. a search that ranked the wrong tools:
    # its details say what was answered)
    reasons = [e for e in errors if e is not None]
    assert reasons and all(isinstance(e, str) and e for e in reasons)


def test_agent_eval_command_on_a_hostile_http_agent_exits_0_with_results_and_report(
    hostile, tmp_path, monkeypatch, capsys
) -> None:
    from evalcore.cli import main

    handler, url = hostile
    handler.rng = random.Random(3)
    out = tmp_path / "out"
    monkeypatch.setenv("EVALCORE_AGENT_SEED", "12345")
    status = main(
        [
            "agent-eval",
            "--agent",
            url,
            "--counts",
            "simple=2,medium=1,complex=1,edge=2",
            "--limit",
            "2",
            "--load-requests",
            "4",
            "--workers",
            "2",
            "--request-timeout",
            "5",
            "--tool-budget",
            "20",
            "--visualize",
            "--output-dir",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert status == 0, printed.err[-2000:]
    assert len(list(out.glob("evaluation_*.json"))) == 1 and (out / "report.html").is_file()


HOSTED = textwrap.dedent("""
    import random

    from evalcore.agents._protocol import AgentResponse, StepRecord, ToolMatch

    BIG = int("7" * 400)
    DEEP_CODE = "def t(x):\\n    return " + "-" * 5000 + "x\\n"


    class Registry:
        def __init__(self, rng):
            self.rng = rng

        def search(self, query, k=5, threshold=0.0):
            return [ToolMatch("t", self.rng.choice([BIG, 1e308, -1.0, 0.5]))]

        def list_tools(self):
            return ["t", "u\\udcff", "deep"]

        def describe(self, name):
            return {"name": name, "code": self.rng.choice([DEEP_CODE, "def t(x):\\n    return x * " + str(BIG) + "\\n",
                                                        "x = " + "+".join(["a"] * 20000)]),
                    "tests": "def test_t():\\n    assert " + "not " * 3000 + "t(1)\\n"}


    class Hostile:
        def __init__(self, seed):
            self.rng = random.Random(seed)
            self.registry = Registry(self.rng)

        def reset(self):
            pass

        def process_request(self, query):
            r = self.rng
            deep = []
            for _ in range(r.choice([10, 60, 500])):
                deep = [deep]
            step = StepRecord(tool="t", args={"x": BIG, "y": "\\udcff"}, result=r.choice([BIG, deep, -BIG]))
            return r.choice([
                AgentResponse(success=True, result=BIG, tool_used="t", steps=[step], synthesized=True),
                AgentResponse(success=True, result=deep, steps=[step, step]),
                AgentResponse(success=False, error="invalid \\udcff\\ud800 input"),
                AgentResponse(success=True, result=[BIG, "\\udcff"], tool_used="deep", reused=True),
                AgentResponse(success=True, result=float("inf")),
            ])


    def make(seed=0):
        return Hostile(seed)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="hosted agents are isolated on Linux")
def test_evaluation_of_a_hostile_hosted_agent_finishes_and_writes_everything(tmp_path) -> None:
    path = tmp_path / "hostile_agent.py"
    path.write_text(HOSTED)
    result = evaluate(f"{path}:make", _config(), options={"seed": 4}, progress=False)
    assert result.config["agent_process"] == "hosted"
    assert len(result.categories) == 7 and all(cat.tests for cat in result.categories.values())
    assert not result.passed
    paths = write_outputs(result, tmp_path / "out", visualize=True)
    assert json.loads(paths["json"].read_text())["summary"]["n_tests"] == result.summary()["n_tests"]
    assert paths["html"].is_file()


def test_registry_reads_refuse_deep_listings_with_a_reason(hostile) -> None:
    handler, url = hostile
    agent = HttpAgent(url, timeout_s=5)
    handler.fixed = b'{"tools": ' + DEEP.encode() + b"}"
    with pytest.raises(EvalcoreError, match="nested deeper than 64 levels"):
        agent.registry.tool_records()
    handler.fixed = _dumps({"tools": [{"name": "t", "code": DEEP_CODE}, {"name": "u", "code": "def u():\n    pass\n"}]})
    records = agent.registry.tool_records()
    assert records[0]["code"] is None and "cannot parse" in records[0]["problems"][0]
    assert records[1]["code"] == "def u():\n    pass\n" and "problems" not in records[1]
    handler.fixed = _dumps({"matches": [{"name": "t", "score": BIG}]})
    with pytest.raises(EvalcoreError, match="malformed match"):
        agent.registry.search("q")
    agent.close()
