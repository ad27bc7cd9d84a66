"""Defaults shared by ``evalcore run``, :func:`~evalcore.runs.run_benchmark` and the notebooks.

A light module (the benchmark modules import nothing heavy) so the CLI can show these in its
help without loading the runner.
"""

from __future__ import annotations

from evalcore.benchmarks import default_max_tokens

DEFAULT_MAX_TOKENS: dict[str, int] = default_max_tokens()
"""Completion token limit per built-in benchmark when none is given (each benchmark's
``default_max_tokens``, :mod:`evalcore.benchmarks`): the one source of this default for
``evalcore run``, :func:`~evalcore.runs.run_benchmark` and the benchmark notebook (whose
``max_tokens = 0`` means "this default"; params/*.yaml leave it unset), so a CLI run and a
notebook run of the same settings ask the model the same thing. A benchmark YAML file sets its
own (``generation.max_tokens``, default 256)."""
