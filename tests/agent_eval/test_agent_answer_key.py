"""The answer key stays out of the evaluated agent's reach.

The case generator ships with evalcore: whoever knows the seed rebuilds every case with its
expected answer. So the seed is drawn fresh (and recorded) unless the user names one, no agent
is given it, a hosted agent cannot read the cases file nor the results folder, and two results
of different cases are never paired by test name. Each attack below is shown to work where the
key is in reach (a seed it can guess, an agent in a process without the hiding), so the
defence is what makes the difference.
"""

from __future__ import annotations

import json

import pytest

from evalcore.agent_eval import (
    AgentCaseGenerator,
    AgentEvalConfig,
    compare_results,
    evaluate,
    save_cases,
)
from evalcore.agent_eval._config import AgentEvalData
from evalcore.errors import EvalcoreError

COUNTS = {"simple": 6, "medium": 3, "complex": 0, "edge": 0}
GUESSER = "evalcore.agent_eval._gaming:make_seed_guesser"
READER = "evalcore.agent_eval._gaming:make_cases_file_reader"


def _config(seed: int | None = None) -> AgentEvalConfig:
    return AgentEvalConfig(seed=seed, counts=COUNTS, n_paraphrase_groups=1, n_unrelated=2, request_timeout_s=20.0)


def test_the_default_seed_is_drawn_per_configuration_and_recorded() -> None:
    drawn = [_config() for _ in range(4)]
    assert len({c.seed for c in drawn}) == 4
    assert all(c.seed_source == "drawn" and 0 <= c.seed < 2**63 for c in drawn)
    assert all(c.to_dict()["seed"] == c.seed and c.to_dict()["seed_source"] == "drawn" for c in drawn)
    given = _config(drawn[0].seed)
    assert given.seed_source == "given" and given.to_dict()["seed_source"] == "given"
    # the recorded seed reruns exactly the same cases; another seed gives other cases, same ids
    same, other = AgentEvalData.build(given), AgentEvalData.build(drawn[0])
    assert same.digest() == other.digest()
    third = AgentEvalData.build(drawn[1])
    assert third.digest() != same.digest()
    assert [c.id for c in third.cases] == [c.id for c in same.cases]
    assert [c.query for c in third.cases] != [c.query for c in same.cases]
    for bad in ("0", 1.5, True):
        with pytest.raises(EvalcoreError, match="seed must be an integer"):
            AgentEvalConfig(seed=bad)  # type: ignore[arg-type]


def test_an_agent_that_rebuilds_the_cases_of_guessable_seeds_scores_only_on_a_guessable_seed() -> None:
    opts = {"seeds": [0, 1, 2], "counts": COUNTS, "n_paraphrase_groups": 1}
    public = evaluate(GUESSER, _config(1), categories=["functional"], options=opts, progress=False)
    assert public.categories["functional"].score >= 0.9  # the attack works on seed 1
    secret = evaluate(GUESSER, _config(), categories=["functional"], options=opts, progress=False)
    assert secret.config["suite"]["seed_source"] == "drawn" and secret.config["suite"]["seed"] not in (0, 1, 2)
    assert secret.categories["functional"].score < 0.2
    assert secret.config["agent_process"] == "hosted"


def test_a_hosted_agent_cannot_read_the_cases_file(tmp_path) -> None:
    cases = AgentCaseGenerator(7, COUNTS).generate()
    path = tmp_path / "cases" / "key.json"
    path.parent.mkdir()
    save_cases(cases, path)
    opts = {"path": str(path)}
    # In the evaluator's process (nothing hidden) the reader finds every answer ...
    inproc = evaluate(
        READER, _config(7), categories=["functional"], cases=path, options=opts, in_process=True, progress=False
    )
    assert inproc.categories["functional"].score >= 0.9 and not inproc.config["trusted"]
    # ... hosted, the file it opens is empty, and the results say what was hidden.
    hosted = evaluate(READER, _config(7), categories=["functional"], cases=path, options=opts, progress=False)
    if hosted.config["agent_isolation"] != "full":
        pytest.skip(f"no namespaces here: {hosted.config['agent_isolation_notes']}")
    assert hosted.categories["functional"].score < 0.2
    assert f"hidden from the agent: {path}" in hosted.config["agent_isolation_notes"]
    assert json.loads(path.read_text())  # hidden from the agent only, not removed


