"""Finding a dataset's files laid out as on the Hugging Face hub (any dataset)."""

from __future__ import annotations

from pathlib import Path


def find_parquet_shards(directory: Path, split: str, config: str) -> list[Path]:
    """The parquet shards of ``split`` laid out as on the hub: ``<config>/<split>-00000-of-00001.parquet``.

    Looks in ``directory``, ``directory/<config>`` and ``directory/data``, for
    ``<split>-*.parquet`` or ``<split>.parquet``; the first folder that has any wins.
    """
    for d in (directory, directory / config, directory / "data"):
        found = sorted(d.glob(f"{split}-*.parquet")) + sorted(d.glob(f"{split}.parquet")) if d.is_dir() else []
        if found:
            return found
    return []
