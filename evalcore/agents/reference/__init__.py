"""The reference tool-building agent: SQLite tool registry with embedding search, starter tools,
test-first synthesis verified in the sandbox, a planner and a workflow tracker."""

from evalcore.agents.reference._agent import ReferenceAgent, make_agent
from evalcore.agents.reference._embedding import (
    Embedder,
    MiniLMEmbedder,
    TfidfEmbedder,
    make_embedder,
    query_views,
)
from evalcore.agents.reference._planner import resolve_references, split_steps
from evalcore.agents.reference._registry import SQLiteToolRegistry
from evalcore.agents.reference._starter import STARTER_TOOLS, StarterTool
from evalcore.agents.reference._synthesis import SynthesisAttempt, ToolSynthesizer

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "ReferenceAgent",
    "SQLiteToolRegistry",
    "STARTER_TOOLS",
    "StarterTool",
    "SynthesisAttempt",
    "TfidfEmbedder",
    "ToolSynthesizer",
    "make_agent",
    "make_embedder",
    "query_views",
    "resolve_references",
    "split_steps",
]
