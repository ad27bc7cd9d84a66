"""Datasets: Item records and generic readers; no benchmark is named here.

:class:`DatasetSource` says how one dataset is read (its splits, Hugging Face id, native-file
and hub-row readers, shipped sample, the Python package that ships it, how subsets are drawn);
each benchmark folder (``evalcore/benchmarks/<name>/``) fills one in. :func:`load_items` reads
it from the best available source (an explicit ``path`` in the native format, the Hugging Face
cache, the package, the shipped sample) as :class:`Item` records with stable ids, and
:func:`few_shot_items` gives its few-shot split. The readers it builds on are generic: JSONL
(``read_jsonl``), parquet shards laid out as on the hub (``file_or_shards_items``: a local file
or a folder holding one or the shards), seeded and stratified subsets, stable ids.
``number_reference``/``numbers_equal``/``parse_number`` compare answers the way references are
read; ``choices_text``, ``question_text`` and ``prompt_question`` turn an item's question
into prompt text and read it back from a recorded request.

``load(name)``, ``sample_path``, ``few_shot_pool`` and ``resolve_source`` take a benchmark's
name, which only the benchmark registry knows: they live in :mod:`evalcore.benchmarks`
(``evalcore.benchmarks.load`` ...). Reading one of those old names here raises an
``AttributeError`` that says where it went; this package never imports ``evalcore.benchmarks``.
"""

from typing import TYPE_CHECKING, Any

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.datasets._common import check_limit as check_limit
    from evalcore.datasets._common import open_text as open_text
    from evalcore.datasets._common import read_jsonl as read_jsonl
    from evalcore.datasets._common import require_str as require_str
    from evalcore.datasets._common import seeded_subset as seeded_subset
    from evalcore.datasets._common import stable_hash as stable_hash
    from evalcore.datasets._common import stratified_subset as stratified_subset
    from evalcore.datasets._common import unique_ids as unique_ids
    from evalcore.datasets._formats import find_parquet_shards as find_parquet_shards
    from evalcore.datasets._item import Item as Item
    from evalcore.datasets._prompt_fields import choices_text as choices_text
    from evalcore.datasets._prompt_fields import prompt_question as prompt_question
    from evalcore.datasets._prompt_fields import question_text as question_text
    from evalcore.datasets._references import CHOICE_LETTERS as CHOICE_LETTERS
    from evalcore.datasets._references import LETTERS as LETTERS
    from evalcore.datasets._references import NUMBER_PATTERN as NUMBER_PATTERN
    from evalcore.datasets._references import NUMBER_RE as NUMBER_RE
    from evalcore.datasets._references import canonical_number as canonical_number
    from evalcore.datasets._references import choice_reference as choice_reference
    from evalcore.datasets._references import gsm8k_reference as gsm8k_reference
    from evalcore.datasets._references import letter_reference as letter_reference
    from evalcore.datasets._references import mmlu_reference as mmlu_reference
    from evalcore.datasets._references import number_from_match as number_from_match
    from evalcore.datasets._references import number_reference as number_reference
    from evalcore.datasets._references import numbers_equal as numbers_equal
    from evalcore.datasets._references import parse_number as parse_number
    from evalcore.datasets._source import SOURCES as SOURCES
    from evalcore.datasets._source import DatasetSource as DatasetSource
    from evalcore.datasets._source import check_split as check_split
    from evalcore.datasets._source import few_shot_items as few_shot_items
    from evalcore.datasets._source import file_or_shards_items as file_or_shards_items
    from evalcore.datasets._source import load_items as load_items
    from evalcore.datasets._source import parquet_items as parquet_items
    from evalcore.datasets._source import resolve as resolve
    from evalcore.datasets._source import sample_file as sample_file

_EXPORTS = {
    "evalcore.datasets._item": ("Item",),
    "evalcore.datasets._common": (
        "check_limit",
        "open_text",
        "read_jsonl",
        "require_str",
        "seeded_subset",
        "stable_hash",
        "stratified_subset",
        "unique_ids",
    ),
    "evalcore.datasets._formats": ("find_parquet_shards",),
    "evalcore.datasets._source": (
        "SOURCES",
        "DatasetSource",
        "check_split",
        "few_shot_items",
        "file_or_shards_items",
        "load_items",
        "parquet_items",
        "resolve",
        "sample_file",
    ),
    "evalcore.datasets._references": (
        "CHOICE_LETTERS",
        "LETTERS",
        "NUMBER_PATTERN",
        "NUMBER_RE",
        "canonical_number",
        "choice_reference",
        "gsm8k_reference",
        "letter_reference",
        "mmlu_reference",
        "number_from_match",
        "number_reference",
        "numbers_equal",
        "parse_number",
    ),
    "evalcore.datasets._prompt_fields": ("choices_text", "prompt_question", "question_text"),
}

# The name-based loaders moved up to the benchmark registry (issue 40): name -> what it does there.
_MOVED = {
    "load": "a benchmark's items by its name",
    "sample_path": "where a benchmark's shipped sample lies",
    "few_shot_pool": "a benchmark's few-shot examples",
    "resolve_source": "which source loading a benchmark would use",
}

__all__, _lazy_getattr, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:  # noqa: N807 (the PEP 562 hook)
    """A public name (imported on first use), or one clear line for a name that moved.

    A moved name raises ``ImportError``, not ``AttributeError``: ``from evalcore.datasets import
    load`` turns an ``AttributeError`` into Python's generic "cannot import name" and the line
    saying where the name went would be lost.
    """
    if name in _MOVED:
        raise ImportError(
            f"evalcore.datasets.{name} moved to evalcore.benchmarks.{name} ({_MOVED[name]})",
            name="evalcore.datasets",
        )
    return _lazy_getattr(name)
