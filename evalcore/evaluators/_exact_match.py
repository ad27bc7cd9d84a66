"""Exact-match scoring of two answer kinds: numbers (GSM8K's) and option letters (MMLU's, A–D).

Every extraction returns the value found *and* the method that found it, so a response the
extractor could not parse (``value is None``, method ``"none"`` or ``"hedged"``) is told apart
from a parsed but wrong answer. The rules, as ordered, named steps (:data:`METHODS`):

1. **Declared answers**, the strongest pattern in *both* modes: a JSON field ``answer`` /
   ``final_answer`` (also inside a fenced block), a YAML ``answer:`` in a fenced block or a
   ``final_answer:`` line, an ``<answer>...</answer>`` tag, GSM8K ``#### 72``, ``\\boxed{...}``,
   and "answer" as a word of its own followed by the answer ("The answer is (C)", "**Final
   Answer:** 18"). When a reply declares its answer nothing else in it is read. Fields outrank
   prose; the last declaration wins (a final statement beats earlier ones, "... wait, the answer
   is 8"); a declaration naming two answers ("B or C", ``"answer": "B, C"``) or a change of answer
   anywhere with no correction between the two declarations is a hedge (method ``"hedged"``, a
   parse failure). An answer withdrawn after it was declared, the new value stated without the
   word "answer" ("The answer is 20. Wait, that's wrong: it's 25.", "Answer: A. Oops, I meant
   C."), is read as method ``"correction"``; a declared answer without a number or letter ("Cannot
   be determined") is a parse failure.
   A reasoning model's closed ``<think>...</think>`` block is skipped when the reply goes on
   after it: its scratch work is not the answer.
2. **strict** reads nothing else for GSM8K; for MMLU also a lone letter, a letter opening the
   reply, or a single parenthesised option letter.
3. **flexible** falls back to looser shapes. GSM8K: "A: 72", "[72]", the number the concluding
   sentence commits to (not one restated after it; none for a reply that declines). MMLU: an
   option's text matched back to its letter, the letter stated as the conclusion when mentions
   disagree, else the first letter that can be an answer.

MMLU letters inside math or code (``$A$``), notation ("P(A)", "vitamin C"), labels of quantities
("magnetic field strength (B)") and negated mentions ("not (C)", "rather than B", "A is wrong")
never count. GSM8K answers are compared numerically (``72 == 72.0 == "72.00" == "$72" ==
"1,248"``-style normalisation, "$25,000/year" is 25000), never as strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from evalcore.datasets import (  # the reference and number names are re-exported below
    CHOICE_LETTERS,
    canonical_number,
    gsm8k_reference,
    letter_reference,
    mmlu_reference,
    number_reference,
    numbers_equal,
    parse_number,
)
from evalcore.errors import EvalcoreError
from evalcore.evaluators._extract_choice import _choice_flexible, _choice_strict
from evalcore.evaluators._extract_common import DECLARED_METHODS, EXTRACTION_METHODS, METHODS, Extraction
from evalcore.evaluators._extract_number import _number_flexible, _number_strict

__all__ = [
    "DECLARED_METHODS",
    "EXTRACTION_METHODS",
    "Extraction",
    "ExactMatchEvaluator",
    "parse_number",
    "canonical_number",
    "gsm8k_reference",
    "mmlu_reference",
    "numbers_equal",
    "extraction_method_counts",
    "summarize_exact_match",
    "METHODS",
]

DatasetType = Literal["number", "letter", "gsm8k", "mmlu"]
Mode = Literal["strict", "flexible"]
_MODES = ("strict", "flexible")
ANSWER_KINDS = {"number": "number", "letter": "letter", "gsm8k": "number", "mmlu": "letter"}
"""The answer kinds (``number``: GSM8K's extractor and numeric comparison; ``letter``: MMLU's
extractor, options A-D...) and the benchmark names accepted for them since evalcore's first
release (``ExactMatchEvaluator("gsm8k")``): kept so that code written against it still runs.
Which kind a benchmark uses is the benchmark's own (:mod:`evalcore.benchmarks`)."""


