"""The typed contracts of a run (``SampleRecord``, ``RunConfig`` in ``evalcore._runstore``) say
what a real run writes: every key a run writes is declared, the reader's required keys are the
record's required ones, and the declared value types hold on disk."""

from __future__ import annotations

import json
import typing

from evalcore._runstore import CONFIG_FILE, REQUIRED_KEYS, SAMPLES_FILE, RunConfig, SampleRecord
from evalcore.runs import run_benchmark


def _required(typed_dict: type) -> set[str]:
    # from the annotations: with postponed annotations Python 3.11 cannot see Required at run time
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    return {key for key, hint in hints.items() if typing.get_origin(hint) is typing.Required}


def test_required_keys_are_the_readers() -> None:
    # run_id is written on every line, but an import builds its records before it knows the id
    assert _required(SampleRecord) | {"run_id"} == set(REQUIRED_KEYS)
    assert _required(RunConfig) == set()  # older runs and imports lack keys


def test_a_run_writes_only_declared_keys_of_the_declared_types(tmp_path, counting_model, make_gsm8k_answerer) -> None:
    answer, _ = make_gsm8k_answerer(lambda i: i % 2 == 0)
    path = run_benchmark(
        "gsm8k",
        counting_model(answer),
        limit=3,
        source="sample",
        progress=False,
        run_dir=tmp_path,
        run_id="typed",
        cache=False,
    )
    config = json.loads((path / CONFIG_FILE).read_text())
    records = [json.loads(line) for line in (path / SAMPLES_FILE).read_text().splitlines()]
    assert len(records) == 3
    config_keys = set(typing.get_type_hints(RunConfig))
    assert set(config) - config_keys == set()
    assert config["run_id"] == "typed" and isinstance(config["item_ids"], list)
    record_keys = set(typing.get_type_hints(SampleRecord))
    for rec in records:
        assert set(rec) - record_keys == set()
        assert _required(SampleRecord) <= set(rec)
        assert isinstance(rec["epoch"], int) and isinstance(rec["completion"], dict)
        assert isinstance(rec["scores"], dict) and isinstance(rec["error"], bool)
        assert isinstance(rec["request"]["messages"], list)
