"""Benchmark datasets: Item records and the gsm8k, mmlu and humaneval loaders."""

from evalcore.datasets._item import Item

__all__ = ["Item"]
