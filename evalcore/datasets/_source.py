"""Reading one dataset from the best available source, whatever the dataset is.

A :class:`DatasetSource` says how one dataset is read: its splits, its Hugging Face id, how its
native files and hub rows become :class:`Item` records, where its shipped sample lies, whether a
Python package ships it, and how a subset is drawn. Each benchmark folder
(``evalcore/benchmarks/<name>/``) fills one in; the functions here hold the source order
(``auto``: an explicit ``path``, the HF cache, the package, the shipped sample) and never name a
dataset.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalcore.datasets import _hf
from evalcore.datasets._common import check_limit, seeded_subset, stratified_subset, unique_ids
from evalcore.datasets._formats import find_parquet_shards
from evalcore.datasets._item import Item
from evalcore.errors import EvalcoreError

log = logging.getLogger("evalcore.datasets")

SOURCES = ("auto", "hf", "local", "package", "sample")

RowsReader = Callable[[list[dict[str, Any]], str, str, str], list[Item]]
"""``(records, split, origin, source) -> items``: hub rows (or parquet rows) as items."""
LocalReader = Callable[[Path, str, str], list[Item]]
"""``(path, split, source) -> items``: a file or folder in the dataset's native format."""


@dataclass(frozen=True)
class DatasetSource:
    """How one dataset is read from each source.

    Attributes:
        name: The dataset's name (``Item.dataset``, messages).
        splits: The splits it has, canonical names.
        hf_repo: Its Hugging Face hub repository (``owner/name``).
        hf_config: The hub configuration read.
        sample_dir: The folder of the shipped sample (its test split, and few-shot examples).
        sample_name: The test sample inside ``sample_dir`` (a file, or ``"."`` for the folder).
        few_shot_split: The split few-shot examples come from (never the test split where the
            dataset has another).
        read_local: Reads a file or folder in the native format (``(path, split, source)``).
        read_rows: Turns hub rows into items (``(records, split, origin, source)``).
        split_aliases: Other names of a split (``{"val": "validation"}``).
        package_file: The data file a Python package ships (raises ``EvalcoreError`` when the
            package is missing); None: no package ships it.
        package_hint: How to install that package (shown when no source is available).
        stratum: A subset is stratified by this (proportional allocation); None: a seeded sample.
        ids_from_source: Ids are the source's own (a repeat across parquet shards is an error)
            rather than derived from the content (repeats get ``~2`` suffixes).
    """

    name: str
    splits: tuple[str, ...]
    hf_repo: str
    hf_config: str
    sample_dir: Path
    sample_name: str
    few_shot_split: str
    read_local: LocalReader
    read_rows: RowsReader
    split_aliases: Mapping[str, str] = field(default_factory=dict)
    package_file: Callable[[], Path] | None = None
    package_hint: str = ""
    stratum: Callable[[Item], str] | None = None
    ids_from_source: bool = False

    @property
    def hub(self) -> tuple[str, str]:
        """``(repository, config)`` on the Hugging Face hub."""
        return self.hf_repo, self.hf_config

    @property
    def sample(self) -> Path:
        """The shipped test sample (a file or a folder)."""
        return self.sample_dir / self.sample_name


def check_split(src: DatasetSource, split: str) -> str:
    """Validate ``split`` for ``src`` and return its canonical name.

    Raises:
        EvalcoreError: A split the dataset does not have (field ``split``).
    """
    canonical = src.split_aliases.get(split, split)
    if canonical not in src.splits:
        raise EvalcoreError(f"{src.name} has no split {split!r}; choose one of {', '.join(src.splits)}", field="split")
    return canonical


def sample_file(src: DatasetSource) -> Path:
    """Where the shipped sample of ``src`` lies.

    Raises:
        EvalcoreError: When the sample is not installed.
    """
    if not src.sample.exists():
        raise EvalcoreError(f"no shipped sample for {src.name}", path=src.sample)
    return src.sample


# ---------------------------------------------------------------------------------------------
# each source
# ---------------------------------------------------------------------------------------------


def parquet_items(src: DatasetSource, split: str, files: list[Path], source: str) -> list[Item]:
    """Items from parquet shards, in shard order; errors name the shard and its row (1-based)."""
    items: list[Item] = []
    for file in files:
        try:
            import pandas as pd

            records = [{str(k): v for k, v in row.items()} for row in pd.read_parquet(file).to_dict("records")]
        except Exception as exc:  # noqa: BLE001 - any decoding error is a bad file
            raise EvalcoreError(f"cannot read parquet: {exc}", path=file) from None
        items.extend(src.read_rows(records, split, str(file), source))
    if len(files) > 1:  # ids unique over all shards, as for one file
        items = _reunique(items, src.ids_from_source)
    return items


