"""Outputs, comparison, threshold sweep and the agent-eval / sweep CLI."""

from __future__ import annotations

import base64
import json
import re

import pytest

from evalcore import cli
from evalcore.agent_eval import (
    AgentCaseGenerator,
    AgentEvalConfig,
    AgentEvaluator,
    OracleAgent,
    WrongAgent,
    compare_results,
    load_results,
    parse_thresholds,
    save_cases,
    threshold_sweep,
    write_outputs,
)
from evalcore.agents import AgentResponse, ToolMatch
from evalcore.errors import EvalcoreError

SMALL = {"simple": 4, "medium": 2, "complex": 2, "edge": 3}


@pytest.fixture()
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("evalcore.agent_eval._cli",))
    return cli.main


def _result(agent_cls, categories=("functional", "workflow", "robustness")):
    gen = AgentCaseGenerator(seed=0, counts=SMALL)
    cases = gen.generate()
    return AgentEvaluator(
        agent_cls(cases, gen.paraphrase_groups()), cases, config=AgentEvalConfig(seed=0, counts=SMALL)
    ).run(list(categories), progress=False)


def test_write_outputs(tmp_path):
    res = _result(OracleAgent)
    paths = write_outputs(res, tmp_path, visualize=True)
    assert re.fullmatch(r"evaluation_\d{8}_\d{6}\.json", paths["json"].name)
    for name in ("category_scores", "test_distribution", "performance"):
        assert paths[name].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = paths["html"].read_text()
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(imgs) == 3 and base64.b64decode(imgs[0])[:4] == b"\x89PNG"
    assert not re.search(r"https?:", re.sub(r"<pre>.*?</pre>", "", html, flags=re.S))  # nothing fetched
    d = load_results(paths["json"])
    assert d["summary"]["overall_score"] == 1.0
    second = write_outputs(res, tmp_path, visualize=False)["json"]
    assert second != paths["json"] and second.exists()
    assert not list(tmp_path.glob(".*.tmp"))


def _verdict(html):
    """The report's opening paragraph (the verdict), without tags."""
    para = re.search(r"<p>Overall score.*?</p>", html, flags=re.S).group(0)
    return re.sub(r"<[^>]+>", "", para)


def test_html_report_shows_status_floor_and_trust():
    from evalcore.agent_eval._output import render_html

    figs = {"category_scores": b"\x89PNG"}
    partial = _result(OracleAgent).to_dict()  # three categories, in process
    text = _verdict(render_html(partial, figs))
    assert "system partial" in text and "PASSED" not in text and "FAILED" not in text
    assert "Trusted: no" in text and "in the evaluator's process" in text
    assert "No category below the floor 0.5" in text
    # a complete run: the status, the floor and the categories under it, as the summary says
    full = json.loads(json.dumps(partial))
    full["summary"].update(
        status="FAILED",
        passed=False,
        category_floor=0.6,
        categories_below_floor=["retrieval", "learning"],
        trusted=True,
    )
    full["config"]["agent_process"] = "hosted"
    text = _verdict(render_html(full, figs))
    assert "system FAILED" in text and "floor 0.6" in text
    assert "Below the category floor 0.6: retrieval, learning" in text
    assert "Trusted: yes" in text and "hosted" in text and "isolation" not in text
    full["config"]["agent_isolation"] = "full"
    assert "hosted; isolation full" in _verdict(render_html(full, figs))
    full["summary"].update(status="PASSED", passed=True, categories_below_floor=[])
    assert "system PASSED" in _verdict(render_html(full, figs))
    # a result saved without a status: recomputed (fewer than seven categories: partial)
    old = json.loads(json.dumps(partial))
    del old["summary"]["status"]
    old["summary"]["passed"] = True
    assert "system partial" in _verdict(render_html(old, figs))


