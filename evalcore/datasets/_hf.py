"""Hugging Face ``datasets`` source: the hub (when cached, or reachable on request) or local files.

``source="auto"`` uses the hub only when the dataset is already in the local cache, so it never
touches the network; ``source="hf"`` may download, but first checks within a few seconds that the
hub can be reached, so an offline machine gets a clear error instead of a hang.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError

log = logging.getLogger("evalcore.datasets")

Hub = tuple[str, str]
"""A dataset on the hub: ``(repository, config)``, e.g. ``("openai/gsm8k", "main")``."""
HUB_HOST = "huggingface.co"


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def offline_requested() -> bool:
    """Whether the user asked for offline mode (``HF_DATASETS_OFFLINE`` / ``HF_HUB_OFFLINE``)."""
    return _truthy("HF_DATASETS_OFFLINE") or _truthy("HF_HUB_OFFLINE") or _truthy("TRANSFORMERS_OFFLINE")


def datasets_installed() -> bool:
    """Whether the ``datasets`` package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("datasets") is not None


def _cache_dirs() -> tuple[Path, Path]:
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")).expanduser()
    ds_cache = Path(os.environ.get("HF_DATASETS_CACHE", home / "datasets")).expanduser()
    hub_cache = Path(os.environ.get("HF_HUB_CACHE", os.environ.get("HUGGINGFACE_HUB_CACHE", home / "hub"))).expanduser()
    return ds_cache, hub_cache


def _prepared_dir(hub: Hub) -> Path:
    repo, config = hub
    owner, ds = repo.split("/")
    return _cache_dirs()[0] / f"{owner}___{ds}" / config


