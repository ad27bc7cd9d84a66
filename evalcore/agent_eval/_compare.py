"""Compare two agent evaluations: per-test differences, category deltas and a paired test."""

from __future__ import annotations

import os
from typing import Any

from evalcore._io import to_json_native
from evalcore.agent_eval._output import load_results, validate_results
from evalcore.errors import EvalcoreError


def _load(x: Any) -> dict[str, Any]:
    if isinstance(x, (str, os.PathLike)):
        return check_consistent(load_results(x), x)  # a file may have been edited since it was written
    return validate_results(x.to_dict() if hasattr(x, "to_dict") else x)


def check_consistent(d: dict[str, Any], path: Any = None) -> dict[str, Any]:
    """Refuse a results file whose numbers do not follow from its tests (``compare_results``
    checks every file it reads; results given as objects or dicts are the caller's own): every test score in [0, 1],
    every category score the mean of its tests' scores (0 without tests) and the overall score
    the weighted mean of the category scores (``summary.weights_used``, else the default
    weights renormalized). A results file whose summary or category scores were edited by
    hand without its tests was compared as if measured.

    This catches an edit of the summary; a file rewritten consistently (tests included) cannot
    be told from a measured one: results are not signed.

    Raises:
        EvalcoreError: Naming the first number that does not follow.
    """
    from evalcore.agent_eval._case_results import overall_score

    where = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    scores: dict[str, float] = {}
    for cat, res in d["detailed_results"].items():
        tests = [float(t["score"]) for t in res["tests"]]
        if any(not 0.0 <= t <= 1.0 for t in tests):
            raise EvalcoreError("a test score outside [0, 1]", path=where, field=f"detailed_results.{cat}.tests")
        mean = sum(tests) / len(tests) if tests else 0.0
        if abs(mean - float(res["score"])) > 1e-6:
            raise EvalcoreError(
                f"category score {float(res['score']):.6g} is not the mean of its tests "
                f"({mean:.6g}): the file was edited",
                path=where,
                field=f"detailed_results.{cat}.score",
            )
        scores[cat] = mean
    if scores:
        used = d["summary"].get("weights_used")
        weights = d["summary"].get("weights")
        try:
            if isinstance(used, dict) and set(used) == set(scores):
                overall = sum(float(used[c]) * scores[c] for c in scores)
            else:
                overall = overall_score(scores, weights if isinstance(weights, dict) else None)[0]
        except (TypeError, ValueError, KeyError) as exc:
            raise EvalcoreError(
                f"the category weights do not apply: {exc}", path=where, field="summary.weights_used"
            ) from exc
        if abs(overall - float(d["summary"]["overall_score"])) > 1e-6:
            raise EvalcoreError(
                f"overall score {float(d['summary']['overall_score']):.6g} is not the weighted "
                f"mean of the category scores ({overall:.6g}): the file was edited",
                path=where,
                field="summary.overall_score",
            )
    return d


def _relative_drop(a: float, b: float) -> float:
    """(a − b) / a, the share of A's score lost in B (0 when A is 0)."""
    return (a - b) / a if a > 0 else 0.0


def _cases_of(d: dict[str, Any]) -> tuple[Any, str, Any]:
    """(what identifies the cases an evaluation ran on, how to name them in a message, the seed
    that generated them or None for a cases file)."""
    cfg = d.get("config") or {}
    suite = cfg.get("suite") or {}
    seed = None if cfg.get("cases_file") else suite.get("seed")
    if cfg.get("cases_digest"):
        named = f"cases file {cfg['cases_file']}" if cfg.get("cases_file") else f"seed {seed}"
        return ("digest", cfg["cases_digest"]), named, seed
    if seed is not None:  # results written before the digest
        return ("seed", seed, suite.get("counts")), f"seed {seed}", seed
    return None, "unknown cases", None


