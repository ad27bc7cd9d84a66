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

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.imports._common import content_key as content_key
    from evalcore.imports._common import import_batch as import_batch
    from evalcore.imports._common import normalise_question as normalise_question
    from evalcore.imports._common import score_value as score_value
    from evalcore.imports._compare import Alignment as Alignment
    from evalcore.imports._compare import Comparison as Comparison
    from evalcore.imports._compare import align_runs as align_runs
    from evalcore.imports._compare import aligned_scores as aligned_scores
    from evalcore.imports._compare import compare_series as compare_series
    from evalcore.imports._compare import compare_sources as compare_sources
    from evalcore.imports._compare import format_comparison as format_comparison
    from evalcore.imports._compare import load_runs as load_runs
    from evalcore.imports._compare import write_comparison as write_comparison
    from evalcore.imports._inspect import import_inspect as import_inspect
    from evalcore.imports._lm_eval import import_lm_eval as import_lm_eval
    from evalcore.imports._lm_eval import lm_eval_reply_text as lm_eval_reply_text
    from evalcore.imports._sources import DEFAULT_IMPORT_DIR as DEFAULT_IMPORT_DIR
    from evalcore.imports._sources import RunScores as RunScores
    from evalcore.imports._sources import detect as detect
    from evalcore.imports._sources import import_log as import_log
    from evalcore.imports._sources import resolve as resolve
    from evalcore.imports._sources import run_scores as run_scores

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
    "evalcore.imports._lm_eval": ("import_lm_eval", "lm_eval_reply_text"),
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
