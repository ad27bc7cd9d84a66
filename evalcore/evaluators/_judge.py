"""An LLM judge for production monitoring: semantic and factuality rubrics, 0–1 with reasoning.

Benchmarks never use it: the seeds' rule is no LLM judging an LLM in a benchmark, so the
judge refuses to run inside :func:`evalcore.runs.run_benchmark` and benchmark runs refuse it
as a scorer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.evaluators._reasoning import after_reasoning
from evalcore.models import ChatModel, Completion, GenerationParams, Message

_SEMANTIC = """You are grading whether a response is semantically correct.

Question:
{question}

Reference answer:
{reference}

Response to grade:
{response}

Decide how well the response conveys the same meaning as the reference answer for this question. \
Wording, order and length do not matter; meaning does. Give a score between 0 and 1: 1 means the \
same meaning, 0 means wrong or unrelated, values in between mean partly correct.
Reply with one JSON object and nothing else: {{"reasoning": "why, in one or two sentences", "score": 0.0}}"""

_SEMANTIC_NO_REF = """You are grading whether a response answers a question correctly and helpfully.

Question:
{question}

Response to grade:
{response}

Give a score between 0 and 1: 1 means correct, complete and on topic; 0 means wrong or off \
topic; values in between mean partly correct.
Reply with one JSON object and nothing else: {{"reasoning": "why, in one or two sentences", "score": 0.0}}"""

_FACTUALITY = """You are comparing the factual content of a submitted answer with an expert answer.

[Question]: {question}
[Expert]: {reference}
[Submission]: {response}