def cached_snapshot(hub: Hub) -> Path | None:
    """The newest downloaded hub snapshot of ``hub`` (``<HF_HUB_CACHE>/datasets--o--n/snapshots/*``)."""
    repo, _ = hub
    owner, ds = repo.split("/")
    snapshots = _cache_dirs()[1] / f"datasets--{owner}--{ds}" / "snapshots"
    if not snapshots.is_dir():
        return None
    found = sorted((d for d in snapshots.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    return found[-1] if found else None


def is_cached(hub: Hub) -> bool:
    """Whether the hub dataset ``hub`` (repository, config) is in the local HF cache (a filesystem check only).

    Looks for ``<HF_DATASETS_CACHE>/<owner>___<name>/<config>`` (a prepared dataset) or
    ``<HF_HUB_CACHE>/datasets--<owner>--<name>/snapshots/<rev>`` (downloaded files).
    """
    prepared = _prepared_dir(hub)
    return (prepared.is_dir() and any(prepared.iterdir())) or cached_snapshot(hub) is not None


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether a TCP connection to the hub opens within ``timeout_s`` (DNS included)."""
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((HUB_HOST, 443), timeout=timeout_s):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout_s + 0.5)
    return bool(result and result[0])


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Force the HF libraries into offline mode for the duration (cache or local files only)."""
    import datasets.config as dconfig

    hconst: Any
    try:
        import huggingface_hub.constants as hconst
    except ImportError:  # pragma: no cover - huggingface_hub comes with datasets
        hconst = None
    saved = (dconfig.HF_HUB_OFFLINE, getattr(hconst, "HF_HUB_OFFLINE", None))
    dconfig.HF_HUB_OFFLINE = True
    if hconst is not None:
        hconst.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        dconfig.HF_HUB_OFFLINE = saved[0]
        if hconst is not None:
            hconst.HF_HUB_OFFLINE = saved[1]


def _builder_of(path: Path) -> str | None:
    suffixes = "".join(path.suffixes)
    return (
        "parquet"
        if ".parquet" in suffixes
        else "json"
        if ".json" in suffixes
        else "csv"
        if ".csv" in suffixes
        else None
    )


def saved_to_disk(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``."""
    return path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file())


def _split_files(path: Path, config: str, split: str) -> list[Path]:
    """The data files of ``split`` in a folder laid out as on the hub, without a README.

    ``datasets`` would infer the splits from file names by its own keywords, and it maps
    ``dev-*`` to ``validation`` (MMLU's dev rows would join its validation split and ``dev``
    would not exist); so the files are chosen here by exact split name: ``<split>-*.<ext>``,
    ``<split>.<ext>`` or ``<split>/*.<ext>``, in ``path/<config>``, ``path/data`` or ``path``.
    """
    for d in (path / config, path / "data", path):
        if not d.is_dir():
            continue
        found = sorted(
            f
            for f in d.iterdir()
            if f.is_file() and _builder_of(f) and (f.name.startswith(f"{split}-") or f.name.split(".")[0] == split)
        )
        if not found and (d / split).is_dir():
            found = sorted(f for f in (d / split).iterdir() if f.is_file() and _builder_of(f))
        if found:
            return found
    return []


def _local_kwargs(path: Path, config: str, split: str) -> tuple[str, dict[str, Any]]:
    """Arguments for ``load_dataset`` on a local file or directory (``config``: the hub's)."""
    if path.is_file():
        builder = _builder_of(path)
        if builder is None:
            raise EvalcoreError("unsupported file type for the HF source (use parquet or JSON lines)", path=path)
        return builder, {"data_files": {split: str(path)}}
    if (path / "README.md").is_file():
        return str(path), {"name": config}
    files = _split_files(path, config, split)
    if not files:
        raise EvalcoreError(
            f"no data files for split {split!r} ({config}/{split}-*.parquet, {split}.jsonl, ...) in this directory",
            path=path,
            field="split",
        )
    builders = {_builder_of(f) for f in files}
    if len(builders) != 1:
        raise EvalcoreError(f"split {split!r} mixes file types ({', '.join(sorted(map(str, builders)))})", path=path)
    builder = builders.pop()
    if builder is None:  # _split_files finds parquet, JSON and CSV files only
        raise EvalcoreError(f"split {split!r}: not parquet, JSON or CSV files", path=path)
    return builder, {"data_files": {split: [str(f) for f in files]}}


def _load_saved(path: Path, split: str) -> Any:
    """A split of a folder written by ``save_to_disk`` (``datasets.load_from_disk``)."""
    import datasets

    saved = datasets.load_from_disk(str(path))
    if isinstance(saved, datasets.DatasetDict):
        if split not in saved:
            raise EvalcoreError(
                f"the saved DatasetDict has no split {split!r} (it has {', '.join(saved)})", path=path, field="split"
            )
        return saved[split]
    recorded = str(saved.split) if saved.split is not None else None
    if recorded is not None and recorded != split:
        raise EvalcoreError(f"the saved Dataset is split {recorded!r}, not {split!r}", path=path, field="split")
    return saved


def load_hf_rows(
    hub: Hub, split: str, path: Path | None = None, *, allow_network: bool = False
) -> tuple[list[dict[str, Any]], str]:
    """Load rows with ``datasets.load_dataset``.

    Args:
        hub: The dataset on the hub, ``(repository, config)``.
        split: The split.
        path: A local directory (a hub snapshot, or parquet/JSON files laid out as on the hub)
            or a single parquet/JSONL file; ``None`` for the hub repository.
        allow_network: Whether the hub may be contacted (otherwise cache only).

    Returns:
        The rows as dicts and a description of where they came from.

    Raises:
        EvalcoreError: When ``datasets`` is missing, the dataset is neither cached nor
            reachable, or loading fails.
    """
    if not datasets_installed():
        raise EvalcoreError("the HF source needs the 'datasets' package: pip install 'evalcore[hf]'", field="source")
    import datasets

    repo, config = hub
    if path is not None:
        if not path.exists():
            raise EvalcoreError("path does not exist", path=path)
        target, kwargs = (str(path), {}) if saved_to_disk(path) else _local_kwargs(path, config, split)
        origin = str(path)
        offline = local_files = True
    else:
        target, kwargs, origin = repo, {"name": config}, f"{repo} ({config})"
        local_files = False
        cached = is_cached(hub)
        if not cached and (not allow_network or offline_requested()):
            raise EvalcoreError(
                f"{repo} is not in the local Hugging Face cache and the network is not to be used", field="source"
            )
        if not cached and not hub_reachable():
            raise EvalcoreError(f"{repo} is not cached and {HUB_HOST} cannot be reached", field="source")
        offline = cached and not (allow_network and hub_reachable(1.0))
        prepared = _prepared_dir(hub)
        snapshot = cached_snapshot(hub)
        if offline and not (prepared.is_dir() and any(prepared.iterdir())) and snapshot is not None:
            # only the raw hub files are cached: read the snapshot as a local dataset directory
            target, kwargs, origin = (
                str(snapshot),
                {"name": config},
                f"{repo} ({config}, cached snapshot {snapshot.name})",
            )
            local_files = True
    bars_were_off = datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        with contextlib.ExitStack() as stack:
            if offline:
                stack.enter_context(_offline())
            if local_files:  # keep the arrow cache of local files out of the user's HF cache
                kwargs["cache_dir"] = stack.enter_context(tempfile.TemporaryDirectory(prefix="evalcore-hf-"))
            if path is not None and saved_to_disk(path):
                dataset = _load_saved(path, split)
            else:
                dataset = datasets.load_dataset(target, split=split, **kwargs)
            rows = dataset.to_list()
    except EvalcoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds; all mean "cannot load"
        raise EvalcoreError(
            f"datasets.load_dataset failed for {origin} split {split!r}: {type(exc).__name__}: {exc}", field="source"
        ) from None
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
    log.debug("loaded %d rows of %s from %s", len(rows), repo, origin)
    return rows, origin
