"""LLM judge for production monitoring (never for benchmark scores).

Public module: ``from evalcore.evaluators.judge import LLMJudge, judge``.
"""

from evalcore.evaluators._judge import (
    FACTUALITY_SCORES,
    RUBRICS,
    JudgeResult,
    LLMJudge,
    judge,
    parse_verdict,
)

__all__ = ["FACTUALITY_SCORES", "RUBRICS", "JudgeResult", "LLMJudge", "judge", "parse_verdict"]