def test_compare_flags_drop_and_runs_paired_test():
    a = _result(OracleAgent).to_dict()
    b = json.loads(json.dumps(a))
    tests = b["detailed_results"]["functional"]["tests"]
    tests[0]["score"] = 0.0  # functional 1.0 -> 0.75: a 25% drop
    b["detailed_results"]["functional"]["score"] = sum(t["score"] for t in tests) / len(tests)
    b["detailed_results"]["workflow"]["score"] = 0.95  # 5% drop: not flagged
    cmp = compare_results(a, b)
    assert cmp["categories"]["functional"]["delta"] == pytest.approx(-0.25)
    assert cmp["flagged_categories"] == ["functional"]
    assert cmp["flagged_tests"] == [f"functional/{tests[0]['name']}"]
    assert cmp["tests"][f"functional/{tests[0]['name']}"]["diff"] == -1.0
    assert cmp["paired_test"]["n"] == len(cmp["tests"])
    assert cmp["paired_test"]["mean_difference"] == pytest.approx(-1 / len(cmp["tests"]))
    assert 0 < cmp["paired_test"]["permutation_p"] <= 1
    big = compare_results(a, _result(WrongAgent).to_dict())
    assert big["paired_test"]["permutation_p"] < 0.01 and "functional" in big["flagged_categories"]


class SweepRegistry:
    def __init__(self, relevant):
        self.relevant = relevant

    def search(self, query, k=5, threshold=0.0):
        kind = self.relevant.get(query)
        hits = [ToolMatch(kind, 0.62), ToolMatch("decoy", 0.45)] if kind else [ToolMatch("decoy", 0.40)]
        return [h for h in hits if h.score >= threshold][:k]

    def list_tools(self):
        return ["percentage", "reverse_string", "factorial", "temperature_conversion", "decoy"]

    def describe(self, name):
        # relevance is measured (issue 37): the tools named like the kinds compute them, the decoy nothing
        from evalcore.agent_eval._oracle import tool_source

        return {"code": "def decoy(**kw):\n    return 0\n" if name == "decoy" else tool_source(name)[0]}


class SweepAgent:
    """Finds the right tool at 0.62, a decoy at 0.45 (0.40 for unrelated queries)."""

    def __init__(self, threshold, cases):
        self.threshold = threshold
        self.cases = {c.query: c for c in cases}
        self._registry = SweepRegistry({q: c.kind for q, c in self.cases.items()})

    @property
    def registry(self):
        return self._registry

    def reset(self):
        pass

    def process_request(self, query):
        c = self.cases.get(query)
        if c is None or self.threshold > 0.62:
            return AgentResponse(success=False, error="no tool above the threshold")
        return AgentResponse(success=True, result=c.expected, tool_used=c.kind, reused=True)


def test_sweep_selects_known_best_threshold():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 12, "medium": 0, "complex": 0, "edge": 0}).generate()
    res = threshold_sweep(
        lambda t: SweepAgent(t, cases),
        parse_thresholds("0.30:0.80:0.05"),
        cases=cases,
        n_unrelated=8,
        progress=False,
        n_resamples=2000,
    )
    assert res.best_threshold == 0.5  # (0.45, 0.62] is perfect; ties go to the lowest
    m = res.metrics.set_index(["threshold", "split"])
    assert m.loc[(0.5, "all"), "f1"] == 1.0 and m.loc[(0.5, "all"), "fpr"] == 0.0
    assert m.loc[(0.3, "all"), "fpr"] == 1.0 and m.loc[(0.3, "all"), "precision"] == 0.5
    assert m.loc[(0.45, "all"), "fpr"] == 0.0 and m.loc[(0.45, "all"), "f1"] == pytest.approx(2 / 3)
    assert m.loc[(0.7, "all"), "success"] == 0.0 and m.loc[(0.7, "all"), "recall"] == 0.0
    t = res.tests.set_index("threshold")
    assert 0.5 not in t.index and len(t) == 10
    assert (t.p_adjusted >= t.p_value - 1e-12).all()
    from statsmodels.stats.multitest import multipletests

    assert t.p_adjusted.to_numpy() == pytest.approx(multipletests(t.p_value.to_numpy(), method="fdr_bh")[1])
    # the held-out tests use only held-out items, paired by item
    held = res.items[(res.items.split == "test") & (res.items.threshold == 0.8)]
    assert (t.n == len(held)).all() and t.loc[0.8, "mean_difference"] == pytest.approx(
        held.utility.mean() - res.items[(res.items.split == "test") & (res.items.threshold == 0.5)].utility.mean()
    )
    assert t.loc[0.8, "significant"] and not t.loc[0.55, "significant"]
    assert set(res.items.split) == {"dev", "test"}
    assert res.held_out()["threshold"] == 0.5
    json.dumps(res.to_dict(), allow_nan=False)
    res.figure()


