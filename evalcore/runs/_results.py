"""The run summary written to ``results.json``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalcore._runstore import SampleRecord
from evalcore.benchmarks import pass_at_k_table as pass_at_k_table  # re-exported: evalcore.runs
from evalcore.stats import clustered_wilson  # noqa: F401  (re-exported: results use it)

_EMPTY_CI = {"mean": None, "ci_low": None, "ci_high": None, "n": 0}


def _ci(values: list[float], clusters: Sequence[str | int] | None) -> dict[str, Any]:
    from evalcore.stats import mean_ci

    if not values:
        return dict(_EMPTY_CI)
    if clusters is not None and len(set(clusters)) < 2:
        clusters = None
    if clusters is not None and set(values) <= {0.0, 1.0}:
        # n counts samples; the interval is as wide as n_eff independent ones: say both
        return {**clustered_wilson(values, clusters), "n_items": len(set(clusters))}
    res = mean_ci(values, clusters=clusters)
    return {k: res[k] for k in ("mean", "ci_low", "ci_high", "se", "n", "method") if k in res}


def answered_latencies(records: Sequence[SampleRecord]) -> tuple[list[float], bool]:
    """The latencies a run's latency p50/p95 are over: those of the answered model calls.

    A failed call's time (an immediate refusal near 0, retries run out after long backoffs) is
    no answer's latency and would bias p50/p95 either way; a cache hit carries the latency of
    the call that first made it, so cache hits count only when every answer came from the cache.

    Returns:
        ``(latencies, from_cache)``: ``from_cache`` is True when they are the cached calls'.
    """
    answered = [r for r in records if not r.get("error")]
    lat = [float((r.get("completion") or {}).get("latency_s", 0.0)) for r in answered]
    fresh = [x for r, x in zip(answered, lat) if not r.get("cached")]
    return (fresh, False) if fresh else (lat, bool(lat))


def summarize(
    records: Sequence[SampleRecord],
    dataset: str,
    *,
    epochs: int,
    wall_s: float | None = None,
    calls: int | None = None,
    benchmark: Any = None,
) -> dict[str, Any]:
    """Summarize sample records into ``results.json``.

    Accuracy is the mean per-sample score over samples whose call succeeded, with a 95%
    interval: Wilson for one epoch (:func:`evalcore.stats.mean_ci`); over several epochs
    Wilson on the effective sample size from the item-clustered standard error
    (:func:`evalcore.stats.clustered_wilson`). Errors are counted apart and never scored as wrong.
    Latency p50/p95 are over the answered model calls (failed calls and cache hits left out;
    when every answer came from the cache, over the latencies the cached calls took:
    ``latency_from_cache``); ``latency_n`` says how many.

    Args:
        records: One record per (item, epoch).
        dataset: The dataset.
        epochs: Epochs of the run.
        wall_s: Wall-clock seconds of the latest invocation.
        calls: Model calls made by the latest invocation, cache hits excluded
            (``qps = calls / wall_s``; None when no call was made).
        benchmark: The :class:`~evalcore.benchmarks.Benchmark` whose summary extras are added
            (parse-failure rates, pass@k, per-subject accuracy); None: the one registered as
            ``dataset``, if any (an imported harness task has none: no extras).

    Returns:
        The summary (keys of the runs interface).
    """
    ok = [r for r in records if not r.get("error")]
    errs = [r for r in records if r.get("error")]
    clusters = [r["item_id"] for r in ok] if epochs > 1 else None
    strict = [float(r["scores"].get("strict", r["scores"].get("score", 0.0))) for r in ok]
    flexible = [float(r["scores"].get("flexible", r["scores"].get("score", 0.0))) for r in ok]
    comps = [r.get("completion") or {} for r in records]
    prompt_t = sum(int((c.get("usage") or {}).get("prompt_tokens", 0)) for c in comps)
    compl_t = sum(int((c.get("usage") or {}).get("completion_tokens", 0)) for c in comps)
    lat, from_cache = answered_latencies(records)
    out: dict[str, Any] = {
        "dataset": dataset,
        "n_samples": len(records),
        "n_items": len({r["item_id"] for r in records}),
        "n_scored": len(ok),
        "epochs": epochs,
        "accuracy_strict": _ci(strict, clusters),
        "accuracy_flexible": _ci(flexible, clusters),
        "pass_at_k": {},
        "parse_failure_rate": None,
        "errors": len(errs),
        "error_rate": len(errs) / len(records) if records else 0.0,
        "error_types": dict(Counter(((r.get("completion") or {}).get("error") or {}).get("type", "?") for r in errs)),
        "retries": int(sum(int(c.get("retries", 0)) for c in comps)),
        "cached": sum(1 for r in records if r.get("cached")),
        # What the run's own calls cost (cache hits carry the price and retries of the call
        # that first made them, in another run; "cost_usd" and "retries" above include them).
        "fresh": {
            "calls": sum(1 for r in records if not r.get("cached")),
            "cost_usd": float(
                sum(float(c.get("cost_usd", 0.0)) for r, c in zip(records, comps) if not r.get("cached"))
            ),
            "retries": int(sum(int(c.get("retries", 0)) for r, c in zip(records, comps) if not r.get("cached"))),
        },
        "tokens": {"prompt": prompt_t, "completion": compl_t, "total": prompt_t + compl_t},
        "cost_usd": float(sum(float(c.get("cost_usd", 0.0)) for c in comps)),
        "latency_p50_s": float(np.percentile(lat, 50)) if lat else None,
        "latency_p95_s": float(np.percentile(lat, 95)) if lat else None,
        "latency_n": len(lat),
        "latency_from_cache": from_cache,
        "wall_s": wall_s,
        "qps": (calls / wall_s) if (calls and wall_s) else None,
    }
    if benchmark is None:
        from evalcore.benchmarks import find_benchmark

        benchmark = find_benchmark(dataset)
    if benchmark is not None and ok:
        out.update(benchmark.summary_extras(ok))
    return out
