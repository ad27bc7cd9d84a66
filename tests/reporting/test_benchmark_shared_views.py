"""The benchmark views share their computations with the layers below: pass@k with the run summary
(``results.json``), the question column with routing's query text."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from evalcore.evaluators import pass_at_k
from evalcore.reporting import pass_at_k_frame, samples_frame
from evalcore.runs import summarize

MC_TEMPLATE = "About {subject}.\n\n{question}\n{choices_text}\n\nReply with the letter."


def _sample(item_id, epoch, *, passed=None, error=False, dataset="humaneval", user="Q?"):
    scores = {} if passed is None else {"score": float(passed), "passed": passed}
    return {
        "run_id": "r",
        "item_id": item_id,
        "epoch": epoch,
        "dataset": dataset,
        "request": {"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": user}]},
        "request_hash": f"{item_id}{epoch}",
        "completion": {
            "text": "",
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            "cost_usd": 0.0,
            "latency_s": 0.1,
            "error": {"type": "Timeout", "message": "x"} if error else None,
        },
        "scores": {} if error else scores,
        "error": error,
        "reference": "A",
        "metadata": {},
    }


def test_pass_at_k_view_gives_the_numbers_of_results_json_exactly():
    # Tasks in run order t/c, t/a, t/b; a mean over them depends on the order in the last bit, so
    # a table that grouped the items by sorted id (as the view once did) would differ from
    # results.json. A sample without 'passed' failed; a sample with a model error is left out.
    runs = [("t/c", [True, True, None, False, True]), ("t/a", [True] * 5), ("t/b", [True, True, False, True, True])]
    samples = [_sample(i, e, passed=outcomes[e]) for e in range(5) for i, outcomes in runs]
    samples.append(_sample("t/a", 5, error=True))
    per_task = {i: pass_at_k(5, sum(bool(p) for p in outcomes), 1) for i, outcomes in runs}
    in_run_order = float(np.mean([per_task[i] for i, _ in runs]))
    assert in_run_order != float(np.mean([per_task[i] for i in sorted(per_task)]))  # the input is tricky

    results = summarize(samples, "humaneval", epochs=5)
    table = pass_at_k_frame(samples_frame(SimpleNamespace(samples=samples, config={}))).set_index("k")
    assert results["pass_at_k"]["pass@1"] == table.loc[1, "pass_at_k"] == in_run_order
    assert results["pass_at_k"]["pass@5"] == table.loc[5, "pass_at_k"] == 1.0
    assert list(table.index) == [1, 5] and table.loc[1, "n_items"] == 3 and table.loc[1, "samples_per_item"] == 5


def test_question_column_is_routings_query(tmp_path):
    """On an MMLU template with text between its fields (the subject before the question), the
    views and routing read back the same question: the item's text and options, no instructions."""
    from evalcore.routing import outcomes_from_runs

    user = MC_TEMPLATE.format(subject="anatomy", question="Which bone?", choices_text="(A) femur\n(B) ulna")
    records = [_sample("m/1", 0, passed=True, dataset="mmlu", user=user)]
    config = {"run_id": "mmlu-direct", "dataset": "mmlu", "model": "m", "prompt": {"user": MC_TEMPLATE}}
    for arm in ("a", "b"):
        run = tmp_path / arm
        run.mkdir()
        (run / "config.json").write_text(json.dumps(config))
        (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    question = samples_frame(SimpleNamespace(samples=records, config=config)).loc[0, "question"]
    matrix = outcomes_from_runs({"a": [tmp_path / "a"], "b": [tmp_path / "b"]})
    assert question == matrix.queries[0] == "Which bone?\n(A) femur\n(B) ulna"
