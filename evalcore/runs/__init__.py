"""Runs: run benchmarks, record every sample append-only, resume, re-score, summarize."""

from evalcore.runs._prompts import PromptTemplate, load_template, render, select_few_shot
from evalcore.runs._rescore import rescore
from evalcore.runs._results import pass_at_k_table, summarize
from evalcore.runs._runner import resolve_params, run_benchmark
from evalcore.runs._store import Run, SampleWriter, load_run, read_samples, write_json_atomic

__all__ = [
    "PromptTemplate",
    "Run",
    "SampleWriter",
    "load_run",
    "load_template",
    "pass_at_k_table",
    "read_samples",
    "render",
    "rescore",
    "resolve_params",
    "run_benchmark",
    "select_few_shot",
    "summarize",
    "write_json_atomic",
]