def test_parse_thresholds():
    assert parse_thresholds("0.30:0.80:0.05")[0] == 0.3 and len(parse_thresholds("0.30:0.80:0.05")) == 11
    assert parse_thresholds("0.7,0.5") == [0.5, 0.7]
    for bad in ("0.8:0.3:0.1", "a:b:c", "0.3:0.8:0", ""):
        with pytest.raises(EvalcoreError):
            parse_thresholds(bad)


def test_cli_agent_eval_and_compare(main, tmp_path, capsys):
    out = tmp_path / "o"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "oracle",
                "--counts",
                "simple=4,medium=2,complex=2,edge=3",
                "--categories",
                "functional,workflow",
                "--visualize",
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    first = sorted(out.glob("evaluation_*.json"))[0]
    seed = json.loads(first.read_text())["config"]["suite"]["seed"]
    assert f"cases from seed {seed} (drawn for this run" in capsys.readouterr().out
    seed_file = tmp_path / "seed"
    seed_file.write_text(f"{seed}\n")
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "wrong",
                "--counts",
                "simple=4,medium=2,complex=2,edge=3",
                "--seed-file",
                str(seed_file),
                "--categories",
                "functional",
                "workflow",
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    files = sorted(out.glob("evaluation_*.json"))
    assert len(files) == 2 and (out / "report.html").exists()
    second = next(f for f in files if f != first)
    cfg = json.loads(second.read_text())["config"]
    assert cfg["suite"]["seed"] == seed and cfg["suite"]["seed_source"] == "file"
    assert main(["agent-eval", "--compare", str(first), str(second), "--output-dir", str(out)]) == 0
    text = capsys.readouterr().out
    assert "DROP" in text and "permutation p=" in text
    # A third run on a drawn seed has the same test names on other cases: no pairing.
    other = tmp_path / "other"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "wrong",
                "--counts",
                "simple=4,medium=2,complex=2,edge=3",
                "--categories",
                "functional",
                "--output-dir",
                str(other),
            ]
        )
        == 0
    )
    third = next(other.glob("evaluation_*.json"))
    assert main(["agent-eval", "--compare", str(first), str(third), "--output-dir", str(other)]) == 2
    err = capsys.readouterr().err
    assert "ran on different cases" in err and f"EVALCORE_AGENT_SEED={seed}" in err
    assert not list(other.glob("comparison_*.json"))
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "failing",
                "--categories",
                "functional",
                "--no-save",
                "--strict",
                "--counts",
                "simple=2,medium=0,complex=0,edge=0",
                "--output-dir",
                str(tmp_path / "n"),
            ]
        )
        == 1
    )
    assert not (tmp_path / "n").exists()


