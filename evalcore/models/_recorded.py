"""A model that answers from a recorded run: re-scoring and routing without calling a model."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.models._cache import request_hash
from evalcore.models._types import Completion, CompletionError, GenerationParams, Message

if TYPE_CHECKING:
    from evalcore._runstore import RunConfig


class RecordedModel:
    """Answers each request with the completion a recorded run got for it.

    Lookup is by request hash (messages + generation parameters), or by item id and epoch
    through :meth:`acomplete_item`. A request the run never made returns a Completion with
    ``error`` set (type ``ReplayMiss``).

    Args:
        run_dir: A run directory (with ``samples.jsonl``).
    """

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        from evalcore._runstore import load_run

        self.run_dir = Path(run_dir)
        run = load_run(self.run_dir)
        self.config: RunConfig = run.config
        self._by_hash: dict[str, dict[str, Any]] = {}
        self._by_item: dict[tuple[str | int, int], dict[str, Any]] = {}
        for s in run.samples:
            self._by_hash.setdefault(s["request_hash"], s["completion"])
            self._by_item[(s["item_id"], int(s["epoch"]))] = s["completion"]

    @property
    def name(self) -> str:
        """``replay:<run id>``."""
        return f"replay:{self.run_dir.name}"

    @property
    def endpoint(self) -> str:
        """The run directory."""
        return str(self.run_dir)

    @property
    def recorded_model(self) -> str:
        """The model spec of the recorded run."""
        return str(self.config.get("model", ""))

    def __len__(self) -> int:
        return len(self._by_item)

    def _miss(self, what: str) -> Completion:
        return Completion(
            text="",
            model=self.name,
            error=CompletionError(type="ReplayMiss", message=f"{what} is not in {self.run_dir}"),
        )

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """The recorded completion of this exact request."""
        d = self._by_hash.get(request_hash(messages, params))
        return Completion.from_dict(d) if d is not None else self._miss("this request")

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Async form of :meth:`complete`."""
        return self.complete(messages, params)

    def complete_item(
        self, item_id: str, epoch: int, messages: Sequence[Message], params: GenerationParams
    ) -> Completion:
        """The recorded completion of ``(item_id, epoch)``, else of the same request."""
        d = self._by_item.get((item_id, int(epoch)))
        if d is not None:
            return Completion.from_dict(d)
        d = self._by_hash.get(request_hash(messages, params))
        return Completion.from_dict(d) if d is not None else self._miss(f"item {item_id!r} epoch {epoch}")

    async def acomplete_item(
        self, item_id: str, epoch: int, messages: Sequence[Message], params: GenerationParams
    ) -> Completion:
        """Async form of :meth:`complete_item`."""
        return self.complete_item(item_id, epoch, messages, params)

    def __repr__(self) -> str:
        return f"RecordedModel({str(self.run_dir)!r})"