def same_cases(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Raise when two evaluation results ran on different cases (tests are paired by name, and
    the generator gives the same names to different cases under different seeds)."""
    (ka, na, seed_a), (kb, nb, _) = _cases_of(a), _cases_of(b)
    if ka is not None and kb is not None and ka[0] == kb[0] and ka != kb:
        hint = (
            f"evaluate B with the seed {seed_a} (in a --seed-file, or EVALCORE_AGENT_SEED={seed_a})"
            if seed_a is not None
            else "evaluate both on the same cases file"
        )
        raise EvalcoreError(
            f"the two evaluations ran on different cases (A: {na}, B: {nb}); their tests share "
            f"names, not inputs, so they cannot be paired: {hint}",
            field="compare",
        )


def compare_results(
    a: Any, b: Any, *, drop_threshold: float = 0.10, n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Compare evaluation B against baseline A.

    * per test present in both: ``a``, ``b``, ``diff = b − a``, ``flagged`` when the relative
      drop ``(a − b) / a`` exceeds ``drop_threshold``;
    * per category present in both: the same on category scores; the overall score likewise;
    * a paired test on the per-test scores (matched by ``category/test``): the sign-flip
      permutation test (exact for ≤ 13 pairs), the Wilcoxon signed-rank test and the paired
      t-test from :mod:`evalcore.stats`, with the mean difference.

    Args:
        a: Baseline: a results path, dict or ``EvaluationResult``.
        b: Candidate, same forms.
        drop_threshold: Relative drop that is flagged (0.10 = more than 10 % of A's score lost).
        n_resamples: Resamples of the permutation test.
        seed: Seed of the permutation test.

    Returns:
        ``{"overall", "categories", "tests", "flagged_categories", "flagged_tests",
        "only_in_a", "only_in_b", "paired_test"}`` (native JSON types).

    Raises:
        EvalcoreError: Unreadable inputs, evaluations of different cases (their ``cases_digest``
            differ), or no test in common.
    """
    from evalcore import stats

    da, db = _load(a), _load(b)
    same_cases(da, db)
    cats = [c for c in da["detailed_results"] if c in db["detailed_results"]]
    categories: dict[str, Any] = {}
    for c in cats:
        sa, sb = float(da["detailed_results"][c]["score"]), float(db["detailed_results"][c]["score"])
        drop = _relative_drop(sa, sb)
        categories[c] = {"a": sa, "b": sb, "delta": sb - sa, "relative_drop": drop, "flagged": drop > drop_threshold}

    def tests_of(d: dict[str, Any]) -> dict[str, float]:
        return {f"{c}/{t['name']}": float(t["score"]) for c, r in d["detailed_results"].items() for t in r["tests"]}

    ta, tb = tests_of(da), tests_of(db)
    common = [k for k in ta if k in tb]
    if not common:
        raise EvalcoreError("the two evaluations have no test in common", field="compare")
    tests = {
        k: {"a": ta[k], "b": tb[k], "diff": tb[k] - ta[k], "flagged": _relative_drop(ta[k], tb[k]) > drop_threshold}
        for k in common
    }
    xa = [ta[k] for k in common]
    xb = [tb[k] for k in common]
    perm = stats.permutation_test(xb, xa, n_resamples=n_resamples, seed=seed)
    wil = stats.wilcoxon(xb, xa)
    pt = stats.paired_t(xb, xa) if len(common) > 1 else None
    oa, ob = float(da["summary"]["overall_score"]), float(db["summary"]["overall_score"])
    odrop = _relative_drop(oa, ob)
    return to_json_native(
        {
            "a": {"agent": da["config"].get("agent"), "started_at": da["summary"].get("started_at")},
            "b": {"agent": db["config"].get("agent"), "started_at": db["summary"].get("started_at")},
            "drop_threshold": drop_threshold,
            "overall": {"a": oa, "b": ob, "delta": ob - oa, "relative_drop": odrop, "flagged": odrop > drop_threshold},
            "categories": categories,
            "tests": tests,
            "flagged_categories": [c for c, v in categories.items() if v["flagged"]],
            "flagged_tests": [k for k, v in tests.items() if v["flagged"]],
            "only_in_a": [k for k in ta if k not in tb],
            "only_in_b": [k for k in tb if k not in ta],
            "paired_test": {
                "n": len(common),
                "mean_difference": perm.difference,
                "permutation_p": perm.p_value,
                "wilcoxon_p": wil.p_value,
                "paired_t_p": pt.p_value if pt is not None else None,
                "ci_low": pt.ci_low if pt is not None else None,
                "ci_high": pt.ci_high if pt is not None else None,
            },
        }
    )


def format_agent_eval_comparison(cmp: dict[str, Any]) -> str:
    """Plain-text summary of :func:`compare_results` for the terminal."""
    lines = [
        f"A: {cmp['a']['agent']}  B: {cmp['b']['agent']}",
        f"overall  {cmp['overall']['a']:.3f} -> {cmp['overall']['b']:.3f} ({cmp['overall']['delta']:+.3f})"
        + ("  DROP" if cmp["overall"]["flagged"] else ""),
        f"{'category':<12} {'A':>6} {'B':>6} {'delta':>7}",
    ]
    for c, v in cmp["categories"].items():
        lines.append(
            f"{c:<12} {v['a']:6.3f} {v['b']:6.3f} {v['delta']:+7.3f}"
            + (f"  DROP {v['relative_drop']:.0%}" if v["flagged"] else "")
        )
    pt = cmp["paired_test"]
    lines.append(
        f"paired test on {pt['n']} tests: mean diff {pt['mean_difference']:+.3f}, "
        f"permutation p={pt['permutation_p']:.4g}, Wilcoxon p={pt['wilcoxon_p']:.4g}"
        + (f", paired t p={pt['paired_t_p']:.4g}" if pt["paired_t_p"] is not None else "")
    )
    changed = [(k, v) for k, v in cmp["tests"].items() if v["diff"] != 0]
    lines.append(
        f"{len(changed)} test(s) changed, {len(cmp['flagged_tests'])} dropped by more than {cmp['drop_threshold']:.0%}"
    )
    for k, v in sorted(changed, key=lambda kv: kv[1]["diff"])[:15]:
        lines.append(f"  {k}: {v['a']:.2f} -> {v['b']:.2f}" + ("  DROP" if v["flagged"] else ""))
    return "\n".join(lines)