class ExactMatchEvaluator:
    """Exact-match scorer for numbers (GSM8K) and option letters (MMLU) with strict and flexible
    extraction.

    Score (per response): ``1.0`` if the extracted answer equals the reference (numbers:
    numerically, ``|x - y| <= max(1e-6·max(|x|,|y|), 1e-9)``; letters: same letter), else ``0.0``;
    a parse failure scores ``0.0`` and is reported separately.

    Args:
        answer: The answer kind, ``"number"`` or ``"letter"`` (``"gsm8k"`` and ``"mmlu"`` name
            the same two, as evalcore's first release did).
        dataset_type: The keyword ``answer`` had before answer kinds were named for what they
            read (``ExactMatchEvaluator(dataset_type="gsm8k")``), still accepted; give one of
            the two. :attr:`dataset_type` keeps what was given.

    Raises:
        EvalcoreError: For an unknown answer kind, or both keywords given.
    """

    def __init__(self, answer: DatasetType | None = None, *, dataset_type: DatasetType | None = None) -> None:
        if answer is not None and dataset_type is not None:
            raise EvalcoreError("give answer= or its old name dataset_type=, not both", field="dataset_type")
        field = "answer" if dataset_type is None else "dataset_type"
        given: DatasetType = (dataset_type if answer is None else answer) or "number"
        if given not in ANSWER_KINDS:
            raise EvalcoreError(f"{field} must be one of {list(ANSWER_KINDS)}, got {given!r}", field=field)
        self.dataset_type: DatasetType = given
        self.kind = ANSWER_KINDS[given]

    def __repr__(self) -> str:
        return f"ExactMatchEvaluator({self.dataset_type!r})"

    def extract_answer(
        self, response: str | None, mode: Mode = "flexible", choices: Sequence[str] | None = None
    ) -> Extraction:
        """Extract the answer from a model response.

        Args:
            response: The model's text (``None`` is treated as empty).
            mode: ``"strict"`` or ``"flexible"``.
            choices: MMLU option texts (A–D), used by flexible mode to match an option's text
                back to its letter.

        Returns:
            The :class:`Extraction` (value ``None`` and method ``"none"`` on parse failure).
        """
        if mode not in _MODES:
            raise EvalcoreError(f"mode must be 'strict' or 'flexible', got {mode!r}", field="mode")
        text = "" if response is None else str(response)
        if self.kind == "number":
            return _number_strict(text) if mode == "strict" else _number_flexible(text)
        return _choice_strict(text, choices) if mode == "strict" else _choice_flexible(text, choices)

    def reference(self, ground_truth: Any) -> str:
        """Normalise the ground truth (GSM8K: final number string; MMLU: letter).

        Args:
            ground_truth: As the dataset gives it (GSM8K solution or number; MMLU letter/index).

        Returns:
            The canonical reference.
        """
        return number_reference(ground_truth) if self.kind == "number" else letter_reference(ground_truth)

    def _reference_for(self, ground_truth: Any, choices: Sequence[str] | None) -> str:
        """:meth:`reference`, and a letter E-J when the question has that many options (a
        benchmark file's letter scorer: up to ten options)."""
        if (
            self.kind == "letter"
            and choices
            and isinstance(ground_truth, str)
            and ground_truth in CHOICE_LETTERS[4 : len(choices)]
        ):
            return ground_truth
        return self.reference(ground_truth)

    def matches(self, extracted: str | None, reference: str) -> bool:
        """Whether an extracted value equals a canonical reference."""
        if extracted is None:
            return False
        if self.kind == "letter":
            return extracted == reference
        a, b = parse_number(extracted), parse_number(reference)
        return a is not None and b is not None and numbers_equal(a, b)

    def evaluate(
        self,
        response: str | None,
        ground_truth: Any,
        mode: Mode = "flexible",
        choices: Sequence[str] | None = None,
    ) -> float:
        """Score one response: 1.0 when the extracted answer equals the reference, else 0.0.

        Args:
            response: The model's text.
            ground_truth: The reference as the dataset gives it.
            mode: ``"strict"`` or ``"flexible"``.
            choices: MMLU option texts.

        Returns:
            ``1.0`` or ``0.0``.
        """
        reference = self._reference_for(ground_truth, choices)
        return 1.0 if self.matches(self.extract_answer(response, mode, choices).value, reference) else 0.0

    def score(self, response: str | None, ground_truth: Any, choices: Sequence[str] | None = None) -> dict[str, Any]:
        """Score one response in both modes.

        Args:
            response: The model's text.
            ground_truth: The reference as the dataset gives it.
            choices: MMLU option texts.

        Returns:
            ``{"strict", "flexible"}`` (0.0/1.0), ``extracted_strict``, ``extracted_flexible``,
            ``method_strict``, ``method_flexible``, ``parse_failure_strict``,
            ``parse_failure_flexible`` (bools) and ``reference`` (canonical).
        """
        reference = self._reference_for(ground_truth, choices)
        out: dict[str, Any] = {}
        for mode in _MODES:
            ex = self.extract_answer(response, mode, choices)  # type: ignore[arg-type]
            out[mode] = 1.0 if self.matches(ex.value, reference) else 0.0
            out[f"extracted_{mode}"] = ex.value
            out[f"method_{mode}"] = ex.method
            out[f"parse_failure_{mode}"] = ex.failed
        out["reference"] = reference
        return out

    @staticmethod
    def summarize(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Summarise :meth:`score` dicts; see :func:`summarize_exact_match`."""
        return summarize_exact_match(scores)


def summarize_exact_match(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-response scores.

    ``accuracy_m = (1/n) Σ_i score_m(i)`` for m in {strict, flexible};
    ``parse_failure_rate = (1/n) Σ_i [flexible extraction failed]`` (and the same for strict).

    Args:
        scores: Dicts as returned by :meth:`ExactMatchEvaluator.score`.

    Returns:
        ``{"accuracy_strict", "accuracy_flexible", "parse_failure_rate",
        "parse_failure_rate_strict", "n", "methods_strict", "methods_flexible"}``; rates are
        ``None`` when ``n == 0``; ``methods_*`` count how the answers were read
        (:func:`extraction_method_counts`).
    """
    n = len(scores)
    methods = {f"methods_{mode}": extraction_method_counts(scores, mode) for mode in _MODES}
    if n == 0:
        return {
            "accuracy_strict": None,
            "accuracy_flexible": None,
            "parse_failure_rate": None,
            "parse_failure_rate_strict": None,
            "n": 0,
            **methods,
        }
    return {
        "accuracy_strict": sum(float(s["strict"]) for s in scores) / n,
        "accuracy_flexible": sum(float(s["flexible"]) for s in scores) / n,
        "parse_failure_rate": sum(bool(s["parse_failure_flexible"]) for s in scores) / n,
        "parse_failure_rate_strict": sum(bool(s["parse_failure_strict"]) for s in scores) / n,
        "n": n,
        **methods,
    }


def extraction_method_counts(scores: Sequence[Mapping[Any, Any]], mode: str = "flexible") -> dict[str, int]:
    """How many answers each extraction method read, in order of precedence.

    Args:
        scores: Dicts as returned by :meth:`ExactMatchEvaluator.score` (anything with a
            ``method_<mode>`` key; rows without one are skipped).
        mode: ``"strict"`` or ``"flexible"``.

    Returns:
        ``{method: count}`` for the methods that occur, in the order of :data:`METHODS`
        (unknown method names, e.g. from an older run, come after them, alphabetically).

    Raises:
        EvalcoreError: For an unknown mode.
    """
    if mode not in _MODES:
        raise EvalcoreError(f"mode must be 'strict' or 'flexible', got {mode!r}", field="mode")
    counts: dict[str, int] = {}
    for s in scores:
        method = s.get(f"method_{mode}")
        if isinstance(method, str):
            counts[method] = counts.get(method, 0) + 1
    rank = {m: i for i, m in enumerate(METHODS)}
    return dict(sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
