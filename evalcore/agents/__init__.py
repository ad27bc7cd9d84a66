"""Agents: the protocol an evaluated agent meets, adapters, and a reference agent."""

from evalcore.agents._protocol import Agent, AgentResponse, StepRecord, ToolMatch, ToolRegistry
from evalcore.agents._adapters import FactoryAgent, check_agent, load_agent
from evalcore.agents._http import AgentEndpointError, AgentServer, HttpAgent, HttpToolRegistry, serve_agent

__all__ = ["Agent", "AgentResponse", "StepRecord", "ToolMatch", "ToolRegistry"]
__all__ += [
    "AgentEndpointError",
    "AgentServer",
    "FactoryAgent",
    "HttpAgent",
    "HttpToolRegistry",
    "check_agent",
    "load_agent",
    "serve_agent",
]
