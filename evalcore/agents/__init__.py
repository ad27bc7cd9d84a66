"""Agents: the protocol an evaluated agent meets, adapters, and a reference agent.

This is the agent side; the evaluation (cases, categories, scoring, self-test agents) is
:mod:`evalcore.agent_eval`, which builds on this package; nothing here imports it.

Public names are imported when first used (see :mod:`evalcore._lazy`): the HTTP adapter
pulls in ``httpx``, which ``evalcore --help`` should not pay for.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.agents._protocol": ("Agent", "AgentResponse", "StepRecord", "ToolMatch", "ToolRegistry"),
    "evalcore.agents._adapters": ("FactoryAgent", "build_in_process", "check_agent", "load_agent"),
    "evalcore.agents._host": ("HostedAgent",),
    "evalcore.agents._http": ("AgentEndpointError", "HttpAgent", "HttpToolRegistry"),
    "evalcore.agents._http_server": ("AgentServer", "serve_agent"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
