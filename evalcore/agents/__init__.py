"""Agents: the protocol an evaluated agent meets, adapters, and a reference agent."""

from evalcore.agents._protocol import Agent, AgentResponse, StepRecord, ToolMatch, ToolRegistry

__all__ = ["Agent", "AgentResponse", "StepRecord", "ToolMatch", "ToolRegistry"]