def test_cli_in_process_floor_and_throughput_target(main, tmp_path, capsys):
    counts = ["--counts", "simple=4,medium=2,complex=2,edge=3"]
    out = tmp_path / "ip"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "oracle",
                *counts,
                "--categories",
                "functional,performance",
                "--in-process",
                "--category-floor",
                "0.95",
                "--throughput-target",
                "100000",
                "--load-requests",
                "4",
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "system partial (not every category run: no verdict)" in text
    assert "PASSED" not in text and "FAILED" not in text
    assert "[in-process agent: results not trusted]" in text
    d = json.loads(next(out.glob("evaluation_*.json")).read_text())
    assert d["summary"]["status"] == "partial" and d["summary"]["trusted"] is False
    assert d["config"]["agent_process"] == "in-process"
    assert d["summary"]["category_floor"] == 0.95 and d["config"]["suite"]["category_floor"] == 0.95
    tput = next(t for t in d["detailed_results"]["performance"]["tests"] if t["name"] == "throughput")
    assert tput["details"]["target_qps"] == 100000 and tput["score"] < 0.1  # unreachable target
    assert d["summary"]["categories_below_floor"] == ["performance"]  # functional 1.0 is above it
    # the same agent hosted (the default): trusted, the default target gives throughput credit
    out2 = tmp_path / "hosted"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "oracle",
                *counts,
                "--categories",
                "performance",
                "--load-requests",
                "4",
                "--output-dir",
                str(out2),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "system partial" in text and "not trusted" not in text
    d2 = json.loads(next(out2.glob("evaluation_*.json")).read_text())
    assert d2["summary"]["trusted"] is True and d2["config"]["agent_process"] == "hosted"
    tput2 = next(t for t in d2["detailed_results"]["performance"]["tests"] if t["name"] == "throughput")
    assert tput2["details"]["target_qps"] == 10 and tput2["score"] > tput["score"]


@pytest.mark.parametrize("flag,value", [("--category-floor", "1.5"), ("--throughput-target", "0")])
def test_cli_floor_and_target_are_checked(main, flag, value, tmp_path, capsys):
    assert main(["agent-eval", "--agent", "oracle", flag, value, "--output-dir", str(tmp_path / "x")]) == 2
    assert flag in capsys.readouterr().err


def test_cli_cases_file(main, tmp_path):
    cases = AgentCaseGenerator(seed=4, counts={"simple": 3, "medium": 0, "complex": 0, "edge": 0}).generate()
    p = save_cases(cases, tmp_path / "cases.json")
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                "oracle",
                "--cases",
                str(p),
                "--categories",
                "functional",
                "--output-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    d = json.loads(next(tmp_path.glob("evaluation_*.json")).read_text())
    assert d["detailed_results"]["functional"]["n_tests"] == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["agent-eval", "--categories", "nonsense"],
        ["agent-eval", "--cases", "/nonexistent/cases.json", "--agent", "oracle"],
        ["agent-eval", "--counts", "simple=x", "--agent", "oracle"],
        ["agent-eval", "--agent", "no_such_spec"],
        ["agent-eval", "--agent", "oracle", "--limit", "0"],
        ["agent-eval", "--compare", "/nonexistent/a.json", "/nonexistent/b.json"],
        ["sweep", "--thresholds", "0.9:0.1:0.1"],
        ["sweep", "--agent", "oracle"],
        ["agent-eval", "--agent", "http://127.0.0.1:9/agent", "--threshold", "0.5"],
        ["agent-eval", "--agent", "oracle", "--counts", "simple=0,medium=0,complex=0,edge=0"],
        ["sweep", "--agent", "http://127.0.0.1:9/agent", "--thresholds", "0.5"],
    ],
)
def test_cli_bad_input_exits_2(main, argv, tmp_path, capsys):
    assert main(argv + (["--output-dir", str(tmp_path / "x")] if argv[0] == "agent-eval" else [])) == 2
    assert "evalcore: error:" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_cli_compare_bad_json(main, tmp_path):
    bad = tmp_path / "a.json"
    bad.write_text('{"summary": {}}')
    assert main(["agent-eval", "--compare", str(bad), str(bad), "--output-dir", str(tmp_path)]) == 2


def test_cli_module_function_agent(main, tmp_path):
    mod = tmp_path / "my_agent.py"
    mod.write_text(
        "from evalcore.agent_eval import AgentCaseGenerator, OracleAgent\n\n"
        "def make():\n"
        "    counts = {'simple': 3, 'medium': 0, 'complex': 0, 'edge': 0}\n"
        "    return OracleAgent(AgentCaseGenerator(0, counts).generate())\n"
    )
    out = tmp_path / "out"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                f"{mod}:make",
                "--counts",
                "simple=3,medium=0,complex=0,edge=0",
                "--categories",
                "functional",
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    d = json.loads(next(out.glob("evaluation_*.json")).read_text())
    assert d["summary"]["category_scores"] == {"functional": 1.0}
    assert d["config"]["agent_spec"] == f"{mod}:make"


