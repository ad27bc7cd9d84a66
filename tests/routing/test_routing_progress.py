"""Routing's progress lines (issue 31, item 4): every line has the total and the time left."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from evalcore.models._types import Completion, GenerationParams, Message, Usage
from evalcore.routing import build_default_outcomes, expected_samples, item_bootstrap, simulate_outcomes
from evalcore.routing._progress import Progress, format_seconds

ROOT = Path(__file__).resolve().parents[2]


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_line_has_total_elapsed_and_time_left():
    clock, out = _Clock(), io.StringIO()
    p = Progress(40, "item bootstrap", unit="resamples", every_s=5, stream=out, clock=clock)
    assert p.line() == "item bootstrap: 0/40 resamples, 0 s elapsed, time left not known yet"
    clock.now += 10
    p.update(10)
    clock.now += 2
    p.update(2)  # within every_s of the last line: not printed
    clock.now += 18
    p.update(8)
    clock.now += 90
    p.update(20)
    assert out.getvalue().splitlines() == [
        "item bootstrap: 10/40 resamples, 10 s elapsed, about 30 s left",
        "item bootstrap: 20/40 resamples, 30 s elapsed, about 30 s left",
        "item bootstrap: 40/40 resamples, 2 min 00 s elapsed, done",
    ]
    assert format_seconds(3725) == "1 h 02 min"


def test_item_bootstrap_prints_lines_with_total_when_not_on_a_terminal(capsys):
    # on stderr, like a tqdm bar: the notebook suite keeps them out of the report (stderr.log)
    m = simulate_outcomes(20, seed=0)
    item_bootstrap(m, ["random", "ucb1"], n_boot=3, orderings=2, embedder="tfidf")
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(re.fullmatch(r"item bootstrap \(2 orderings each\): \d/3 resamples, .*", x) for x in lines)
    assert lines[-1].startswith("item bootstrap (2 orderings each): 3/3 resamples") and lines[-1].endswith("done")
    item_bootstrap(m, ["random"], n_boot=2, orderings=2, progress=False)
    assert capsys.readouterr().err == ""


class _Model:
    """A stand-in chat model answering every prompt at once (the progress lines are tested)."""

    name = "fake"

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        return Completion(
            text="#### 3\nThe answer is (A).", model="fake", usage=Usage(prompt_tokens=10, completion_tokens=5)
        )

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        return self.complete(messages, params)


def test_outcome_matrix_lines_count_generations_of_the_whole_matrix(tmp_path, capsys):
    build_default_outcomes(
        datasets=("gsm8k", "mmlu"), limit=2, model=_Model(), run_dir=tmp_path / "runs", progress=None
    )
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("routing outcome matrix")]
    # 2 items x (1 + 1 + 1 + 3 samples) per dataset = 24 generations, one line per run
    assert len(lines) == 8
    assert all(re.match(r"routing outcome matrix: \d+/24 generations, ", x) for x in lines)
    assert lines[0].startswith("routing outcome matrix: 2/24 generations") and "left" in lines[0]
    assert lines[-1].startswith("routing outcome matrix: 24/24 generations") and "done" in lines[-1]
    # what the suite's progress line expects, from the notebook's parameters, is what was recorded
    want = expected_samples({"source": "default", "datasets": "gsm8k,mmlu", "limit": 2})
    got = {p.parent.name: len(p.read_text().splitlines()) for p in (tmp_path / "runs").glob("*/samples.jsonl")}
    assert got == want and sum(want.values()) == 24


def test_suite_progress_knows_the_routing_notebooks_sample_totals():
    from evalcore.reporting._notebooks import _expected_samples

    params = yaml.safe_load((ROOT / "params" / "routing.yaml").read_text())
    expected = _expected_samples(params)
    assert expected["gsm8k-direct"] == params["limit"]
    assert expected["mmlu-self_consistency3"] == 3 * params["limit"]
    assert len(expected) == 8
    assert _expected_samples({**params, "source": "simulated"}) == {}
    # a benchmark notebook's parameters are read as before
    assert _expected_samples({"run_id": "gsm8k-zeroshot", "limit": 8, "epochs": 2}) == {"gsm8k-zeroshot": 16}
    json.dumps(expected)
