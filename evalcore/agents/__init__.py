"""Agents: the protocol an evaluated agent meets, adapters, and a reference agent.

This is the agent side; the evaluation (cases, categories, scoring, self-test agents) is
:mod:`evalcore.agent_eval`, which builds on this package; nothing here imports it.

Public names are imported when first used (see :mod:`evalcore._lazy`): the HTTP adapter
pulls in ``httpx``, which ``evalcore --help`` should not pay for.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.agents._adapters import FactoryAgent as FactoryAgent
    from evalcore.agents._adapters import build_in_process as build_in_process
    from evalcore.agents._adapters import check_agent as check_agent
    from evalcore.agents._adapters import load_agent as load_agent
    from evalcore.agents._host import HostedAgent as HostedAgent
    from evalcore.agents._http import AgentEndpointError as AgentEndpointError
    from evalcore.agents._http import HttpAgent as HttpAgent
    from evalcore.agents._http import HttpToolRegistry as HttpToolRegistry
    from evalcore.agents._http_server import AgentServer as AgentServer
    from evalcore.agents._http_server import serve_agent as serve_agent
    from evalcore.agents._protocol import Agent as Agent
    from evalcore.agents._protocol import AgentResponse as AgentResponse
    from evalcore.agents._protocol import StepRecord as StepRecord
    from evalcore.agents._protocol import ToolMatch as ToolMatch
    from evalcore.agents._protocol import ToolRegistry as ToolRegistry

_EXPORTS = {
    "evalcore.agents._protocol": ("Agent", "AgentResponse", "StepRecord", "ToolMatch", "ToolRegistry"),
    "evalcore.agents._adapters": ("FactoryAgent", "build_in_process", "check_agent", "load_agent"),
    "evalcore.agents._host": ("HostedAgent",),
    "evalcore.agents._http": ("AgentEndpointError", "HttpAgent", "HttpToolRegistry"),
    "evalcore.agents._http_server": ("AgentServer", "serve_agent"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