def test_sweep_case_without_a_relevant_tool():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 4, "medium": 2, "complex": 0, "edge": 0}).generate()
    res = threshold_sweep(
        lambda t: SweepAgent(t, cases), [0.3, 0.5, 0.7], cases=cases, n_unrelated=4, progress=False, n_resamples=500
    )
    med = res.items[(res.items.type == "case") & res.items.needs_synthesis]
    # the agent "answers" them with tools that are not in its registry: no label, so no F1, and
    # any match above the threshold is a false positive
    assert med.f1.isna().all() and med.precision.isna().all()
    at = med.set_index("threshold")
    assert (at.loc[0.5, "false_positive"] == 1.0).all() and (at.loc[0.7, "false_positive"] == 0.0).all()
    assert (at.loc[0.5, "utility"] == 0.5).all() and (at.loc[0.7, "utility"] == 0.5).all()


def test_cli_sweep_writes_json_csv_and_figure(main, tmp_path, capsys):
    mod = tmp_path / "sweep_agent_factory.py"
    mod.write_text(
        "from evalcore.agents import AgentResponse, ToolMatch\n"
        "from evalcore.agent_eval import AgentCaseGenerator\n\n"
        "CASES = {c.query: c for c in AgentCaseGenerator(0, {'simple': 8, 'medium': 0, 'complex': 0, 'edge': 0}).generate()}\n\n"
        "class Reg:\n"
        "    def search(self, query, k=5, threshold=0.0):\n"
        "        c = CASES.get(query)\n"
        "        hits = [ToolMatch(c.kind, 0.62), ToolMatch('decoy', 0.45)] if c else [ToolMatch('decoy', 0.40)]\n"
        "        return [h for h in hits if h.score >= threshold][:k]\n"
        "    def list_tools(self):\n"
        "        return ['percentage', 'reverse_string', 'factorial', 'temperature_conversion', 'decoy']\n"
        "    def describe(self, name):\n"  # relevance is measured (issue 37): real tools, a decoy
        "        from evalcore.agent_eval._oracle import tool_source\n"
        "        return {'code': 'def decoy(**kw):\\n    return 0\\n' if name == 'decoy' else tool_source(name)[0]}\n\n"
        "class Agent:\n"
        "    def __init__(self, threshold):\n"
        "        self.threshold = threshold\n"
        "        self.registry = Reg()\n"
        "    def reset(self):\n"
        "        pass\n"
        "    def process_request(self, query):\n"
        "        c = CASES.get(query)\n"
        "        if c is None or self.threshold > 0.62:\n"
        "            return AgentResponse(success=False, error='no tool above the threshold')\n"
        "        return AgentResponse(success=True, result=c.expected, tool_used=c.kind, reused=True)\n\n"
        "def make(threshold=0.5):\n"
        "    return Agent(threshold)\n"
    )
    out = tmp_path / "sweep"
    seed0 = tmp_path / "seed0"
    seed0.write_text("0")
    assert (
        main(
            [
                "sweep",
                "--agent",
                f"{mod}:make",
                "--thresholds",
                "0.3,0.5,0.7",
                "--counts",
                "simple=8,medium=0,complex=0,edge=0",
                "--unrelated",
                "4",
                "--output",
                str(out),
                "--seed-file",
                str(seed0),
            ]
        )
        == 0
    )  # the factory reads the answer key of seed 0
    d = json.loads((out / "sweep.json").read_text())
    assert d["config"]["seed"] == 0 and d["config"]["seed_source"] == "given"
    assert d["best_threshold"] == 0.5 and d["held_out"]["f1"] == 1.0 and d["held_out"]["fpr"] == 0.0
    assert {r["threshold"] for r in d["tests"]} == {0.3, 0.7}
    assert all(r["p_adjusted"] >= r["p_value"] for r in d["tests"])
    csv = (out / "sweep_metrics.csv").read_text().splitlines()
    assert csv[0].startswith("threshold,split,precision") and len(csv) == 1 + 3 * 3
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "best threshold on the development split: 0.5" in capsys.readouterr().out
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"summary": {}, "detailed_results": {}, "config": {}}, "summary.overall_score"),
        (
            {
                "summary": {"overall_score": 1},
                "config": {},
                "detailed_results": {"functional": {"score": 1.0, "tests": [{"name": "a"}]}},
            },
            "detailed_results.functional.tests[0]",
        ),
        (
            {"summary": {"overall_score": 1}, "config": {}, "detailed_results": {"functional": {"tests": []}}},
            "detailed_results.functional.score",
        ),
    ],
)
def test_compare_names_the_malformed_field(bad, field, tmp_path):
    good = _result(OracleAgent).to_dict()
    with pytest.raises(EvalcoreError) as info:
        compare_results(good, bad)
    assert info.value.field == field
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(EvalcoreError) as info2:
        load_results(p)
    assert info2.value.field == field and info2.value.path == str(p)


