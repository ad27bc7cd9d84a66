"""Benchmark datasets: Item records and the gsm8k, mmlu and humaneval loaders."""

from evalcore.datasets._item import Item
from evalcore.datasets._load import DATASETS, SOURCES, load, resolve_source, sample_path
from evalcore.datasets._agent_cases import AgentCase, AgentCaseGenerator, ExpectedStep, load_cases, save_cases

__all__ = ["Item", "DATASETS", "SOURCES", "load", "resolve_source", "sample_path"]
__all__ += ["AgentCase", "AgentCaseGenerator", "ExpectedStep", "load_cases", "save_cases"]
