"""Imports: lm-evaluation-harness and inspect_ai logs as ordinary evalcore runs, and
``compare`` across harnesses.

- :func:`import_log`: an lm-eval ``--log_samples`` output (``results_<time>.json`` with its
  ``samples_<task>_<time>.jsonl``) or an inspect_ai log (``.eval``/``.json``, read with
  inspect's own ``read_eval_log``) → run directories (``config.json`` with read-only
  provenance under ``imported``, ``samples.jsonl``, ``results.json``), written all or nothing;
  :func:`import_batch` makes the imports of several logs one all-or-nothing batch.
- :func:`compare_sources`: any mix of evalcore runs and logs, items aligned by id where the
  runs share an id scheme and by normalised question hash otherwise, every pair compared with
  :func:`evalcore.stats.compare_many` (the command ``evalcore compare``).
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.imports._common": ("content_key", "import_batch", "normalise_question", "score_value"),
    "evalcore.imports._compare": (
        "Alignment",
        "Comparison",
        "align_runs",
        "aligned_scores",
        "compare_series",
        "compare_sources",
        "format_comparison",
        "load_runs",
        "write_comparison",
    ),
    "evalcore.imports._inspect": ("import_inspect",),
    "evalcore.imports._lm_eval": ("import_lm_eval",),
    "evalcore.imports._sources": (
        "DEFAULT_IMPORT_DIR",
        "RunScores",
        "detect",
        "import_log",
        "resolve",
        "run_scores",
    ),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
