"""Pricing table: USD per one million input and output tokens.

The table ships with the package (``evalcore/models/pricing.yaml``). A user overrides or extends
it with a YAML file of the same shape, given as ``pricing=PATH`` or in the ``EVALCORE_PRICING``
environment variable; entries in the override win over the shipped ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.errors import EvalcoreError

PRICING_ENV = "EVALCORE_PRICING"


@dataclass(frozen=True)
class Price:
    """The price of one model in USD per one million tokens.

    Attributes:
        input: USD per 1M prompt tokens.
        output: USD per 1M completion tokens.
    """

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Cost of one call.

        ``cost = (prompt_tokens * input + completion_tokens * output) / 1e6``

        Args:
            prompt_tokens: Tokens sent.
            completion_tokens: Tokens generated.

        Returns:
            The cost in USD.
        """
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


def _parse_table(data: Any, source: str, key_lines: Mapping[str, int] | None = None) -> dict[str, Price]:
    if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
        raise EvalcoreError(
            "a pricing file needs a mapping 'models: {NAME: {input, output}}'", path=source, field="models"
        )
    extra_top = sorted(str(k) for k in data if k != "models")
    if extra_top:  # a typo such as 'modles:' beside 'models:' would be ignored without a word
        raise EvalcoreError(
            "unknown top-level key (allowed: models)",
            path=source,
            line=(key_lines or {}).get(extra_top[0]),
            field=extra_top[0],
        )
    table: dict[str, Price] = {}
    for name, entry in data["models"].items():
        if not isinstance(entry, Mapping):
            raise EvalcoreError("each model needs {input: USD, output: USD}", path=source, field=f"models.{name}")
        values = {}
        for key in ("input", "output"):
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise EvalcoreError(
                    f"needs a non-negative number (USD per 1M tokens), got {value!r}",
                    path=source,
                    field=f"models.{name}.{key}",
                )
            values[key] = float(value)
        extra = set(entry) - {"input", "output"}
        if extra:
            raise EvalcoreError(
                f"unknown keys {sorted(extra)}; allowed: input, output", path=source, field=f"models.{name}"
            )
        table[str(name)] = Price(**values)
    return table


def load_pricing(path: str | os.PathLike[str] | None = None) -> dict[str, Price]:
    """Load the shipped pricing table, overlaid with a user file.

    Args:
        path: A YAML override; None uses ``$EVALCORE_PRICING`` when set.

    Returns:
        Model name -> :class:`Price`.

    Raises:
        EvalcoreError: The override is missing (or a folder), malformed, or has a key other
            than ``models`` at the top or ``input``/``output`` in an entry (named with the
            file, line where known, and field).
    """
    from evalcore._yaml import read_packaged_yaml, read_yaml

    shipped = read_packaged_yaml("evalcore.models", "pricing.yaml")
    table = _parse_table(shipped.data, str(shipped.source), shipped.key_lines())
    override = path if path is not None else os.environ.get(PRICING_ENV) or None
    if override is not None:
        doc = read_yaml(override, what="pricing file")
        table.update(_parse_table(doc.data, str(doc.source), doc.key_lines()))
    return table


def price_for(model: str, table: Mapping[str, Price]) -> Price | None:
    """Find the price of ``model``: exact name, else the longest listed prefix.

    Dated snapshots (``gpt-4o-mini-2024-07-18``) resolve to their family (``gpt-4o-mini``).

    Args:
        model: Model name as sent to or reported by the API.
        table: Result of :func:`load_pricing`.

    Returns:
        The price, or None when the model is not priced.
    """
    if model in table:
        return table[model]
    best = None
    for name in table:
        if model.startswith(name + "-") and (best is None or len(name) > len(best)):
            best = name
    return table[best] if best else None
