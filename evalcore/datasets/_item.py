"""The Item record every dataset loader returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Item:
    """One benchmark item.

    Attributes:
        id: Stable identifier derived from the source, never from row order: gsm8k
            ``gsm8k/<sha256(question)[:10]>``, mmlu ``mmlu/<subject>/<sha256(question+choices)[:10]>``,
            humaneval the ``task_id`` (``HumanEval/0``).
        dataset: The benchmark's name (``"gsm8k"``, ``"mmlu"``, ``"humaneval"``, or a
            benchmark file's ``name``): :func:`evalcore.benchmarks.find_benchmark` finds it.
        fields: What a prompt needs. gsm8k: ``question``; mmlu: ``question``, ``choices``
            (four strings, A–D); humaneval: ``prompt``, ``entry_point``, ``test``.
        reference: Ground truth. gsm8k: the final number as a string (``"72"``);
            mmlu: the letter ``"A"``–``"D"``; humaneval: the canonical solution body.
        metadata: Extra facts (gsm8k ``solution``; mmlu ``subject``; humaneval ``task_id``;
            every loader adds ``source``).
    """

    id: str
    dataset: str
    fields: dict[str, Any]
    reference: Any
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Item:
        """Build an Item from :meth:`to_dict` output."""
        return cls(
            id=d["id"],
            dataset=d["dataset"],
            fields=dict(d["fields"]),
            reference=d["reference"],
            metadata=dict(d.get("metadata") or {}),
        )