def file_or_shards_items(
    src: DatasetSource,
    path: Path,
    split: str,
    source: str,
    *,
    find_file: Callable[[Path], Path | None],
    read_file: Callable[[Path], list[Item]],
    missing: str,
) -> list[Item]:
    """Items from a local ``path``: one file, or a folder holding one file or the hub's parquet shards.

    A file ``path`` is read as it is: a ``.parquet`` file as one shard (:func:`parquet_items`),
    any other by ``read_file``. In a folder, the file ``find_file`` finds there is read the same
    way; with none, the folder's parquet shards of ``split`` as laid out on the hub
    (:func:`~evalcore.datasets.find_parquet_shards` with ``src.hf_config``).

    Args:
        src: The dataset (its ``read_rows`` reads parquet rows).
        path: A file or a folder.
        split: The split to read.
        source: Recorded in each item's metadata (``"local"``, ``"sample"`` ...).
        find_file: The dataset's native file in a folder, or None.
        read_file: A native (non-parquet) file's items.
        missing: The error's message when a folder holds neither.

    Returns:
        The items in file (or shard) order.

    Raises:
        EvalcoreError: A folder holds no file and no shard (``missing``, naming the folder), or
            a file is malformed.
    """
    file = path if path.is_file() else find_file(path)
    if file is None:
        shards = find_parquet_shards(path, split, src.hf_config)
        if shards:
            return parquet_items(src, split, shards, source)
        raise EvalcoreError(missing, path=path)
    if file.suffix == ".parquet":
        return parquet_items(src, split, [file], source)
    return read_file(file)


def _reunique(items: list[Item], ids_from_source: bool) -> list[Item]:
    if ids_from_source:
        seen: set[str] = set()
        for it in items:
            if it.id in seen:
                raise EvalcoreError(f"duplicate task_id {it.id!r} across parquet shards", field="task_id")
            seen.add(it.id)
        return items
    base = [it.id.split("~")[0] for it in items]
    return [replace(it, id=i) for it, i in zip(items, unique_ids(base))]


def _from_local(src: DatasetSource, split: str, path: Path, source: str = "local") -> list[Item]:
    if not path.exists():
        raise EvalcoreError("path does not exist", path=path)
    return src.read_local(path, split, source)


def _from_hf(src: DatasetSource, split: str, path: Path | None, allow_network: bool) -> list[Item]:
    records, origin = _hf.load_hf_rows(src.hub, split, path, allow_network=allow_network)
    return src.read_rows(records, split, origin, "hf")


def _from_package(src: DatasetSource, split: str) -> list[Item]:
    if src.package_file is None:
        raise EvalcoreError(
            f"source='package' is not a source of {src.name} (only a dataset a Python package ships has it)",
            field="source",
        )
    return src.read_local(src.package_file(), split, "package")


def _from_sample(src: DatasetSource, split: str) -> list[Item]:
    if split != "test":
        raise EvalcoreError(f"the shipped {src.name} sample has only the 'test' split, not {split!r}", field="split")
    return _from_local(src, split, sample_file(src), source="sample")


def package_available(src: DatasetSource) -> bool:
    """Whether a Python package ships ``src`` and is installed with its data file."""
    if src.package_file is None:
        return False
    try:
        src.package_file()
    except EvalcoreError:
        return False
    return True


def _none_available(src: DatasetSource, split: str) -> EvalcoreError:
    options = [
        f"path= local files in {src.name}'s native format",
        f"source='hf' with 'datasets' installed and {src.hf_repo} ({src.hf_config}) cached or the hub reachable",
    ]
    if src.package_file is not None:
        options.append(src.package_hint)
    options.append(f"the shipped sample ({src.sample}, split 'test' only)")
    return EvalcoreError(
        f"no source available for {src.name} split {split!r}; options: " + "; ".join(options), field="source"
    )


# ---------------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------------


def resolve(
    src: DatasetSource,
    split: str = "test",
    source: str = "auto",
    path: str | Path | None = None,
    *,
    skip_hf: bool = False,
) -> str:
    """Which source :func:`load_items` would use, without loading.

    Order for ``"auto"``: an explicit ``path`` (local files), then the HF cache (never the
    network), then the Python package that ships the dataset, then the shipped sample.

    Args:
        src: The dataset.
        split: Split.
        source: ``"auto"`` or a specific source.
        path: Local files, if any.
        skip_hf: Do not consider the HF cache (used after it failed to load).

    Returns:
        ``"local"``, ``"hf"``, ``"package"`` or ``"sample"``.

    Raises:
        EvalcoreError: When ``source="auto"`` finds nothing.
    """
    if source not in SOURCES:
        raise EvalcoreError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}", field="source")
    if source != "auto":
        return source
    if path is not None:
        return "local"
    if not skip_hf and _hf.datasets_installed() and _hf.is_cached(src.hub):
        return "hf"
    if split == "test" and package_available(src):
        return "package"
    if split == "test" and src.sample.exists():
        return "sample"
    raise _none_available(src, split)


