"""inspect_ai task: the GSM8K sample shipped with evalcore (45 items), read from disk, no hub access.

Run against `evalcore serve-local` offline (docs/imports.md)::

    LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none \\
      inspect eval params/inspect/ec_gsm8k_sample.py --model openai-api/local/smollm2 --limit 8
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template

# the shipped sample, found from this file (works from any working folder)
DATA = Path(__file__).resolve().parents[2] / "evalcore" / "benchmarks" / "gsm8k" / "samples" / "test.jsonl"


def _samples() -> list[Sample]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        Sample(id=f"gsm8k-sample-{i}", input=r["question"], target=r["answer"].split("####")[-1].strip())
        for i, r in enumerate(rows)
    ]


@task
def ec_gsm8k_sample() -> Task:
    """GSM8K (shipped sample): the number after 'ANSWER:' at the end of the reply, matched numerically."""
    return Task(
        dataset=MemoryDataset(_samples(), name="ec_gsm8k_sample"),
        solver=[prompt_template("{prompt}\nThink briefly, then end with 'ANSWER: <number>'."), generate()],
        scorer=match(location="end", numeric=True),
    )