def test_a_hosted_agent_cannot_read_the_results_folder(tmp_path) -> None:
    results = tmp_path / "reports"
    results.mkdir()
    (results / "earlier.json").write_text(json.dumps({"config": {"suite": {"seed": 3}}}))
    probe = tmp_path / "probe_agent.py"
    probe.write_text(
        "import os\n"
        "from evalcore.agents import AgentResponse\n\n"
        "class Probe:\n"
        "    registry = None\n"
        "    def __init__(self, folder):\n"
        "        self.folder = folder\n"
        "    def reset(self):\n"
        "        pass\n"
        "    def process_request(self, query):\n"
        "        try:\n"
        "            return AgentResponse(success=True, result=sorted(os.listdir(self.folder)))\n"
        "        except OSError as exc:\n"
        "            return AgentResponse(success=False, error=str(exc))\n\n"
        "def make(folder):\n"
        "    return Probe(folder)\n"
    )
    from evalcore.agents import load_agent

    seen = load_agent(f"{probe}:make", folder=str(results))
    hidden = load_agent(f"{probe}:make", folder=str(results), hide=[results])
    try:
        assert seen.process_request("list").result == ["earlier.json"]
        if hidden.isolation != "full":
            pytest.skip(f"no namespaces here: {hidden.isolation_notes}")
        assert hidden.process_request("list").result == []
        assert f"hidden from the agent: {results}" in hidden.isolation_notes
    finally:
        seen.close()
        hidden.close()


def test_a_folder_holding_the_working_directory_stays_visible(tmp_path, monkeypatch) -> None:
    from evalcore.agents import load_agent

    monkeypatch.chdir(tmp_path)
    agent = load_agent(f"{GUESSER}", hide=[tmp_path], seeds=[], counts=COUNTS)
    try:
        assert not any("hidden" in n for n in agent.isolation_notes)
    finally:
        agent.close()


def test_results_of_different_cases_are_not_compared() -> None:
    a = evaluate("oracle", _config(11), categories=["functional"], progress=False)
    b = evaluate("wrong", _config(11), categories=["functional"], progress=False)
    c = evaluate("wrong", _config(12), categories=["functional"], progress=False)
    assert a.config["cases_digest"] == b.config["cases_digest"] != c.config["cases_digest"]
    assert compare_results(a, b)["overall"]["flagged"]
    with pytest.raises(EvalcoreError, match=r"different cases \(A: seed 11, B: seed 12\).*EVALCORE_AGENT_SEED=11"):
        compare_results(a, c)
    # results written before the digest existed: told apart by their seeds
    old_a, old_c = a.to_dict(), c.to_dict()
    for d in (old_a, old_c):
        del d["config"]["cases_digest"]
    with pytest.raises(EvalcoreError, match="different cases"):
        compare_results(old_a, old_c)


def test_a_table_of_many_seeds_holds_few_requests_of_another() -> None:
    """The generator ships with evalcore: an agent can run it over thousands of seeds (2,000 take
    about a second) and keep every request with its answer. Inputs come from ranges wide enough
    that such a table holds few requests of another seed; factorial (19 possible inputs) is the
    one kind where looking the answer up is as easy as computing it."""
    key = {c.query for seed in range(2000) for c in AgentCaseGenerator(seed).generate()}
    fresh = [c for i in range(10) for c in AgentCaseGenerator(2**62 + i).generate() if c.complexity != "edge"]
    found = [c for c in fresh if c.query in key]
    assert len(found) / len(fresh) < 0.25, len(found) / len(fresh)
    others = [c for c in fresh if c.kind != "factorial"]
    assert sum(c.query in key for c in others) / len(others) < 0.12


def test_held_out_inputs_lie_outside_what_any_seed_generates() -> None:
    """The evaluator runs an agent's registered tools on held-out inputs (synthesis, reuse,
    learning); a table built from the generator must not hold them either."""
    import random

    from evalcore.agent_eval._cases.kinds import sample_inputs

    generated: dict[str, set[str]] = {}
    for seed in range(300):
        gen = AgentCaseGenerator(seed)
        for c in gen.generate() + sum(gen.paraphrase_groups(6), []):
            if c.inputs and not c.is_multi_step:
                generated.setdefault(c.kind, set()).add(json.dumps(c.inputs, sort_keys=True))
    rng = random.Random(5)
    assert len(generated) == 14
    for kind, seen in generated.items():
        likes = {json.loads(x).get("from_unit"): json.loads(x) for x in seen}  # both temperature units
        for like in likes.values():
            for _ in range(200):
                assert json.dumps(sample_inputs(kind, rng, like), sort_keys=True) not in seen, (kind, like)