def _read(src: DatasetSource, split: str, source: str, used: str, p: Path | None) -> tuple[list[Item], str]:
    """The items of ``split`` from the source ``used``; the source finally used."""
    if used == "local":
        if p is None:
            raise EvalcoreError("source='local' needs path= (a file or directory in the native format)", field="path")
        if _hf.saved_to_disk(p):  # written by Dataset(Dict).save_to_disk: only `datasets` reads it
            return _from_hf(src, split, p, allow_network=False), "hf"
        return _from_local(src, split, p), used
    if used == "hf":
        try:
            return _from_hf(src, split, p, allow_network=(source == "hf")), used
        except EvalcoreError as exc:
            if source != "auto":
                raise
            # the cache looked usable but is not: fall through to the next source in order
            log.warning("%s: the Hugging Face cache could not be read (%s); trying the next source", src.name, exc)
            used = resolve(src, split, "auto", None, skip_hf=True)
    if used == "package":
        return _from_package(src, split), used
    return _from_sample(src, split), used


def load_items(
    src: DatasetSource,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    source: str = "auto",
    path: str | Path | None = None,
) -> list[Item]:
    """Load a dataset as :class:`~evalcore.datasets.Item` records with stable ids.

    With ``limit``, a seeded subset is taken (stratified by ``src.stratum`` with proportional
    allocation, at least one per stratum when ``limit`` allows; otherwise a seeded sample),
    ranked by ``sha256(seed, id)`` so it is deterministic and independent of row order; items
    come back in source order.

    Args:
        src: The dataset.
        split: A split of the dataset (or an alias of one).
        limit: Keep at most this many items (``None``: all).
        seed: Seed of the subset.
        source: ``"auto"``, ``"hf"`` (hub, may download; or ``path`` through
            ``datasets.load_dataset``), ``"local"`` (``path`` in native format), ``"package"``
            (the Python package that ships it) or ``"sample"`` (the small shipped sample).
        path: Local file or directory (required for ``"local"``).

    Returns:
        The items; each has ``metadata["source"]`` naming the source used.

    Raises:
        EvalcoreError: For an unknown split/source, a malformed file (file, line, field), or
            when no source is available (the message lists the options).
    """
    check_limit(limit)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise EvalcoreError(f"seed must be an integer, got {seed!r}", field="seed")
    split = check_split(src, split)
    used = resolve(src, split, source, path)
    p = Path(path).expanduser() if path is not None else None
    items, used = _read(src, split, source, used, p)
    if not items:
        raise EvalcoreError(f"the {used} source has no {src.name} items for split {split!r}", path=p)
    total = len(items)
    if src.stratum is not None:
        items = stratified_subset(items, limit, seed, key=lambda it: it.id, stratum=src.stratum)
    else:
        items = seeded_subset(items, limit, seed, key=lambda it: it.id)
    log.info("%s/%s: %d of %d items from source %r%s", src.name, split, len(items), total, used, f" ({p})" if p else "")
    return items


def few_shot_items(src: DatasetSource, source: str = "sample", path: str | Path | None = None) -> list[Item]:
    """The candidate worked examples for few-shot prompts, from ``src.few_shot_split``.

    The default source is the few-shot part shipped with the sample (the few-shot split's files
    in ``src.sample_dir``; a dataset with only a test split uses the shipped sample's items),
    which is not an evaluation split (``load_items(..., source="sample")`` stays test-only).
    ``source``/``path`` read the real few-shot split instead (as :func:`load_items`). The caller
    still leaves out the item being asked.

    Args:
        src: The dataset.
        source: ``"sample"`` (the shipped few-shot examples) or any source of :func:`load_items`.
        path: Local files, for ``source="local"``/``"hf"``/``"auto"``.

    Returns:
        The items of the few-shot split, in source order (``metadata["split"]`` names it).
    """
    split = src.few_shot_split
    if source != "sample":
        return load_items(src, split=split, source=source, path=path)
    if split == "test":
        return _from_sample(src, split)
    return _from_local(src, split, src.sample_dir, source="sample")
