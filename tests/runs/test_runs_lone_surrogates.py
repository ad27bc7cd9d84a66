"""A model reply holding a lone surrogate (JSON's "\\ud800" decodes to one) is recorded, cached and re-scored."""

from __future__ import annotations

import json

from evalcore.runs import load_run, rescore, run_benchmark


def test_a_lone_surrogate_in_a_reply_is_recorded_cached_and_rescored(tmp_path, counting_model) -> None:
    model = counting_model(lambda q: "Step by step.\n#### 4 \ud800")
    path = run_benchmark(
        "gsm8k", model, limit=2, source="sample", progress=False, run_dir=tmp_path, run_id="s", cache=True
    )
    raw = (path / "samples.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
    texts = [json.loads(line)["completion"]["text"] for line in raw.splitlines()]
    assert texts == ["Step by step.\n#### 4 \ud800"] * 2  # read back unchanged
    assert model.calls == 2
    second = counting_model(lambda q: "unused")  # same name: the cached replies answer
    again = run_benchmark(
        "gsm8k", second, limit=2, source="sample", progress=False, run_dir=tmp_path, run_id="s2", cache=True
    )
    assert second.calls == 0
    assert [s["completion"]["text"] for s in load_run(again).samples] == texts
    res = rescore(path)
    assert res["n_samples"] == 2
