"""A benchmark's items, shipped sample, few-shot pool and source, by the benchmark's name.

``load("gsm8k", ...)`` is ``get_benchmark("gsm8k").load(...)``; the other three read the
built-in's :class:`~evalcore.datasets.DatasetSource` (its folder's ``data``). The names came
from ``evalcore.datasets``, which keeps them as aliases.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.datasets import DatasetSource, Item


def _known(name: str) -> None:
    from evalcore.benchmarks._registry import benchmark_names, find_benchmark

    if find_benchmark(name) is None:
        raise EvalcoreError(f"unknown dataset {name!r}; choose one of {', '.join(benchmark_names())}", field="name")


def _data(name: str) -> DatasetSource:
    """The dataset source of a benchmark read by the generic readers (a built-in's folder)."""
    from evalcore.benchmarks._registry import find_benchmark

    _known(name)
    data = getattr(find_benchmark(name), "data", None)
    if data is None:
        raise EvalcoreError(f"{name} is not read from dataset sources (it loads its own items)", field="name")
    return data


def load(
    name: str,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    source: str = "auto",
    path: str | Path | None = None,
) -> list[Item]:
    """Load a benchmark's items, with stable ids, by the benchmark's name.

    Ids: gsm8k ``gsm8k/<sha256(question)[:10]>``; mmlu ``mmlu/<subject>/<sha256(question,
    choices)[:10]>``; humaneval the ``task_id``. With ``limit``, a seeded subset is taken
    (mmlu: stratified by subject; the others a seeded sample), see
    :func:`evalcore.datasets.load_items`.

    Args:
        name: A registered benchmark (``"gsm8k"``, ``"mmlu"``, ``"humaneval"`` ...).
        split: ``"test"`` (all); gsm8k ``"train"``; mmlu ``"validation"``/``"dev"``.
        limit: Keep at most this many items (``None``: all).
        seed: Seed of the subset.
        source: ``"auto"``, ``"hf"``, ``"local"``, ``"package"`` or ``"sample"``.
        path: Local file or directory (required for ``"local"``).

    Returns:
        The items; each has ``metadata["source"]`` naming the source used.

    Raises:
        EvalcoreError: For an unknown name/split/source, a malformed file (file, line, field),
            or when no source is available (the message lists the options).
    """
    from evalcore.benchmarks._registry import find_benchmark

    _known(name)
    bench = find_benchmark(name)
    assert bench is not None
    return bench.load(split=split, limit=limit, seed=seed, source=source, path=path)


def sample_path(name: str) -> Path:
    """Where the shipped sample of ``name`` lives (gsm8k a JSONL file, mmlu a folder with
    ``test/<subject>_test.csv``, humaneval a JSONL file), inside the installed package.

    Raises:
        EvalcoreError: For an unknown name or when the sample is not installed.
    """
    from evalcore.datasets import sample_file

    return sample_file(_data(name))


def few_shot_pool(name: str, source: str = "sample", path: str | Path | None = None) -> list[Item]:
    """The candidate worked examples for few-shot prompts, from the split a benchmark keeps for them.

    GSM8K's ``train`` and MMLU's ``dev`` split, never their test split; HumanEval has only a test
    split, so its pool is the shipped sample's problems (written for evalcore). The default
    source is the few-shot part shipped with the samples (``gsm8k/samples/train.jsonl``: 8
    problems; ``mmlu/samples/dev/<subject>_dev.csv``: one question per sample subject); see
    :func:`evalcore.datasets.few_shot_items`.
    """
    from evalcore.datasets import few_shot_items

    return few_shot_items(_data(name), source=source, path=path)


def resolve_source(
    name: str, split: str = "test", source: str = "auto", path: str | Path | None = None, *, skip_hf: bool = False
) -> str:
    """Which source :func:`load` would use for ``name``, without loading
    (:func:`evalcore.datasets.resolve`)."""
    from evalcore.datasets import resolve

    return resolve(_data(name), split, source, path, skip_hf=skip_hf)


def few_shot_split(name: str) -> str:
    """The split ``name``'s few-shot examples come from."""
    return _data(name).few_shot_split
