"""Completion records, generation parameters and the ChatModel protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""


@dataclass(frozen=True)
class GenerationParams:
    """Generation parameters; part of the request hash, so they change the cache key.

    Attributes:
        temperature: Sampling temperature (0 = greedy).
        max_tokens: Maximum completion tokens.
        seed: Sampling seed where the backend honours one.
        stop: Stop sequences.
        top_p: Nucleus sampling mass.
        logprobs: Ask for token log-probabilities.
        top_logprobs: How many alternatives per token when ``logprobs`` is set.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    top_p: float = 1.0
    logprobs: bool = False
    top_logprobs: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GenerationParams:
        d = dict(d)
        if "stop" in d and d["stop"] is not None:
            d["stop"] = tuple(d["stop"])
        return cls(**d)


@dataclass
class Usage:
    """Token counts of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class CompletionError:
    """Why a call failed after its retries: an exception type name and a message."""

    type: str
    message: str


@dataclass
class Completion:
    """What a model returns for one request.

    A failed call has ``error`` set; it is never an empty answer scored wrong.

    Attributes:
        text: The generated text ("" when ``error`` is set).
        usage: Prompt and completion token counts.
        cost_usd: Cost of the call from the pricing table (0 for local models).
        latency_s: Wall-clock seconds of the call, its retries and backoff waits included; the
            wait for a free slot (the client's concurrency, the embedded model's lock) is not.
        model: The model name as the backend reports it.
        error: None, or the type and message of the failure.
        retries: How many retries the call needed.
        logprobs: Optional token log-probabilities, ``[{"token", "logprob", "top": {tok: lp}}]``.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    model: str = ""
    error: CompletionError | None = None
    retries: int = 0
    logprobs: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Completion:
        err = d.get("error")
        return cls(
            text=d.get("text", ""),
            usage=Usage(**(d.get("usage") or {})),
            cost_usd=float(d.get("cost_usd", 0.0)),
            latency_s=float(d.get("latency_s", 0.0)),
            model=d.get("model", ""),
            error=CompletionError(**err) if err else None,
            retries=int(d.get("retries", 0)),
            logprobs=d.get("logprobs"),
        )


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers chat messages with a :class:`Completion`.

    ``acomplete`` is the primary (async) entry point; ``complete`` is the blocking form for
    code that is not async (agents, notebooks). Implementations never raise for a failed
    call: they return a Completion with ``error`` set.
    """

    @property
    def name(self) -> str:
        """A stable identifier of the model and endpoint (part of the cache key)."""
        ...

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Answer ``messages`` with generation ``params``."""
        ...

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Blocking form of :meth:`acomplete`."""
        ...
