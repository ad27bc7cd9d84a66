"""Result records of an agent evaluation (a test's :class:`CaseResult`, a :class:`CategoryResult`)
and the scoring rules.

Scoring:

* a test scores in [0, 1] and passes at ``score >= 0.7``;
* a category's score is the mean of its tests' scores and it passes at ``>= 0.7``;
* the overall score is the weighted mean of the category scores,
  ``overall = Σ_c w_c · s_c / Σ_c w_c`` over the categories that were run (the default weights,
  :data:`~evalcore.agent_eval._config.CATEGORY_WEIGHTS`, are renormalized to sum to one over those
  categories);
* the system passes when ``overall >= 0.7`` and no critical failure (an exception escaping the
  agent, or a response that is not an ``AgentResponse``) was recorded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore._io import bounded, excerpt
from evalcore.agent_eval._config import CATEGORY_WEIGHTS, PASS_THRESHOLD


@dataclass
class CaseResult:
    """One test of a category (a case's request, or a measure such as ``throughput``): a score in
    [0, 1] with what it saw.

    Attributes:
        name: Test name, unique within its category.
        score: The score in [0, 1].
        passed: ``score >= threshold``.
        details: What was asked, expected and returned (native JSON values).
        critical: An exception escaped the agent (or it broke the protocol) during the test.
        error: Why the test scored low, if known.
        duration_s: Wall time of the test: from the end of the category's previous test (or
            the category's start) until this result was added to it, i.e. the agent calls and
            the evaluator's checks that produced it (stamped by :class:`CategoryResult`
            unless set explicitly).
    """

    name: str
    score: float
    passed: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    critical: bool = False
    error: str | None = None
    duration_s: float = 0.0

    def to_dict(self, **caps: int) -> dict[str, Any]:
        """The test as native JSON values, bounded (:func:`evalcore._io.bounded`: what an agent
        sent may be nested or long without limit; ``caps`` tighten the defaults)."""
        return {
            "name": excerpt(str(self.name), 200),
            "score": float(self.score),
            "passed": bool(self.passed),
            "critical": bool(self.critical),
            "error": bounded(self.error, **caps),
            "duration_s": float(self.duration_s),
            "details": bounded(self.details, **caps),
        }


class _TimedTests(list[Any]):
    """A category's list of tests that stamps each added test's wall time (``duration_s``)
    as the time since the previous test was added (or since the list was made)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._mark = time.perf_counter()

    def append(self, test: Any) -> None:
        now = time.perf_counter()
        if isinstance(test, CaseResult) and not test.duration_s:
            test.duration_s = now - self._mark
        self._mark = now
        super().append(test)

    def extend(self, tests: Any) -> None:
        for test in tests:
            self.append(test)


@dataclass
class CategoryResult:
    """One category: its tests, mean score and aggregate metrics.

    Attributes:
        name: Category name.
        tests: The tests.
        metrics: Aggregate measures (P/R/F1, QPS, rates …).
        notes: Remarks (e.g. tests that could not run and why).
    """

    name: str
    tests: list[CaseResult] = field(default_factory=_TimedTests)
    metrics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    threshold: float = PASS_THRESHOLD

    @property
    def score(self) -> float:
        """Mean test score (0 when the category has no tests)."""
        return float(np.mean([t.score for t in self.tests])) if self.tests else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.tests) and self.score >= self.threshold

    @property
    def critical_failures(self) -> list[dict[str, Any]]:
        return [
            {"category": self.name, "test": excerpt(str(t.name), 200), "error": bounded(t.error)}
            for t in self.tests
            if t.critical
        ]

    def to_dict(self, **caps: int) -> dict[str, Any]:
        """The category as native JSON values, every value bounded (see :meth:`CaseResult.to_dict`)."""
        return {
            "score": self.score,
            "passed": self.passed,
            "n_tests": len(self.tests),
            "n_passed": sum(t.passed for t in self.tests),
            "duration_s": float(self.duration_s),
            "metrics": bounded(self.metrics, **caps),
            "notes": bounded(list(self.notes), **caps),
            "critical_failures": self.critical_failures,
            "tests": [t.to_dict(**caps) for t in self.tests],
        }


def make_test(name: str, score: float, *, threshold: float = PASS_THRESHOLD, **kw: Any) -> CaseResult:
    """Build a :class:`CaseResult`, clipping the score to [0, 1] and setting ``passed``.

    Args:
        name: Test name.
        score: Raw score (NaN counts as 0).
        threshold: Pass threshold.
        **kw: Other :class:`CaseResult` fields.

    Returns:
        The test result.
    """
    s = float(score)
    s = 0.0 if not math.isfinite(s) else min(max(s, 0.0), 1.0)
    return CaseResult(name=name, score=s, passed=s >= threshold, **kw)


def overall_score(
    category_scores: Mapping[str, float], weights: Mapping[str, float] | None = None
) -> tuple[float, dict[str, float]]:
    """Weighted mean of category scores, weights renormalized over the categories present.

    ``overall = Σ_c w_c s_c / Σ_c w_c``.

    Args:
        category_scores: Score per category that was run.
        weights: Weight per category (default :data:`CATEGORY_WEIGHTS`).

    Returns:
        ``(overall, used_weights)`` where ``used_weights`` sum to one.

    Raises:
        ValueError: No category scores, or a category without a positive weight.
    """
    weights = dict(CATEGORY_WEIGHTS if weights is None else weights)
    if not category_scores:
        raise ValueError("no category scores")
    missing = [c for c in category_scores if weights.get(c, 0.0) <= 0]
    if missing:
        raise ValueError(f"no positive weight for categories {missing}")
    total = sum(weights[c] for c in category_scores)
    used = {c: weights[c] / total for c in category_scores}
    return float(sum(used[c] * float(s) for c, s in category_scores.items())), used
