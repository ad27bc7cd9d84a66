"""Imports: lm-evaluation-harness and inspect_ai logs as ordinary evalcore runs, and
``compare`` across harnesses.

- :func:`import_log`: an lm-eval ``--log_samples`` output (``results_<time>.json`` with its
  ``samples_<task>_<time>.jsonl``) or an inspect_ai log (``.eval``/``.json``, read with
  inspect's own ``read_eval_log``) → run directories (``config.json`` with read-only
  provenance under ``imported``, ``samples.jsonl``, ``results.json``), written all or nothing.
- :func:`compare_sources`: any mix of evalcore runs and logs, items aligned by id where the
  runs share an id scheme and by normalised question hash otherwise, every pair compared with
  :func:`evalcore.stats.compare_many` (the command ``evalcore compare``).
"""

from evalcore.imports._common import content_key, normalise_question, score_value
from evalcore.imports._compare import (
    Alignment,
    Comparison,
    align_runs,
    aligned_scores,
    compare_sources,
    format_comparison,
    load_runs,
    write_comparison,
)
from evalcore.imports._inspect import import_inspect
from evalcore.imports._lm_eval import import_lm_eval
from evalcore.imports._sources import (
    DEFAULT_IMPORT_DIR,
    RunScores,
    detect,
    import_log,
    resolve,
    run_scores,
)

__all__ = [
    "DEFAULT_IMPORT_DIR",
    "Alignment",
    "Comparison",
    "RunScores",
    "align_runs",
    "aligned_scores",
    "compare_sources",
    "content_key",
    "detect",
    "format_comparison",
    "import_inspect",
    "import_lm_eval",
    "import_log",
    "load_runs",
    "normalise_question",
    "resolve",
    "run_scores",
    "score_value",
    "write_comparison",
]
