"""Prompt templates per benchmark, with optional few-shot examples."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Formatter
from typing import Any

from evalcore.datasets import Item
from evalcore.errors import EvalcoreError
from evalcore.models import Message

_KEYS = {"name", "dataset", "system", "user", "answer"}


@dataclass(frozen=True)
class PromptTemplate:
    """A dataset's prompt: system text, the user turn and the few-shot answer format.

    Attributes:
        name: Template name (recorded in the run config).
        dataset: The dataset it is written for.
        system: System message, or None.
        user: The user turn; ``{field}`` markers are filled from the item.
        answer: The assistant turn of a few-shot example.
        source: Where it was loaded from.
    """

    name: str
    dataset: str
    system: str | None
    user: str
    answer: str
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (recorded in ``config.json``)."""
        return {
            "name": self.name,
            "dataset": self.dataset,
            "system": self.system,
            "user": self.user,
            "answer": self.answer,
            "source": self.source,
        }

    def fields(self) -> set[str]:
        """Field names used by the template."""
        out = set()
        for text in (self.system or "", self.user, self.answer):
            out |= {f for _, f, _, _ in Formatter().parse(text) if f}
        return out


def item_fields(item: Item) -> dict[str, Any]:
    """Values a template may use for ``item``: its fields, ``reference``, ``id`` and what its
    benchmark adds (:meth:`~evalcore.benchmarks.Benchmark.prompt_fields`: gsm8k ``solution``;
    mmlu ``choices_text``, ``subject``; a benchmark file with options ``choices_text``).

    Args:
        item: A dataset item.

    Returns:
        Field name -> value.
    """
    from evalcore.benchmarks import find_benchmark

    values: dict[str, Any] = {"id": item.id, "reference": item.reference}
    values.update(item.fields)
    benchmark = find_benchmark(item.dataset)
    if benchmark is not None:
        values.update(benchmark.prompt_fields(item))
    return values


def _fill(text: str, values: dict[str, Any], template: PromptTemplate, part: str) -> str:
    try:
        return text.format(**values)
    except KeyError as exc:
        raise EvalcoreError(
            f"the template uses {{{exc.args[0]}}}, which {template.dataset} items "
            f"do not have; available: {sorted(values)}",
            path=template.source or None,
            field=part,
        ) from exc
    except (IndexError, ValueError) as exc:
        raise EvalcoreError(
            f"malformed {{field}} marker: {exc} (write literal braces as {{{{ }}}})",
            path=template.source or None,
            field=part,
        ) from exc


def _check_markers(text: str, source: str, part: str) -> None:
    """Refuse a malformed ``{field}`` marker (a lone brace) or one that is not a plain name
    (``{question.__class__}``, ``{choices[0]}``, ``{}``) when the template is loaded, before a
    run writes anything."""
    try:
        parsed = list(Formatter().parse(text))
    except ValueError as exc:
        raise EvalcoreError(
            f"malformed {{field}} marker: {exc} (write literal braces as {{{{ }}}})", path=source, field=part
        ) from None
    for _, name, _, _ in parsed:
        if name is not None and not name.isidentifier():
            raise EvalcoreError(
                f"{{{name}}} is not a plain field name (attribute, index and "
                "positional markers are not allowed; write literal braces as "
                "{{ }})",
                path=source,
                field=part,
            )


def check_template(
    template: PromptTemplate, items: Sequence[Item], pool: Sequence[Item] = (), few_shot: int = 0, seed: int = 0
) -> None:
    """Fill the template for every item (and the few-shot examples of the first) once, so a
    ``{field}`` the items lack is refused before a run creates anything.

    Raises:
        EvalcoreError: A marker names a field the items do not have, or the pool holds fewer
            than ``few_shot`` examples for an item (the item itself never counts).
    """
    if few_shot > 0:
        ids = [ex.id for ex in pool]
        have = min((len(ids) - ids.count(item.id) for item in items), default=len(ids))
        if have < few_shot:  # select_few_shot would give fewer than asked, without a word
            raise EvalcoreError(
                f"asks for {few_shot} worked examples; the few-shot split holds {have} for some items", field="few_shot"
            )
    for n, item in enumerate(items):
        render(template, item, select_few_shot(pool, item, few_shot, seed) if n == 0 else ())