Ignore differences in style, grammar or punctuation. Pick one option:
(A) The submitted answer is a subset of the expert answer and fully consistent with it.
(B) The submitted answer is a superset of the expert answer and fully consistent with it.
(C) The submitted answer contains all the same details as the expert answer.
(D) There is a disagreement between the submitted answer and the expert answer.
(E) The answers differ, but these differences do not matter from the perspective of factuality.
Reply with one JSON object and nothing else: {{"reasoning": "why, in one or two sentences", "choice": "C"}}"""

FACTUALITY_SCORES = {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}
"""Score of each factuality choice (the mapping of OpenAI evals' ``fact`` / autoevals Factuality)."""

RUBRICS = ("semantic", "factuality")


@dataclass
class JudgeResult:
    """The judge's verdict on one response.

    Attributes:
        score: 0–1, or None when the judge failed or its answer was unreadable.
        reasoning: The judge's stated reasons.
        rubric: ``semantic`` or ``factuality``.
        choice: The factuality option (A–E), if any.
        error: Why there is no score, if there is none.
        raw: The judge's full answer.
        completion: The judge model's Completion record.
    """

    score: float | None
    reasoning: str
    rubric: str
    choice: str | None = None
    error: str | None = None
    raw: str = ""
    completion: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether a score was obtained."""
        return self.score is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "score": self.score,
            "reasoning": self.reasoning,
            "rubric": self.rubric,
            "choice": self.choice,
            "error": self.error,
            "raw": self.raw,
            "completion": self.completion,
        }


def _json_object(text: str, key: str) -> dict[str, Any] | None:
    """The judge's JSON verdict: the last top-level object holding ``key`` (a judge that echoes
    the requested format first, or drafts a verdict before its final one, is read by its last
    word), else the last object."""
    # raw_decode from each "{" reads a whole object, braces inside its strings included
    fenced = re.sub(r"```(?:json)?", "", text)
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = 0
    for match in re.finditer(r"\{", fenced):
        if match.start() < pos:
            continue  # inside an object already read
        try:
            obj, end = decoder.raw_decode(fenced, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
            pos = end
    keyed = [obj for obj in found if key in obj]
    candidates = keyed or found
    return candidates[-1] if candidates else None


def parse_verdict(text: str, rubric: str) -> tuple[float | None, str, str | None, str | None]:
    """Read a judge's answer.

    Semantic: ``score`` in [0, 1] from a JSON object (the last one that has it), else from
    ``score: x`` in the text. What a closed ``<think>`` block holds is skipped.
    Factuality: ``choice`` A–E from the JSON object or ``(X)``/``choice: X`` in the text, scored
    with :data:`FACTUALITY_SCORES`.

    Args:
        text: The judge's answer.
        rubric: ``semantic`` or ``factuality``.

    Returns:
        ``(score, reasoning, choice, error)``.
    """
    text = after_reasoning(text)  # a reasoning judge's drafts are not its verdict
    obj = _json_object(text, "choice" if rubric == "factuality" else "score") or {}
    reasoning = str(obj.get("reasoning") or obj.get("reason") or "").strip()
    if rubric == "factuality":
        choice = str(obj.get("choice") or "").strip().strip("()").upper()[:1]
        if choice not in FACTUALITY_SCORES:
            m = re.search(r"(?:choice|answer)\W{0,3}\(?([A-E])\)?\b", text, flags=re.I) or re.search(
                r"\(([A-E])\)", text
            )
            choice = m.group(1).upper() if m else ""
        if choice not in FACTUALITY_SCORES:
            return None, reasoning or text.strip(), None, "no choice A-E in the judge's answer"
        return FACTUALITY_SCORES[choice], reasoning or text.strip(), choice, None
    value: Any = obj.get("score")
    if value is None:
        m = re.search(r"score\W{0,3}([01](?:\.\d+)?|\.\d+)(?!\.?\d)", text, flags=re.I)
        value = m.group(1) if m else None
    try:
        score = float(value) if value is not None else None
    except (TypeError, ValueError):
        score = None
    if score is None or not 0.0 <= score <= 1.0:
        return None, reasoning or text.strip(), None, "no score in [0, 1] in the judge's answer"
    return score, reasoning or text.strip(), None, None


class LLMJudge:
    """Grade responses with a chat model, for production monitoring only.

    Args:
        model: Any ChatModel, or a model spec (``local:smollm2``, ``openai:gpt-4o-mini`` ...).
        rubric: ``semantic`` (same meaning as the reference, or a correct answer when there is
            none) or ``factuality`` (A–E comparison with an expert answer, scored 0.4/0.6/1/0/1).
        params: Generation parameters of the judge (default: greedy, 256 tokens).
    """

    def __init__(
        self, model: ChatModel | str, rubric: str = "semantic", params: GenerationParams | None = None
    ) -> None:
        if rubric not in RUBRICS:
            raise EvalcoreError(f"unknown rubric {rubric!r}; choose one of {list(RUBRICS)}", field="rubric")
        if isinstance(model, str):
            from evalcore.models import from_spec

            model = from_spec(model)
        self.model = model
        self.rubric = rubric
        self.params = params or GenerationParams(temperature=0.0, max_tokens=256, seed=0)

    def messages(self, question: str, response: str, reference: str | None = None) -> list[Message]:
        """The judge's prompt for one response."""
        if self.rubric == "factuality":
            if reference is None:
                raise EvalcoreError("the factuality rubric needs a reference answer", field="reference")
            text = _FACTUALITY.format(question=question, reference=reference, response=response)
        elif reference is None:
            text = _SEMANTIC_NO_REF.format(question=question, response=response)
        else:
            text = _SEMANTIC.format(question=question, reference=reference, response=response)
        return [{"role": "system", "content": "You are a strict, fair grader."}, {"role": "user", "content": text}]

    @staticmethod
    def _refuse_in_benchmark() -> None:
        from evalcore._runstore import IN_BENCHMARK

        if IN_BENCHMARK.get():
            raise EvalcoreError(
                "an LLM judge cannot score a benchmark run: benchmark scores come "
                "from exact match or code execution only",
                field="scorer",
            )

    def _result(self, comp: Completion) -> JudgeResult:
        if not comp.ok:
            err = comp.error
            return JudgeResult(
                score=None,
                reasoning="",
                rubric=self.rubric,
                error=f"judge call failed: {err.type}: {err.message}" if err else "judge call failed",
                completion=comp.to_dict(),
            )
        score, reasoning, choice, error = parse_verdict(comp.text, self.rubric)
        return JudgeResult(
            score=score,
            reasoning=reasoning,
            rubric=self.rubric,
            choice=choice,
            error=error,
            raw=comp.text,
            completion=comp.to_dict(),
        )

    def judge(self, question: str, response: str, reference: str | None = None) -> JudgeResult:
        """Grade one response.

        Args:
            question: What was asked.
            response: The answer to grade.
            reference: The expected answer (required for ``factuality``).

        Returns:
            The verdict (score None with ``error`` set when the judge failed).

        Raises:
            EvalcoreError: Called inside a benchmark run.
        """
        self._refuse_in_benchmark()
        return self._result(self.model.complete(self.messages(question, response, reference), self.params))

    async def ajudge(self, question: str, response: str, reference: str | None = None) -> JudgeResult:
        """Async form of :meth:`judge`."""
        self._refuse_in_benchmark()
        comp = await self.model.acomplete(self.messages(question, response, reference), self.params)
        return self._result(comp)

    def judge_many(self, rows: Sequence[dict[str, Any]]) -> list[JudgeResult]:
        """Grade many ``{"question", "response", "reference"}`` rows in order."""
        return [self.judge(r["question"], r["response"], r.get("reference")) for r in rows]


def judge(
    question: str,
    response: str,
    reference: str | None = None,
    *,
    model: ChatModel | str = "local:smollm2",
    rubric: str = "semantic",
) -> JudgeResult:
    """Grade one response with an LLM judge (production monitoring only).

    Args:
        question: What was asked.
        response: The answer to grade.
        reference: Expected answer (required for ``factuality``).
        model: Judge model or spec.
        rubric: ``semantic`` or ``factuality``.

    Returns:
        The verdict.
    """
    return LLMJudge(model, rubric).judge(question, response, reference)
