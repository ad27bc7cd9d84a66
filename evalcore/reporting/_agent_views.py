"""The agent overview from the category notebooks of the same notebook-suite run.

The notebook suite runs each of the seven agent-evaluation categories in a notebook of its own
(``agent_<category>``), on one shared case seed (:func:`evalcore.reporting.shared_agent_seed`),
then the overview. Running the seven again in the overview doubled the agent work of the demo
and, with other limits, showed other test counts than the category pages. :func:`combine_agent_results`
builds the overview's :class:`~evalcore.agent_eval.EvaluationResult` from the results JSON those
notebooks wrote instead, so the overview and the category pages show the same tests.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError

__all__ = ["combine_agent_results"]


def _category_results(folder: Path, category: str) -> tuple[Path, dict[str, Any]] | None:
    """The newest results JSON of the ``agent_<category>`` notebook under ``folder`` that holds
    that category (``None``: none)."""
    from evalcore.agent_eval import load_results

    found = sorted((folder / f"agent_{category}").glob("evaluation_*.json"), key=lambda p: p.stat().st_mtime)
    for path in reversed(found):
        try:
            data = load_results(path)
        except EvalcoreError:
            continue
        if category in (data.get("detailed_results") or {}):
            return path, data
    return None


def combine_agent_results(
    folder: str | os.PathLike[str],
    *,
    agent: str,
    model: str,
    threshold: float,
    seed: int | None,
    categories: list[str] | None = None,
) -> tuple[Any, str]:
    """The overview's result from the category notebooks of one notebook-suite run.

    Every category asked for must have been evaluated there, on the same agent, threshold and
    case seed and on the same model (or in the reference agent's no-LLM mode, ``model: none``,
    which the reason names), by a hosted agent or all by an in-process one; otherwise nothing
    is combined (the caller runs the categories itself) and the reason says why.

    Args:
        folder: The notebook-suite run's folder (``{suite_dir}``), holding ``agent_<category>/``.
        agent: The agent specification the overview is about.
        model: Its model.
        threshold: Its tool-search threshold.
        seed: The case seed the overview uses.
        categories: The categories (default: all seven).

    Returns:
        ``(result, reason)``: an :class:`~evalcore.agent_eval.EvaluationResult` (``None`` when the
        category results cannot be combined) and one sentence saying where it came from or why
        not.
    """
    from evalcore.agent_eval import CATEGORIES, EvaluationResult

    base = Path(folder)
    wanted = list(categories or CATEGORIES)
    parts: dict[str, tuple[Path, dict[str, Any]]] = {}
    for name in wanted:
        found = _category_results(base, name)
        if found is None:
            return None, f"no results of the agent_{name} notebook in {base.name}: every category runs here"
        parts[name] = found
    why_not = _why_not_combined(parts, {"agent": agent, "model": model, "threshold": threshold, "seed": seed})
    if why_not:
        return None, why_not
    trusted = {bool((d.get("config") or {}).get("trusted")) for _, d in parts.values()}
    first = next(iter(parts.values()))[1]
    suite = (first.get("config") or {}).get("suite") or {}
    pass_threshold = float(suite.get("pass_threshold", 0.7))
    categories_out = {name: _category_result(name, data, pass_threshold) for name, (_, data) in parts.items()}
    limits = {name: (d.get("config") or {}).get("suite", {}).get("limit") for name, (_, d) in parts.items()}
    config = dict(first.get("config") or {})
    config.update({"categories": wanted, "combined_from": {n: str(p) for n, (p, _) in parts.items()}, "limits": limits})
    result = EvaluationResult(
        categories=categories_out,
        config=config,
        started_at=min(str((d.get("summary") or {}).get("started_at") or "") for _, d in parts.values()),
        duration_s=sum(c.duration_s for c in categories_out.values()),
        pass_threshold=pass_threshold,
        category_floor=float(suite.get("category_floor", 0.5)),
        trusted=trusted.pop(),
    )
    shown = ", ".join(f"{n} {'all' if lim is None else lim}" for n, lim in limits.items())
    no_llm = [n for n, (_, d) in parts.items() if (d.get("config") or {}).get("model") == "none"]
    config["models"] = {n: (d.get("config") or {}).get("model") for n, (_, d) in parts.items()}
    return result, (
        f"Combined from the {len(wanted)} category notebooks of this notebook-suite run (same agent, "
        f"threshold and case seed), not run again: the tests and counts are theirs "
        f"(cases per category: {shown})"
        + (f"; {', '.join(no_llm)} ran in the reference agent's no-LLM mode (model none)" if no_llm else "")
        + "."
    )


def _why_not_combined(parts: dict[str, tuple[Path, dict[str, Any]]], want: dict[str, Any]) -> str | None:
    """Why the category results cannot be combined (another agent, model, threshold or seed; a
    mix of hosted and in-process agents), or None when they can."""
    for name, (_path, data) in parts.items():
        cfg = data.get("config") or {}
        got = {
            "agent": cfg.get("agent"),
            "model": cfg.get("model"),
            "threshold": cfg.get("threshold"),
            "seed": (cfg.get("suite") or {}).get("seed"),
        }
        # a category that needs no LLM may have run in the reference agent's no-LLM mode
        differs = [k for k in want if got[k] != want[k] and not (k == "model" and got[k] == "none")]
        if differs:
            k = differs[0]
            return (
                f"the agent_{name} notebook ran with {k} {got[k]!r}, this overview with {want[k]!r}: "
                "every category runs here"
            )
    if len({bool((d.get("config") or {}).get("trusted")) for _, d in parts.values()}) > 1:
        return "some category notebooks hosted the agent and some ran it in-process: every category runs here"
    return None


def _category_result(name: str, data: dict[str, Any], pass_threshold: float) -> Any:
    """One category's :class:`~evalcore.agent_eval.CategoryResult` read back from its results JSON."""
    from evalcore.agent_eval import CaseResult, CategoryResult

    raw = data["detailed_results"][name]
    tests = [
        CaseResult(
            name=t["name"],
            score=float(t["score"]),
            passed=bool(t["passed"]),
            details=dict(t.get("details") or {}),
            critical=bool(t.get("critical")),
            error=t.get("error"),
            duration_s=float(t.get("duration_s") or 0.0),
        )
        for t in raw.get("tests") or []
    ]
    return CategoryResult(
        name=name,
        tests=tests,
        metrics=dict(raw.get("metrics") or {}),
        notes=list(raw.get("notes") or []),
        duration_s=float(raw.get("duration_s") or 0.0),
        threshold=pass_threshold,
    )