def _parse_template(data: Any, source: str, dataset: str | None) -> PromptTemplate:
    if not isinstance(data, dict):
        raise EvalcoreError("a prompt template is a YAML mapping", path=source)
    unknown = set(data) - _KEYS
    if unknown:
        raise EvalcoreError(
            f"unknown keys {sorted(unknown)}; allowed: {sorted(_KEYS)}", path=source, field=sorted(unknown)[0]
        )
    for key in ("user",):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise EvalcoreError("required text is missing", path=source, field=key)
    tpl_dataset = str(data.get("dataset") or dataset or "")
    if dataset is not None and tpl_dataset != dataset:
        raise EvalcoreError(f"template is for {tpl_dataset!r}, not {dataset!r}", path=source, field="dataset")
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise EvalcoreError("must be text or absent", path=source, field="system")
    answer = data.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise EvalcoreError("must be text or absent", path=source, field="answer")
    for part in ("user", "answer"):
        _check_markers(str(data.get(part) or ""), source, part)
    return PromptTemplate(
        name=str(data.get("name") or Path(source).stem),
        dataset=tpl_dataset,
        system=system,
        user=data["user"],
        answer=str(data.get("answer") or ""),
        source=source,
    )


def load_template(dataset: Any, path: str | os.PathLike[str] | None = None) -> PromptTemplate:
    """Load the prompt template of ``dataset``: a user file, else the benchmark's default
    (the packaged template of a built-in, a benchmark file's ``prompt``).

    Args:
        dataset: A benchmark name (``gsm8k``, ``mmlu``, ``humaneval``), a benchmark YAML file,
            or a :class:`~evalcore.benchmarks.Benchmark`.
        path: A YAML template file (keys: name, dataset, system, user, answer).

    Returns:
        The template.

    Raises:
        EvalcoreError: Unknown dataset, missing or malformed file (named with the line).
    """
    from evalcore._yaml import read_yaml
    from evalcore.benchmarks import get_benchmark

    benchmark = get_benchmark(dataset)
    if path is None:
        doc = benchmark.template_doc()
    else:
        doc = read_yaml(path, what="prompt template", field="prompt")
    return _parse_template(doc.data, str(doc.source), benchmark.name)


def select_few_shot(pool: Sequence[Item], item: Item, n: int, seed: int) -> list[Item]:
    """Pick ``n`` examples from ``pool`` for ``item``, never the item itself.

    The pool is shuffled once with ``seed``; the first ``n`` entries other than ``item`` are
    taken, so every item of a run sees the same examples (except where it is one of them).

    Args:
        pool: Candidate examples.
        item: The item being asked.
        n: How many.
        seed: Shuffle seed.

    Returns:
        The examples.
    """
    if n <= 0:
        return []
    order = list(pool)
    random.Random(seed).shuffle(order)
    return [ex for ex in order if ex.id != item.id][:n]


def render(template: PromptTemplate, item: Item, few_shot: Sequence[Item] = ()) -> list[Message]:
    """Build the chat messages for ``item``.

    Args:
        template: The prompt template.
        item: The item to ask.
        few_shot: Worked examples, each as a user turn and an assistant answer.

    Returns:
        Messages: optional system, example pairs, then the item's user turn.
    """
    messages: list[Message] = []
    if template.system:
        messages.append({"role": "system", "content": template.system})
    for ex in few_shot:
        values = item_fields(ex)
        messages.append({"role": "user", "content": _fill(template.user, values, template, "user")})
        messages.append({"role": "assistant", "content": _fill(template.answer, values, template, "answer")})
    messages.append({"role": "user", "content": _fill(template.user, item_fields(item), template, "user")})
    return messages
