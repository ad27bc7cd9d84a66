"""The agent protocol every evaluated agent meets, and its response records."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class StepRecord:
    """One executed step of a (possibly multi-step) request.

    Attributes:
        tool: Name of the tool the step used ("" when none).
        args: The arguments the tool was called with.
        result: The tool's structured result (None when it failed).
        error: None, or why the step failed.
        depends_on: Indices of earlier steps whose results fed this step's arguments.
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: str | None = None
    depends_on: list[int] = field(default_factory=list)


@dataclass
class AgentResponse:
    """What an agent returns for one request.

    Attributes:
        success: The agent claims it answered the request.
        response: The answer as text for a person.
        result: The structured result (a number, a string, a list…); evaluators compare this,
            never a substring of ``response``.
        tool_used: Name of the (last) tool used, if any.
        synthesized: A new tool was created for this request.
        reused: An existing tool was found and used.
        steps: Every executed step with its result.
        error: None, or a clear message why the request could not be served.
        needs_clarification: The agent asks the user to clarify an ambiguous request.
    """

    success: bool
    response: str = ""
    result: Any = None
    tool_used: str | None = None
    synthesized: bool = False
    reused: bool = False
    steps: list[StepRecord] = field(default_factory=list)
    error: str | None = None
    needs_clarification: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AgentResponse:
        d = dict(d)
        d["steps"] = [StepRecord(**s) for s in d.get("steps") or []]
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class ToolMatch:
    """One search hit of a tool registry: the tool's name and its similarity score."""

    name: str
    score: float


@runtime_checkable
class ToolRegistry(Protocol):
    """The part of an agent's tool registry that retrieval evaluation needs."""

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        """Return up to ``k`` tools with similarity ≥ ``threshold``, best first."""
        ...

    def list_tools(self) -> list[str]:
        """Names of every registered tool."""
        ...


@runtime_checkable
class Agent(Protocol):
    """An agent under evaluation.

    ``process_request`` must not raise for a request it cannot serve: it returns
    ``AgentResponse(success=False, error=...)``. An exception that escapes is recorded by the
    evaluator as a critical failure. ``reset`` returns the agent to a fresh, isolated state
    (empty learned state, a new temporary registry with only its starter tools).
    """

    def process_request(self, query: str) -> AgentResponse: ...

    def reset(self) -> None: ...

    @property
    def registry(self) -> ToolRegistry | None:
        """The agent's tool registry, or None when it has none to search."""
        ...
