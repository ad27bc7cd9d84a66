"""Runs: run benchmarks, record every sample append-only, resume, re-score, summarize."""

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore._runstore import Run as Run
    from evalcore._runstore import SampleWriter as SampleWriter
    from evalcore._runstore import load_run as load_run
    from evalcore._runstore import read_samples as read_samples
    from evalcore._runstore import write_run_json as write_run_json
    from evalcore.runs._defaults import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
    from evalcore.runs._execute import RunInterrupted as RunInterrupted
    from evalcore.runs._params import resolve_params as resolve_params
    from evalcore.runs._prompts import PromptTemplate as PromptTemplate
    from evalcore.runs._prompts import load_template as load_template
    from evalcore.runs._prompts import render as render
    from evalcore.runs._prompts import select_few_shot as select_few_shot
    from evalcore.runs._rescore import rescore as rescore
    from evalcore.runs._rescore import score_changes as score_changes
    from evalcore.runs._rescore import verdict as verdict
    from evalcore.runs._results import answered_latencies as answered_latencies
    from evalcore.runs._results import pass_at_k_table as pass_at_k_table
    from evalcore.runs._results import summarize as summarize
    from evalcore.runs._runner import run_benchmark as run_benchmark

_EXPORTS = {
    "evalcore.runs._prompts": ("PromptTemplate", "load_template", "render", "select_few_shot"),
    "evalcore.runs._rescore": ("rescore", "score_changes", "verdict"),
    "evalcore.runs._results": ("answered_latencies", "pass_at_k_table", "summarize"),
    "evalcore.runs._defaults": ("DEFAULT_MAX_TOKENS",),
    "evalcore.runs._runner": ("run_benchmark",),
    "evalcore.runs._params": ("resolve_params",),
    "evalcore.runs._execute": ("RunInterrupted",),
    "evalcore._runstore": ("Run", "SampleWriter", "load_run", "read_samples", "write_run_json"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
