"""Runs: run benchmarks, record every sample append-only, resume, re-score, summarize."""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.runs._prompts": ("PromptTemplate", "load_template", "render", "select_few_shot"),
    "evalcore.runs._rescore": ("rescore", "score_changes", "verdict"),
    "evalcore.runs._results": ("pass_at_k_table", "summarize"),
    "evalcore.runs._defaults": ("DEFAULT_MAX_TOKENS",),
    "evalcore.runs._runner": ("run_benchmark",),
    "evalcore.runs._params": ("resolve_params",),
    "evalcore.runs._execute": ("RunInterrupted",),
    "evalcore._runstore": ("Run", "SampleWriter", "load_run", "read_samples", "write_run_json"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