def test_sweep_needs_items_in_both_splits():
    one = AgentCaseGenerator(seed=0, counts={"simple": 1, "medium": 0, "complex": 0, "edge": 0}).generate()
    with pytest.raises(EvalcoreError, match="development and a held-out split"):
        threshold_sweep(lambda t: SweepAgent(t, one), [0.5, 0.6], cases=one, n_unrelated=0, progress=False)
    with pytest.raises(EvalcoreError, match="dev_fraction"):
        threshold_sweep(lambda t: SweepAgent(t, one), [0.5], cases=one, dev_fraction=1.0, progress=False)
    # two singleton strata: one lands in each split for some seeds, and then the sweep runs
    ok = 0
    for seed in range(6):
        try:
            res = threshold_sweep(
                lambda t: SweepAgent(t, one),
                [0.5, 0.7],
                cases=one,
                n_unrelated=1,
                seed=seed,
                progress=False,
                n_resamples=100,
            )
        except EvalcoreError:
            continue
        ok += 1
        assert set(res.items.split) == {"dev", "test"} and res.best_threshold == 0.5
    assert ok >= 1


def test_sweep_agent_without_a_working_registry_is_a_clear_error():
    cases = AgentCaseGenerator(seed=0, counts={"simple": 4, "medium": 0, "complex": 0, "edge": 0}).generate()

    class NoRegistry(SweepAgent):
        @property
        def registry(self):
            return None

    class BrokenSearch(SweepRegistry):
        def search(self, query, k=5, threshold=0.0):
            raise RuntimeError("index missing")

    class Broken(SweepAgent):
        @property
        def registry(self):
            return BrokenSearch({})

    with pytest.raises(EvalcoreError, match="no searchable registry"):
        threshold_sweep(lambda t: NoRegistry(t, cases), [0.5], cases=cases, n_unrelated=2, progress=False)
    with pytest.raises(EvalcoreError, match="registry.search raised RuntimeError: index missing"):
        threshold_sweep(lambda t: Broken(t, cases), [0.5], cases=cases, n_unrelated=2, progress=False)


def test_sweep_json_is_bounded_whatever_the_agent_named(tmp_path):
    import hashlib

    from evalcore.agent_eval._cli import write_sweep_json

    huge = "t" * 3_000_000  # a tool name an agent registered during the sweep
    deep: list = []
    node = deep
    for _ in range(700):
        node.append([])
        node = node[0]
    rows = [{"threshold": 0.5, "item": i, "tool": "tool_a"} for i in range(3000)]
    write_sweep_json(tmp_path / "sweep.json", {"items": rows, "best": {"tool": huge, "nested": deep}})
    data = json.loads((tmp_path / "sweep.json").read_text())
    assert len(data["items"]) == 3000 and data["items"][-1] == rows[-1]  # the table's rows are kept
    assert len(data["best"]["tool"]) < 2200 and hashlib.sha256(huge.encode()).hexdigest() in data["best"]["tool"]
    assert (tmp_path / "sweep.json").stat().st_size < 2_000_000
